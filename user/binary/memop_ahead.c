// SPDX-License-Identifier: MIT
/*
 * memop_ahead.c - the accesses a sampled basic block is about to make
 * (memop.h, "Look-ahead").  Decoding forward from the sampled IP needs no
 * function sweep: the IP is an instruction boundary and x86 decodes
 * forward.  Each IP's instructions are decoded once and remembered (their
 * access, and what they do to a general register); a repeat sample only
 * replays them on its registers.
 *
 * The replay follows the registers the block computes from known ones
 * (mov, movslq, lea, add/sub/and/or/xor with a register, an immediate or
 * memory, shifts by an immediate, inc/dec; 32 and 64 bits)
 * and, given a reader of the target's memory, the ones it loads: a store
 * to table[(i + w->idx) % 8] is then known although its index register
 * is loaded and masked after the sample.  Anything else a block does to
 * a register makes it unknown, and an access through an unknown register
 * is left out, never guessed.  Memory read later than the sample may have
 * changed: these addresses pick lines to watch, and the watchpoints, not
 * the addresses, confirm.
 */
#include "memop.h"
#include "memop_priv.h"
#include "elfsym.h"

#include <stdlib.h>
#include <string.h>

#define MEMO_BITS 10

/* What an instruction does to its destination register. */
enum ahead_def {
	DEF_NONE = 0,        /* writes no general register (or only flags) */
	DEF_UNKNOWN,         /* writes `written` in a way not followed */
	DEF_MOV_REG,         /* dst = src */
	DEF_MOV_IMM,         /* dst = imm */
	DEF_LOAD,            /* dst = [its access] */
	DEF_LEA,             /* dst = its memory operand's address */
	DEF_ALU_REG,         /* dst op= src (alu: the X86_INS_ id) */
	DEF_ALU_IMM,         /* dst op= imm (shifts too) */
	DEF_ALU_MEM,         /* dst op= [its access] */
};

struct ahead_insn {
	uint64_t vaddr;
	uint16_t len;
	bool access;         /* a data access (mem, size, store) */
	uint8_t size;
	bool store;
	unsigned addr_size;
	x86_op_mem mem;
	uint32_t needs;      /* registers its address reads */
	uint32_t written;    /* registers it writes */
	uint8_t def;         /* enum ahead_def */
	int8_t dst, src;     /* enum sb_reg, -1 */
	uint8_t width;       /* of the destination: 4 or 8 bytes */
	bool sign;           /* movslq: sign-extends 32 bits */
	unsigned alu;
	int64_t imm;
};

struct ahead_memo {
	const struct sb_elf *e;        /* NULL: empty */
	uint64_t vaddr;
	int n;                         /* -1: no code */
	struct ahead_insn k[SB_MEMOP_AHEAD];
};

struct sb_memop_ahead {
	csh cs;
	cs_insn *in;
	struct ahead_memo *memo;
};

struct sb_memop_ahead *sb_memop_ahead_new(void)
{
	struct sb_memop_ahead *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	if (!(a->memo = calloc((size_t)1 << MEMO_BITS, sizeof(*a->memo))) ||
	    cs_open(CS_ARCH_X86, CS_MODE_64, &a->cs) != CS_ERR_OK) {
		free(a->memo);
		free(a);
		return NULL;
	}
	cs_option(a->cs, CS_OPT_DETAIL, CS_OPT_ON);
	if (!(a->in = cs_malloc(a->cs))) {
		sb_memop_ahead_free(a);
		return NULL;
	}
	return a;
}

void sb_memop_ahead_free(struct sb_memop_ahead *a)
{
	if (!a)
		return;
	if (a->in)
		cs_free(a->in, 1);
	cs_close(&a->cs);
	free(a->memo);
	free(a);
}

void sb_memop_ahead_forget(struct sb_memop_ahead *a, const struct sb_elf *e)
{
	for (size_t i = 0; a && i < ((size_t)1 << MEMO_BITS); i++)
		if (a->memo[i].e == e)
			a->memo[i].e = NULL;
}

