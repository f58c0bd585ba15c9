// SPDX-License-Identifier: MIT
/*
 * cfg_insn.c - the few facts about an x86-64 instruction that tell a
 * counted loop's latch (cfg_insn.h; the patterns are in cfg_build.c's
 * block_flags and SB_BLOCK_CONST_BOUND in cfg.h).
 */
#include "cfg_insn.h"

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


void sb_insn_facts(const cs_insn *in, struct sb_insn_facts *f)
{
	f->jcc_noflags = jcc_noflags(in);
	f->jcc_zero = in->id == X86_INS_JE || in->id == X86_INS_JNE;
	f->step_reg = step_reg(in);
	f->const_reg = const_reg(in);
	f->cmp_reg = cmp_reg(in);
	f->dst_reg = dst_reg(in);
}
