/* SPDX-License-Identifier: MIT */
/* memop.c's instruction helpers, for memop_ahead.c. */
#ifndef SB_MEMOP_PRIV_H
#define SB_MEMOP_PRIV_H

#include <capstone/capstone.h>
#include <stdbool.h>
#include <stdint.h>

/* The data memory operand of in (memop.c's policy) or -1; *written: the
 * general registers it writes, *needs: those its address reads (enum
 * sb_reg bits). */
int sb_memop_insn_access(csh cs, const cs_insn *in, bool *store, uint32_t *written,
			 uint32_t *needs);
/* enum sb_reg of a general register of any width, or -1. */
int sb_memop_gpr(x86_reg r);
/* A jump, call, return or interrupt: the block ends with it. */
bool sb_memop_insn_ends_block(const cs_insn *in);
/* base + index*scale + disp (RIP-relative from next_rt); an enum
 * sb_memop_status (FS-based: SB_MEMOP_FS). */
int sb_memop_effective(unsigned addr_size, const x86_op_mem *m, uint64_t next_rt,
		       const uint64_t *regs, uint64_t *addr);

#endif
