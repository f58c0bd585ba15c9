/* SPDX-License-Identifier: MIT */
/*
 * A thread's on-CPU time (struct sb_thread_state, sbpf_events.h).
 *
 * The kernel's sum_exec_runtime, which leaves out time stolen by the
 * hypervisor and spent in interrupts, is read at every context switch;
 * between switches the time advances with the clock.
 *
 * Switches can go unseen.  On a 6.18 Firecracker guest the sched_switch
 * tracepoint (ftrace's own event as well as BPF) showed no switch away
 * from the init process's threads at all and about half of those away
 * from idle: the thread they hand the CPU to runs with its state saying
 * "off CPU", and its busy time came out short by whole milliseconds (one
 * segment of 8 blocks read 0 ns).  So any event in the thread's own
 * context that finds it "off CPU" brings it back in (running_now): its
 * runtime is the kernel's as of the last update, and the clock runs from
 * that update (se.exec_start, rq clock units, converted with this CPU's
 * latest calibration), never from before the latest switch this CPU
 * showed or the thread's own switch-out; with no calibration yet, from
 * now (the time since the last update, at most a tick, is lost rather
 * than the time before the switch counted).  Each is counted
 * (SB_CNT_SWITCH_UNSEEN).  Calibration is taken at every switch, from
 * whichever of the two tasks is not idle (whose exec_start is not kept),
 * the one coming in first: the offset grows
 * with interrupt and steal time, so a stale one would start the clock
 * early.
 *
 * Included by record.bpf.c after its threads map, counters and count().
 */
#ifndef SB_ONCPU_BPF_H
#define SB_ONCPU_BPF_H

/* Per CPU: the latest switch seen, and ktime - rq clock_task there (read
 * from the task a switch puts on or takes off the CPU, whose exec_start
 * the scheduler has just set to clock_task).  off_valid is 0 until then. */
struct cpu_clock {
	__u64 last_switch;
	__u64 off;
	__u64 off_valid;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_clock);
} cpu_clocks SEC(".maps");

static __always_inline struct cpu_clock *cpu_clock_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&cpu_clocks, &zero);
}

/* The state of a thread, created on first sight as if it went on CPU now:
 * a thread that runs when we attach is then timed from attach on. */
static __always_inline struct sb_thread_state *state_get(__u32 tid, __u64 now,
							struct task_struct *task)
{
	struct sb_thread_state *st = bpf_map_lookup_elem(&threads, &tid);
	struct sb_thread_state fresh = { .last_in = now, .on_cpu = 1 };

	if (st)
		return st;
	fresh.k0 = BPF_CORE_READ(task, se.sum_exec_runtime);
	if (bpf_map_update_elem(&threads, &tid, &fresh, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&threads, &tid)) {
		count(SB_CNT_STATE_FULL);
		return NULL;
	}
	return bpf_map_lookup_elem(&threads, &tid);
}

static __always_inline __u64 oncpu_now(const struct sb_thread_state *st, __u64 now)
{
	return st->oncpu_total + (st->on_cpu ? now - st->last_in : 0);
}

/* task (BTF pointer) is on this CPU now, in its own context: if its
 * switch in went unseen, it comes in here (see the top of this file). */
static __always_inline void running_now(struct sb_thread_state *st, __u64 now,
					struct task_struct *task)
{
	struct cpu_clock *c;
	__u64 k, since;

	if (st->on_cpu)
		return;
	k = BPF_CORE_READ(task, se.sum_exec_runtime);
	since = st->last_out;
	c = cpu_clock_get();
	if (c && c->off_valid) {
		/* u64 arithmetic: off may stand for a negative offset */
		__u64 update = BPF_CORE_READ(task, se.exec_start) + c->off;

		if (c->last_switch > since)
			since = c->last_switch;
		if (update > since)
			since = update;
	} else {
		since = now;
	}
	if (since > now)
		since = now;
	if (k > st->k0)
		st->oncpu_total = k - st->k0;
	st->last_in = since;
	st->on_cpu = 1;
	count(SB_CNT_SWITCH_UNSEEN);
}

/* At sched_switch: task's exec_start is this CPU's clock_task now (the
 * switch has just updated it), unless task is idle (pid 0), whose is not
 * kept.  The offset is kept modulo 2^64. */
static __always_inline void cpu_clock_calibrate(struct cpu_clock *c, __u64 now,
						struct task_struct *task)
{
	__u64 es = task->se.exec_start;

	if (c && es && task->pid) {
		c->off = now - es;
		c->off_valid = 1;
	}
}

/* prev leaves the CPU: schedule() has just brought its runtime up to
 * date.  Taken even when its switch in went unseen. */
static __always_inline void switch_out(struct sb_thread_state *st, __u64 now,
				       struct task_struct *prev)
{
	__u64 k = prev->se.sum_exec_runtime;

	if (k > st->k0)
		st->oncpu_total = k - st->k0;
	else if (st->on_cpu)
		st->oncpu_total += now - st->last_in;
	if (!st->on_cpu)
		count(SB_CNT_SWITCH_UNSEEN);
	st->on_cpu = 0;
	st->last_out = now;
}

static __always_inline void switch_in(struct sb_thread_state *st, __u64 now,
				      struct task_struct *next)
{
	__u64 k = next->se.sum_exec_runtime;

	if (k > st->k0)
		st->oncpu_total = k - st->k0;
	st->last_in = now;
	st->on_cpu = 1;
}

#endif
