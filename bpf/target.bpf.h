/* SPDX-License-Identifier: MIT */
/*
 * What the BPF objects of `record` share (record.bpf.c, hwsample.bpf.c):
 * the target process, the one ring buffer and when it wakes its consumer,
 * and per-CPU counters.  Include after vmlinux.h and bpf_helpers.h.
 */
#ifndef SB_TARGET_BPF_H
#define SB_TARGET_BPF_H

const volatile __u64 wakeup_bytes = 1 << 20;

/*
 * The processes recorded: tgid -> struct sb_follow.  The -p PID or the
 * launched command to start with; with --follow (follow_forks,
 * record.bpf.c) every process a followed one forks joins at once; an
 * exec keeps its entry (same tgid, new image) unless user space takes
 * it out (--no-follow: the exec'd program is not recorded).  One hash lookup per check replaces the
 * single target tgid compare of old: the only cost following adds to
 * the hot paths (sched_switch, sys_enter/exit, samples, probes).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SB_MAX_FOLLOWED);
	__type(key, __u32);
	__type(value, struct sb_follow);
} followed SEC(".maps");

/* Sized from userspace before load; hwsample.bpf.c's is replaced by
 * record.bpf.c's (bpf_map__reuse_fd), so all records share one order. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} events SEC(".maps");

/*
 * Waking the consumer on every record costs the target dearly at 10k
 * barriers/s (the recorder competes for its cores): the consumer drains
 * every 100 ms anyway, so wake it only when the buffer is filling up.
 */
static __always_inline __u64 wakeup_flags(void)
{
	return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) > wakeup_bytes ?
		BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

static __always_inline struct sb_follow *follow_of(__u32 tgid)
{
	return bpf_map_lookup_elem(&followed, &tgid);
}

static __always_inline bool is_target(void)
{
	return follow_of((__u32)(bpf_get_current_pid_tgid() >> 32)) != NULL;
}

/* counters: a per-CPU array of __u64; drops are never silent */
static __always_inline void count_in(void *counters, __u32 which)
{
	__u64 *c = bpf_map_lookup_elem(counters, &which);

	if (c)
		(*c)++;
}

#endif