/* What in does to a general register (the cases the replay follows). */
static void define(const cs_insn *in, int op, struct ahead_insn *k)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *o0 = &x->operands[0], *o1 = &x->operands[1];

	k->def = k->written ? DEF_UNKNOWN : DEF_NONE;
	if (x->op_count < 1 || o0->type != X86_OP_REG || (o0->size != 4 && o0->size != 8) ||
	    (k->dst = (int8_t)sb_memop_gpr(o0->reg)) < 0 || (k->written & ~(1u << k->dst)))
		return;   /* partial, several or no general registers */
	k->width = o0->size;
	k->alu = in->id;
	switch (in->id) {
	case X86_INS_MOV: case X86_INS_MOVSXD:
		if (x->op_count != 2)
			return;
		k->sign = in->id == X86_INS_MOVSXD;
		if (o1->type == X86_OP_IMM) {
			k->def = DEF_MOV_IMM;
			k->imm = o1->imm;
		} else if (o1->type == X86_OP_REG && (k->src = (int8_t)sb_memop_gpr(o1->reg)) >= 0 &&
			   (o1->size == k->width || (k->sign && o1->size == 4))) {
			k->def = DEF_MOV_REG;
		} else if (o1->type == X86_OP_MEM && op == 1 && (o1->size == k->width ||
								  (k->sign && o1->size == 4))) {
			k->def = DEF_LOAD;
		}
		return;
	case X86_INS_LEA:
		if (x->op_count == 2 && o1->type == X86_OP_MEM) {
			k->def = DEF_LEA;
			k->mem = o1->mem;
			k->addr_size = x->addr_size;
		}
		return;
	case X86_INS_ADD: case X86_INS_SUB: case X86_INS_AND: case X86_INS_OR:
	case X86_INS_XOR: case X86_INS_SHL: case X86_INS_SHR: case X86_INS_SAR:
		if (x->op_count != 2)
			return;
		if (o1->type == X86_OP_IMM) {
			k->def = DEF_ALU_IMM;
			k->imm = o1->imm;
		} else if (in->id == X86_INS_SHL || in->id == X86_INS_SHR || in->id == X86_INS_SAR) {
			return;   /* by cl: not followed */
		} else if (o1->type == X86_OP_REG && o1->size == k->width &&
			   (k->src = (int8_t)sb_memop_gpr(o1->reg)) >= 0) {
			k->def = DEF_ALU_REG;
		} else if (o1->type == X86_OP_MEM && op == 1 && o1->size == k->width) {
			k->def = DEF_ALU_MEM;
		}
		return;
	case X86_INS_INC: case X86_INS_DEC:
		k->def = DEF_ALU_IMM;
		k->imm = 1;
		return;
	}
}

/* The block's instructions from vaddr on: accesses and register effects. */
static void scan(struct sb_memop_ahead *a, const struct sb_elf *e, uint64_t vaddr,
		 struct ahead_memo *mo)
{
	uint8_t buf[16 * SB_MEMOP_AHEAD];
	size_t n = sb_elf_read(e, vaddr, buf, sizeof(buf));
	const uint8_t *p = buf;
	uint64_t at = vaddr;

	mo->n = n ? 0 : -1;
	for (int i = 0; i < SB_MEMOP_AHEAD && n && cs_disasm_iter(a->cs, &p, &n, &at, a->in);
	     i++) {
		struct ahead_insn *k = &mo->k[mo->n++];
		int op;

		memset(k, 0, sizeof(*k));
		op = sb_memop_insn_access(a->cs, a->in, &k->store, &k->written, &k->needs);
		k->vaddr = a->in->address;
		k->len = a->in->size;
		k->dst = k->src = -1;
		if (op >= 0) {
			k->access = true;
			k->size = a->in->detail->x86.operands[op].size;
			k->mem = a->in->detail->x86.operands[op].mem;
			k->addr_size = a->in->detail->x86.addr_size;
		}
		define(a->in, op, k);
		if (k->def == DEF_LEA)   /* lea's operand is no access but its value */
			k->needs = (uint32_t)((sb_memop_gpr(k->mem.base) >= 0 ?
					       1u << sb_memop_gpr(k->mem.base) : 0) |
					      (sb_memop_gpr(k->mem.index) >= 0 ?
					       1u << sb_memop_gpr(k->mem.index) : 0));
		if (sb_memop_insn_ends_block(a->in))
			break;
	}
}

