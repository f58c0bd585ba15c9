/* SPDX-License-Identifier: MIT */
/*
 * Private to the causes module.  causes.c is the driver (one section at a
 * time: pool, analyse, locate); causes_samples.c pools block samples,
 * causes_exact.c and causes_hw.c pool the exact and the hardware paths'
 * vectors.  All of them call down into causes_pool.c, which calls none of
 * them.
 */
#ifndef SB_CAUSES_PRIV_H
#define SB_CAUSES_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfg/cfg.h"
#include "lime/lime.h"
#include "profile/profile.h"

/* ---- causes_pool.c ---- */

/* The profile's CFGs as one graph; slot i = profile binary i. */
struct sb_causes_graph {
	struct sb_cfg **per_bin;
	uint32_t *offset;
	struct sb_cfg *merged;
};

/* 0, -ENOMEM, or -EINVAL with err filled (a damaged CFG).  g is left for
 * sb_causes_graph_free() either way. */
int sb_causes_graph_load(const struct sb_profile *p, struct sb_causes_graph *g,
			 char *err, size_t errlen);
void sb_causes_graph_free(struct sb_causes_graph *g, size_t nbin);

/* One LIME instance built from a section's pooled vectors. */
struct sb_causes_pooled {
	struct sb_lime_instance in;
	struct sb_lime_event *ev;
	double *counts, *time;
};

#define SB_CAUSES_MAX_THREADS 256

/* The merged-graph block of a profile event, or -1. */
long sb_causes_event_block(const struct sb_profile *p, const struct sb_causes_graph *g,
			   const struct sb_event_def *d);

/* The merged-graph block of profile location loc (a section's sync), or
 * -1. */
long sb_causes_loc_block(const struct sb_profile *p, const struct sb_causes_graph *g, uint32_t loc);

/* The nearest line of block b (merged): the last profile location inside
 * it with a line, nearest its branch; -1 when none. */
int32_t sb_causes_block_line(const struct sb_profile *p, const struct sb_causes_graph *g,
			     uint32_t b);

/* Two locations on one source line (same binary, file and line). */
bool sb_causes_same_line(const struct sb_loc *a, const struct sb_loc *b);


/* Section s's threads (tids, first seen first; at most
 * SB_CAUSES_MAX_THREADS) and their summed busy times (time[nt]). */
uint32_t sb_causes_threads(const struct sb_profile *p, uint32_t s, const size_t *ninst_vec,
			   uint32_t *tids, double **time);

/* Column of each of instance i's threads in tids (nt when absent). */
void sb_causes_columns(const struct sb_instance *in, const uint32_t *tids, uint32_t nt,
		       uint32_t *col);

/* Fills li->in from li->time, li->ev: nt threads, nevents events, the
 * imbalance (§3.6 weight) from the pooled busy times. */
void sb_causes_pooled_set(struct sb_causes_pooled *li, uint32_t nt, size_t nevents);
void sb_causes_pooled_free(struct sb_causes_pooled *li);

/* Instance in's lost thread-time (the sum of its threads' idle time at the
 * closing sync, ns); instance indexes inst[n] sorted most lost first
 * (ties by index). */
double sb_causes_lost(const struct sb_instance *in);
void sb_causes_sort_by_lost(const struct sb_profile *p, uint32_t *inst, size_t n);

/* ---- the pooling paths ---- */

/*
 * Block samples (causes_samples.c): section s's instances pooled into
 * BLOCK events, per thread.  0, -ENOENT (no instance), -ENOMEM.
 */
int sb_causes_pool_samples(const struct sb_profile *p, const struct sb_causes_graph *g,
			   uint32_t s, size_t **by_inst, const size_t *ninst_vec,
			   struct sb_causes_pooled *li);

/* Marks skip[e] for the block-sample events of section s that are no
 * LIME events (causes_frames.c: library code, enclosing frames): their
 * samples are already the program's calls'.  0 or -ENOMEM. */
