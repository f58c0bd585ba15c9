// SPDX-License-Identifier: MIT
/*
 * memop.c - recover the data address of a sampled instruction from the
 * registers of a cpu-clock (or ptrace) sample, for machines without PEBS.
 *
 * Policy, and why:
 *  - The sample's IP is usually one instruction past the slow one (timer
 *    skid: ~65% in a pointer chase, platform.md), and the registers were
 *    read after the instruction before the IP retired.  So the PREVIOUS
 *    instruction is preferred when it accesses memory; the sampled one is
 *    used otherwise.  x86 cannot be decoded backwards, so the previous
 *    instruction boundary comes from a linear sweep of the containing
 *    function (sb_elf_func_at), cached per function in an LRU.
 *  - Exception: when the IP is the target of a direct branch in its
 *    function (a loop head), the instruction executed before it was most
 *    likely the branch (it runs every iteration; the linear predecessor
 *    runs once per loop entry), and branches carry no data access; so a
 *    memory access at the IP itself wins there.
 *  - The previous instruction has already executed: if it wrote a register
 *    its address depends on (`mov (%rdi,%r10),%rdi`, `rep movs`, `push
 *    8(%rsp)`) the address is gone: SB_MEMOP_CLOBBERED, never a guess.  The
 *    sampled instruction has not executed, so its inputs are intact.
 *  - Not data accesses: lea and multi-byte nop (address arithmetic only),
 *    prefetches (hints that never stall), branches and calls through
 *    memory (code-pointer fetches from the GOT or vtables, not the data a
 *    profile is about), and the implicit stack traffic of push/pop/call/
 *    ret.  Explicit stack operands (spills, `push 8(%rsp)`) do count.
 *  - Store: capstone 4 marks SSE/AVX stores (movups, movdqa, vmovdqu,
 *    movq/movd, movnt*, pextr*) as reads.  In Intel operand order the
 *    destination is operand 0, so a memory operand 0 of an instruction
 *    with two or more operands is written, except for the few that only
 *    compare (cmp, test, bt, cmps).  Single-operand forms (inc, setcc,
 *    x87 fst/fld, push) keep capstone's access flags.
 */
#include "memop.h"
#include "elfsym.h"

#include <capstone/capstone.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_NFUNCS 256
/* Bigger functions are swept only this far: the boundary table costs 4
 * bytes per instruction and such functions are generated code. */
#define MAX_SWEEP (1u << 20)
#define TARGET_BIT 0x80000000u  /* in offs[]: a direct-branch target */
/* Sampled IPs whose decision is remembered: a hot loop has a handful,
 * and a hit skips the symbol lookup and both capstone decodes (~0.9 us
 * warm, several us with cold caches, per sample otherwise). */
#define MEMO_BITS 10
#define OFF_MASK 0x7fffffffu

/* One function's linear sweep. */
struct sweep {
	const struct sb_elf *e;     /* NULL: free slot */
	uint64_t start;             /* function start (binary vaddr) */
	uint64_t end;               /* where the sweep stopped: function end,
				     * MAX_SWEEP, or the first undecodable byte */
	uint32_t *offs;             /* instruction starts - start, ascending,
				     * TARGET_BIT set on branch targets */
	size_t n;
	uint64_t used;              /* LRU tick */
};

/* A decoded candidate for the accessing instruction. */
struct cand {
	uint64_t vaddr;
	bool decoded;
	bool ok;        /* decoded and has a data memory operand */
	bool store;
	int op;
	uint8_t size;
	cs_x86_op mem;
	uint32_t written;
	unsigned addr_size;
	uint16_t len;
};

/* One sampled IP's decision (see choose()), in a direct-mapped table. */
struct memo {
	const struct sb_elf *e;     /* NULL: empty */
	uint64_t vaddr;             /* the sampled IP */
	int status;                 /* NOCODE, NONE, CLOBBERED, or OK: the
				     * address is computed from k */
	bool previous;
	struct cand k;
};

