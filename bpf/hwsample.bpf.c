// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The hardware path of `scalebpf record`, on machines with a PMU: an LBR
 * sampler (branch stacks -> sampled taken-branch edges) and a PEBS load
 * sampler (precise IP, data address, latency, data source).  A separate
 * object from record.bpf.c so that machines without a PMU never load it;
 * userspace points its `events` map at record.bpf.c's ring buffer
 * (bpf_map__reuse_fd), so one consumer sees every record in one stream.
 *
 * These programs need no PMU to load (the integration test loads them on
 * a VM without one); they only fire where the perf events they attach to
 * can be opened.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "sbpf_events.h"
#include "target.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* The kernel's PERF_SAMPLE_* bits for perf_sample_data.sample_flags: the
 * fields of a sample are valid only when their bit is set (kernel >= 6.1). */
#define SB_PERF_SAMPLE_ADDR (1ull << 3)
#define SB_PERF_SAMPLE_WEIGHT (1ull << 14)
#define SB_PERF_SAMPLE_DATA_SRC (1ull << 15)
#define SB_PERF_SAMPLE_WEIGHT_STRUCT (1ull << 24)

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SB_HWCNT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} hw_counters SEC(".maps");

/* Kernel >= 6.2: gives the kernel context behind bpf_perf_event_data,
 * the only way to the sample's weight and data source.  Verified to load
 * with libbpf 1.1 + clang 14 on 6.18 (tests/integration/hw.sh); on an
 * older kernel the whole object fails to load and --events auto falls
 * back to software sampling, saying so. */
extern void *bpf_cast_to_kern_ctx(void *obj) __ksym;

static __always_inline void count(__u32 which)
{
	count_in(&hw_counters, which);
}

/* On a cycles (or taken-branch) event sampled with
 * PERF_SAMPLE_BRANCH_STACK: the last SB_LBR_MAX taken branches. */
SEC("perf_event")
int on_lbr(struct bpf_perf_event_data *ctx)
{
	struct sb_rec_lbr *r;
	long n;

	if (!is_target())
		return 0;
	r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	if (!r) {
		count(SB_HWCNT_DROP_LBR);
		return 0;
	}
	r->hdr.type = SB_REC_LBR;
	r->hdr.size = sizeof(*r);
	r->hdr.tid = (__u32)bpf_get_current_pid_tgid();
	r->hdr.ts = bpf_ktime_get_ns();
	r->ip = ctx->regs.ip;
	r->pad = 0;
	/* Writes whole perf_branch_entry records, newest first, and returns
	 * the bytes written; the kernel checks the size. */
	n = bpf_read_branch_records(ctx, r->br, sizeof(r->br), 0);
	if (n < 0) {
		count(SB_HWCNT_LBR_ERR);
		n = 0;
	}
	r->nr = (__u32)((__u64)n / sizeof(struct sb_branch));
	count(SB_HWCNT_LBR);
	bpf_ringbuf_submit(r, wakeup_flags());
	return 0;
}

/* On a PEBS load-latency event (precise_ip >= 1): the IP is the load
 * itself, not the instruction after it. */
/* A PEBS memory sample: the load-latency (or all-loads) event, or the
 * precise all-stores event where the CPU has one (store: no latency, and
 * its data source, if any, says only that it is a store). */
static __always_inline int emit_mem(struct bpf_perf_event_data *ctx, bool store)
{
	struct bpf_perf_event_data_kern *kctx;
	struct perf_sample_data *data;
	struct sb_rec_load *r;
	__u64 flags;

	if (!is_target())
		return 0;
	r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	if (!r) {
		count(store ? SB_HWCNT_DROP_STORE : SB_HWCNT_DROP_LOAD);
		return 0;
	}
	r->hdr.type = SB_REC_LOAD;
	r->hdr.size = sizeof(*r);
	r->hdr.tid = (__u32)bpf_get_current_pid_tgid();
	r->hdr.ts = bpf_ktime_get_ns();
	r->ip = ctx->regs.ip;
	r->addr = 0;
	r->weight = 0;
	r->data_src = 0;
	r->flags = store ? SB_LOAD_STORE : 0;
	r->pad = 0;
	kctx = bpf_cast_to_kern_ctx(ctx);
	data = kctx->data;
	flags = data ? data->sample_flags : 0;
	if (flags & SB_PERF_SAMPLE_ADDR) {
		r->addr = ctx->addr;
		r->flags |= SB_LOAD_HAVE_ADDR;
	}
	/* Load latency is the low 32 bits with WEIGHT_STRUCT, all of it
	 * with plain WEIGHT. */
	if (flags & SB_PERF_SAMPLE_WEIGHT_STRUCT) {
		r->weight = data->weight.var1_dw;
		r->flags |= SB_LOAD_HAVE_WEIGHT;
	} else if (flags & SB_PERF_SAMPLE_WEIGHT) {
		r->weight = data->weight.full;
		r->flags |= SB_LOAD_HAVE_WEIGHT;
	}
	if (flags & SB_PERF_SAMPLE_DATA_SRC) {
		r->data_src = data->data_src.val;
		r->flags |= SB_LOAD_HAVE_SRC;
	}
	count(store ? SB_HWCNT_STORE : SB_HWCNT_LOAD);
	bpf_ringbuf_submit(r, wakeup_flags());
	return 0;
}

SEC("perf_event")
int on_load(struct bpf_perf_event_data *ctx)
{
	return emit_mem(ctx, false);
}

SEC("perf_event")
int on_store(struct bpf_perf_event_data *ctx)
{
	return emit_mem(ctx, true);
}