int sb_causes_sample_skips(const struct sb_profile *p, const struct sb_causes_graph *g,
			   uint32_t s, uint8_t *skip);

/* Block-sample columns are busy-time ranks within each instance (see
 * causes_samples.c).  The width of section s's rank columns: its widest
 * stored instance, at most SB_CAUSES_MAX_THREADS. */
uint32_t sb_causes_rank_width(const struct sb_profile *p, uint32_t s);

/* Section s's columns (causes_samples.c): busy-rank columns where the
 * imbalance rotates among threads (share < 0.5), else one per thread.
 * Instance i's thread slot t spreads evenly over the columns' interval
 * [lo, hi) (per thread: [c, c + 1), its thread's column c; ranked: the
 * share of its group's columns its busy rank among the group's pairs
 * with as many samples gives it). */
struct sb_causes_ranks {
	uint32_t nt;        /* columns */
	int ranked;
	double share;       /* thread identity's share of the variance */
	size_t *first;      /* per profile instance; SIZE_MAX: other section */
	double *lo, *hi;    /* slot's columns: the interval [lo, hi) */
	uint8_t *whole;     /* per profile instance: each group of its
			     * ranking one stratum (or per thread): its
			     * samples count how much, not only where */
};
int sb_causes_rank_plan(const struct sb_profile *p, uint32_t s, struct sb_causes_ranks *r);
/* Adds instance i's per-slot values v into the nt columns cols. */
void sb_causes_rank_add(const struct sb_causes_ranks *r, const struct sb_profile *p, uint32_t i,
			const double *v, double *cols);
void sb_causes_rank_free(struct sb_causes_ranks *r);

/* Function f's calls, followed along CALL edges (tail calls too; not
 * into `scalebpf cc`'s counting callback) within depth calls, reach
 * function to.  unknown: a call that leaves the graph (a library's PLT
 * stub, a pointer: the OpenMP runtime running a region, a thread's start)
 * or the depth running out counts as reaching it too ("may lead there");
 * else only CALL edges that do (causes_frames.c).  left: nfuncs bytes of
 * scratch, zeroed by the caller. */
bool sb_causes_calls_reach(const struct sb_cfg *m, uint32_t f, uint32_t to, int depth,
			   bool unknown, uint8_t *left);

/* Exact mode: what section s's hardware test (causes_exact.c: between
 * threads, F(1, nthreads - 2) at level over m events) rests on, for the
 * power of causes_evidence.c (sb_causes_pool_exact's hw). */
struct sb_causes_exact_hw {
	uint32_t nthreads;      /* threads the test compares */
	size_t m;               /* its varying hardware events */
	double level;           /* its level, Bonferroni over m */
	uint32_t ninst;         /* instances pooled (at most a bound of pairs) */
	double room;            /* the bound over the pairs pooled (>= 1) */
	double time[SB_CAUSES_MAX_THREADS];    /* busy s per thread, pooled */
	double samples[SB_CAUSES_MAX_THREADS]; /* the hardware events' samples */
};

/* An exact-mode pool's columns: (instance, thread) pairs, column c being
 * thread tix[c] of ntix. */
struct sb_causes_cols {
	uint32_t ncols, ntix;
	const uint32_t *tix;
	uint32_t ninst;
	const uint32_t *off;    /* first column of each instance */
};

/* Centres each instance's columns of x (its threads' deviations). */
void sb_causes_centre(const struct sb_causes_cols *pl, double *x);

/* The hardware test's level (causes_exact_hw.c), before Bonferroni. */
#define SB_CAUSES_EXACT_HW_ALPHA 0.05

/* Each column of x becomes its thread's mean over its columns (sum, cnt:
 * ntix scratch). */
void sb_causes_thread_means(const struct sb_causes_cols *pl, double *x, double *sum,
			    uint32_t *cnt);

