// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The kernel half of `scalebpf record`.
 *
 * Cost model (measured, ../shared/notes/platform.md): probes sit only on
 * rare calls (barriers, region entry/exit, joins); blocking waits are taken
 * where they reach the kernel (futex), on-CPU time from sched_switch, spin
 * waits from cpu-clock samples.  Nothing here runs on an uncontended lock.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "sbpf_events.h"
#include "target.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#define NR_FUTEX 202           /* x86-64 */
#define FUTEX_CMD_MASK 0x7f    /* strips PRIVATE and CLOCK_REALTIME flags */
#define FUTEX_WAIT 0
#define FUTEX_LOCK_PI 6
#define FUTEX_WAIT_BITSET 9
#define FUTEX_WAIT_REQUEUE_PI 11
#define FUTEX_LOCK_PI2 13
#define SB_EAGAIN 11           /* errno: the futex word had changed */

const volatile __u64 sample_period_ns = 0;
/* Samples carry a copy of their user stack (SB_REC_SAMPLE_STACK) for
 * unwinding code without frame pointers; 0: frame pointers only. */
const volatile __u32 stack_copy = 0;
/* tid -> its on-CPU time and open waits (sbpf_events.h: userspace seeds
 * and reads it too). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct sb_thread_state);
} threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SB_CNT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SB_MAX_SPIN_RANGES);
	__type(key, __u32);
	__type(value, struct sb_ip_range);
} spin_ranges SEC(".maps");

static __always_inline void count(__u32 which)
{
	count_in(&counters, which);
}

#include "depart.bpf.h"   /* needs count(), events */
#include "oncpu.bpf.h"    /* needs threads, count() */

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	__u64 now = bpf_ktime_get_ns();
	struct cpu_clock *c = cpu_clock_get();
	struct sb_thread_state *st;
	__u32 tid;

	/* The arguments are BTF pointers: plain loads, no helper calls (this
	 * runs at every context switch of the machine). */
	if (c)
		c->last_switch = now;
	/* either task's exec_start is clock_task now; idle keeps none */
	cpu_clock_calibrate(c, now, next->pid ? next : prev);
	if (follow_of(prev->tgid)) {
		tid = prev->pid;
		st = bpf_map_lookup_elem(&threads, &tid);
		if (st)
			switch_out(st, now, prev);
		count(SB_CNT_SWITCHES);
	}
	if (follow_of(next->tgid)) {
		tid = next->pid;
		st = state_get(tid, now, next);
		if (st)
			switch_in(st, now, next);
	}
	return 0;
}

static __always_inline __u64 cookie_arg(struct pt_regs *ctx, __u64 cookie)
{
	/* Load every candidate first: a ctx pointer with a computed offset
	 * is rejected by the verifier. */
	__u64 a1 = PT_REGS_PARM1(ctx), a2 = PT_REGS_PARM2(ctx), a3 = PT_REGS_PARM3(ctx);
	__u64 which = cookie & SB_COOKIE_ARG_MASK;

	barrier_var(a1);
	barrier_var(a2);
	barrier_var(a3);
	return which == 1 ? a1 : which == 2 ? a2 : which == 3 ? a3 : 0;
}

/*
 * The return address of a probed function whose return slot a pending
 * uretprobe has already taken: an outer probed function (an OpenMP
 * outlined function, a user barrier) that tail-jumped here, so both share
 * the slot at sp.  The slot then holds the "[uprobes]" trampoline; the
 * kernel keeps the original in the thread's pending return instance of
 * that stack pointer (chained ones carry the original too).  0 when the
 * original is not found: never the trampoline.
 */