/* dst op src, in the destination's width; false for an op not followed. */
static bool alu(unsigned id, uint8_t width, uint64_t d, uint64_t s, uint64_t *out)
{
	unsigned sh = (unsigned)s & (width == 8 ? 63 : 31);

	switch (id) {
	case X86_INS_ADD: case X86_INS_INC: d += s; break;
	case X86_INS_SUB: case X86_INS_DEC: d -= s; break;
	case X86_INS_AND: d &= s; break;
	case X86_INS_OR: d |= s; break;
	case X86_INS_XOR: d ^= s; break;
	case X86_INS_SHL: d <<= sh; break;
	case X86_INS_SHR: d = (width == 4 ? (uint32_t)d : d) >> sh; break;
	case X86_INS_SAR: d = width == 4 ? (uint64_t)(int64_t)((int32_t)d >> sh) :
				   (uint64_t)((int64_t)d >> sh); break;
	default: return false;
	}
	*out = width == 4 ? (uint32_t)d : d;   /* 32-bit results zero-extend */
	return true;
}

int sb_memop_ahead_decode(struct sb_memop_ahead *a, struct sb_elf *e, uint64_t sample_vaddr,
			  uint64_t runtime_ip, const uint64_t *regs, sb_memop_read_fn read,
			  void *read_ctx, struct sb_memop *out, int max)
{
	uint64_t h = ((sample_vaddr * 0x9e3779b97f4a7c15ull) ^ (uintptr_t)e) >> (64 - MEMO_BITS);
	struct ahead_memo *mo = &a->memo[h];
	uint64_t val[SB_NREGS];
	uint32_t known = (1u << SB_NREGS) - 1;
	int n = 0;

	if (mo->e != e || mo->vaddr != sample_vaddr) {
		mo->e = e;
		mo->vaddr = sample_vaddr;
		scan(a, e, sample_vaddr, mo);
	}
	memcpy(val, regs, sizeof(val));
	for (int i = 0; i < mo->n; i++) {
		const struct ahead_insn *k = &mo->k[i];
		uint64_t next = runtime_ip - sample_vaddr + k->vaddr + k->len, addr = 0, v = 0;
		bool have = !(k->needs & ~known), got = false;

		if (have && (k->access || k->def == DEF_LEA))
			have = sb_memop_effective(k->addr_size, &k->mem, next, val, &addr) ==
			       SB_MEMOP_OK;
		if (k->access && have && n < max) {
			out[n] = (struct sb_memop){ .insn = k->vaddr, .addr = addr, .size = k->size,
						    .store = k->store };
			n++;
		}
		switch (k->def) {
		case DEF_MOV_REG:
			got = known & (1u << k->src);
			v = k->sign ? (uint64_t)(int64_t)(int32_t)val[k->src] : val[k->src];
			break;
		case DEF_MOV_IMM:
			got = true;
			v = (uint64_t)k->imm;
			break;
		case DEF_LOAD:
			if (have && read && !read(read_ctx, addr, &v, k->sign ? 4 : k->width)) {
				got = true;
				if (k->sign)
					v = (uint64_t)(int64_t)(int32_t)v;
			}
			break;
		case DEF_LEA:
			got = have;
			v = addr;
			break;
		case DEF_ALU_REG:
			/* xor r, r is 0 whatever r held */
			if (k->src == k->dst && (k->alu == X86_INS_XOR || k->alu == X86_INS_SUB))
				got = true, v = 0;
			else
				got = (known & (1u << k->dst)) && (known & (1u << k->src)) &&
				      alu(k->alu, k->width, val[k->dst], val[k->src], &v);
			break;
		case DEF_ALU_IMM:
			got = (known & (1u << k->dst)) &&
			      alu(k->alu, k->width, val[k->dst], (uint64_t)k->imm, &v);
			break;
		case DEF_ALU_MEM:
			got = have && read && (known & (1u << k->dst)) &&
			      !read(read_ctx, addr, &v, k->width) &&
			      alu(k->alu, k->width, val[k->dst], v, &v);
			break;
		}
		if (k->width == 4 && (k->def == DEF_MOV_REG || k->def == DEF_MOV_IMM ||
				      k->def == DEF_LOAD || k->def == DEF_LEA))
			v = (uint32_t)v;   /* 32-bit writes zero-extend (alu() does its own) */
		known &= ~k->written;
		if (got && k->dst >= 0) {
			val[k->dst] = v;
			known |= 1u << k->dst;
		}
	}
	return mo->n < 0 ? -1 : n;
}
