/* SPDX-License-Identifier: MIT */
/* The BPF links of a recording and their destruction (record_bpf.c). */
#ifndef SB_BPF_LINKS_H
#define SB_BPF_LINKS_H

#include <pthread.h>
#include <stdbool.h>

struct bpf_link;

/* An attachment: a libbpf link, or the fd of a uprobe_multi link; pid:
 * the process a uprobe fires in (0: none, a tracepoint or sampler). */
struct sb_link {
	struct bpf_link *l;
	int fd, pid;
};

/*
 * Links of processes that ended, destroyed out of the way: a uprobe's
 * detach waits for grace periods (sb_bpf_stop), and a driver script's
 * hundred short commands leave ~10 links each, fds that would otherwise
 * pile up until the end (EMFILE, and probes the worker never gets).
 * uprobe_multi links go to the closer process (link_closer.h); this
 * thread of their own destroys the rest: libbpf links, and any link when
 * there is no closer or it cannot take one.
 */
struct sb_reaper {
	pthread_mutex_t mu;
	pthread_cond_t cv, idle;
	pthread_t th;
	struct sb_link *q;
	unsigned n, cap, inflight;   /* queued; being destroyed */
	bool started, quit;
};

void sb_link_destroy(struct sb_link *k);
/* Destroys n links from several threads (the waits overlap). */
void sb_links_destroy(struct sb_link *links, unsigned n);
/* Hands k to the closer process when it is a uprobe_multi fd and there
 * is one (link_closer.h), else to the reaper thread (started on first
 * use). */
void sb_reaper_give(struct sb_reaper *rp, struct sb_link *k);
/* Waits until the reaper is idle; whether it had links to destroy. */
bool sb_reaper_wait_idle(struct sb_reaper *rp);
/* Destroys what it was given, then ends the thread. */
void sb_reaper_join(struct sb_reaper *rp);

#endif
