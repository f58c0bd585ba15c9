/* SPDX-License-Identifier: MIT */
/*
 * Following launchers, forks and dlopen (`record --follow`, the default
 * with -- CMD).  A recording holds one process image per address space it
 * saw: the launched command, each image a followed process exec'd, each
 * process a followed one forked.  Each image has its own mappings, thread
 * table and section builder (addresses mean something in one address
 * space only); records are routed to the image of their thread.  At the
 * end the image that did the work becomes the profile (follow_choose),
 * and the profile lists every process followed and not followed.
 *
 * Probes are attached per process (a uprobe's pid filter): on exec, the
 * new executable and the libraries its loader will map (DT_NEEDED, via
 * ld.so --list) are planned and attached before its first instruction;
 * a forked child gets its parent's image's probes before it returns from
 * fork; libraries mapped by dlopen get theirs when ld.so reports
 * RT_CONSISTENT (its _dl_debug_state hook), before their constructors
 * run.  In launch mode the process waits, stopped by the BPF side, until
 * the probes are in (then SIGCONT); with -p it runs on and the probes go
 * in asynchronously (the delay is counted).
 */
#ifndef SB_FOLLOW_H
#define SB_FOLLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "records.h"
#include "sbpf_events.h"
#include "target.h"

struct sb_rec;
struct sb_profile;
struct sb_maps;
struct sb_builder;
struct sb_addr_sampler;
struct sb_stacks;
struct sb_idmap;

/* Process images kept; a process beyond is not followed (and said so). */
#define SB_MAX_PROCS 256

struct sb_proc {
	int pid, parent;
	unsigned gen;                /* execs since the process was first seen */
	char *exe;                   /* as the process names it */
	char *exe_open;              /* where it opens here, probes go: exe, or a
				      * /proc/PID path (binary/procpath.h) */
	char comm[17];
	char **bins;                 /* the executable and its libraries */
	size_t nbins;
	struct sb_maps *maps;
	struct sb_builder *builder;
	struct sb_records recs;
	struct sb_addr_sampler *addrs;
	struct sb_stacks *stacks;    /* its samples' call chains (stacks.h) */
	struct sb_idmap *threads;    /* tid -> struct sb_thread */
	uint64_t nthreads_live, records;
	uint64_t start_ns, end_ns;   /* end: exec'd away or exited, else 0 */
	size_t nprobes;              /* plan probes attached for it */
	/* Its own plan's inline condvar barrier flags (probes.h): the
	 * plan's are those of the image planned last. */
	bool condvars, condvars_named;
	bool done;
	/* The process by identity: a stop signal is passed on through it,
	 * never by a pid that may be another process's by then. */
	struct sb_pin pin;
	char notes[1024];            /* what planning its probes said */
};

struct sb_image_plan;   /* follow.c: an executable planned already */

struct sb_follow_state {
	struct sb_image_plan *planned;   /* a script's commands exec the same
					  * few binaries again and again */
	struct sb_proc **procs;
	size_t nprocs;
	struct sb_proc *cur;         /* whose maps/builder/... sb_rec points at */
	struct sb_idmap *tid_proc;   /* tid -> struct sb_proc */
	struct sb_idmap *attached;   /* (pid, probe index) -> attached */
	bool first_exec_pending;     /* launch: the gate's exec into the command */
	bool stopping;               /* probes detached: attach no more */
	uint64_t stops, stop_ns_max, stop_ns_total;   /* stopped for attaching */
	uint64_t late_probes;        /* attached after the process started */
	uint64_t attach_errors, dlopen_events, dlopen_libs;
	uint64_t unrouted;           /* records of a thread of no known image */
	uint64_t reclaimed;          /* images dropped at the limit: ended, no section */
	uint64_t async_delay_max_ns; /* -p: record to probes in, at most */
	uint64_t nnot_followed;      /* processes not followed */
	uint64_t not_listed;         /* of those, not in not_followed (full) */
	char not_followed[1024];     /* "pid comm (why)", comma-separated */
	char late_libs[512];         /* libraries found mapped after start */
	char barriers_missing[256];  /* --barrier names no image had */
};

