/* SPDX-License-Identifier: MIT */
/*
 * Reuse probes: the recorder's sampled cache profile with a PMU
 * (analysis/chip/chip_reuse.h says what a probe measures and why it
 * takes its reuse between two traps).  A sampled load (PEBS) names a
 * 32-byte granule and a thread, and its data source whether the private
 * caches served it (near); the prober opens read/write watchpoints on
 * the granule's four words (PERF_TYPE_BREAKPOINT, x86's four debug
 * registers, limit two traps each) with
 * bpf/record.bpf.c's on_watch, which reads the thread's counter of
 * retired memory operations (a per-task perf event in the memops map,
 * opened at the thread's first probe) at each trap.  One probe at a time
 * within a budget per second; a window after arming, and again after
 * the first trap.  The hit-ratio curve is StatStack's; the access count
 * is the PEBS samplers' (samples x period).
 *
 * Without a PMU there is no such counter and `record --chip` takes
 * footprint probes (record_footprint.h) instead.  For testing this
 * plumbing there, SCALEBPF_REUSE_COUNTER=task-clock counts the thread's
 * CPU nanoseconds instead of memory operations and takes candidates from
 * the software samples' decoded addresses: the lengths are then times,
 * and the profile says so (chip_rdx_counter).
 */
#ifndef SB_RECORD_REUSE_H
#define SB_RECORD_REUSE_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sbpf_events.h"

#define SB_RPROBE_WINDOW_NS 5000000ull     /* after arming, and after the
					     * first trap */

struct sb_bpf;
struct sb_profile;
struct sb_rprobe;

struct sb_rprobe_opts {
	unsigned rate;                      /* probes per second (> 0) */
	struct perf_event_attr counter;     /* the per-thread counter */
	char counter_name[128];             /* for the profile */
	bool software;                      /* the test counter (task-clock) */
	uint64_t load_period, store_period; /* the PEBS samplers' (0: none) */
};

/* NULL: no memory. */
struct sb_rprobe *sb_rprobe_alloc(const struct sb_rprobe_opts *o);
void sb_rprobe_free(struct sb_rprobe *p);

/* The test counter when SCALEBPF_REUSE_COUNTER asks for it: true with
 * o filled (rate and periods left to the caller). */
bool sb_rprobe_test_counter(struct sb_rprobe_opts *o);

struct sb_hw_load;
/* A PEBS sample (hw/lbr_pebs.h): counted for the access estimate; a load
 * with its address is the next probe's candidate. */
void sb_rprobe_load(struct sb_rprobe *p, const struct sb_hw_load *l);
/* The test counter's candidates: a software sample of thread tid at ts
 * decoded to an access of addr (from where unknown). */
void sb_rprobe_sample(struct sb_rprobe *p, uint32_t tid, uint64_t ts, uint64_t addr);
/* An SB_REC_WATCH record: true when it is a trap of this prober's probe
 * (then it is taken here). */
bool sb_rprobe_hit(struct sb_rprobe *p, const struct sb_rec_watch *h);

/* Ends a due probe (its traps drained from bpf first), arms the next
 * within the budget.  ms until the next thing due (-1 for NULL). */
int sb_rprobe_tick(struct sb_rprobe *p, struct sb_bpf *bpf, uint64_t now);
/* Thread tid exited: its open probe ends, not counted, and its counter
 * is closed (its slot free).  Safe inside a record's handler. */
void sb_rprobe_thread_gone(struct sb_rprobe *p, struct sb_bpf *bpf, uint32_t tid);
/* Closes the open probe (not counted) and the threads' counters. */
void sb_rprobe_stop(struct sb_rprobe *p, struct sb_bpf *bpf);

/* A whole-run CHIP row of mode sampled-pmu (max_bytes, line: the
 * profile's shape; near_bytes: the private cache a near load hit in, the
 * L2) and chip_rdx_* metadata; 0, or -1 without memory. */
int sb_rprobe_store(const struct sb_rprobe *p, struct sb_profile *pr, uint64_t max_bytes,
		    uint32_t line, uint64_t near_bytes);

/* A row per section and --region function with SB_CHIP_REGION_MIN_PROBES
 * reuse probes of its own (analysis/chip/chip_probes.h; spans: the
 * functions' calls), its accesses its share of the sampled ones; after
 * the sections are in pr.  0, or -1 without memory. */
struct sb_chip_span;
int sb_rprobe_store_regions(const struct sb_rprobe *p, struct sb_profile *pr, uint64_t max_bytes,
			    uint32_t line, uint64_t near_bytes, const struct sb_chip_span *spans,
			    size_t nspans);

#endif
