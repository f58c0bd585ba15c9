/* SPDX-License-Identifier: MIT */
/*
 * Facts about one decoded instruction (capstone, with detail) that the
 * CFG builder needs to flag a counted loop's latch: which register it
 * steps by a constant, sets to a constant, compares with a constant,
 * writes; whether a conditional jump reads flags, tests for zero.
 * Registers are 64-bit capstone names (%ebx is %rbx), 0 for none.
 */
#ifndef SB_CFG_INSN_H
#define SB_CFG_INSN_H

#include <capstone/capstone.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The latch pattern (cfg_build.c's block_flags sets SB_BLOCK_CONST_BOUND,
 * whose promise is in cfg.h, on a block [i, j] that matches): it ends in
 * a backward conditional jump (a latch) on flags set by the instruction
 * right before it, in the same block (a jump some branch
 * targets directly could test flags set elsewhere; loop, jrcxz and
 * xbegin test none), on a counter REG stepped by a constant in the loop:
 *  - `cmp REG, IMM` (IMM != 0) after a step of REG earlier in the block
 *    (`add $1,%rbx; cmp $0x60d,%rbx; jne`): the bound is the immediate;
 *  - or a step of REG right before a je/jne (`sub $1,%rbx; jne`, gcc's
 *    counted loop run down to 0): the bound is 0;
 * and, either way, the straight-line code falling into the jump's target
 * (the loop's header) sets REG from a constant (`xor %ebx,%ebx`, `mov
 * $0x60d,%ebx`) within START_WINDOW instructions: a bound alone says
 * nothing when the start varies (gcc counts a negative index up to 0
 * from a variable start, `add $8,%rax; jne`): the nearest write of REG
 * before the header must be that constant (a `cmove` after `mov $2` is
 * a choice).  And no instruction from the header to the latch (the
 * loop's code, laid out between them) writes REG but the step: the body
 * of `i = a[i]`, `i += a[i] & 1`, `if (x) i++` (an `sbb`) changes the
 * trip count.  Writes are every register an instruction writes, its
 * operands' and its implicit ones (mul's %rdx, a partial %al), by
 * capstone's access lists; a jump from that code to outside it (a body
 * laid out of line, an early exit) leaves the loop unflagged.  Loops set
 * up otherwise (a `jmp` into the test, a counter in memory at -O0) are not
 * flagged: the flag is sure more than it is complete.
 */
struct sb_insn_facts {
	bool jcc_noflags;       /* loop/jrcxz/xbegin: a jcc reading no flags */
	bool jcc_zero;          /* je/jne: a test of the result against 0 */
	uint16_t step_reg;      /* `sub|add REG, IMM`, dec, inc: REG */
	uint16_t const_reg;     /* `mov REG, IMM`, `xor REG, REG`: REG */
	uint16_t cmp_reg;       /* `cmp REG, IMM`, IMM != 0: REG */
	uint16_t dst_reg;       /* the register operand it writes, if first */
	uint32_t writes;        /* general registers written, any width:
				 * bit sb_insn_gpr(REG) */
	bool mem_index;         /* an operand in memory with an index
				 * register: a table's entry (`movslq
				 * (%rdx,%rax,4),%rax`, `jmp *t(,%rax,8)`) */
};

void sb_insn_facts(csh cs, const cs_insn *in, struct sb_insn_facts *f);

/* The CFG builder's decoded instructions (cfg_build.c). */
#define NO_TARGET UINT32_MAX
enum kind { K_PLAIN, K_JCC, K_JMP, K_IJMP, K_CALL, K_RET, K_HALT };

struct insn {
	uint32_t off;           /* from the function start */
	uint8_t size, kind;
	struct sb_insn_facts fx; /* what a latch's bound needs (cfg_insn.h) */
	uint32_t toff;          /* resolved target offset, NO_TARGET if none */
	uint64_t call;          /* a direct call's or jump's target address, else 0 */
};

/* SB_BLOCK_CONST_BOUND for the block of instructions ins[i..j] of a
 * function's n: the latch pattern above, else 0. */
uint32_t sb_insn_latch_flags(const struct insn *ins, size_t n, size_t i, size_t j);
/* A general register's bit in writes (0..15), by any of its names (%rax,
 * %eax, %ax, %al, %ah are one), -1 for other registers. */
int sb_insn_gpr(uint16_t reg);

#endif
