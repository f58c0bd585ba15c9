/* SPDX-License-Identifier: MIT */
/*
 * Control-flow graphs of a binary, in its own virtual addresses.  Built
 * from ELF + capstone by user/binary/cfg_build.c, carried in profiles so the
 * analysis needs no binary; pure data and graph algorithms here.
 *
 * Blocks are maximal straight-line runs: a block ends at a branch, a call
 * or a return, or before an instruction some branch targets.  A call's
 * block has a CALL_RETURN edge to the block after the call and, for a
 * direct call into the same binary, a CALL edge to the callee's entry (a
 * whole-program graph, as LIME's leader rule needs: a callee shared by
 * several paths is entered from its call sites); a tail call's `jmp`
 * gets one too (SB_BLOCK_TAIL_CALL, below).  An edge is a back edge
 * when its destination dominates its source (a loop's latch -> header),
 * from dominators per function; CALL edges never are.
 */
#ifndef SB_CFG_H
#define SB_CFG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum sb_edge_kind {
	SB_EDGE_FALLTHROUGH = 1, /* conditional branch not taken */
	SB_EDGE_TAKEN,           /* conditional branch taken */
	SB_EDGE_JUMP,            /* unconditional direct jump */
	SB_EDGE_SEQUENTIAL,      /* straight-line into a branch target */
	SB_EDGE_CALL_RETURN,     /* call site block -> block after the call */
	SB_EDGE_CALL,            /* direct call -> the callee's entry block, in
				  * the same binary (interprocedural) */
};

struct sb_cfg_func {
	char *name;
	uint64_t start, end;       /* [start, end) */
	uint32_t first_block;      /* blocks of a function are contiguous */
	uint32_t nblocks;
};

/*
 * SB_BLOCK_CONST_BOUND: the block is the latch of a counted loop with
 * constant bounds, as its machine code shows: it ends in a backward
 * conditional jump on a register the loop steps by a constant and
 * compares with a constant (`add $1,%rbx; cmp $0x60d,%rbx; jne`, or `sub
 * $1,%rbx; jne`, run down to 0), and the code falling into the loop's
 * header sets that register from a constant (`xor %ebx,%ebx`, `mov
 * $0x60d,%ebx`).  cfg_build.c has the exact patterns.  What it promises:
 * the loop runs the same number of trips each time it is entered through
 * that setup code, unless it leaves by another exit (a `break`: callers
 * check that) or the body writes the counter (not checked: compilers
 * keep such a counter out of the register they step, rarely).  What it
 * does not say: nothing about loops it does not flag (a bound in a
 * register, a counter in memory, a `jmp` into the test): no flag is
 * "unknown", never "varies".
 */
#define SB_BLOCK_CONST_BOUND 1u

/*
 * SB_BLOCK_TAIL_CALL: the block ends in a direct `jmp` to the first
 * instruction of another function of the same binary, a tail call
 * (`return f(x);`, or a call last in a void function, compiled to `jmp
 * f`), and a CALL edge goes from it to that function's entry; no
 * CALL_RETURN edge leaves it (the callee returns to this function's
 * caller).  Its stack frame is gone while the callee runs: a cpu-clock
 * sample in the callee counts for no call site of this block, only for
 * the frames below (an OpenMP runtime's, a thread's start).  Graphs
 * without has_tail_calls (cfg_io version 3 or older) have neither flag
 * nor edge: "unknown".
 */
#define SB_BLOCK_TAIL_CALL 2u

/*
 * SB_BLOCK_TAIL_INDIRECT: the block ends in an indirect `jmp` and no
 * instruction of the block reads a table entry (no memory operand with an
 * index register, as a switch's jump table needs: `movslq (%rdx,%rax,4),%rax; add %rdx,%rax;
 * jmp *%rax`, `jmp *t(,%rax,8)`): a tail call through a pointer (`if
 * (rank == 0) work_fn(n);` last in a function, `mov work_fn(%rip),%rax;
 * jmp *%rax`).  Its callee is not known: no edge leaves it.  Graphs
 * without has_indirect_tails (cfg_io version 4 or older) never set it.
 */
