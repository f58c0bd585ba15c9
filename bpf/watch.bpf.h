/* SPDX-License-Identifier: MIT */
/*
 * Watchpoint traps: sampled sharing's write watches
 * (user/record/record_watch.c) and reuse probes' read/write watches
 * (record_reuse.c), whose thread's count of memory operations is read
 * here, in its own context.  Included by record.bpf.c after count(),
 * events and fill_regs().
 */
#ifndef SB_WATCH_BPF_H
#define SB_WATCH_BPF_H

/* Reuse probes (user/record/record_reuse.c): a thread's counter of
 * retired memory operations (a per-task perf event) in slot
 * memop_slot[tid] of memops, read at its watchpoint traps. */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(max_entries, SB_MEMOPS_SLOTS);
	__type(key, __u32);
	__type(value, __u32);
} memops SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SB_MEMOPS_SLOTS);
	__type(key, __u32);
	__type(value, __u32);
} memop_slot SEC(".maps");

/* The trapping thread's count, in its own context (a per-task event
 * reads only there). */
static __always_inline void read_memops(struct sb_rec_watch *r, __u32 tid)
{
	struct bpf_perf_event_value v;
	__u32 *slot = bpf_map_lookup_elem(&memop_slot, &tid);

	r->memops = 0;
	r->flags = 0;
	r->pad = 0;
	if (!slot)
		return;
	if (bpf_perf_event_read_value(&memops, *slot, &v, sizeof(v))) {
		r->flags = SB_WATCH_MEMOPS_FAILED;
		return;
	}
	r->memops = v.counter;
	r->flags = SB_WATCH_HAVE_MEMOPS | (v.enabled != v.running ? SB_WATCH_MEMOPS_SCALED : 0);
}

/* A watchpoint fired: sampled sharing's one-shot write watch
 * (user/record/record_watch.c: the thread, the watched word and the
 * registers after the store) or a reuse probe's read/write watch
 * (record_reuse.c: the thread's count of memory operations).  Returning
 * 1 lets the event count the hit, so PERF_EVENT_IOC_REFRESH's limit (1,
 * or a probe's 2) disables it: no more traps than asked, however hot the
 * word. */
SEC("perf_event")
int on_watch(struct bpf_perf_event_data *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *u = (struct pt_regs *)bpf_task_pt_regs(task);
	struct sb_rec_watch *r;

	count(SB_CNT_WATCH_HITS);
	r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	if (!r) {
		count(SB_CNT_DROP_WATCH);
		return 1;
	}
	r->hdr.type = SB_REC_WATCH;
	r->hdr.size = sizeof(*r);
	r->hdr.tid = (__u32)bpf_get_current_pid_tgid();
	r->hdr.ts = bpf_ktime_get_ns();
	r->ip = u->ip;
	r->addr = ctx->addr;
	fill_regs(r->regs, u);
	read_memops(r, r->hdr.tid);
	bpf_ringbuf_submit(r, wakeup_flags());
	return 1;
}

#endif
