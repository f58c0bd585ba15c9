/* SPDX-License-Identifier: MIT */
/*
 * Phase times of a recording, for finding where the fixed cost of a
 * short run goes: SCALEBPF_TIMING=1 prints, at the end, each phase's
 * start (ms since the recorder started) and length to stderr.  Off, a
 * mark is one load and a branch.
 */
#ifndef SB_REC_TIMING_H
#define SB_REC_TIMING_H

#include <stdint.h>

/* Marks the start of a phase (the previous one ends there); name is a
 * string literal.  Thread-safe for marks from one thread at a time. */
void sb_tm_mark(const char *name);
/* A span of another thread (monotonic ns), printed after the phases. */
void sb_tm_span(const char *name, uint64_t start_ns, uint64_t end_ns);
/* Prints the phases (once), when SCALEBPF_TIMING is set. */
void sb_tm_report(void);

#endif