static __always_inline __u64 real_return(__u64 ret, __u64 sp)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct return_instance *ri;
	struct xol_area *xol;
	__u32 i;

	if (!ret)
		return ret;
	/* t is a BTF pointer: plain loads, a NULL on the way reads 0. */
	xol = t->mm->uprobes_state.xol_area;
	if (!xol || ret != xol->vaddr)
		return ret;
	ri = BPF_CORE_READ(t, utask, return_instances);
	for (i = 0; i < 16 && ri; i++) {
		if (BPF_CORE_READ(ri, stack) == sp)
			return BPF_CORE_READ(ri, orig_ret_vaddr);
		ri = BPF_CORE_READ(ri, next);
	}
	count(SB_CNT_TRAMPOLINE_LOST);
	return 0;
}

static __always_inline int emit_probe(struct pt_regs *ctx, bool enter)
{
	__u64 now = bpf_ktime_get_ns(), cookie = bpf_get_attach_cookie(ctx);
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct sb_thread_state *st;
	struct task_struct *task;
	struct sb_rec_probe *r;

	if (!is_target())
		return 0;
	task = bpf_get_current_task_btf();
	st = state_get(tid, now, task);
	if (!st)
		return 0;
	running_now(st, now, task);
	if (st->dep_obj)   /* a probe after it: it left its barrier call */
		depart_later(st, tid, now);
	if (cookie & SB_COOKIE_RET) {
		if (enter) {
			st->open_calls++;
		} else if (st->open_calls > 0) {
			st->open_calls--;
		} else {   /* entered before its entry probe went in */
			count(SB_CNT_RET_UNPAIRED);
			return 0;
		}
	}
	if (cookie & SB_COOKIE_SYNC) {
		if (enter)
			st->sync_depth++;
		else if (st->sync_depth > 0)
			st->sync_depth--;
	}
	r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	if (!r) {
		count(SB_CNT_DROP_PROBE);
		return 0;
	}
	r->hdr.type = enter ? SB_REC_PROBE_ENTER : SB_REC_PROBE_EXIT;
	r->hdr.size = sizeof(*r);
	r->hdr.tid = tid;
	r->hdr.ts = now;
	r->probe = SB_COOKIE_ID(cookie);
	r->depth = st->sync_depth;
	r->oncpu_ns = oncpu_now(st, now);
	r->ret_addr = 0;
	r->ip = PT_REGS_IP(ctx);
	if (enter) {
		r->arg = cookie_arg(ctx, cookie);
		/* Probe sites keep rsp untouched (see sb_elf_probe_site). */
		bpf_probe_read_user(&r->ret_addr, sizeof(r->ret_addr),
				    (void *)PT_REGS_SP(ctx));
		r->ret_addr = real_return(r->ret_addr, PT_REGS_SP(ctx));
		if ((cookie & SB_COOKIE_DEPART) && r->arg) {
			__u64 *last = arrival_slot(r->arg);

			st->dep_probe = r->probe;
			st->dep_obj = r->arg;
			st->dep_ts = now;
			st->dep_oncpu = r->oncpu_ns;
			st->dep_lo = r->ip - SB_COOKIE_FN_OFF(cookie);
			st->dep_hi = st->dep_lo + SB_COOKIE_FN_SIZE(cookie);
			if (last)
				*last = now;
		}
	} else {
		r->arg = PT_REGS_RC(ctx);
	}
	bpf_ringbuf_submit(r, wakeup_flags());
	return 0;
}

SEC("uprobe")
int probe_enter(struct pt_regs *ctx)
{
	return emit_probe(ctx, true);
}

SEC("uretprobe")
int probe_exit(struct pt_regs *ctx)
{
	return emit_probe(ctx, false);
}

/*
 * A batch a `scalebpf cc` program hands its runtime's probed function
 * (argument 1): copied whole behind a record header of `type`, the record
 * being `size` bytes with the batch at `off`.  Inlined with constants, so
 * the reservation and the read have fixed sizes.
 */
