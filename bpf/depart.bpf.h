/* SPDX-License-Identifier: MIT */
/*
 * The departure of a SB_COOKIE_DEPART call (glibc's pthread_barrier_wait,
 * probed at entry only; include/sbpf_events.h says why): its futex
 * return, or the thread's next event when it made no futex call.
 * Included by record.bpf.c after its counters, threads and count().
 */
#ifndef SB_DEPART_BPF_H
#define SB_DEPART_BPF_H

/* The latest arrival at each SB_COOKIE_DEPART barrier, by a hash of its
 * address (a collision only stamps a departure later, never before its
 * round completed). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SB_DEPART_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} arrivals SEC(".maps");

static __always_inline __u64 *arrival_slot(__u64 obj)
{
	__u32 k = (__u32)((obj * 0x9E3779B97F4A7C15ull) >> 54) & (SB_DEPART_SLOTS - 1);

	return bpf_map_lookup_elem(&arrivals, &k);
}

/* A probe record made from its parts (a departure has no probe context). */
static __always_inline void emit_exit(__u32 tid, __u64 ts, __u32 probe, __u32 depth,
				      __u64 oncpu)
{
	struct sb_rec_probe *r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);

	if (!r) {
		count(SB_CNT_DROP_PROBE);
		return;
	}
	r->hdr.type = SB_REC_PROBE_EXIT;
	r->hdr.size = sizeof(*r);
	r->hdr.tid = tid;
	r->hdr.ts = ts;
	r->probe = probe;
	r->depth = depth;
	r->arg = 0;
	r->ret_addr = 0;
	r->oncpu_ns = oncpu;
	r->ip = 0;
	bpf_ringbuf_submit(r, wakeup_flags());
}

/* The open SB_COOKIE_DEPART call of the thread ends (sbpf_events.h). */
static __always_inline void depart(struct sb_thread_state *st, __u32 tid, __u64 ts,
				   __u64 oncpu)
{
	if (st->sync_depth > 0)
		st->sync_depth--;
	st->dep_obj = 0;
	emit_exit(tid, ts, st->dep_probe, (__u32)st->sync_depth, oncpu);
}

/* It left without a futex call: the round was complete when it looked,
 * so it departed once the latest arrival came, which was before now (the
 * time of the event that shows it left; a later arrival another thread
 * made meanwhile is of the next round).  Its CPU time stops at its
 * arrival: it never blocked, and what it has run since belongs to the
 * next section. */
static __always_inline void depart_later(struct sb_thread_state *st, __u32 tid, __u64 now)
{
	__u64 ts = st->dep_ts, *last = arrival_slot(st->dep_obj);

	if (last && *last > ts)
		ts = *last;
	if (ts > now)
		ts = now;
	count(SB_CNT_DEPART_LATER);
	depart(st, tid, ts, st->dep_oncpu);
}

static __always_inline bool in_barrier(const struct sb_thread_state *st, __u64 uaddr)
{
	return uaddr >= st->dep_obj && uaddr < st->dep_obj + SB_DEPART_OBJ_BYTES;
}

#endif
