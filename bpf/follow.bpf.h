/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Following (record.bpf.c includes this where its thread map, counters
 * and ring buffer are defined): which processes are recorded as they
 * fork, exec and dlopen, and the stops that let userspace attach probes
 * before a new image, a forked child or a dlopened library runs.
 */
#ifndef SB_FOLLOW_BPF_H
#define SB_FOLLOW_BPF_H

/* Launch mode: a followed process stops (SIGSTOP) where a new image, a
 * forked child or dlopened libraries need probes, until userspace has
 * attached them and sends SIGCONT.  Off with -p: a job-control shell
 * would see its job stop; there probes go in asynchronously. */
const volatile __u32 stop_mode = 0;
/* --follow: processes that followed ones fork are followed too. */
const volatile __u32 follow_forks = 0;

#define SB_SIGSTOP 19

/*
 * tgid -> 1: its image has probes, so a child it forks waits, stopped,
 * until they are attached for the child too.  Written by userspace only
 * (follow.c); a shell's image has none, and its children (which exec at
 * once, and stop there) need not stop twice.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SB_MAX_FOLLOWED);
	__type(key, __u32);
	__type(value, __u8);
} fork_stop SEC(".maps");

static __always_inline void emit_proc(__u32 kind, __u32 tgid, __u32 old_tid, bool stop,
				     __u64 oncpu)
{
	struct sb_rec_proc *r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);

	/* Stop only when userspace will hear of it and send SIGCONT. */
	if (!r) {
		count(SB_CNT_DROP_PROC);
		return;
	}
	if (stop && bpf_send_signal(SB_SIGSTOP))
		stop = false;
	r->hdr.type = SB_REC_PROC;
	r->hdr.size = sizeof(*r);
	r->hdr.tid = (__u32)bpf_get_current_pid_tgid();
	r->hdr.ts = bpf_ktime_get_ns();
	r->kind = kind;
	r->tgid = tgid;
	r->old_tid = old_tid;
	r->stopped = stop;
	r->oncpu_ns = oncpu;
	bpf_get_current_comm(&r->comm, sizeof(r->comm));
	/* Wake the consumer at once: the process waits for it. */
	bpf_ringbuf_submit(r, stop ? BPF_RB_FORCE_WAKEUP : wakeup_flags());
}

static __always_inline void emit_thread(__u16 type, __u32 tid, __u32 parent,
					__u64 oncpu, struct task_struct *task)
{
	struct sb_rec_thread *r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);

	if (!r) {
		count(SB_CNT_DROP_THREAD);
		return;
	}
	r->hdr.type = type;
	r->hdr.size = sizeof(*r);
	r->hdr.tid = tid;
	r->hdr.ts = bpf_ktime_get_ns();
	r->parent_tid = parent;
	r->tgid = BPF_CORE_READ(task, tgid);
	r->oncpu_ns = oncpu;
	BPF_CORE_READ_STR_INTO(&r->comm, task, comm);
	bpf_ringbuf_submit(r, wakeup_flags());
}

/* The state of a thread that has not run yet: all its runtime is ours.
 * Made at first sight instead, it left out what ran before: a first
 * switch in that went unseen cost a segment of 2.7 ms of work 0.7 ms. */
static __always_inline void new_thread_state(__u32 tid)
{
	struct sb_thread_state fresh = { 0 };

	if (bpf_map_update_elem(&threads, &tid, &fresh, BPF_ANY))
		count(SB_CNT_STATE_FULL);
}

/*
 * A new task, before it first runs: a thread of a followed process, or
 * (--follow) a process a followed one forked, which is followed from its
 * first instruction on.  task_newtask rather than sched_process_fork:
 * it is attached already and says the same (the child's tgid is set).
 */
SEC("tp_btf/task_newtask")
int BPF_PROG(on_newtask, struct task_struct *task, __u64 clone_flags)
{
	__u64 cur = bpf_get_current_pid_tgid();
	__u32 tgid = BPF_CORE_READ(task, tgid), parent = (__u32)(cur >> 32);

	if (tgid != parent) {   /* a new process */
		struct sb_follow f = { 0 };

		if (!follow_of(parent))
			return 0;
		if (stop_mode && bpf_map_lookup_elem(&fork_stop, &parent))
			f.flags = SB_FOLLOW_PENDING_STOP;
		/* Not following: still told, so the profile can say what
		 * it left out. */
		if (follow_forks && bpf_map_update_elem(&followed, &tgid, &f, BPF_ANY)) {
			count(SB_CNT_FOLLOW_FULL);
			return 0;
		}
	} else if (!follow_of(tgid)) {
		return 0;
	}
	if (follow_of(tgid))   /* not a process left unfollowed */
		new_thread_state(BPF_CORE_READ(task, pid));
	emit_thread(SB_REC_THREAD_NEW, BPF_CORE_READ(task, pid), (__u32)cur, 0, task);
	return 0;
}

/*
 * exec of a followed process: same tgid, new image.  The record tells
 * userspace to resolve the new executable and its libraries; in launch
 * mode the process stops before the new image's first instruction (the
 * signal is taken on the return to user).  The old image's thread state
 * ends here (a non-leader that exec'd takes the leader's tid).
 */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u64 now = bpf_ktime_get_ns(), oncpu = 0;
	__u32 tgid = (__u32)(bpf_get_current_pid_tgid() >> 32), old = (__u32)old_pid;
	struct sb_thread_state *st;

	if (!follow_of(tgid))
		return 0;
	st = bpf_map_lookup_elem(&threads, &old);
	if (st) {
		running_now(st, now, p);   /* p is the thread that exec'd */
		oncpu = oncpu_now(st, now);
	}
	bpf_map_delete_elem(&threads, &old);
	/* where the old image kept its CHiP counters means nothing now */
	{
		__u32 tid = BPF_CORE_READ(p, pid);

		bpf_map_delete_elem(&chip_counters, &old);
		bpf_map_delete_elem(&chip_counters, &tid);
		/* nor where the old executable kept them in TLS */
		bpf_map_delete_elem(&chip_tls, &tgid);
	}
	/* The new image's thread is on CPU now: timed from here, as
	 * state_get times a thread first seen running (else the run up
	 * to its first switch-out, a whole run if never preempted, is
	 * lost: sched_switch only times entries it has). */
	state_get(BPF_CORE_READ(p, pid), now, p);
	emit_proc(SB_PROC_EXEC, tgid, old, stop_mode, oncpu);
	return 0;
}

/*
 * ld.so's r_brk (_dl_debug_state), which it calls around every change of
 * its link map; r_state == RT_CONSISTENT (0) after dlopen mapped a
 * library, before its relocation and constructors.  The cookie is the
 * distance from the probed instruction to r_debug.r_state in ld.so.
 */
SEC("uprobe")
int on_dl_state(struct pt_regs *ctx)
{
	__u64 tgid = bpf_get_current_pid_tgid() >> 32;
	__s64 delta = (__s64)bpf_get_attach_cookie(ctx);
	int state = -1;

	if (!follow_of((__u32)tgid))
		return 0;
	if (bpf_probe_read_user(&state, sizeof(state), (void *)(PT_REGS_IP(ctx) + delta)) ||
	    state != 0)
		return 0;
	emit_proc(SB_PROC_DLOPEN, (__u32)tgid, 0, stop_mode, 0);
	return 0;
}

#endif