struct sb_memop_ctx {
	csh cs;
	cs_insn *in;
	struct sweep *fn;
	size_t nfn;
	uint64_t tick;
	struct memo *memo;          /* 1 << MEMO_BITS entries */
	struct sb_memop_stats st;
};

struct sb_memop_ctx *sb_memop_ctx_new(size_t nfuncs)
{
	struct sb_memop_ctx *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->nfn = nfuncs ? nfuncs : DEFAULT_NFUNCS;
	if (!(c->fn = calloc(c->nfn, sizeof(*c->fn))) ||
	    !(c->memo = calloc((size_t)1 << MEMO_BITS, sizeof(*c->memo))) ||
	    cs_open(CS_ARCH_X86, CS_MODE_64, &c->cs) != CS_ERR_OK) {
		free(c->fn);
		free(c->memo);
		free(c);
		return NULL;
	}
	cs_option(c->cs, CS_OPT_DETAIL, CS_OPT_ON);
	if (!(c->in = cs_malloc(c->cs))) {
		sb_memop_ctx_free(c);
		return NULL;
	}
	return c;
}

static void drop(struct sweep *s)
{
	free(s->offs);
	memset(s, 0, sizeof(*s));
}

void sb_memop_ctx_free(struct sb_memop_ctx *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nfn; i++)
		drop(&c->fn[i]);
	free(c->fn);
	free(c->memo);
	if (c->in)
		cs_free(c->in, 1);
	cs_close(&c->cs);
	free(c);
}

void sb_memop_ctx_forget(struct sb_memop_ctx *c, const struct sb_elf *e)
{
	for (size_t i = 0; c && i < c->nfn; i++)
		if (c->fn[i].e == e)
			drop(&c->fn[i]);
	for (size_t i = 0; c && i < ((size_t)1 << MEMO_BITS); i++)
		if (c->memo[i].e == e)
			c->memo[i].e = NULL;
}

void sb_memop_ctx_stats(const struct sb_memop_ctx *c, struct sb_memop_stats *st)
{
	*st = c->st;
}

const char *sb_memop_status_name(int status)
{
	static const char *const names[] = {
		"ok", "none", "clobbered", "nocode", "fs", "unsupported",
	};

	if (status < 0 || (size_t)status >= sizeof(names) / sizeof(names[0]))
		return "?";
	return names[status];
}

/* ---- register helpers --------------------------------------------------- */

/* enum sb_reg index of a general register of any width, or -1. */
static int gpr_index(x86_reg r)
{
	static const x86_reg forms[SB_NREGS][5] = {
		[SB_REG_RAX] = { X86_REG_RAX, X86_REG_EAX, X86_REG_AX, X86_REG_AL, X86_REG_AH },
		[SB_REG_RCX] = { X86_REG_RCX, X86_REG_ECX, X86_REG_CX, X86_REG_CL, X86_REG_CH },
		[SB_REG_RDX] = { X86_REG_RDX, X86_REG_EDX, X86_REG_DX, X86_REG_DL, X86_REG_DH },
		[SB_REG_RBX] = { X86_REG_RBX, X86_REG_EBX, X86_REG_BX, X86_REG_BL, X86_REG_BH },
		[SB_REG_RSP] = { X86_REG_RSP, X86_REG_ESP, X86_REG_SP, X86_REG_SPL },
		[SB_REG_RBP] = { X86_REG_RBP, X86_REG_EBP, X86_REG_BP, X86_REG_BPL },
		[SB_REG_RSI] = { X86_REG_RSI, X86_REG_ESI, X86_REG_SI, X86_REG_SIL },
		[SB_REG_RDI] = { X86_REG_RDI, X86_REG_EDI, X86_REG_DI, X86_REG_DIL },
		[SB_REG_R8] = { X86_REG_R8, X86_REG_R8D, X86_REG_R8W, X86_REG_R8B },
		[SB_REG_R9] = { X86_REG_R9, X86_REG_R9D, X86_REG_R9W, X86_REG_R9B },
		[SB_REG_R10] = { X86_REG_R10, X86_REG_R10D, X86_REG_R10W, X86_REG_R10B },
		[SB_REG_R11] = { X86_REG_R11, X86_REG_R11D, X86_REG_R11W, X86_REG_R11B },
		[SB_REG_R12] = { X86_REG_R12, X86_REG_R12D, X86_REG_R12W, X86_REG_R12B },
		[SB_REG_R13] = { X86_REG_R13, X86_REG_R13D, X86_REG_R13W, X86_REG_R13B },
		[SB_REG_R14] = { X86_REG_R14, X86_REG_R14D, X86_REG_R14W, X86_REG_R14B },
		[SB_REG_R15] = { X86_REG_R15, X86_REG_R15D, X86_REG_R15W, X86_REG_R15B },
	};

	if (r == X86_REG_INVALID)
		return -1;
	for (int i = 0; i < SB_NREGS; i++)
		for (int k = 0; k < 5; k++)
			if (forms[i][k] == r)
				return i;
	return -1;
}