/* The first image (r->pid, r->exe): allocated and made current. */
int sb_follow_init(struct sb_rec *r);
/* Makes p the image whose state r->maps, r->builder, ... are. */
void sb_follow_use(struct sb_rec *r, struct sb_proc *p);
/* Plans and attaches the probes of p's image that are not in yet;
 * strict: an attach failure is an error (setup), else a note. */
int sb_follow_attach(struct sb_rec *r, struct sb_proc *p, bool strict);
/* Notes the libraries of the image of p: the executable's DT_NEEDED
 * (launch) or what is mapped (attach), and plans the probes. */
int sb_follow_plan_image(struct sb_rec *r, struct sb_proc *p, bool from_maps);

/* follow_plan.c, for follow.c: an image's binaries, what planning says. */
struct sb_follow_ctx {
	struct sb_rec *r;
	struct sb_proc *p;
};
bool sb_proc_has_bin(const struct sb_proc *p, const char *path);
/* Under the name given and its canonical one. */
void sb_proc_add_bin(struct sb_proc *p, const char *path);
/* sb_plan_msg_fn with a struct sb_follow_ctx: printed, kept with p. */
void sb_follow_note(void *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A library of c->p's image: its binaries and the plan's libraries. */
void sb_follow_add_library(const char *path, void *ctx);
void sb_follow_free_plans(struct sb_rec *r);
/* p's process ended: unless its pid runs on as a newer image, its
 * uprobes are detached and its attached set emptied (a new process may
 * get the pid, and each link holds an fd). */
void sb_follow_detach(struct sb_rec *r, struct sb_proc *p);
/* A thread other than the leader exec'd: the pid's uprobes are bound to
 * the old leader's task, which exec released (uprobe_multi and perf
 * uprobes filter by that task's mm): none fires in the new image.  They
 * are detached, so the new image's attach puts in all of its own. */
void sb_follow_exec_leader_gone(struct sb_rec *r, int pid);
/* Keeps p's event log when the plan has condvar barrier candidates. */
void sb_follow_keep_log(struct sb_rec *r, struct sb_proc *p);

/* Routing (record_route.c): the image a record belongs to, made current.
 * A THREAD_NEW record of a new process is handled here, a record of no
 * known image counted and dropped (true: nothing more to do). */
bool sb_follow_route(struct sb_rec *r, const void *data, size_t size);
/* An SB_REC_PROC record: exec, fork stop, dlopen.  A process stopped
 * for it is always sent SIGCONT. */
void sb_follow_on_proc(struct sb_rec *r, const struct sb_rec_proc *e);
/* After a THREAD_EXIT was handled: its tid is free again. */
void sb_follow_thread_gone(struct sb_rec *r, uint32_t tid);

/* Periodic: mappings of the live images, spin ranges. */
void sb_follow_refresh(struct sb_rec *r);
/* After the probes are out: SIGCONT to each live image left stopped (a
 * BPF program that ran as its link closed may have stopped it after
 * the last drain; stop mode only). */
void sb_follow_unstop(struct sb_rec *r);
/* Whether any followed process other than the launched one still runs. */
bool sb_follow_alive(struct sb_rec *r);
/* The image that did the work: most section instances, then on-CPU. */
struct sb_proc *sb_follow_choose(struct sb_rec *r);
/* On-CPU ns of an image's threads. */
uint64_t sb_follow_oncpu(struct sb_rec *r, struct sb_proc *p);
/* The followed/not-followed processes into the profile's metadata. */
void sb_follow_meta(struct sb_rec *r, struct sb_profile *prof, struct sb_proc *chosen);
/* Frees every image (r's current pointers are cleared). */
void sb_follow_free(struct sb_rec *r);

#endif
