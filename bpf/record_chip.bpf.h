/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Part of record.bpf.c (its maps, copy_batch, is_target, count): the
 * cache hit profile's programs.  A `scalebpf cc --chip` program's
 * segment counters (chip_batch), where each of its threads keeps its
 * counters (chip_thread), and `record --region FUNC`'s entry and return
 * records with them (region_enter, region_exit).
 */
#ifndef SB_RECORD_CHIP_BPF_H
#define SB_RECORD_CHIP_BPF_H

/* `scalebpf cc --chip`: the segment's cache hit profile counters, passed
 * to scalebpf_chip_batch(batch) just before its exact batch. */
SEC("uprobe")
int chip_batch(struct pt_regs *ctx)
{
	return copy_batch(ctx, sizeof(struct sb_rec_chip), offsetof(struct sb_rec_chip, b),
			  SB_REC_CHIP, SB_CNT_DROP_CHIP, SB_CNT_CHIP_FAULT);
}

/* tid -> where its `scalebpf cc --chip` runtime keeps its CHiP counters
 * (scalebpf_chip_thread). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u64);
} chip_counters SEC(".maps");

SEC("uprobe")
int chip_thread(struct pt_regs *ctx)
{
	__u64 at = PT_REGS_PARM1(ctx);
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	if (!is_target())
		return 0;
	if (at)
		bpf_map_update_elem(&chip_counters, &tid, &at, BPF_ANY);
	else
		bpf_map_delete_elem(&chip_counters, &tid);
	return 0;
}

/*
 * tgid -> where its threads' counters lie from their thread pointer: the
 * runtime keeps them in TLS (sb_chip_k), at one offset in every thread
 * of the executable (user/binary/elfdata.c).  For threads that began
 * before a `record -p` and have not said where theirs are yet (they do
 * at their first access, then every 256 segments: a serial program
 * never would again).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __s64);
} chip_tls SEC(".maps");

/* The counters of the calling thread, 0 if unknown. */
static __always_inline __u64 chip_counters_of(__u32 tid, __u32 tgid)
{
	__u64 *at = bpf_map_lookup_elem(&chip_counters, &tid);
	struct task_struct *task;
	__s64 *off;

	if (at)
		return *at;
	off = bpf_map_lookup_elem(&chip_tls, &tgid);
	task = bpf_get_current_task_btf();
	if (!off || !bpf_core_field_exists(task->thread.fsbase))   /* x86-64 */
		return 0;
	return BPF_CORE_READ(task, thread.fsbase) + *off;
}

/* A --region function entered or returned (struct sb_rec_region). */
static __always_inline int emit_region(struct pt_regs *ctx, bool enter)
{
	__u64 id = bpf_get_current_pid_tgid(), at;
	__u32 tid = (__u32)id;
	struct sb_rec_region *r;

	if (!is_target())
		return 0;
	r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	if (!r) {
		count(SB_CNT_DROP_CHIP);
		return 0;
	}
	r->hdr.type = SB_REC_REGION;
	r->hdr.size = sizeof(*r);
	r->hdr.tid = tid;
	r->hdr.ts = bpf_ktime_get_ns();
	r->region = SB_COOKIE_ID(bpf_get_attach_cookie(ctx));
	r->enter = enter;
	r->counters = 0;
	r->sp = PT_REGS_SP(ctx);
	at = chip_counters_of(tid, (__u32)(id >> 32));
	if (at) {
		if (bpf_probe_read_user(r->depth, sizeof(r->depth) + sizeof(r->accesses),
					(const void *)at)) {
			count(SB_CNT_CHIP_FAULT);
			r->counters = 2;
		} else {
			r->counters = 1;
		}
	}
	bpf_ringbuf_submit(r, wakeup_flags());
	return 0;
}

SEC("uprobe")
int region_enter(struct pt_regs *ctx)
{
	return emit_region(ctx, true);
}

SEC("uretprobe")
int region_exit(struct pt_regs *ctx)
{
	return emit_region(ctx, false);
}

#endif
