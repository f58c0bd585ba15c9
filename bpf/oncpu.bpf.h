/* SPDX-License-Identifier: MIT */
/*
 * A thread's on-CPU time (struct sb_thread_state, sbpf_events.h).
 *
 * The kernel's sum_exec_runtime, which leaves out time stolen by the
 * hypervisor and spent in interrupts, is read at every context switch
 * and at every event in the thread's own context (running_now); from the
 * latest reading the time advances with the clock (oncpu_now).
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
 * The runtime leaves out time the hypervisor stole, the clock does not:
 * a reading that ran the clock over a steal (a 6.18 KVM guest here loses
 * its vCPU for milliseconds at a time) counted the steal until the next
 * switch took the runtime, and the segment across that switch lost it (a
 * lime_owner segment of 2.7 ms of work read 6.3 ms, the next one 0).  So
 * a reading in the thread's own context takes the kernel's runtime and
 * adds only the time since its last update measured on this CPU's task
 * clock, made as the kernel would make it now (runtime_now), with the
 * steal since from KVM's steal clock, which BPF reads in the per-CPU
 * area.  Kernels without group scheduling (no way from a task to its
 * runqueue) take the clock-offset way above, as does a reading that
 * finds the runqueue locked.
 *
 * What is left is the kernel's own: a steal the runqueue's clock missed
 * (another CPU updated it while this vCPU was stolen, before the steal
 * clock showed it) is taken off whatever runs at the next update, here
 * 1.2 ms off a 1.7 ms segment, about once in 100 recordings of 800
 * segments with the host stealing 10 ms a second.
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
	__u64 sc_off;     /* ktime - sched_clock (task_clock_calibrate) */
	__u64 sc_at;      /* when it was last taken */
	__u64 sc_valid;
};

/* &steal_time - &runqueues in the per-CPU area (from the kernel's BTF:
 * percpu_distance, record_bpf.c; per-CPU variables have no address for
 * BPF in kernels built without KALLSYMS_ALL), valid when steal_known. */
const volatile __s64 steal_from_rq = 0;
const volatile __u32 steal_known = 0;

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

/* Task and runqueue pointers here are BTF pointers: plain loads (a NULL
 * on the way reads 0), no helper calls, as these run at every event.
 *
 * The runqueue task is queued on, this CPU's when task is running here
 * (runqueues, the per-CPU variable, has no address for BPF in kernels
 * built without KALLSYMS_ALL); NULL without group scheduling. */
static __always_inline const struct rq *rq_of_task(struct task_struct *task)
{
	if (!bpf_core_field_exists(task->se.cfs_rq))
		return NULL;
	return task->se.cfs_rq->rq;
}

/* The steal the runqueue's clock has taken off so far (its paravirt
 * steal clock as of its last update; 0 without steal accounting). */
static __always_inline __u64 steal_taken(const struct rq *rq)
{
	if (!bpf_core_field_exists(rq->prev_steal_time_rq))
		return 0;
	return rq->prev_steal_time_rq;
}

/* The steal since the runqueue's clock was last updated: KVM's steal
 * clock, read in the per-CPU area, less what was taken then; 0 where it
 * cannot be read (a steal since the update then counts until the next
 * one, at most 1/HZ later) or the runqueue takes none off (booted with
 * no-steal-acc: steal_taken stays 0). */
static __always_inline __u64 steal_since(const struct rq *rq, __u64 taken)
{
	__u64 kvm = 0;

	if (!steal_known || !taken ||
	    bpf_probe_read_kernel(&kvm, sizeof(kvm), (const char *)rq + steal_from_rq +
				  __builtin_offsetof(struct kvm_steal_time, steal)))
		return 0;
	return kvm > taken ? kvm - taken : 0;
}

/* The runqueue's lock before 5.14 (__lock since). */
struct rq___lock_old {
	raw_spinlock_t lock;
} __attribute__((preserve_access_index));

/* Held, or unknown (a lock of another shape): then the reading falls
 * back (running_now). */
