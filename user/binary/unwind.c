// SPDX-License-Identifier: MIT
/*
 * A CFI unwinder over a copied stack (unwind.h).  Each frame: find the
 * rules of the frame's pc (cached per binary and vaddr), compute the CFA,
 * then the caller's registers: the return address (DWARF register 16),
 * the callee-saved ones (rbx, rbp, r12-r15) and rsp = CFA.  A register
 * whose rule reads memory reads the copy; a read past it ends the unwind
 * as truncated, never guessed.
 *
 * A caller's pc is a return address: its rules are looked up at ra - 1,
 * inside the call, because a call that ends a function (noreturn) is
 * followed by the next function's code.  Not so after a signal frame,
 * whose saved pc is where the thread was interrupted.
 */
#include "unwind.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "elfsym_priv.h"
#include "util/idmap.h"

#define NDREGS 17        /* DWARF x86-64: 0-15 general registers, 16 the RA */
#define DREG_RSP 7
#define DREG_RA 16
#define MAX_OPS 32       /* longer CFI expressions: SB_UNWIND_BAD */
#define EVAL_DEPTH 16

/* enum sb_reg of each DWARF register (16: the IP). */
static const int dwarf_to_sb[NDREGS] = {
	SB_REG_RAX, SB_REG_RDX, SB_REG_RCX, SB_REG_RBX, SB_REG_RSI, SB_REG_RDI,
	SB_REG_RBP, SB_REG_RSP, SB_REG_R8, SB_REG_R9, SB_REG_R10, SB_REG_R11,
	SB_REG_R12, SB_REG_R13, SB_REG_R14, SB_REG_R15, -1,
};

enum rule_kind {
	R_UNDEF,     /* not recoverable in the caller */
	R_SAME,      /* the caller's value is this frame's */
	R_ADDR,      /* saved in memory at the address the expression yields */
	R_VALUE,     /* the expression's value itself */
};

struct rule {
	uint8_t kind;
	uint8_t nops;
	Dwarf_Op *ops;
};

/* What the CFI says at one pc. */
struct pcrules {
	bool found;          /* the pc has CFI */
	bool bad;            /* an expression too long to keep */
	bool signal;         /* a signal frame: the caller's pc is exact */
	struct rule cfa;     /* R_VALUE */
	struct rule reg[NDREGS];
};

struct sb_unwind {
	sb_unwind_resolve_fn resolve;
	void *ctx;
	struct sb_idmap *cfis;     /* sb_elf -> Dwarf_CFI (or NO_CFI) */
	struct sb_idmap *rules;    /* (sb_elf, vaddr) -> struct pcrules */
};

#define NO_CFI ((Dwarf_CFI *)1)

static void rules_free(void *p)
{
	struct pcrules *r = p;

	if (!r)
		return;
	free(r->cfa.ops);
	for (int i = 0; i < NDREGS; i++)
		free(r->reg[i].ops);
	free(r);
}

struct sb_unwind *sb_unwind_new(sb_unwind_resolve_fn resolve, void *ctx)
{
	struct sb_unwind *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->resolve = resolve;
	u->ctx = ctx;
	u->cfis = sb_idmap_alloc();
	u->rules = sb_idmap_alloc();
	if (!u->cfis || !u->rules) {
		sb_unwind_free(u);
		return NULL;
	}
	return u;
}

void sb_unwind_free(struct sb_unwind *u)
{
	size_t it = 0;
	uint64_t k1, k2;
	void *v;

	if (!u)
		return;
	while (u->cfis && sb_idmap_next(u->cfis, &it, &k1, &k2, &v))
		if (v != NO_CFI)
			dwarf_cfi_end(v);
	sb_idmap_free(u->cfis);
	sb_idmap_free_with(u->rules, rules_free);
	free(u);
}

size_t sb_unwind_cached(const struct sb_unwind *u)
{
	return u ? sb_idmap_count(u->rules) : 0;
}

/* The binary's .eh_frame CFI (libdw reads it through PT_GNU_EH_FRAME or
 * the section), opened once. */
static Dwarf_CFI *cfi_of(struct sb_unwind *u, struct sb_elf *e)
{
	void **slot = sb_idmap_slot(u->cfis, (uint64_t)(uintptr_t)e, 0, true);
	Dwarf_CFI *cfi;

	if (!slot)
		return NULL;
	if (!*slot) {
		cfi = dwarf_getcfi_elf(sb_elf_libelf(e));
		*slot = cfi ? cfi : NO_CFI;
	}
	return *slot == NO_CFI ? NULL : *slot;
}

