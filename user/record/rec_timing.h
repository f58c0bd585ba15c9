/* SPDX-License-Identifier: MIT */
/*
 * Phase times of a recording, for finding where the fixed cost of a
 * short run and the time after the target's exit go: SCALEBPF_TIMING=1
 * prints, at the end, to stderr, each phase's start (ms since the
 * recorder started, whose CLOCK_REALTIME the header gives, to compare
 * with a workload's SB_WALL_FILE exit time), its wall time and the
 * recorder's CPU time in it (all threads: under load wall time
 * stretches, CPU time does not).  A phase entered more than once (an
 * exec followed) is summed, its count shown.  Off, a mark is one load
 * and a branch.
 */
#ifndef SB_REC_TIMING_H
#define SB_REC_TIMING_H

#include <stdint.h>

/* Marks the start of a phase (the previous one ends there); name is a
 * string literal.  From one thread at a time. */
void sb_tm_mark(const char *name);
/* A span of another thread (monotonic ns) and that thread's CPU time in
 * it (sb_tm_thread_cpu_ns), printed after the phases. */
void sb_tm_span(const char *name, uint64_t start_ns, uint64_t end_ns, uint64_t cpu_ns);
/* Prints the phases (once), when SCALEBPF_TIMING is set. */
void sb_tm_report(void);
/* The recorder's CPU time so far, all its threads, ns (0 on failure). */
uint64_t sb_tm_cpu_ns(void);
/* The calling thread's CPU time, ns. */
uint64_t sb_tm_thread_cpu_ns(void);

#endif