/* The rows of li's first n events, centred per instance, become what LIME
 * reads: HW and COUNT rows their threads' means (re-centred), and HW rows
 * without evidence of hardware behaviour zeroes (causes_exact_hw.c); hz
 * the sampling rate (0: unknown); ty, x: ncols scratch, sum, cnt: ntix.
 * Returns how many HW events vary, the test's m, or -1 without memory. */
long sb_causes_drop_unproven_hw(const struct sb_causes_cols *pl, struct sb_causes_pooled *li,
				size_t n, double hz, double *ty, double *x, double *sum,
				uint32_t *cnt);

/*
 * Exact mode (the profile has SB_EVK_BLOCK_COUNT vectors): section s's
 * instances as (instance, thread) pairs, centred per instance (li->in.
 * ngroups instances, the most imbalanced up to a bound), into EDGE events
 * (cfg_flow.h) and, for the block samples, HW events whose superior is
 * their block's exact count (§3.1); hw, when not NULL, is filled as
 * above.  0, -ENOENT (no instance of 3 threads or more), -ENOMEM.
 */
int sb_causes_pool_exact(const struct sb_profile *p, const struct sb_causes_graph *g,
			 uint32_t s, size_t **by_inst, const size_t *ninst_vec,
			 struct sb_causes_pooled *li, struct sb_causes_exact_hw *hw);

/* Exact mode (causes_sync.c): sets skip[e] on the edges by which a thread
 * leaves a section at closing calls (cut[b]: b's call closes a segment)
 * and comes back, which follow who arrived last; guard is the coverage
 * callback's entry block.  0 or -ENOMEM. */
int sb_causes_sync_edges(const struct sb_cfg *m, const uint8_t *cut, uint32_t guard,
			 uint8_t *skip);

/*
 * Hardware path (SB_EVK_EDGE vectors: LBR): sampled edge executions and
 * latency-weighted PEBS loads, see causes_hw.c.  0, -ENOENT, -ENOMEM.
 */
int sb_causes_pool_hw(const struct sb_profile *p, const struct sb_causes_graph *g,
		      uint32_t s, size_t **by_inst, const size_t *ninst_vec,
		      struct sb_causes_pooled *li);

/* ---- causes_locate.c ---- */

struct sb_cause;
struct sb_lime_result;

/* Places cause c (kind set) of LIME leader address `tagged` at the profile
 * location a reader acts on: c->loc, c->addr, c->binary. */
void sb_causes_locate(const struct sb_profile *p, const struct sb_causes_graph *g,
		      uint64_t tagged, struct sb_cause *c);

/* The merged-graph block cause c was placed in: its address's (its
 * location may be another block's, a hoisted test's statement line), else
 * its location's; -1. */
long sb_causes_cause_block(const struct sb_profile *p, const struct sb_causes_graph *g,
			   const struct sb_cause *c);

/* Cause c, shown at a branch gcc hoisted out of a loop it copied (both
 * ways reach the same empty statement row, sb_event_def.stmt_line), is
 * shown at that statement's line instead (causes_entered.c). */
void sb_causes_hoisted_line(const struct sb_profile *p, const struct sb_causes_graph *g,
			    struct sb_cause *c);

/* ---- causes_callee.c ---- */

/* The block standing in for plain call site blk's samples inside its
 * callee (tagged address), or 0: see causes_callee.c. */
uint64_t sb_causes_callee_leader(const struct sb_profile *p, const struct sb_causes_graph *g,
				 uint32_t s, uint32_t blk);
/* Block blk heads a loop that holds a section's closing sync: the loop
 * repeats instances, not work within one. */
bool sb_causes_repeats_sections(const struct sb_profile *p, const struct sb_causes_graph *g,
				long blk);

/* Leader blk's function has no call edge into it but tail calls' (a tail
 * call's target, a pointer's): the most sampled of two or more call
 * blocks on one line whose samples hold the function's on every thread,
 * or -1. */