/* Keeps a copy of an expression (libdw's may live in a caller's buffer). */
static int rule_set(struct rule *r, enum rule_kind kind, const Dwarf_Op *ops, size_t nops)
{
	r->kind = (uint8_t)kind;
	r->nops = 0;
	r->ops = NULL;
	if (!nops)
		return 0;
	if (nops > MAX_OPS)
		return -1;
	r->ops = malloc(nops * sizeof(*ops));
	if (!r->ops)
		return -1;
	memcpy(r->ops, ops, nops * sizeof(*ops));
	r->nops = (uint8_t)nops;
	return 0;
}

static struct pcrules *rules_compute(Dwarf_CFI *cfi, uint64_t vaddr)
{
	struct pcrules *pr = calloc(1, sizeof(*pr));
	Dwarf_Frame *fr = NULL;
	Dwarf_Op mem[3], *ops;
	size_t nops;
	Dwarf_Addr start, end;
	bool signal = false;

	if (!pr)
		return NULL;
	if (!cfi || dwarf_cfi_addrframe(cfi, vaddr, &fr) || !fr)
		return pr;   /* found = false */
	pr->found = true;
	if (dwarf_frame_info(fr, &start, &end, &signal) >= 0)
		pr->signal = signal;
	if (dwarf_frame_cfa(fr, &ops, &nops) || !nops ||
	    rule_set(&pr->cfa, R_VALUE, ops, nops))
		pr->bad = true;
	for (int i = 0; i < NDREGS; i++) {
		if (dwarf_frame_register(fr, i, mem, &ops, &nops)) {
			pr->reg[i].kind = R_UNDEF;
			continue;
		}
		if (!nops) {
			pr->reg[i].kind = ops ? R_UNDEF : R_SAME;
			continue;
		}
		/* A trailing DW_OP_stack_value makes the expression a value. */
		if (ops[nops - 1].atom == DW_OP_stack_value) {
			if (rule_set(&pr->reg[i], R_VALUE, ops, nops - 1))
				pr->bad = true;
		} else if (rule_set(&pr->reg[i], R_ADDR, ops, nops)) {
			pr->bad = true;
		}
	}
	free(fr);
	return pr;
}

static const struct pcrules *rules_at(struct sb_unwind *u, struct sb_elf *e, uint64_t vaddr)
{
	void **slot = sb_idmap_slot(u->rules, (uint64_t)(uintptr_t)e, vaddr, true);

	if (!slot)
		return NULL;
	if (!*slot)
		*slot = rules_compute(cfi_of(u, e), vaddr);
	return *slot;
}

/* The frame being unwound: its registers, which of them are known, and
 * the copy they read from. */
struct state {
	uint64_t reg[NDREGS];
	uint32_t known;            /* bit per DWARF register */
	const struct sb_unwind_input *in;
	uint64_t sp0;
	uint64_t top;              /* highest byte read + 1 */
};

enum { E_OK = 0, E_TRUNC = -1, E_BAD = -2 };

static int read_word(struct state *s, uint64_t addr, uint64_t *v)
{
	if (addr < s->sp0 || addr - s->sp0 > s->in->len || s->in->len - (addr - s->sp0) < 8)
		return E_TRUNC;
	memcpy(v, s->in->stack + (addr - s->sp0), 8);
	if (addr + 8 > s->top)
		s->top = addr + 8;
	return E_OK;
}

static int reg_get(const struct state *s, unsigned r, uint64_t *v)
{
	if (r >= NDREGS || !(s->known & (1u << r)))
		return E_BAD;
	*v = s->reg[r];
	return E_OK;
}

/*
 * A DWARF expression of the CFI: a stack machine of the operations
 * compilers and glibc emit there (register + offset, constants,
 * arithmetic, comparison, dereference; PLT entries compute their CFA
 * from the IP so).  cfa: pushed first for register rules (DWARF 6.4.2).
 */