static __always_inline int copy_batch(struct pt_regs *ctx, __u32 size, __u32 off, __u16 type,
				      __u32 drop, __u32 fault)
{
	const void *src = (const void *)PT_REGS_PARM1(ctx);
	struct sb_rec_hdr *h;

	if (!is_target())
		return 0;
	h = bpf_ringbuf_reserve(&events, size, 0);
	if (!h) {
		count(drop);
		return 0;
	}
	if (bpf_probe_read_user((char *)h + off, size - off, src)) {
		bpf_ringbuf_discard(h, 0);
		count(fault);
		return 0;
	}
	h->type = type;
	h->size = size;
	h->tid = (__u32)bpf_get_current_pid_tgid();
	h->ts = bpf_ktime_get_ns();
	bpf_ringbuf_submit(h, wakeup_flags());
	return 0;
}

/*
 * Exact mode: the program's runtime calls scalebpf_exact_batch(batch) at
 * the end of a segment of work; the batch goes into the ring buffer
 * between the sync events around it (include/sbpf_events.h).
 */
SEC("uprobe")
int exact_batch(struct pt_regs *ctx)
{
	return copy_batch(ctx, sizeof(struct sb_rec_exact), offsetof(struct sb_rec_exact, b),
			  SB_REC_EXACT, SB_CNT_DROP_EXACT, SB_CNT_EXACT_FAULT);
}

/* `scalebpf cc --chip` and --region (record_chip.bpf.h). */
#include "record_chip.bpf.h"

static __always_inline bool is_wait_cmd(__u32 cmd)
{
	return cmd == FUTEX_WAIT || cmd == FUTEX_WAIT_BITSET ||
	       cmd == FUTEX_LOCK_PI || cmd == FUTEX_LOCK_PI2 ||
	       cmd == FUTEX_WAIT_REQUEUE_PI;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(on_sys_enter, struct pt_regs *regs, long id)
{
	struct sb_thread_state *st;
	__u64 now;
	__u32 cmd;

	if (id != NR_FUTEX || !is_target())
		return 0;
	cmd = (__u32)regs->si & FUTEX_CMD_MASK;
	if (!is_wait_cmd(cmd))
		return 0;
	now = bpf_ktime_get_ns();
	st = state_get((__u32)bpf_get_current_pid_tgid(), now, bpf_get_current_task_btf());
	if (!st)
		return 0;
	if (st->dep_obj && !in_barrier(st, regs->di))
		depart_later(st, (__u32)bpf_get_current_pid_tgid(), now);
	if (st->sync_depth > 0) {   /* the probed call accounts for it */
		st->fx_ts = 0;
		return 0;
	}
	st->fx_ts = now;
	st->fx_uaddr = regs->di;
	st->fx_op = cmd;
	return 0;
}

static __always_inline void fill_stack(struct sb_rec_wait *r, __u64 sp)
{
	r->sp = sp;
	r->nwords = SB_STACK_WORDS;
	if (bpf_probe_read_user(r->stack, sizeof(r->stack), (void *)sp) == 0)
		return;
	/* Near the top of the stack mapping: take what fits. */
	r->nwords = SB_STACK_WORDS / 4;
	if (bpf_probe_read_user(r->stack, sizeof(r->stack) / 4, (void *)sp))
		r->nwords = 0;
}

struct wait_info {
	__u32 source, op;
	__u64 uaddr, dur, ip, sp;
};

static __always_inline void emit_wait(__u32 tid, __u64 ts, const struct wait_info *w)
{
	struct sb_rec_wait *r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);

	if (!r) {
		count(SB_CNT_DROP_WAIT);
		return;
	}
	r->hdr.type = SB_REC_WAIT;
	r->hdr.size = sizeof(*r);
	r->hdr.tid = tid;
	r->hdr.ts = ts;
	r->source = w->source;
	r->op = w->op;
	r->uaddr = w->uaddr;
	r->dur_ns = w->dur;
	r->ip = w->ip;
	r->pad = 0;
	fill_stack(r, w->sp);
	bpf_ringbuf_submit(r, wakeup_flags());
}

