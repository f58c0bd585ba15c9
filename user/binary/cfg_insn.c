// SPDX-License-Identifier: MIT
/*
 * cfg_insn.c - the few facts about an x86-64 instruction that tell a
 * counted loop's latch (cfg_insn.h; the patterns are in cfg_build.c's
 * block_flags and SB_BLOCK_CONST_BOUND in cfg.h).
 */
#include "cfg_insn.h"

#include "cfg/cfg.h"

static uint16_t reg64(x86_reg r);

/* A register compared with a nonzero constant of the code (capstone's
 * operands are in Intel order: the immediate is the second): the
 * register (64-bit name), else 0.  See SB_BLOCK_CONST_BOUND in cfg.h. */
static uint16_t cmp_reg(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;

	if (in->id != X86_INS_CMP || x->op_count != 2 || x->operands[1].type != X86_OP_IMM ||
	    x->operands[1].imm == 0 || x->operands[0].type != X86_OP_REG)
		return 0;
	return reg64(x->operands[0].reg);
}

static bool jcc_noflags(const cs_insn *in)
{
	switch (in->id) {
	case X86_INS_LOOP:
	case X86_INS_LOOPE:
	case X86_INS_LOOPNE:
	case X86_INS_JRCXZ:
	case X86_INS_JECXZ:
	case X86_INS_JCXZ:
	case X86_INS_XBEGIN:
		return true;
	default:
		return false;
	}
}

/* A general register's 64-bit name (a counter set as %ebx is tested as
 * %rbx), 0 for any other operand. */
static uint16_t reg64(x86_reg r)
{
	static const x86_reg r64[] = {
		X86_REG_RAX, X86_REG_RBX, X86_REG_RCX, X86_REG_RDX, X86_REG_RSI,
		X86_REG_RDI, X86_REG_RBP, X86_REG_R8, X86_REG_R9, X86_REG_R10,
		X86_REG_R11, X86_REG_R12, X86_REG_R13, X86_REG_R14, X86_REG_R15,
	};
	static const x86_reg r32[] = {
		X86_REG_EAX, X86_REG_EBX, X86_REG_ECX, X86_REG_EDX, X86_REG_ESI,
		X86_REG_EDI, X86_REG_EBP, X86_REG_R8D, X86_REG_R9D, X86_REG_R10D,
		X86_REG_R11D, X86_REG_R12D, X86_REG_R13D, X86_REG_R14D, X86_REG_R15D,
	};

	for (size_t i = 0; i < sizeof(r64) / sizeof(r64[0]); i++)
		if (r == r64[i] || r == r32[i])
			return (uint16_t)r64[i];
	return 0;
}

/* `sub|add REG, IMM`, `dec|inc REG`: a counter stepped by a constant
 * (its flags compare the new value with 0): REG, else 0. */
static uint16_t step_reg(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;

	if (!x->op_count || x->operands[0].type != X86_OP_REG)
		return 0;
	if ((in->id == X86_INS_SUB || in->id == X86_INS_ADD) &&
	    (x->op_count != 2 || x->operands[1].type != X86_OP_IMM))
		return 0;
	if (in->id != X86_INS_SUB && in->id != X86_INS_ADD && in->id != X86_INS_DEC &&
	    in->id != X86_INS_INC)
		return 0;
	return reg64(x->operands[0].reg);
}

/* `mov REG, IMM` or `xor REG, REG`: REG now holds a constant. */
static uint16_t const_reg(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;

	if (x->op_count != 2 || x->operands[0].type != X86_OP_REG)
		return 0;
	if (in->id == X86_INS_MOV && x->operands[1].type == X86_OP_IMM)
		return reg64(x->operands[0].reg);
	if (in->id == X86_INS_XOR && x->operands[1].type == X86_OP_REG &&
	    x->operands[1].reg == x->operands[0].reg)
		return reg64(x->operands[0].reg);
	return 0;
}

/* The register an instruction writes as its first operand (64-bit
 * name), 0 for none: x86's two-operand forms write the first, except the
 * compares and tests, push and bt.  Implicit writes (mul's %rdx, a call's
 * clobbers) are not seen; a call ends the straight-line search anyway. */