static __always_inline bool rq_locked(const struct rq *rq)
{
	const struct rq___lock_old *old = (const void *)rq;

	if (bpf_core_field_exists(rq->__lock.raw_lock.locked))
		return rq->__lock.raw_lock.locked;
	if (bpf_core_field_exists(old->lock.raw_lock.locked))
		return old->lock.raw_lock.locked;
	return true;
}

/* task's runtime now (sum_exec_runtime as the kernel would make it
 * updating it now), for task running here: the runtime as of its last
 * update, plus this CPU's task clock since (rq clock_task units: the
 * runqueue's clock_task, plus the sched_clock time since its update less
 * the steal since, at most all of it).  False when it cannot be had.
 *
 * Another CPU waking a thread onto this runqueue updates its clock,
 * steal, clock_task, and the running task's exec_start and runtime one
 * after the other, under the runqueue's lock: readings between those
 * stores lost 3.3 ms and 2.3 ms here.  So all are taken with the lock
 * free before and after (an update holds it for microseconds beyond its
 * last store; these loads take nanoseconds). */
static __always_inline bool runtime_now(const struct cpu_clock *c, __u64 now,
					struct task_struct *task, __u64 *runtime)
{
	__u64 ct, taken, at, es, k, since, steal, clock;
	const struct rq *rq;

	if (!c || !c->sc_valid)
		return false;
	rq = rq_of_task(task);
	if (!rq || rq_locked(rq))
		return false;
	barrier();
	ct = rq->clock_task;
	taken = steal_taken(rq);
	at = rq->clock;
	es = task->se.exec_start;
	k = task->se.sum_exec_runtime;
	barrier();
	if (rq_locked(rq))
		return false;
	since = now - c->sc_off - at;
	if ((__s64)since < 0)
		since = 0;
	steal = steal_since(rq, taken);
	clock = ct + (steal < since ? since - steal : 0);
	*runtime = k + (clock > es ? clock - es : 0);
	return true;
}

/* task (BTF pointer) is on this CPU now, in its own context: its on-CPU
 * time is the kernel's runtime plus the task clock since its last update
 * (see the top of this file), whether or not its switches were seen; if
 * its switch in went unseen, it comes in here. */
static __always_inline void running_now(struct sb_thread_state *st, __u64 now,
					struct task_struct *task)
{
	struct cpu_clock *c = cpu_clock_get();
	__u64 k, since;

	if (runtime_now(c, now, task, &k)) {
		st->oncpu_total = k > st->k0 ? k - st->k0 : 0;
		st->last_in = now;
		if (!st->on_cpu) {
			st->on_cpu = 1;
			count(SB_CNT_SWITCH_UNSEEN);
		}
		return;
	}
	if (st->on_cpu)
		return;
	k = BPF_CORE_READ(task, se.sum_exec_runtime);
	since = st->last_out;
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

/* ktime - sched_clock, from the runqueue's clock at a switch (its lock
 * held: no update runs meanwhile).  That clock is stale where
 * __schedule() skips its update (a wakeup has just made it and asked for
 * the skip) and the vCPU was stolen in between: one offset came out
 * 1.2 ms high here, and every reading until the next switch that much
 * short.  Staleness only raises it, so the lowest is kept; it may rise by
 * 1/2048 of the time since it was last taken (NTP slews the two apart by
 * at most 500 ppm). */
static __always_inline void task_clock_calibrate(struct cpu_clock *c, __u64 now,
						 const struct rq *rq)
{
	__u64 off = now - rq->clock;

	if (c->sc_valid) {
		__u64 allowed = c->sc_off + ((now - c->sc_at) >> 11);

		if ((__s64)(off - allowed) > 0)
			off = allowed;
	}
	c->sc_off = off;
	c->sc_at = now;
	c->sc_valid = 1;
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
	if (c && task->pid) {
		const struct rq *rq = rq_of_task(task);

		if (rq)
			task_clock_calibrate(c, now, rq);
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
