/* SPDX-License-Identifier: MIT */
/*
 * Software data-address sampling without PEBS: given a sampled user IP
 * and the general registers at the sample, find the x86-64 instruction
 * that accessed memory (disassembled with capstone) and recompute the
 * effective address of its memory operand.  Timer samples skid by one
 * instruction most of the time, so the instruction *before* the sampled
 * one is preferred (see memop.c).
 *
 * This is operand decoding, the memory access of one sample; ring
 * records become events in user/record, and LBR/PEBS records are parsed
 * in user/hw.
 */
#ifndef SB_MEMOP_H
#define SB_MEMOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sb_elf;

/* The sampled registers come in enum sb_reg order, x86 encoding order:
 * reg N of an instruction's ModRM/SIB is regs[N]. */
#include "sbpf_events.h"

enum sb_memop_status {
	SB_MEMOP_OK = 0,
	SB_MEMOP_NONE,         /* neither the previous nor the sampled instruction
				* accesses data memory */
	SB_MEMOP_CLOBBERED,    /* the access (already executed) overwrote a register
				* its address depends on: not recoverable.  insn,
				* size, store and previous are still filled in. */
	SB_MEMOP_NOCODE,       /* no sized function symbol / no file bytes there */
	SB_MEMOP_FS,           /* FS/GS-based operand and no fs base known */
	SB_MEMOP_UNSUPPORTED,  /* an access whose address is not base+index*scale
				* of general registers (VSIB gathers/scatters) */
};

struct sb_memop {
	uint64_t insn;         /* binary vaddr of the accessing instruction */
	uint64_t addr;         /* effective data address (runtime) */
	uint8_t size;          /* access size in bytes (one element for rep strings) */
	bool store;            /* writes memory (read-modify-write included) */
	bool previous;         /* skid: the instruction before the sampled one */
};

/*
 * Memory-access lookup state: a capstone handle and an LRU of
 * per-function linear sweeps (instruction boundaries and direct-branch
 * targets), keyed by (struct sb_elf *, function start).  One context per
 * thread of use; it is not thread-safe.  nfuncs is the LRU capacity (0: a default of 256).
 * The cache keeps sb_elf pointers: call sb_memop_ctx_forget() before
 * sb_elf_close() on a binary it has seen, or a later sb_elf allocated at
 * the same address could meet stale boundaries.
 */
struct sb_memop_ctx;

struct sb_memop_ctx *sb_memop_ctx_new(size_t nfuncs);
void sb_memop_ctx_free(struct sb_memop_ctx *c);
void sb_memop_ctx_forget(struct sb_memop_ctx *c, const struct sb_elf *e);

/* Sweep statistics, for tests and --verbose output.  Each sampled IP's
 * decision (which instruction, whether its address survives) is also
 * remembered, so repeated samples of a loop only recompute the address. */
struct sb_memop_stats {
	uint64_t lookups, sweeps, evictions;
	uint64_t decodes, memo_hits;    /* sb_memop_decode() calls; remembered IPs */
};
void sb_memop_ctx_stats(const struct sb_memop_ctx *c, struct sb_memop_stats *st);

/*
 * The memory access of one sample: the accessing instruction, its
 * operand's effective address, size and direction.
 * sample_vaddr: the sampled IP in the binary's vaddrs; runtime_ip: the
 * same IP at run time (for RIP-relative operands); regs: SB_NREGS values
 * in enum sb_reg order, as they were at the sample (i.e. after the
 * instruction before sample_vaddr executed); fs_base: 0 if unknown.
 * Returns an enum sb_memop_status; *out is filled for OK (and partly for
 * CLOBBERED, FS and UNSUPPORTED: insn, size, store, previous).
 */
int sb_memop_decode(struct sb_memop_ctx *c, struct sb_elf *e,
		    uint64_t sample_vaddr, uint64_t runtime_ip,
		    const uint64_t *regs, uint64_t fs_base, struct sb_memop *out);

const char *sb_memop_status_name(int status);

/*
 * Look-ahead (memop_ahead.c): the data accesses the instructions from the
 * sampled IP to the end of its basic block are about to make, as far as
 * the sample's registers tell: the block's own register arithmetic (and,
 * with a reader of the target's memory, its loads) is replayed, and an
 * access through a register it could not follow is left out.
 * A timer sample names the slow instruction (a load missing the caches);
 * the store two instructions on, to a line another thread writes, it
 * rarely names, yet its address is in the registers.  The sampled
 * instruction itself is the first.  Own context (a capstone handle and a
 * per-IP memo); at most max accesses, at most SB_MEMOP_AHEAD instructions.
 */
#define SB_MEMOP_AHEAD 8

struct sb_memop_ahead;
struct sb_memop_ahead *sb_memop_ahead_new(void);
void sb_memop_ahead_free(struct sb_memop_ahead *a);
void sb_memop_ahead_forget(struct sb_memop_ahead *a, const struct sb_elf *e);
/* Reads len bytes of the target's memory at addr into buf: 0 or -1. */
typedef int (*sb_memop_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);
/* The accesses ahead of sample_vaddr (binary vaddr; runtime_ip the same
 * at run time) into out[0..return); -1 when there is no code there.
 * read (NULL: none) follows the registers the block loads. */
int sb_memop_ahead_decode(struct sb_memop_ahead *a, struct sb_elf *e, uint64_t sample_vaddr,
			  uint64_t runtime_ip, const uint64_t *regs, sb_memop_read_fn read,
			  void *read_ctx, struct sb_memop *out, int max);

#endif