static uint32_t gpr_bit(x86_reg r)
{
	int i = gpr_index(r);

	return i < 0 ? 0 : 1u << i;
}

/* ---- one instruction ---------------------------------------------------- */

static bool decode_at(struct sb_memop_ctx *c, const struct sb_elf *e,
		      uint64_t vaddr, cs_insn *in)
{
	uint8_t buf[16];
	size_t n = sb_elf_read(e, vaddr, buf, sizeof(buf));
	const uint8_t *p = buf;
	uint64_t a = vaddr;

	return n && cs_disasm_iter(c->cs, &p, &n, &a, in);
}

static bool in_group(const cs_insn *in, uint8_t g)
{
	const cs_detail *d = in->detail;

	for (uint8_t i = 0; i < d->groups_count; i++)
		if (d->groups[i] == g)
			return true;
	return false;
}

/* Instructions whose memory operand 0 is only read although other
 * operands follow (the exceptions to "operand 0 is the destination"). */
static bool reads_first_only(unsigned id)
{
	switch (id) {
	case X86_INS_CMP: case X86_INS_TEST: case X86_INS_BT:
	case X86_INS_CMPSB: case X86_INS_CMPSW: case X86_INS_CMPSD:
	case X86_INS_CMPSQ:
		return true;
	default:
		return false;
	}
}

/* The data memory operand of in, or -1 (see the policy above).  With two
 * memory operands (movs, cmps) the first is taken: the destination. */
static int mem_operand(const cs_insn *in, bool *store)
{
	const cs_x86 *x = &in->detail->x86;

	switch (in->id) {
	case X86_INS_LEA: case X86_INS_NOP:
	case X86_INS_PREFETCH: case X86_INS_PREFETCHNTA: case X86_INS_PREFETCHT0:
	case X86_INS_PREFETCHT1: case X86_INS_PREFETCHT2: case X86_INS_PREFETCHW:
		return -1;
	}
	if (in_group(in, X86_GRP_JUMP) || in_group(in, X86_GRP_CALL) ||
	    in_group(in, X86_GRP_RET) || in_group(in, X86_GRP_INT) ||
	    in_group(in, X86_GRP_IRET))
		return -1;
	for (int i = 0; i < x->op_count; i++) {
		if (x->operands[i].type != X86_OP_MEM)
			continue;
		*store = (x->operands[i].access & CS_AC_WRITE) != 0;
		if (i == 0 && x->op_count >= 2)
			*store = !reads_first_only(in->id);
		return i;
	}
	return -1;
}

/* General registers the instruction writes: capstone's list (explicit and
 * implicit), plus a register operand 0 next to a memory source, which
 * capstone 4 may leave unmarked on SSE/AVX forms (pextrq, cvtsd2si...). */