static int eval(struct state *s, const struct rule *r, const uint64_t *cfa, uint64_t *out)
{
	uint64_t st[EVAL_DEPTH], a, b;
	size_t sp = 0;
	int err;

	if (cfa)
		st[sp++] = *cfa;
	for (size_t i = 0; i < r->nops; i++) {
		const Dwarf_Op *op = &r->ops[i];
		uint8_t at = op->atom;

		if (sp >= EVAL_DEPTH - 1)
			return E_BAD;
		if (at >= DW_OP_breg0 && at <= DW_OP_breg31) {
			if ((err = reg_get(s, at - DW_OP_breg0, &a)))
				return err;
			st[sp++] = a + op->number;
		} else if (at >= DW_OP_reg0 && at <= DW_OP_reg31) {
			if ((err = reg_get(s, at - DW_OP_reg0, &a)))
				return err;
			st[sp++] = a;   /* a register rule: the value itself */
		} else if (at >= DW_OP_lit0 && at <= DW_OP_lit31) {
			st[sp++] = at - DW_OP_lit0;
		} else {
			switch (at) {
			case DW_OP_bregx:
				if ((err = reg_get(s, (unsigned)op->number, &a)))
					return err;
				st[sp++] = a + op->number2;
				break;
			case DW_OP_regx:
				if ((err = reg_get(s, (unsigned)op->number, &a)))
					return err;
				st[sp++] = a;
				break;
			case DW_OP_call_frame_cfa:
				if (!cfa)
					return E_BAD;
				st[sp++] = *cfa;
				break;
			case DW_OP_const1u: case DW_OP_const1s: case DW_OP_const2u:
			case DW_OP_const2s: case DW_OP_const4u: case DW_OP_const4s:
			case DW_OP_const8u: case DW_OP_const8s: case DW_OP_constu:
			case DW_OP_consts:
				st[sp++] = op->number;
				break;
			case DW_OP_dup:
				if (!sp)
					return E_BAD;
				st[sp] = st[sp - 1];
				sp++;
				break;
			case DW_OP_deref:
				if (!sp)
					return E_BAD;
				if ((err = read_word(s, st[sp - 1], &st[sp - 1])))
					return err;
				break;
			case DW_OP_plus_uconst:
				if (!sp)
					return E_BAD;
				st[sp - 1] += op->number;
				break;
			case DW_OP_nop:
				break;
			case DW_OP_plus: case DW_OP_minus: case DW_OP_and: case DW_OP_or:
			case DW_OP_xor: case DW_OP_mul: case DW_OP_shl: case DW_OP_shr:
			case DW_OP_ge: case DW_OP_gt: case DW_OP_le: case DW_OP_lt:
			case DW_OP_eq: case DW_OP_ne:
				if (sp < 2)
					return E_BAD;
				b = st[--sp];
				a = st[sp - 1];
				switch (at) {
				case DW_OP_plus: a += b; break;
				case DW_OP_minus: a -= b; break;
				case DW_OP_and: a &= b; break;
				case DW_OP_or: a |= b; break;
				case DW_OP_xor: a ^= b; break;
				case DW_OP_mul: a *= b; break;
				case DW_OP_shl: a = b < 64 ? a << b : 0; break;
				case DW_OP_shr: a = b < 64 ? a >> b : 0; break;
				case DW_OP_ge: a = (int64_t)a >= (int64_t)b; break;
				case DW_OP_gt: a = (int64_t)a > (int64_t)b; break;
				case DW_OP_le: a = (int64_t)a <= (int64_t)b; break;
				case DW_OP_lt: a = (int64_t)a < (int64_t)b; break;
				case DW_OP_eq: a = a == b; break;
				default: a = a != b; break;
				}
				st[sp - 1] = a;
				break;
			default:
				return E_BAD;
			}
		}
	}
	if (!sp)
		return E_BAD;
	*out = st[sp - 1];
	return E_OK;
}

/* The original return address of a uretprobe trampoline found in the
 * slot at slot_addr; 0 when the kernel's instances do not name it. */
static uint64_t trampoline_original(const struct sb_unwind_input *in, uint64_t slot_addr)
{
	for (size_t i = 0; i < in->nret; i++)
		if (in->ret_slot[i] == slot_addr)
			return in->ret_orig[i];
	return 0;
}

/* rbx, rbp, r12-r15: what a call keeps (SysV x86-64 ABI). */
static bool callee_saved(unsigned r)
{
	return r == 3 || r == 6 || (r >= 12 && r <= 15);
}