static uint16_t dst_reg(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;

	switch (in->id) {
	case X86_INS_CMP:
	case X86_INS_TEST:
	case X86_INS_PUSH:
	case X86_INS_BT:
		return 0;
	default:
		return x->op_count && x->operands[0].type == X86_OP_REG ?
		       reg64(x->operands[0].reg) : 0;
	}
}


/* Each general register by its 64-bit name, then every narrower name of
 * it: a write to %al or %ax changes %rax. */
static const x86_reg gpr[16][5] = {
	{ X86_REG_RAX, X86_REG_EAX, X86_REG_AX, X86_REG_AL, X86_REG_AH },
	{ X86_REG_RBX, X86_REG_EBX, X86_REG_BX, X86_REG_BL, X86_REG_BH },
	{ X86_REG_RCX, X86_REG_ECX, X86_REG_CX, X86_REG_CL, X86_REG_CH },
	{ X86_REG_RDX, X86_REG_EDX, X86_REG_DX, X86_REG_DL, X86_REG_DH },
	{ X86_REG_RSI, X86_REG_ESI, X86_REG_SI, X86_REG_SIL, 0 },
	{ X86_REG_RDI, X86_REG_EDI, X86_REG_DI, X86_REG_DIL, 0 },
	{ X86_REG_RBP, X86_REG_EBP, X86_REG_BP, X86_REG_BPL, 0 },
	{ X86_REG_RSP, X86_REG_ESP, X86_REG_SP, X86_REG_SPL, 0 },
	{ X86_REG_R8, X86_REG_R8D, X86_REG_R8W, X86_REG_R8B, 0 },
	{ X86_REG_R9, X86_REG_R9D, X86_REG_R9W, X86_REG_R9B, 0 },
	{ X86_REG_R10, X86_REG_R10D, X86_REG_R10W, X86_REG_R10B, 0 },
	{ X86_REG_R11, X86_REG_R11D, X86_REG_R11W, X86_REG_R11B, 0 },
	{ X86_REG_R12, X86_REG_R12D, X86_REG_R12W, X86_REG_R12B, 0 },
	{ X86_REG_R13, X86_REG_R13D, X86_REG_R13W, X86_REG_R13B, 0 },
	{ X86_REG_R14, X86_REG_R14D, X86_REG_R14W, X86_REG_R14B, 0 },
	{ X86_REG_R15, X86_REG_R15D, X86_REG_R15W, X86_REG_R15B, 0 },
};

int sb_insn_gpr(uint16_t r)
{
	for (int i = 0; i < 16; i++)
		for (int k = 0; k < 5; k++)
			if (r && gpr[i][k] == r)
				return i;
	return -1;
}

/* Every general register the instruction writes (explicit and implicit,
 * any width).  Unknown (capstone cannot tell): all of them, so no loop
 * is flagged on a guess. */
static uint32_t writes_of(csh cs, const cs_insn *in)
{
	cs_regs rd, wr;
	uint8_t nrd = 0, nwr = 0;
	uint32_t m = 0;

	if (cs_regs_access(cs, in, rd, &nrd, wr, &nwr) != CS_ERR_OK)
		return 0xffffu;
	for (uint8_t k = 0; k < nwr; k++) {
		int g = sb_insn_gpr(wr[k]);

		if (g >= 0)
			m |= 1u << g;
	}
	return m;
}

static bool mem_index(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;

	for (uint8_t k = 0; k < x->op_count; k++)
		if (x->operands[k].type == X86_OP_MEM && x->operands[k].mem.index != X86_REG_INVALID)
			return true;
	return false;
}

void sb_insn_facts(csh cs, const cs_insn *in, struct sb_insn_facts *f)
{
	f->mem_index = mem_index(in);
	f->writes = writes_of(cs, in);
	f->jcc_noflags = jcc_noflags(in);
	f->jcc_zero = in->id == X86_INS_JE || in->id == X86_INS_JNE;
	f->step_reg = step_reg(in);
	f->const_reg = const_reg(in);
	f->cmp_reg = cmp_reg(in);
	f->dst_reg = dst_reg(in);
}