static uint32_t written_gprs(csh cs, const cs_insn *in, int memop)
{
	const cs_x86 *x = &in->detail->x86;
	cs_regs rr, rw;
	uint8_t nr = 0, nw = 0;
	uint32_t mask = 0;

	if (cs_regs_access(cs, in, rr, &nr, rw, &nw) == CS_ERR_OK)
		for (uint8_t i = 0; i < nw; i++)
			mask |= gpr_bit(rw[i]);
	for (int i = 0; i < x->op_count; i++)
		if (x->operands[i].type == X86_OP_REG &&
		    (x->operands[i].access & CS_AC_WRITE))
			mask |= gpr_bit(x->operands[i].reg);
	if (memop > 0 && x->op_count >= 2 && x->operands[0].type == X86_OP_REG &&
	    !reads_first_only(in->id))
		mask |= gpr_bit(x->operands[0].reg);
	return mask;
}

/* base + index*scale + disp (+ segment base), in the instruction's address
 * size.  next_rt: the runtime address of the following instruction. */
static int effective(unsigned addr_size, const x86_op_mem *m, uint64_t next_rt,
		     const uint64_t *regs, uint64_t fs_base, uint64_t *addr)
{
	uint64_t a = (uint64_t)m->disp, seg = 0;
	int b = gpr_index(m->base), i = gpr_index(m->index);

	if (m->segment == X86_REG_GS || (m->segment == X86_REG_FS && !fs_base))
		return SB_MEMOP_FS;     /* GS is not used for TLS by Linux user code */
	if (m->segment == X86_REG_FS)
		seg = fs_base;
	if (m->base == X86_REG_RIP || m->base == X86_REG_EIP)
		a += next_rt;
	else if (b >= 0)
		a += regs[b];
	else if (m->base != X86_REG_INVALID)
		return SB_MEMOP_UNSUPPORTED;
	if (i >= 0)
		a += regs[i] * (uint64_t)m->scale;
	else if (m->index != X86_REG_INVALID && m->index != X86_REG_RIZ &&
		 m->index != X86_REG_EIZ)
		return SB_MEMOP_UNSUPPORTED;    /* VSIB: a vector of addresses */
	if (addr_size == 4)     /* addr32: sums wrap at 4 GB */
		a = (uint32_t)a;
	*addr = a + seg;
	return SB_MEMOP_OK;
}

/* ---- per-function sweep cache ------------------------------------------- */