long sb_causes_holding_calls(const struct sb_profile *p, const struct sb_causes_graph *g,
			     uint32_t s, uint32_t blk);

/* A sampled leader that heads a loop and ends in a call: the loop repeats
 * the callee's work (block b merged, -1 for none). */
bool sb_causes_repeats_call(const struct sb_cfg *g, long b);

/* The profile location of a cause from the block event whose start or
 * last instruction is the (tagged) address (causes_locate.c); block b's
 * samples over the whole profile; sb_cfg_guards() of block b, padding a
 * compiler leaves after a `jmp` being no path (-1: none). */
void sb_causes_locate_insn(const struct sb_profile *p, uint64_t tagged, struct sb_cause *c);
uint64_t sb_causes_block_samples(const struct sb_profile *p, const struct sb_causes_graph *g,
				 uint32_t b);
long sb_causes_guards(const struct sb_cfg *g, uint32_t b, uint32_t *gs);

/* A sampled leader in a callee called from copies of one call site (the
 * line with the most calls): shown at the most sampled copy's guard.
 * True when c moved.  See causes_callee.c. */
bool sb_causes_call_copies(const struct sb_profile *p, const struct sb_causes_graph *g,
			   uint32_t blk, struct sb_cause *c);

/* Where causes_locate.c shows a loop's cause (the latch's branch of the
 * loop headed by head) and a guarded block's (its guard's branch, one
 * source line); false, c unchanged, when the profile names no line. */
bool sb_causes_locate_latch(const struct sb_profile *p, const struct sb_cfg *g, uint32_t head,
			    struct sb_cause *c);
/* c at block b's branch (b a latch of the loop headed by head), or the
 * block before it when the profile has no line for that branch. */
bool sb_causes_locate_branch(const struct sb_profile *p, const struct sb_cfg *g, long b,
			     uint32_t head, struct sb_cause *c);
/* Block b ends in a conditional branch; *latch: an edge out of it is a
 * back edge (a loop's latch: it decides trip counts, not entry). */
bool sb_causes_conditional(const struct sb_cfg *g, uint32_t b, bool *latch);
bool sb_causes_locate_guard(const struct sb_profile *p, const struct sb_causes_graph *g,
			    uint32_t blk, struct sb_cause *c);

/* ---- causes_copies.c ---- */

/* Exact mode: block blk (merged) is a function's entry named as a CALL
 * cause; the counted block of its callers' decision, the most executed
 * copy on the one source line whose summed counts match the entry's
 * (copies of one guarded call, a call through a pointer or a tail jump),
 * or -1.  See causes_copies.c. */
long sb_causes_copies_caller(const struct sb_profile *p, const struct sb_causes_graph *g,
			     uint32_t s, long blk);

/* ---- causes_entered.c ---- */

/* Sampled leader block blk (merged) in a loop that some of section s's
 * threads never sampled while the others sampled it too much for that to
 * be chance: they did not enter it.  The block whose conditional in-edge
 * enters the loop (its header, or the preheader before it), whose guard
 * is the decision; -1 when the test does not hold, or when that block is
 * found fewer than min_depth loops out (1: only through the loop around,
 * for a loop entered straight after a call; exact counts show a loop's
 * own entering test as an event of its own). */
long sb_causes_entered(const struct sb_profile *p, const struct sb_causes_graph *g,
		       uint32_t s, uint32_t blk, int min_depth);

/* The preheader of the loop sampled leader blk (merged) heads or closes
 * (header in *head), the block whose guard decides how often threads
 * enter it; -1 when the loop is entered at its header, blk is in no loop
 * or no loop inside section repeats the entry.  See causes_entered.c. */
long sb_causes_preheader(const struct sb_profile *p, const struct sb_causes_graph *g,
			 uint32_t blk, uint32_t *head);