/* The instruction at offset off (one starts there: a resolved target). */
static size_t insn_at(const struct insn *ins, size_t n, uint32_t off)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ins[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* How far back from a loop's header the straight-line code that enters
 * it is searched for the counter's constant start (a preheader's setup,
 * alignment nops between). */
#define START_WINDOW 12

/* The registers a call preserves (SysV x86-64: rbx, rbp, r12-r15, by
 * their index in gpr[]): gcc sets a counter kept in one of them before
 * the calls that precede its loop (`xor %ebx,%ebx; call f; call g;
 * loop:`). */
#define CALLEE_SAVED ((1u << 1) | (1u << 6) | (0xfu << 12))

/* No jump among ins[from, to): each runs whenever ins[from] does (calls
 * return to the next one). */
static bool straight(const struct insn *ins, size_t from, size_t to)
{
	for (size_t k = from; k < to; k++)
		if (ins[k].kind != K_PLAIN && ins[k].kind != K_CALL)
			return false;
	return true;
}

/* SB_BLOCK_CONST_BOUND for the block [i, j]: the latch pattern of
 * cfg_insn.h (what the flag promises is in cfg.h). */
uint32_t sb_insn_latch_flags(const struct insn *ins, size_t n, size_t i, size_t j)
{
	const struct insn *x = &ins[j], *prev = j > i ? &ins[j - 1] : NULL;
	uint16_t reg = 0;
	uint32_t bit;
	size_t t;

	if (x->kind != K_JCC || !prev || x->fx.jcc_noflags || x->toff == NO_TARGET ||
	    x->toff > x->off)
		return 0;
	t = insn_at(ins, n, x->toff);
	if (prev->fx.cmp_reg) {
		/* the step in the latch's block, or on the header's straight
		 * way in: gcc steps before a call in the body and compares
		 * after it, in another block; a step behind a branch would not
		 * run every trip (the loop below checks it is the counter's
		 * only write) */
		for (size_t k = j - 1; k > t && !reg; k--)
			if (ins[k - 1].fx.step_reg == prev->fx.cmp_reg &&
			    (k - 1 >= i || straight(ins, t, k - 1)))
				reg = prev->fx.cmp_reg;
	} else if (prev->fx.step_reg && x->fx.jcc_zero) {
		reg = prev->fx.step_reg;
	}
	if (!reg)
		return 0;
	/* the loop's code, header to latch: REG written by the step only,
	 * no way out of it but the latch's own fall-through */
	if (sb_insn_gpr(reg) < 0)
		return 0;
	bit = 1u << sb_insn_gpr(reg);
	for (size_t k = t, steps = 0; k < j; k++) {
		const struct insn *y = &ins[k];

		if (y->kind == K_IJMP || y->kind == K_RET || y->kind == K_HALT ||
		    ((y->kind == K_JCC || y->kind == K_JMP) &&
		     (y->toff == NO_TARGET || y->toff < x->toff || y->toff > x->off)))
			return 0;
		if (y->fx.writes & bit) {
			if (y->fx.step_reg != reg || ++steps > 1)
				return 0;
		}
	}
	for (size_t k = t, entry_jumps = 0; k > 0 && t - k < START_WINDOW; k--) {
		const struct insn *y = &ins[k - 1];

		if (y->kind == K_CALL && (bit & CALLEE_SAVED))
			continue;       /* returns to the next one, REG kept */
		/* gcc -O3 enters a rotated loop by a jump past its first
		 * instructions (`jmp` into the loop, padding, then the
		 * header): the code before that jump is the way in */
		if (y->kind == K_JMP && !entry_jumps && y->toff != NO_TARGET &&
		    y->toff >= x->toff && y->toff <= x->off) {
			entry_jumps++;
			continue;
		}
		if (y->kind != K_PLAIN)
			break;          /* not straight-line into the header */
		/* the last write of REG before the header: a constant, or
		 * anything else (clang's `mov $2,%ebx; cmove %eax,%ebx` picks
		 * one of two trip counts) */
		if (y->fx.writes & bit)
			return y->fx.const_reg == reg ? SB_BLOCK_CONST_BOUND : 0;
	}
	return 0;
}