/* Index of the boundary at offset off in s, or -1. */
static long find_off(const struct sweep *s, uint32_t off)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint32_t o = s->offs[mid] & OFF_MASK;

		if (o == off)
			return (long)mid;
		if (o < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* End of the function that starts at start and contains vaddr: its symbol
 * size when the name finds that same symbol, else the first address
 * (found by bisection) that sb_elf_func_at no longer attributes to it. */
static uint64_t func_end(const struct sb_elf *e, const char *name,
			 uint64_t start, uint64_t vaddr)
{
	uint64_t v, size, lo = vaddr, hi = start + MAX_SWEEP, st;

	if (!sb_elf_func_by_name(e, name, &v, &size) && v == start && size)
		return start + (size < MAX_SWEEP ? size : MAX_SWEEP);
	if (lo >= hi)           /* beyond what is swept: vaddr stays unswept */
		return hi;
	while (hi - lo > 1) {   /* invariant: lo inside, hi outside */
		uint64_t mid = lo + (hi - lo) / 2;

		if (sb_elf_func_at(e, mid, &st) && st == start)
			lo = mid;
		else
			hi = mid;
	}
	return hi;
}

/* Linear sweep of [start, end): every instruction start, and the direct
 * jump targets inside the range.  Stops at the first undecodable byte. */
static int sweep_fill(struct sb_memop_ctx *c, struct sweep *s, uint64_t end)
{
	size_t len = end - s->start, cap = 64, ntg = 0, tcap = 16, n;
	uint8_t *code = malloc(len);
	uint32_t *tg = malloc(tcap * sizeof(*tg));
	const uint8_t *p;
	uint64_t a = s->start;
	int ret = -1;

	s->n = 0;
	s->offs = malloc(cap * sizeof(*s->offs));
	if (!code || !tg || !s->offs)
		goto out;
	len = sb_elf_read(s->e, s->start, code, len);
	p = code;
	n = len;
	for (;;) {
		uint64_t at = a;

		if (!n || !cs_disasm_iter(c->cs, &p, &n, &a, c->in))
			break;
		if (s->n == cap) {
			uint32_t *o = realloc(s->offs, (cap *= 2) * sizeof(*o));

			if (!o)
				goto out;
			s->offs = o;
		}
		s->offs[s->n++] = (uint32_t)(at - s->start);
		if (in_group(c->in, X86_GRP_JUMP)) {
			const cs_x86 *x = &c->in->detail->x86;
			uint64_t t = (uint64_t)x->operands[0].imm;

			if (x->op_count == 1 && x->operands[0].type == X86_OP_IMM &&
			    t >= s->start && t < s->start + len) {
				if (ntg == tcap) {
					uint32_t *o = realloc(tg, (tcap *= 2) * sizeof(*o));

					if (!o)
						goto out;
					tg = o;
				}
				tg[ntg++] = (uint32_t)(t - s->start);
			}
		}
	}
	s->end = a;
	for (size_t i = 0; i < ntg; i++) {
		long k = find_off(s, tg[i]);

		if (k >= 0)
			s->offs[k] |= TARGET_BIT;
	}
	ret = 0;
out:
	free(code);
	free(tg);
	return ret;
}

/* The sweep of the function containing vaddr, from the cache or fresh;
 * NULL when no sized function symbol covers vaddr. */
static struct sweep *sweep_get(struct sb_memop_ctx *c, const struct sb_elf *e,
			       uint64_t vaddr)
{
	uint64_t start;
	const char *name = sb_elf_func_at(e, vaddr, &start);
	struct sweep *s = NULL, *lru = &c->fn[0];

	c->st.lookups++;
	if (!name)
		return NULL;
	for (size_t i = 0; i < c->nfn; i++) {
		struct sweep *f = &c->fn[i];

		if (f->e == e && f->start == start) {
			s = f;
			break;
		}
		if (!f->e || (lru->e && f->used < lru->used))
			lru = f;
	}
	if (!s) {
		if (lru->e)
			c->st.evictions++;
		drop(lru);
		s = lru;
		s->e = e;
		s->start = start;
		c->st.sweeps++;
		if (sweep_fill(c, s, func_end(e, name, start, vaddr))) {
			drop(s);
			return NULL;
		}
	}
	s->used = ++c->tick;
	return s;
}

/* ---- the memory access of a sample -------------------------------------- */

/* Decodes the instruction at vaddr into k.  Copies out what is needed
 * because c->in is reused for the other candidate. */
static void candidate(struct sb_memop_ctx *c, const struct sb_elf *e,
		      uint64_t vaddr, bool want_written, struct cand *k)
{
	memset(k, 0, sizeof(*k));
	k->vaddr = vaddr;
	if (!decode_at(c, e, vaddr, c->in))
		return;
	k->decoded = true;
	k->op = mem_operand(c->in, &k->store);
	if (k->op < 0)
		return;
	k->ok = true;
	k->mem = c->in->detail->x86.operands[k->op];
	k->size = k->mem.size;
	k->addr_size = c->in->detail->x86.addr_size;
	k->len = c->in->size;
	if (want_written)
		k->written = written_gprs(c->cs, c->in, k->op);
}

/* The register-independent part of the lookup, decided once per sampled
 * IP: which instruction (prev or cur) and whether its address survives. */
static int choose(struct sb_memop_ctx *c, struct sb_elf *e, uint64_t sample_vaddr,
		  struct memo *mo)
{
	struct sweep *s = sweep_get(c, e, sample_vaddr);
	struct cand prev = { 0 }, cur, *k;
	bool target = false;
	uint32_t need;

	if (!s)
		return SB_MEMOP_NOCODE;
	if (sample_vaddr < s->end) {
		long i = find_off(s, (uint32_t)(sample_vaddr - s->start));

		/* Not a boundary: the sweep desynchronised or the IP is bogus;
		 * the predecessor is then unknown. */
		if (i > 0)
			candidate(c, e, s->start + (s->offs[i - 1] & OFF_MASK), true, &prev);
		target = i >= 0 && (s->offs[i] & TARGET_BIT);
	}
	candidate(c, e, sample_vaddr, false, &cur);
	if (!cur.decoded && !prev.ok)
		return SB_MEMOP_NOCODE;
	if (prev.ok && !(target && cur.ok))
		k = &prev;
	else if (cur.ok)
		k = &cur;
	else
		return SB_MEMOP_NONE;
	mo->k = *k;
	mo->previous = k == &prev;
	need = gpr_bit(k->mem.mem.base) | gpr_bit(k->mem.mem.index);
	if (mo->previous && (k->written & need))
		return SB_MEMOP_CLOBBERED;
	return SB_MEMOP_OK;
}

int sb_memop_decode(struct sb_memop_ctx *c, struct sb_elf *e,
		    uint64_t sample_vaddr, uint64_t runtime_ip,
		    const uint64_t *regs, uint64_t fs_base, struct sb_memop *out)
{
	uint64_t h = ((sample_vaddr * 0x9e3779b97f4a7c15ull) ^ (uintptr_t)e) >> (64 - MEMO_BITS);
	struct memo *mo = &c->memo[h];
	int ret;

	c->st.decodes++;
	if (mo->e != e || mo->vaddr != sample_vaddr) {
		mo->e = e;
		mo->vaddr = sample_vaddr;
		mo->status = choose(c, e, sample_vaddr, mo);
	} else {
		c->st.memo_hits++;
	}
	memset(out, 0, sizeof(*out));
	if (mo->status == SB_MEMOP_NOCODE || mo->status == SB_MEMOP_NONE)
		return mo->status;
	out->insn = mo->k.vaddr;
	out->size = mo->k.size;
	out->store = mo->k.store;
	out->previous = mo->previous;
	if (mo->status == SB_MEMOP_CLOBBERED)
		return SB_MEMOP_CLOBBERED;
	/* Only this part depends on the sample's registers. */
	ret = effective(mo->k.addr_size, &mo->k.mem.mem,
			runtime_ip - sample_vaddr + mo->k.vaddr + mo->k.len,
			regs, fs_base, &out->addr);
	if (ret != SB_MEMOP_OK)
		out->addr = 0;
	return ret;
}

/* ---- for the look-ahead (memop_priv.h) ---------------------------------- */

int sb_memop_insn_access(csh cs, const cs_insn *in, bool *store, uint32_t *written,
			 uint32_t *needs)
{
	int op = mem_operand(in, store);

	*written = written_gprs(cs, in, op);
	*needs = 0;
	if (op >= 0) {
		const x86_op_mem *m = &in->detail->x86.operands[op].mem;

		*needs = gpr_bit(m->base) | gpr_bit(m->index);
	}
	return op;
}

bool sb_memop_insn_ends_block(const cs_insn *in)
{
	return in_group(in, X86_GRP_JUMP) || in_group(in, X86_GRP_CALL) ||
	       in_group(in, X86_GRP_RET) || in_group(in, X86_GRP_INT) ||
	       in_group(in, X86_GRP_IRET);
}

int sb_memop_gpr(x86_reg r)
{
	return gpr_index(r);
}

int sb_memop_effective(unsigned addr_size, const x86_op_mem *m, uint64_t next_rt,
		       const uint64_t *regs, uint64_t *addr)
{
	return effective(addr_size, m, next_rt, regs, 0, addr);
}