#include "follow.bpf.h"   /* needs threads, counters, events */

SEC("tp_btf/sys_exit")
int BPF_PROG(on_sys_exit, struct pt_regs *regs, long ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid, tgid = (__u32)(pid_tgid >> 32);
	struct sb_follow *f = follow_of(tgid);
	struct wait_info w = {};
	struct sb_thread_state *st;
	__u64 now;

	if (!f)
		return 0;
	/* A forked child's first return to user (from fork): it runs no
	 * user code before its probes are in (see on_newtask). */
	if (f->flags & SB_FOLLOW_PENDING_STOP) {
		f->flags &= ~SB_FOLLOW_PENDING_STOP;
		emit_proc(SB_PROC_FORKED, tgid, 0, stop_mode, 0);
		return 0;
	}
	st = bpf_map_lookup_elem(&threads, &tid);
	if (!st)
		return 0;
	if (st->dep_obj && regs->orig_ax == NR_FUTEX) {
		__u64 uaddr = regs->di;

		now = bpf_ktime_get_ns();
		if (!in_barrier(st, uaddr)) {
			depart_later(st, tid, now);
		} else {
			/* The round word: a waiter woken (or too late to
			 * sleep), or the last arriver's wake.  glibc waits on
			 * the first word only while the barrier resets. */
			if (uaddr != st->dep_obj && (ret >= 0 || ret == -SB_EAGAIN)) {
				count(SB_CNT_DEPART_FUTEX);
				running_now(st, now, bpf_get_current_task_btf());
				depart(st, tid, now, oncpu_now(st, now));
			}
			return 0;
		}
	}
	if (!st->fx_ts)
		return 0;
	if (regs->orig_ax != NR_FUTEX)
		return 0;
	now = bpf_ktime_get_ns();
	count(SB_CNT_FUTEX_WAITS);
	w.source = SB_WAIT_FUTEX;
	w.op = st->fx_op;
	w.uaddr = st->fx_uaddr;
	w.dur = now - st->fx_ts;
	w.ip = regs->ip;
	w.sp = regs->sp;
	st->fx_ts = 0;
	emit_wait(tid, now, &w);
	return 0;
}

/* User registers in enum sb_reg order (memop.c decodes with them). */
static __always_inline void fill_regs(__u64 *regs, struct pt_regs *u)
{
	regs[SB_REG_RAX] = u->ax;
	regs[SB_REG_RBX] = u->bx;
	regs[SB_REG_RCX] = u->cx;
	regs[SB_REG_RDX] = u->dx;
	regs[SB_REG_RSI] = u->si;
	regs[SB_REG_RDI] = u->di;
	regs[SB_REG_RBP] = u->bp;
	regs[SB_REG_RSP] = u->sp;
	regs[SB_REG_R8] = u->r8;
	regs[SB_REG_R9] = u->r9;
	regs[SB_REG_R10] = u->r10;
	regs[SB_REG_R11] = u->r11;
	regs[SB_REG_R12] = u->r12;
	regs[SB_REG_R13] = u->r13;
	regs[SB_REG_R14] = u->r14;
	regs[SB_REG_R15] = u->r15;
}

/* A working thread's sample: its IP and registers, for the per-thread
 * block vectors and for decoding the sampled instruction's address, and
 * its frame-pointer call chain. */
static __always_inline void fill_sample(void *ctx, struct sb_rec_sample *r, __u16 type,
					__u16 size, __u32 tid, struct pt_regs *u)
{
	long n;

	r->hdr.type = type;
	r->hdr.size = size;
	r->hdr.tid = tid;
	r->hdr.ts = bpf_ktime_get_ns();
	r->ip = u->ip;
	fill_regs(r->regs, u);
	r->pad = 0;
	/* Valid where the program keeps frame pointers, and it reaches past
	 * the stack copy: userspace splices it onto the CFI unwind. */
	n = bpf_get_stack(ctx, r->frames, sizeof(r->frames), BPF_F_USER_STACK);
	r->nframes = n > 0 ? (__u32)(n / sizeof(__u64)) : 0;
}

