/* SPDX-License-Identifier: MIT */
/* The BPF side's state, shared by record_bpf.c and bpf_uprobes.c. */
#ifndef SB_RECORD_BPF_PRIV_H
#define SB_RECORD_BPF_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf_links.h"
#include "record_bpf.h"
#include "record.skel.h"

struct sb_bpf {
	struct record_bpf *skel;
	struct ring_buffer *rb;
	struct sb_link *links;
	unsigned nlinks, caplinks, nprobes;
	int *perf_fds;
	int *sample_ctl;        /* dups of the samplers' perf fds, for
				 * enabling and disabling them (--sample-duty) */
	int ncpus;
	int pid;      /* the first target: what sb_bpf_attach_uprobe's pid 0 means */
	int wide_pid; /* its probes unfiltered (sb_bpf_probe_wide) */
	struct sb_reaper reap;
	bool multi;   /* uprobes as uprobe_multi links (sb_bpf_uprobe_multi_works) */
};

/*
 * uprobe_multi links (Linux >= 6.6), made with the raw syscall: libbpf
 * 1.1 and the 6.1 UAPI headers of Debian 12 know nothing of them.  The
 * layout is that of union bpf_attr's link_create.uprobe_multi.
 */
#define SB_TRACE_UPROBE_MULTI ((enum bpf_attach_type)48)
#define SB_F_UPROBE_MULTI_RETURN 1u

struct uprobe_multi_attr {
	__u32 prog_fd, target_fd, attach_type, flags;
	__u64 path, offsets, ref_ctr_offsets, cookies;
	__u32 cnt, flags2, pid;
};

/* Whether this kernel has uprobe_multi links (bpf_uprobes.c). */
bool sb_bpf_uprobe_multi_works(void);
/* Keeps a link (a libbpf one, or a uprobe_multi fd) of pid (0: none). */
int sb_bpf_add_link(struct sb_bpf *s, struct bpf_link *l, int fd, int pid);

#endif
