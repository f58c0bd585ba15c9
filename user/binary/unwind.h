/* SPDX-License-Identifier: MIT */
/*
 * Unwinding a user stack without frame pointers: from a sample's
 * registers and a copy of the top of its stack (include/sbpf_events.h,
 * struct sb_rec_sample_stack), walk the callers with each binary's CFI
 * (.eh_frame, read through libdw's dwarf_cfi_addrframe), as
 * `perf --call-graph dwarf` does with libdw's dwfl frame API.
 *
 * Why our own small interpreter and not dwfl_getthread_frames: perf's
 * way sets up a Dwfl per sample; here the rules of each pc (CFA rule,
 * where the return address and the callee-saved registers are) are
 * looked up once and cached, because the pcs of a profile are few (the
 * hot loops' IPs and the return addresses above them), so a repeat
 * frame costs a hash lookup and a few loads from the copy.
 *
 * x86-64 only (DWARF registers 0-16, 16 = the return address).
 */
#ifndef SB_UNWIND_H
#define SB_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#include "sbpf_events.h"   /* enum sb_reg */

struct sb_elf;
struct sb_unwind;

/* Where runtime address addr is: its binary's ELF and its vaddr there;
 * 0, or negative when addr is in no binary known. */
typedef int (*sb_unwind_resolve_fn)(void *ctx, uint64_t addr, struct sb_elf **e,
				    uint64_t *vaddr);

/* The sample: registers (enum sb_reg order), and the copied stack. */
struct sb_unwind_input {
	uint64_t ip;
	const uint64_t *regs;          /* SB_NREGS words */
	const uint8_t *stack;          /* the copy of [regs[SB_REG_RSP], + len) */
	size_t len;
	/* A pending uretprobe leaves the "[uprobes]" trampoline in its
	 * function's return slot; the kernel's return instances say what
	 * each slot (by address) held (0 / none: no uprobes). */
	uint64_t tramp;
	const uint64_t *ret_slot, *ret_orig;
	size_t nret;
};

/* Why an unwind ended. */
enum sb_unwind_stop {
	SB_UNWIND_OUTERMOST = 0, /* the CFI marks the outermost frame: complete */
	SB_UNWIND_FULL,          /* the frame array is full */
	SB_UNWIND_TRUNCATED,     /* a caller's frame lies past the stack copy */
	SB_UNWIND_NO_CFI,        /* a pc in no known binary, or without CFI */
	SB_UNWIND_BAD,           /* an unsupported CFI expression, an unknown
				  * register, or a CFA that does not go up */
	SB_UNWIND_TRAMPOLINE,    /* a uretprobe trampoline with no original */
	SB_UNWIND_NSTOPS
};

struct sb_unwind_result {
	size_t n;                  /* frames[0] is the IP, then return addresses */
	enum sb_unwind_stop stop;
	size_t bytes_used;         /* how far into the copy the unwind read */
	size_t trampolines;        /* trampoline slots replaced by their original */
};

struct sb_unwind *sb_unwind_new(sb_unwind_resolve_fn resolve, void *ctx);
void sb_unwind_free(struct sb_unwind *u);

/* Unwinds in into frames[max] (max >= 1); fills res. */
void sb_unwind_run(struct sb_unwind *u, const struct sb_unwind_input *in, uint64_t *frames,
		   size_t max, struct sb_unwind_result *res);

/* Distinct pcs whose rules are cached (for the tests). */
size_t sb_unwind_cached(const struct sb_unwind *u);

const char *sb_unwind_stop_name(enum sb_unwind_stop s);

#endif