#include "stackcopy.bpf.h"   /* needs count() */

static __always_inline void emit_sample(void *ctx, __u32 tid, struct pt_regs *u)
{
	struct sb_rec_sample_stack *rs;
	struct sb_rec_sample *r;

	if (stack_copy) {
		rs = bpf_ringbuf_reserve(&events, sizeof(*rs), 0);
		if (!rs) {
			count(SB_CNT_DROP_SAMPLE);
			return;
		}
		fill_sample(ctx, &rs->s, SB_REC_SAMPLE_STACK, sizeof(*rs), tid, u);
		copy_returns(rs);
		copy_stack(rs, rs->s.regs[SB_REG_RSP]);
		bpf_ringbuf_submit(rs, wakeup_flags());
		return;
	}
	r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	if (!r) {
		count(SB_CNT_DROP_SAMPLE);
		return;
	}
	fill_sample(ctx, r, SB_REC_SAMPLE, sizeof(*r), tid, u);
	bpf_ringbuf_submit(r, wakeup_flags());
}

/* cpu-clock samples: spin waits are on-CPU, so only sampling sees them. */
SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct wait_info w = {};
	struct task_struct *task;
	struct sb_thread_state *st;
	struct pt_regs *uregs;
	__u64 ip, sp;
	__u32 i;

	if (!is_target())
		return 0;
	count(SB_CNT_SAMPLES);
	st = bpf_map_lookup_elem(&threads, &tid);
	task = bpf_get_current_task_btf();
	if (st)
		running_now(st, bpf_ktime_get_ns(), task);
	uregs = (struct pt_regs *)bpf_task_pt_regs(task);
	ip = uregs->ip;
	if (st && st->dep_obj && (ip < st->dep_lo || ip >= st->dep_hi))
		depart_later(st, tid, bpf_ktime_get_ns());   /* running past its call */
	if (st && st->sync_depth > 0)
		return 0;
	sp = uregs->sp;
	/* Ranges are filled in once the libraries' load addresses are known. */
	for (i = 0; i < SB_MAX_SPIN_RANGES; i++) {
		__u32 k = i;
		struct sb_ip_range *rg = bpf_map_lookup_elem(&spin_ranges, &k);

		if (!rg || !rg->start || ip < rg->start || ip >= rg->end)
			continue;
		w.source = SB_WAIT_SPIN_SAMPLE;
		w.dur = sample_period_ns;
		w.ip = ip;
		w.sp = sp;
		emit_wait(tid, bpf_ktime_get_ns(), &w);
		return 0;
	}
	emit_sample(ctx, tid, uregs);
	return 0;
}

#include "watch.bpf.h"   /* needs count(), events, fill_regs() */

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *task, bool group_dead)
{
	__u64 now = bpf_ktime_get_ns(), oncpu = 0;
	__u32 tid, tgid = BPF_CORE_READ(task, tgid);
	struct sb_thread_state *st;

	if (!follow_of(tgid))
		return 0;
	tid = BPF_CORE_READ(task, pid);
	st = bpf_map_lookup_elem(&threads, &tid);
	if (st && st->dep_obj)
		depart_later(st, tid, now);
	if (st) {
		running_now(st, now, task);   /* it exits in its own context */
		oncpu = oncpu_now(st, now);
	}
	emit_thread(SB_REC_THREAD_EXIT, tid, 0, oncpu, task);
	bpf_map_delete_elem(&threads, &tid);
	/* (a main thread that returns from main never unregisters) */
	bpf_map_delete_elem(&chip_counters, &tid);
	/* A reused tgid must not be followed. */
	if (group_dead) {
		bpf_map_delete_elem(&followed, &tgid);
		bpf_map_delete_elem(&fork_stop, &tgid);
	}
	return 0;
}