#define SB_BLOCK_TAIL_INDIRECT 4u
#define SB_BLOCK_FLAGS (SB_BLOCK_CONST_BOUND | SB_BLOCK_TAIL_CALL | SB_BLOCK_TAIL_INDIRECT)

struct sb_cfg_block {
	uint64_t start, end;       /* [start, end) */
	uint64_t last_insn;        /* address of its last instruction */
	uint32_t func;
	uint32_t flags;            /* SB_BLOCK_* */
};

struct sb_cfg_edge {
	uint32_t src, dst;         /* block indices */
	uint16_t kind;             /* enum sb_edge_kind */
	uint16_t back;             /* dst dominates src */
};

struct sb_cfg {
	char *build_id;            /* of the binary, NULL when it has none */
	/* Whether blocks' flags were computed: graphs of profiles recorded
	 * before they existed (cfg_io version 2) have none, which says
	 * "unknown", not "no constant bound". */
	bool has_flags;
	/* Whether tail calls were looked for (SB_BLOCK_TAIL_CALL and their
	 * CALL edges): graphs of profiles recorded before (cfg_io version 3
	 * and older) have none, which says "unknown". */
	bool has_tail_calls;
	/* Whether indirect tail calls were flagged (SB_BLOCK_TAIL_INDIRECT):
	 * not in graphs of cfg_io version 4 and older. */
	bool has_indirect_tails;
	size_t nfuncs, nblocks, nedges;
	struct sb_cfg_func *funcs;
	struct sb_cfg_block *blocks;
	struct sb_cfg_edge *edges;
	/* Filled by sb_cfg_finalize(): edges sorted by (src, dst); for each
	 * block the indices of its incoming edges. */
	uint32_t *out_start;       /* nblocks + 1 offsets into edges */
	uint32_t *in_start;        /* nblocks + 1 offsets into in_edges */
	uint32_t *in_edges;
	size_t cap_funcs, cap_blocks, cap_edges;
};

struct sb_cfg *sb_cfg_alloc(void);
void sb_cfg_free(struct sb_cfg *g);

/* Room for exactly this many of each in an empty graph whose size is known
 * (a merge, a deserialized one).  0, or -1 on ENOMEM. */
int sb_cfg_reserve(struct sb_cfg *g, size_t nfuncs, size_t nblocks, size_t nedges);

/* Building: functions, then blocks in ascending address order (each
 * function's contiguous), then edges.  Return an index, or -1 on ENOMEM,
 * a bad index or a block out of order. */
long sb_cfg_add_func(struct sb_cfg *g, const char *name, uint64_t start, uint64_t end);
long sb_cfg_add_block(struct sb_cfg *g, uint32_t func, uint64_t start, uint64_t end,
		      uint64_t last_insn);
long sb_cfg_add_edge(struct sb_cfg *g, uint32_t src, uint32_t dst, uint16_t kind);

/*
 * Sorts edges, builds adjacency, computes dominators per function (entry =
 * its first block; Cooper, Harvey & Kennedy's iterative algorithm) and
 * marks back edges.  0, or -1 on ENOMEM or an inconsistent graph.
 */
int sb_cfg_finalize(struct sb_cfg *g);

/* The block holding vaddr, or -1 (binary search; needs finalize). */
long sb_cfg_block_at(const struct sb_cfg *g, uint64_t vaddr);

/* Adjacency (needs finalize): edges out of b are g->edges[out_start[b] ..
 * out_start[b+1]); edges into b are g->edges[in_edges[k]] for k in
 * [in_start[b], in_start[b+1]). */
static inline size_t sb_cfg_nout(const struct sb_cfg *g, uint32_t b)
{
	return g->out_start[b + 1] - g->out_start[b];
}
static inline size_t sb_cfg_nin(const struct sb_cfg *g, uint32_t b)
{
	return g->in_start[b + 1] - g->in_start[b];
}