/* One step: the caller's registers into next; its pc in next->reg[16]. */
static enum sb_unwind_stop step(struct state *s, const struct pcrules *pr, struct state *next,
				size_t *tramps)
{
	uint64_t cfa, v, ra_slot = 0;
	int err;

	if (!pr->found)
		return SB_UNWIND_NO_CFI;
	if (pr->bad)
		return SB_UNWIND_BAD;
	if ((err = eval(s, &pr->cfa, NULL, &cfa)))
		return err == E_TRUNC ? SB_UNWIND_TRUNCATED : SB_UNWIND_BAD;
	/* The outermost frame (_start, clone3's child) marks its return
	 * address undefined. */
	if (pr->reg[DREG_RA].kind == R_UNDEF)
		return SB_UNWIND_OUTERMOST;
	*next = *s;
	next->known = 0;
	for (unsigned i = 0; i < NDREGS; i++) {
		const struct rule *r = &pr->reg[i];

		if (i == DREG_RSP && r->kind == R_SAME)
			continue;   /* rsp is the CFA unless said otherwise */
		switch (r->kind) {
		case R_SAME:
			/* The ABI's default for registers the CFI does not
			 * mention: only callee-saved ones survive a call. */
			if (!callee_saved(i) || !(s->known & (1u << i)))
				continue;
			next->reg[i] = s->reg[i];
			break;
		case R_ADDR:
			if ((err = eval(s, r, &cfa, &v)))
				goto fail;
			if (i == DREG_RA)
				ra_slot = v;
			if ((err = read_word(s, v, &next->reg[i])))
				goto fail;
			break;
		case R_VALUE:
			if ((err = eval(s, r, &cfa, &next->reg[i])))
				goto fail;
			break;
		default:
			continue;
		}
		next->known |= 1u << i;
	}
	if (!(next->known & (1u << DREG_RSP))) {
		next->reg[DREG_RSP] = cfa;
		next->known |= 1u << DREG_RSP;
	}
	s->top = next->top > s->top ? next->top : s->top;
	next->top = s->top;
	if (!(next->known & (1u << DREG_RA)))
		return SB_UNWIND_BAD;
	if (next->reg[DREG_RA] == 0)
		return SB_UNWIND_OUTERMOST;   /* threads whose start leaves 0 there */
	if (s->in->tramp && next->reg[DREG_RA] == s->in->tramp) {
		v = trampoline_original(s->in, ra_slot);
		if (!v)
			return SB_UNWIND_TRAMPOLINE;
		next->reg[DREG_RA] = v;
		(*tramps)++;
	}
	/* The stack grows down: a caller's frame is above. */
	if (!pr->signal && next->reg[DREG_RSP] <= s->reg[DREG_RSP])
		return SB_UNWIND_BAD;
	return SB_UNWIND_NSTOPS;   /* continue */
fail:
	return err == E_TRUNC ? SB_UNWIND_TRUNCATED : SB_UNWIND_BAD;
}

void sb_unwind_run(struct sb_unwind *u, const struct sb_unwind_input *in, uint64_t *frames,
		   size_t max, struct sb_unwind_result *res)
{
	struct state s = { .in = in }, next;
	bool exact = true;   /* the pc is where the thread is, not a return */
	uint64_t pc = in->ip;

	memset(res, 0, sizeof(*res));
	frames[0] = pc;
	res->n = 1;
	for (int i = 0; i < NDREGS; i++) {
		if (dwarf_to_sb[i] >= 0) {
			s.reg[i] = in->regs[dwarf_to_sb[i]];
			s.known |= 1u << i;
		}
	}
	s.reg[DREG_RA] = pc;
	s.known |= 1u << DREG_RA;
	s.sp0 = s.reg[DREG_RSP];
	s.top = s.sp0;
	for (;;) {
		const struct pcrules *pr;
		struct sb_elf *e;
		uint64_t vaddr;
		enum sb_unwind_stop st;

		if (res->n >= max) {
			res->stop = SB_UNWIND_FULL;
			break;
		}
		if (u->resolve(u->ctx, exact ? pc : pc - 1, &e, &vaddr) || !e) {
			res->stop = SB_UNWIND_NO_CFI;
			break;
		}
		pr = rules_at(u, e, vaddr);
		if (!pr) {
			res->stop = SB_UNWIND_BAD;
			break;
		}
		st = step(&s, pr, &next, &res->trampolines);
		if (st != SB_UNWIND_NSTOPS) {
			res->stop = st;
			break;
		}
		s = next;
		pc = s.reg[DREG_RA];
		exact = pr->signal;
		frames[res->n++] = pc;
	}
	res->bytes_used = s.top - s.sp0;
}

const char *sb_unwind_stop_name(enum sb_unwind_stop s)
{
	static const char *const names[SB_UNWIND_NSTOPS] = {
		"outermost", "full", "truncated", "no_cfi", "bad", "trampoline",
	};

	return s < SB_UNWIND_NSTOPS ? names[s] : "?";
}
