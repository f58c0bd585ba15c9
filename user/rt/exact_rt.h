/* SPDX-License-Identifier: MIT */
/*
 * The exact-mode runtime linked into programs built by `scalebpf cc`:
 * per-thread basic-block counts (clang's trace-pc-guard callbacks) flushed
 * to scalebpf_exact_batch() whenever a segment of work ends (see
 * include/sbpf_events.h).  The wrappers (wrap_*.c, linked with
 * -Wl,--wrap=NAME) flush before a thread reaches a sync that closes a
 * segment, so each batch holds the work of exactly one segment.
 */
#ifndef SB_EXACT_RT_H
#define SB_EXACT_RT_H

#include <stdbool.h>
#include <stdint.h>

/* Flushes the calling thread's counts; flags: 0 or SB_EXACT_LAST. */
void sb_exact_flush(uint16_t flags);

/* Flushes and frees the calling thread's counters (its work is done). */
void sb_exact_thread_done(void);

/* cv_signalled.c: condvars pthread_cond_signal was called on (queues
 * not barriers), whose waits need no flush. */
void sb_cv_mark_signalled(const void *cv);
bool sb_cv_signalled(const void *cv);

/* In trace_mem.c, linked only into `scalebpf cc --trace-mem` programs
 * (weak: absent otherwise): a sync record at each segment end, and the
 * end of a thread's trace. */
void sb_trace_sync(uint16_t flags) __attribute__((weak));
void sb_trace_thread_done(void) __attribute__((weak));

#endif
