/* SPDX-License-Identifier: MIT */
/*
 * Footprint probes: the recorder's sampled cache profile without a PMU
 * (analysis/chip/chip_footprint.h says what they measure and why).  A
 * probe: in a thread a cpu-clock sample just saw running, four one-shot
 * read/write watchpoints (PERF_TYPE_BREAKPOINT, 8 bytes each: x86's four
 * debug registers) on a 32-byte granule drawn uniformly from the bytes of
 * the process's writable private mappings, for a window of 0.1 to 20 ms
 * (taken in turn); then whether any fired.  A window's length is the
 * thread's own time on a CPU in it (BPF's switch accounting), and a probe
 * whose thread spent most of it off a CPU is dropped and counted: on a
 * busy host wall time would stretch the windows with time nothing was
 * touched.  One probe at a time, within a
 * budget of probes per second; a probe costs the recorder ~0.1 ms of
 * system calls and the target one trap at most.  Probes that cannot arm
 * (the thread's debug registers held, by sampled sharing's watchpoints or
 * a debugger: ENOSPC; the thread gone) are counted, not taken.
 */
#ifndef SB_RECORD_FOOTPRINT_H
#define SB_RECORD_FOOTPRINT_H

#include <stddef.h>
#include <stdint.h>

#define SB_FPROBE_DEFAULT_RATE 100   /* probes per second: --chip */

struct sb_fprobe;
struct sb_profile;

/* rate: probes per second (> 0).  NULL: no memory. */
struct sb_fprobe *sb_fprobe_alloc(unsigned rate);
void sb_fprobe_free(struct sb_fprobe *f);

/* A sample saw thread tid of process pid running at ts. */
void sb_fprobe_running(struct sb_fprobe *f, int pid, uint32_t tid, uint64_t ts);

/* Ends a due probe, arms the next within the budget; ms until the next
 * thing due (the poll's timeout), -1 when nothing is. */
struct sb_bpf;
int sb_fprobe_tick(struct sb_fprobe *f, struct sb_bpf *bpf, uint64_t now);
/* Closes the open probe (not counted). */
void sb_fprobe_stop(struct sb_fprobe *f);

/* A whole-run CHIP row of mode sampled (max_bytes, line: the profile's
 * shape) and chip_fp_* metadata; 0, or -1 without memory. */
int sb_fprobe_store(const struct sb_fprobe *f, struct sb_profile *p, uint64_t max_bytes,
		    uint32_t line);

/* A row per section and --region function with SB_CHIP_REGION_MIN_PROBES
 * probes of its own (analysis/chip/chip_probes.h: a window inside one of
 * its instances, one of its calls: spans), after the sections are in p;
 * 0, or -1 without memory. */
struct sb_chip_span;
int sb_fprobe_store_regions(const struct sb_fprobe *f, struct sb_profile *p, uint64_t max_bytes,
			    uint32_t line, const struct sb_chip_span *spans, size_t nspans);

#endif
