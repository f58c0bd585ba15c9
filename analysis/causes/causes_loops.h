/* SPDX-License-Identifier: MIT */
/*
 * Natural loops of one function of a CFG, for placing sampled causes
 * (causes_locate.c): which loop holds a block, which loop encloses that
 * one, and how a loop ends.  Bodies are byte maps over the function's
 * blocks (index b - first_block).
 */
#ifndef SB_CAUSES_LOOPS_H
#define SB_CAUSES_LOOPS_H

#include <stdbool.h>
#include <stdint.h>

#include "cfg/cfg.h"

/* The header of the innermost loop of block b's function that holds b
 * (body filled, its function's nblocks bytes), or -1 (none, or no memory). */
long sb_causes_loop_of(const struct sb_cfg *g, uint32_t b, uint8_t *body);

/* The innermost loop strictly enclosing the loop of header h (body inner):
 * its header, body filled in outer; or -1. */
long sb_causes_loop_around(const struct sb_cfg *g, uint32_t h, const uint8_t *inner,
			   uint8_t *outer);

/* How many blocks of the loop leave it (an edge to a block of the
 * function outside it): 1 for a loop that ends only at its test, 2 or
 * more for one with an early exit (a search's `break`, a `&&` test). */
uint32_t sb_causes_loop_exits(const struct sb_cfg *g, uint32_t f, const uint8_t *body);

/* The loop's test: the one block of it that leaves it, when that block
 * ends in a conditional branch; -1 when more than one leaves (a `break`)
 * or none decides. */
long sb_causes_loop_test(const struct sb_cfg *g, uint32_t f, const uint8_t *body);

/* Where the loop decides to repeat through latch (a source of a back edge
 * into the header): the latch when it ends in a conditional branch, else
 * (it falls or jumps into the header: gcc -O3's rotated loop entered by a
 * jump, `jmp test_part; top: reload; test_part: ... jne top`, whose back
 * edge is the reload's fall into the part the entry jumped to) the loop's
 * test, sb_causes_loop_test.  -1 when there is none. */
long sb_causes_latch_test(const struct sb_cfg *g, uint32_t latch, uint32_t f,
			  const uint8_t *body);

/* The loop of header h (body) runs the same number of trips each time it
 * is entered, as far as its code shows: every latch (source of a back
 * edge into h) decides (sb_causes_latch_test) by a branch on a constant
 * bound (SB_BLOCK_CONST_BOUND, cfg.h: a counter compared with, or
 * counted down from, a constant) and
 * no other block leaves the loop (a `break` ends it where its data says).
 * False for graphs without block flags (profiles recorded before them). */
bool sb_causes_loop_fixed_trips(const struct sb_cfg *g, uint32_t f, uint32_t h,
				const uint8_t *body);

/* A block of the loop ends in a call. */
bool sb_causes_loop_calls(const struct sb_cfg *g, uint32_t f, const uint8_t *body);

/* The blocks of outer that are not inner's only repeat it: none ends in a
 * call, none branches to two places inside outer (a decision inside it,
 * such as a guard of the inner loop). */
bool sb_causes_loop_only_repeats(const struct sb_cfg *g, uint32_t f, const uint8_t *outer,
				 const uint8_t *inner);

/* Blocks x and y are both latch tests of one header, x's other way
 * leaving the loop and y's staying in it: clang -O3 rotates `for (h <
 * trips) for (r < N)` into one loop whose header both back edges enter
 * (the outer's by a `jmp` into the inner body); y is the inner loop's
 * test, x the outer's. */
bool sb_causes_rotated_outer(const struct sb_cfg *g, uint32_t x, uint32_t y);

/* Block b (merged, -1 none) lies in a loop with an early exit: two or
 * more of the loop's blocks leave it (a search's `&&` test or `break`),
 * so its trip count is its data's by construction. */
bool sb_causes_in_early_exit_loop(const struct sb_cfg *g, long b);

/* The first of a run of blocks that are each one call of one callee, each
 * entered only from the one before, that ends at block b (b itself when
 * it is no such call): a loop of calls the compiler unrolled whole (gcc
 * -O3's `for (h < 1 + 5 * odd) relax(83)`, six calls in a row for the
 * odd threads).  The run is one piece of work, guarded where its first
 * call is; its last call, where the samples of the run's end fall, has
 * no guard of its own. */
uint32_t sb_causes_unrolled_first(const struct sb_cfg *g, uint32_t b);

/* The branches that enter a run of calls of one callee (block b, one
 * call, and the calls whose return enters it, back as far as such calls
 * go) when the run is entered at several of its calls: gcc -O3 unrolls
 * `for (i) for (j) if ((i + j) % n != who) continue; run_part();` into
 * chains of calls that each owner test jumps into at its own place
 * (blind seed AC p029).  Stored in gs (at most SB_CFG_MAX_GUARDS), their
 * count; -1 when b is no such call, or anything but a branch (straight
 * code, another call's return) enters the run. */
long sb_causes_run_guards(const struct sb_cfg *g, uint32_t b, uint32_t *gs);

#endif
