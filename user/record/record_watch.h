/* SPDX-License-Identifier: MIT */
/*
 * Sampled sharing at record time (issue 13): sampled data addresses make
 * candidate lines (analysis/coherence/ sb_cosample_*), and hardware
 * watchpoints confirm and classify them.  This file owns the watchpoints:
 * one-shot write watches (PERF_TYPE_BREAKPOINT, 8 bytes, at most four a
 * thread: x86's DR0-3) on up to four words of one candidate line, in the
 * line's threads, for a short window, within a budget of arms per second
 * (lines and threads kept apart per followed process);
 * each hit comes back through the ring buffer (SB_REC_WATCH) with the
 * registers after the store, which are decoded into the bytes written.
 */
#ifndef SB_RECORD_WATCH_H
#define SB_RECORD_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coherence/coherence.h"
#include "sbpf_events.h"

struct sb_bpf;
struct sb_maps;
struct sb_addr;
struct sb_hw_load;
struct sb_profile;
struct sb_watch;

#define SB_WATCH_DEFAULT_RATE 100      /* arms per second, all threads */
/* Short: while a thread holds a breakpoint, each of its context switches
 * also switches debug registers, which cost OpenMP's cyclic split 1.078x
 * at 10 ms windows and 1.032x at 2 ms (make bench); a hot line's writes
 * come within microseconds. */
#define SB_WATCH_WINDOW_NS 2000000ull  /* 2 ms */

/* A disabled watchpoint on the 8 bytes at word in thread tid, for stores
 * (reads too: footprint probes, record_footprint.h): its fd, or -errno
 * (ENOSPC: the thread's four debug registers are held; ESRCH: gone). */
int sb_watch_open(uint32_t tid, uint64_t word, bool reads);
/* The most one thread's watchpoints cover: x86's four debug registers
 * of 8 bytes, on one aligned granule (footprint and reuse probes). */
#define SB_WATCH_GRANULE 32
#define SB_WATCH_WORDS (SB_WATCH_GRANULE / 8)
/* sb_watch_open's watchpoints (reads too) on each word of the granule at
 * granule (aligned): 0 with fds filled, or the first -errno with none
 * left open. */
int sb_watch_open_granule(uint32_t tid, uint64_t granule, int fds[SB_WATCH_WORDS]);
/* Attaches bpf/watch.bpf.h's on_watch (prog_fd) to a watchpoint of
 * sb_watch_open's and enables it for its next traps hits: 0 or -errno. */
int sb_watch_enable(int fd, int prog_fd, int traps);

/* rate: arms per second (0: candidates are kept, none is confirmed).
 * NULL with a message on a bad option or no memory. */
struct sb_watch *sb_watch_alloc(unsigned rate, char *err, size_t len);
void sb_watch_free(struct sb_watch *w);

/* A sample (stack_len: the bytes of its stack copy, 0 without one): a,
 * its decoded access (addr_sampler.h; NULL: none), bin the binary of a's
 * code in maps (the threading runtime's references are told apart); and
 * the accesses the rest of its block is about to make. */
void sb_watch_sample(struct sb_watch *w, struct sb_maps *maps, int pid,
		     const struct sb_rec_sample *rs, uint32_t stack_len, const struct sb_addr *a,
		     int bin);
/* A PEBS load of process pid (the PMU path): its data source picks
 * lines (HITM). */
void sb_watch_load(struct sb_watch *w, struct sb_maps *maps, int pid,
		   const struct sb_hw_load *l);
/* An SB_REC_WATCH record: decodes the store at the trap. */
void sb_watch_hit(struct sb_watch *w, struct sb_maps *maps, int pid,
		  const struct sb_rec_watch *h);
/* Ends a due window (its hits drained from bpf first) and arms the next
 * candidate within the budget.  Returns ms until the next thing due
 * (for the poll's timeout), or -1 when nothing is. */
int sb_watch_tick(struct sb_watch *w, struct sb_bpf *bpf, uint64_t now);
/* Closes every watchpoint (the recording ends, or the target is gone). */
void sb_watch_stop(struct sb_watch *w, struct sb_bpf *bpf, uint64_t now);
/* SHARING rows of mode sampled of process pid (the profile's), and
 * coherence_sampled_* metadata (start_ns: the recording's start, for the
 * time to the first verdict). */
int sb_watch_store(struct sb_watch *w, struct sb_profile *p, int pid, uint64_t period_ns,
		   uint64_t start_ns, sb_coherence_loc_fn loc_of, sb_coherence_name_fn name_of, void *ctx);

#endif