/*
 * One graph of several binaries' CFGs, for analyses that span them.
 * Addresses are tagged with the binary's slot in the top 16 bits
 * (SB_CFG_TAG), so they stay unique and block_at still works; block
 * indices of g[i] are shifted by block_offset[i] (caller's array of n).
 * Returns NULL on ENOMEM.
 */
#define SB_CFG_TAG_SHIFT 48
#define SB_CFG_TAG(slot, vaddr) (((uint64_t)(slot) << SB_CFG_TAG_SHIFT) | (vaddr))
#define SB_CFG_UNTAG(addr) ((addr) & ((1ull << SB_CFG_TAG_SHIFT) - 1))
#define SB_CFG_SLOT(addr) ((uint32_t)((addr) >> SB_CFG_TAG_SHIFT))
struct sb_cfg *sb_cfg_merge(struct sb_cfg *const *g, size_t n, uint32_t *block_offset);

/*
 * The conditional branches that decide whether block b runs (back and
 * call edges into b aside), looking back through blocks that are only an
 * unconditional jump (a lone `jmp`; blocks with code of their own, a
 * loop's preheader, are not decisions and are not looked through).  Several guards are several decisions, or one the compiler
 * duplicated (clang's 32/64-bit division fast path copies the test after
 * a `%`): which, only the source lines can tell, so callers compare them.
 * Blocks nothing reaches (the alignment padding after a `jmp`, falling
 * through into b) are no way into b.
 * Returns how many were stored in gs (at most max, <= SB_CFG_MAX_GUARDS),
 * or -1: b is reached some other way too (a call's return, straight-line
 * code, a function's entry, a branch both of whose edges lead to it), or more guards than
 * max (needs finalize).
 */
#define SB_CFG_MAX_GUARDS 8
long sb_cfg_guards(const struct sb_cfg *g, uint32_t b, uint32_t *gs, size_t max);

/* The one block whose conditional branch alone decides block b, as
 * sb_cfg_guards() finds it, or -1 (needs finalize). */
long sb_cfg_conditional_pred(const struct sb_cfg *g, uint32_t b);

/*
 * The block through which the loop b heads (or, b being a latch, the loop
 * its back edge closes) is entered by a branch: the header itself when a
 * conditional edge leads straight into it, or the block a conditional
 * edge (or a lone `jmp`, see sb_cfg_guards) enters before it, looking
 * back through up to 4 straight blocks of one edge in and one out that
 * call nothing (a preheader: loop setup).  sb_cfg_guards() of that block
 * are the branches deciding whether the loop runs at all; several ways in,
 * each a branch (copies of one test on the ways round an irreducible
 * loop), are several guards.  -1: b is in no loop's header or latch, or
 * the loop is entered some other way (straight-line code among its ways
 * in, an enclosing loop's back edge, code that does other things, a
 * call's return) (needs finalize).
 */
long sb_cfg_loop_entry(const struct sb_cfg *g, uint32_t b);

/* The source of a back edge into b (a latch of the loop b heads), or -1;
 * whether b ends in a call (needs finalize). */
long sb_cfg_latch(const struct sb_cfg *g, uint32_t b);
bool sb_cfg_ends_in_call(const struct sb_cfg *g, uint32_t b);
/* No CALL edge leads into function f: only a pointer, a library (a
 * callback), a runtime (a region's body, a thread's start) or a jump the
 * graph has no edge for reaches it (needs finalize). */
bool sb_cfg_uncalled(const struct sb_cfg *g, uint32_t f);

/* Edge e falls in from alignment padding: a block nothing reaches (not
 * its function's entry), such as the `nop`s a compiler leaves after a
 * `ret` or `jmp`, running straight on.  No way in (needs finalize). */
bool sb_cfg_from_padding(const struct sb_cfg *g, const struct sb_cfg_edge *e);

/* The immediate dominator of every block of function f (its entry maps
 * to itself); idom[] has g->nblocks entries, others untouched. */
int sb_cfg_dominators(const struct sb_cfg *g, uint32_t f, uint32_t *idom);

#endif