/* Section s's threads (tids[], at most max), the instances each is in
 * (n[]) and their samples (or exact counts, in a `scalebpf cc` profile)
 * in the blocks of function f that body (a byte per block of f) marks
 * (S[]).  Returns how many threads. */
uint32_t sb_causes_body_samples(const struct sb_profile *p, const struct sb_causes_graph *g,
				uint32_t s, uint32_t f, const uint8_t *body, uint32_t *tids,
				double *n, double *S, uint32_t max);

/* Whether the threads without samples in the blocks (S[t] == 0 over n[t]
 * instances, from sb_causes_body_samples) did not run them: see the test
 * of causes_entered.c. */
bool sb_causes_not_entered(const double *n, const double *S, uint32_t nt);

/* ---- causes_tail.c ---- */

/* The one block that calls or tail-calls function f (merged) when that
 * is its only caller in the graph; -1 otherwise (none, or several). */
long sb_causes_only_caller(const struct sb_cfg *m, uint32_t f);

/* Sampled leader block blk (merged) in a function only tail calls enter,
 * which some of section s's threads never ran: the branch that sends
 * threads into the tail calls, placed in *at (from *at's fields); false,
 * *at unchanged, otherwise.  See causes_tail.c. */
bool sb_causes_tail_guard(const struct sb_profile *p, const struct sb_causes_graph *g,
			  uint32_t s, long blk, struct sb_cause *at);

/* ---- causes_alternatives.c ---- */

/* A sampled cause c of section s, placed in a loop: the other decisions
 * its samples cannot be told from (the branch entering the loop, the
 * loops around it), nearest first, placed into alt[] (at most max).
 * Returns how many, 0 when the samples settle it, or -ENOMEM.  See
 * causes_alternatives.c. */
long sb_causes_alternatives(const struct sb_profile *p, const struct sb_causes_graph *g,
				 uint32_t s, const struct sb_cause *c, struct sb_cause *alt,
				 size_t max);

/* ---- causes_ties.c ---- */

/* Among causes of about equal score, a leader inside a function another
 * leader calls ranks after that caller (and the exception there). */
void sb_causes_order_ties(const struct sb_cfg *g, struct sb_lime_result *r);

/* Causes in the code of the sync that closes section s (a condvar
 * barrier's release path: the effect of imbalance) rank after the rest.
 * at[r->ncauses] receives each cause placed (sb_causes_locate), in the new
 * order; causes of no positive score are left unplaced (loc -1).  0 or
 * -ENOMEM (r unchanged). */
int sb_causes_sink_sync(const struct sb_profile *p, const struct sb_causes_graph *g, uint32_t s,
			struct sb_lime_result *r, struct sb_cause *at);

/* ---- causes_evidence.c ---- */

/* Fills out->ev, one entry per section with instances, from the profile,
 * its loaded graph g, the options LIME ran with and the causes already in
 * out.  0 or -ENOMEM. */
struct sb_causes;
int sb_causes_evidence_fill(const struct sb_profile *p, const struct sb_causes_graph *g,
			    const struct sb_lime_opts *o, struct sb_causes *out);

/* The derivation is in causes_evidence.c.  Pr[noncentral chi-square (k
 * degrees of freedom, noncentrality delta) > x]; the delta at which the
 * dispersion test of n columns at level alpha has the given power; the
 * samples per thread that give power 0.8 with rank-column busy times
 * time[n] and m block events (INFINITY: none do, the times are equal);
 * the profile's sampling rate in Hz (0 unknown). */
double sb_causes_ncx2_sf(double x, double k, double delta);
/* Pr[noncentral F (1, d2 degrees of freedom, noncentrality delta) > x]. */
double sb_causes_ncf1_sf(double x, double d2, double delta);
double sb_causes_delta_needed(uint32_t n, double alpha, double power);
double sb_causes_samples_needed(const double *time, uint32_t n, size_t m, double alpha);
double sb_causes_sample_hz(const struct sb_profile *p);

#endif
