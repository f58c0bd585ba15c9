// SPDX-License-Identifier: MIT
/* Attaching uprobes (record_bpf.h): uprobe_multi links where the kernel
 * has them, else libbpf's perf-event uprobes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "record_bpf_priv.h"

/* A uprobe_multi link of cnt offsets in path (pid 0: every process);
 * its fd, or -1 and errno. */
static int uprobe_multi_link(int prog_fd, const char *path, const __u64 *offsets,
				const __u64 *cookies, __u32 cnt, bool retprobe, uint32_t pid)
{
	struct uprobe_multi_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_fd = (__u32)prog_fd;
	a.attach_type = SB_TRACE_UPROBE_MULTI;
	a.path = (__u64)(uintptr_t)path;
	a.offsets = (__u64)(uintptr_t)offsets;
	a.cookies = (__u64)(uintptr_t)cookies;
	a.cnt = cnt;
	a.flags2 = retprobe ? SB_F_UPROBE_MULTI_RETURN : 0;
	a.pid = pid;
	return (int)syscall(__NR_bpf, BPF_LINK_CREATE, &a, sizeof(a));
}

/*
 * Whether this kernel has uprobe_multi links (the probe libbpf >= 1.3
 * makes: a link on a directory fails with EBADF only where the link type
 * exists).  They matter at the end: detaching a classic perf-event
 * uprobe waits for tracepoint grace periods under the kernel's global
 * event_mutex, ~50-90 ms per probe one after another whatever the number
 * of threads (seconds for OpenMP codes with dozens of outlined
 * functions); uprobe_multi links detach without that lock, so the
 * waits of the threads in sb_bpf_stop overlap.  SCALEBPF_NO_UPROBE_MULTI
 * takes the classic path (tests/bench.sh compares the two).
 */
bool sb_bpf_uprobe_multi_works(void)
{
	static const struct bpf_insn ret0[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, po, .expected_attach_type = SB_TRACE_UPROBE_MULTI);
	const __u64 zero = 0;
	int prog, link, e;

	if (getenv("SCALEBPF_NO_UPROBE_MULTI"))
		return false;
	prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "sb_probe_multi", "GPL", ret0, 2, &po);
	if (prog < 0)
		return false;
	link = uprobe_multi_link(prog, "/", &zero, &zero, 1, false, 0);
	e = errno;
	if (link >= 0)
		close(link);
	close(prog);
	return link < 0 && e == EBADF;
}

/* The pid filter of a probe for pid: libbpf's, 0 is ourselves, -1 all. */
static int filter_of(const struct sb_bpf *s, int pid)
{
	return pid == s->wide_pid ? -1 : pid;
}

/* The same filter for a uprobe_multi link, where 0 is all. */
static uint32_t multi_pid(int filter)
{
	return filter == 0 ? (uint32_t)getpid() : filter == -1 ? 0 : (uint32_t)filter;
}

static int attach_one(struct sb_bpf *s, struct bpf_program *prog, const char *path,
		      uint64_t offset, bool retprobe, uint64_t cookie, int pid,
		      char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .retprobe = retprobe, .bpf_cookie = cookie);
	struct bpf_link *l = NULL;
	__u64 off = offset, ck = cookie;
	int fd = -1, filter, ret;

	if (!pid)
		pid = s->pid;
	filter = filter_of(s, pid);
again:
	if (s->multi)
		fd = uprobe_multi_link(bpf_program__fd(prog), path, &off, &ck, 1, retprobe,
				       multi_pid(filter));
	else
		l = bpf_program__attach_uprobe_opts(prog, filter, path, (size_t)offset, &uo);
	if (!l && fd < 0) {
		ret = -errno;
		if (ret == -EMFILE && sb_reaper_wait_idle(&s->reap))
			goto again;
		goto fail;
	}
	/* Counted once kept: a link that cannot be kept is destroyed. */
	if ((ret = sb_bpf_add_link(s, l, fd, pid)))
		goto fail;
	s->nprobes++;
	return 0;
fail:
	snprintf(err, errlen, "cannot attach %s to %s+0x%llx: %s",
		 retprobe ? "uretprobe" : "uprobe", path,
		 (unsigned long long)offset, strerror(-ret));
	return ret;
}

void sb_bpf_probe_wide(struct sb_bpf *s, int pid)
{
	s->wide_pid = pid;
}

int sb_bpf_attach_uprobe(struct sb_bpf *s, const char *path, uint64_t offset,
			 bool retprobe, int which, uint64_t cookie, int pid,
			 char *err, size_t errlen)
{
	struct bpf_program *prog = retprobe ? s->skel->progs.probe_exit
					    : s->skel->progs.probe_enter;

	if (which == SB_UPROG_EXACT)
		prog = s->skel->progs.exact_batch;
	else if (which == SB_UPROG_CHIP)
		prog = s->skel->progs.chip_batch;
	else if (which == SB_UPROG_CHIP_THREAD)
		prog = s->skel->progs.chip_thread;
	else if (which == SB_UPROG_REGION)
		prog = retprobe ? s->skel->progs.region_exit : s->skel->progs.region_enter;
	return attach_one(s, prog, path, offset, retprobe, cookie, pid, err, errlen);
}

int sb_bpf_attach_dl_state(struct sb_bpf *s, const char *ldso, uint64_t offset,
			   int64_t to_state, int pid, char *err, size_t errlen)
{
	return attach_one(s, s->skel->progs.on_dl_state, ldso, offset, false,
			  (uint64_t)to_state, pid, err, errlen);
}
