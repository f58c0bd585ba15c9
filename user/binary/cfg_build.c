// SPDX-License-Identifier: MIT
/*
 * cfg_build.c - control-flow graphs of an x86-64 binary's functions by a
 * linear sweep with capstone (the per-build-id cache is cfg_cache.c).
 * What the graph contains is described in cfg_build.h.
 *
 * Code bytes and section bounds come from a libelf handle of our own on
 * the same file (elfsym.h lends none, and reading through sb_elf_read()
 * would copy every function); symbols come from elfsym.h, plus the
 * separate debug file's .symtab for stripped binaries.
 */
#include "cfg_build.h"

#include <capstone/capstone.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfg/cfg_io.h"
#include "cfg_insn.h"
#include "elfsym.h"
#include "util/bytes.h"
#include "util/search.h"

struct fsym {
	uint64_t start, size;
	const char *name;       /* lives until the builder's handles close */
	int rank;               /* among aliases the highest wins */
};

struct xscn {                   /* an executable section with file bytes */
	uint64_t lo, hi;
	const unsigned char *data;
};

struct call {                   /* a direct call, resolved after all functions */
	uint32_t src;
	uint64_t target;
	bool tail;              /* a `jmp` out of its function: a tail call */
};

/* mark[] bits per byte offset of the function being built */
#define M_START 1               /* an instruction starts here */
#define M_LEADER 2              /* a block starts here */

struct builder {
	struct sb_elf *e;
	struct sb_cfg *g;
	struct sb_cfg_build_stats st;
	int fd, dbg_fd;
	Elf *elf, *dbg_elf;
	struct xscn *scn;
	size_t nscn;
	struct fsym *syms;
	size_t nsyms, cap_syms;
	csh cs;
	cs_insn *in;
	struct insn *ins;       /* the function's instructions */
	size_t cap_ins;
	uint8_t *mark;          /* M_* per byte of the function */
	uint32_t *blk;          /* block index at each leader offset */
	size_t cap_mark, cap_blk;
	struct call *calls;
	size_t ncalls, cap_calls;
};

/* ---- symbols ---- */

static int sym_cmp(const void *a, const void *b)
{
	const struct fsym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->rank != y->rank)
		return y->rank - x->rank;
	return strcmp(x->name, y->name);        /* the same name every time */
}

static int add_sym(struct builder *b, const char *name, uint64_t start, uint64_t size,
		   int rank)
{
	if (b->nsyms == b->cap_syms) {
		size_t cap = b->cap_syms ? 2 * b->cap_syms : 1024;
		struct fsym *p = realloc(b->syms, cap * sizeof(*p));

		if (!p)
			return -1;
		b->syms = p;
		b->cap_syms = cap;
	}
	b->syms[b->nsyms++] = (struct fsym){ start, size, name, rank };
	return 0;
}

static void on_func(const char *name, uint64_t vaddr, uint64_t size, void *arg)
{
	struct builder *b = arg;

	/* elfsym.c already chose the best alias: it outranks the debug file */
	if (add_sym(b, name, vaddr, size, 100) < 0)
		b->st.nsyms = UINT64_MAX;       /* flags ENOMEM to the caller */
}

/*
 * A stripped binary's debug file (libc6-dbg and the like) has the full
 * .symtab, at the binary's addresses: it adds the static functions that
 * .dynsym lacks (libc: ~2200 -> ~3700).  Versioned names ("f@@VER") are
 * exported ones, so .dynsym's bare name for the same address wins; they
 * are also ranked below unversioned aliases.
 */
static int add_debug_syms(struct builder *b)
{
	const char *bid = sb_elf_build_id(b->e);
	Elf_Scn *scn = NULL;
	char path[512];
	GElf_Shdr sh;

	if (!bid || strlen(bid) < 3)
		return 0;
	snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%.2s/%s.debug", bid, bid + 2);
	if ((b->dbg_fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 ||
	    !(b->dbg_elf = elf_begin(b->dbg_fd, ELF_C_READ_MMAP, NULL)))
		return 0;
	while ((scn = elf_nextscn(b->dbg_elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			break;
	Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
	size_t n = d && sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;

	for (size_t i = 1; i < n; i++) {
		const char *name;
		GElf_Sym s;
		int t;

		if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF || !s.st_size)
			continue;
		t = GELF_ST_TYPE(s.st_info);
		if ((t != STT_FUNC && t != STT_GNU_IFUNC) ||
		    !(name = elf_strptr(b->dbg_elf, sh.sh_link, s.st_name)) || !name[0])
			continue;
		/* global before local, plain before "_x", unversioned first */
		if (add_sym(b, name, s.st_value, s.st_size,
			    (GELF_ST_BIND(s.st_info) != STB_LOCAL) * 4 +
			    (name[0] != '_') * 2 + !strchr(name, '@')) < 0)
			return -1;
		b->st.symsrc = SB_CFG_SYMS_DEBUGFILE;
	}
	return 0;
}

static int collect_syms(struct builder *b)
{
	size_t w = 0;

	b->st.symsrc = sb_elf_has_symtab(b->e) ? SB_CFG_SYMS_SYMTAB : SB_CFG_SYMS_DYNSYM;
	sb_elf_funcs_matching(b->e, "", on_func, b);
	if (b->st.nsyms == UINT64_MAX || (!sb_elf_has_symtab(b->e) && add_debug_syms(b)))
		return -1;
	if (b->nsyms)   /* a binary stripped whole has none (and syms is NULL) */
		qsort(b->syms, b->nsyms, sizeof(*b->syms), sym_cmp);
	for (size_t i = 0; i < b->nsyms; i++)   /* one per address, best first */
		if (!w || b->syms[i].start != b->syms[w - 1].start)
			b->syms[w++] = b->syms[i];
	b->nsyms = w;
	b->st.nsyms = w;
	return 0;
}

/* ---- sections ---- */

static int scn_cmp(const void *a, const void *b)
{
	const struct xscn *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int load_sections(struct builder *b, char *err, size_t errlen)
{
	const char *path = sb_elf_path(b->e);
	Elf_Scn *scn = NULL;
	size_t n = 0;
	GElf_Ehdr eh;

	elf_version(EV_CURRENT);
	if ((b->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 ||
	    !(b->elf = elf_begin(b->fd, ELF_C_READ_MMAP, NULL)) || !gelf_getehdr(b->elf, &eh)) {
		snprintf(err, errlen, "%s: cannot read ELF", path);
		return -1;
	}
	/* Relocatable objects have every section at address 0. */
	if (eh.e_machine != EM_X86_64 || (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)) {
		snprintf(err, errlen, "%s: CFGs need an x86-64 executable or shared object",
			 path);
		return -1;
	}
	if (elf_getshdrnum(b->elf, &n) || !(b->scn = calloc(n + 1, sizeof(*b->scn)))) {
		snprintf(err, errlen, "%s: cannot read sections", path);
		return -1;
	}
	while ((scn = elf_nextscn(b->elf, scn))) {
		Elf_Data *d;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || !(d = elf_rawdata(scn, NULL)) ||
		    !d->d_buf || d->d_size < sh.sh_size)
			continue;
		b->scn[b->nscn++] = (struct xscn){ sh.sh_addr, sh.sh_addr + sh.sh_size,
						   d->d_buf };
	}
	qsort(b->scn, b->nscn, sizeof(*b->scn), scn_cmp);
	return 0;
}

/* The bytes of [start, start+size) when one executable section holds it. */
static const unsigned char *code_at(const struct builder *b, uint64_t start, uint64_t size)
{
	size_t hi = SB_SEARCH_STARTS(b->scn, b->nscn, lo, start);

	if (!hi || start >= b->scn[hi - 1].hi || size > b->scn[hi - 1].hi - start)
		return NULL;
	return b->scn[hi - 1].data + (start - b->scn[hi - 1].lo);
}

/* ---- one function ---- */

/* SB_BLOCK_TAIL_INDIRECT for the block of instructions ins[i..j]: it ends
 * in an indirect `jmp` and reads no table entry (cfg.h). */
static uint32_t indirect_tail_flag(const struct insn *ins, size_t i, size_t j)
{
	if (ins[j].kind != K_IJMP)
		return 0;
	for (size_t k = i; k <= j; k++)
		if (ins[k].fx.mem_index)
			return 0;
	return SB_BLOCK_TAIL_INDIRECT;
}

static enum kind classify(const cs_insn *in, uint64_t *target)
{
	const cs_x86 *x = &in->detail->x86;
	bool imm = x->op_count >= 1 && x->operands[0].type == X86_OP_IMM;

	switch (in->id) {
	case X86_INS_CALL:
	case X86_INS_LCALL:
		if (imm)
			*target = (uint64_t)x->operands[0].imm;
		return K_CALL;
	case X86_INS_JMP:
		if (!imm)
			return K_IJMP;
		*target = (uint64_t)x->operands[0].imm;
		return K_JMP;
	case X86_INS_LJMP:
		return K_IJMP;
	case X86_INS_HLT:
	case X86_INS_UD0:
	case X86_INS_UD2:
	case X86_INS_UD2B:
		return K_HALT;
	default:
		break;
	}
	/* Conditional: jcc and xbegin are in the JUMP group, but loop/loopcc
	 * only in BRANCH_RELATIVE. */
	for (uint8_t i = 0; i < in->detail->groups_count; i++) {
		uint8_t gr = in->detail->groups[i];

		if (gr == X86_GRP_RET || gr == X86_GRP_IRET)
			return K_RET;
		if ((gr == X86_GRP_JUMP || gr == X86_GRP_BRANCH_RELATIVE) && imm) {
			*target = (uint64_t)x->operands[0].imm;
			return K_JCC;
		}
	}
	return K_PLAIN;
}

static bool grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t c = *cap ? *cap : 4096;
	void *n;

	if (need <= *cap)
		return true;
	while (c < need)
		c *= 2;
	if (!(n = realloc(*p, c * elem)))
		return false;
	*p = n;
	*cap = c;
	return true;
}

/* Pass 1: decode until the end of the symbol or undecodable bytes. */
static size_t sweep(struct builder *b, const struct fsym *s, const unsigned char *code,
		    int *nomem)
{
	const uint8_t *p = code;
	size_t left = s->size, n = 0;
	uint64_t a = s->start;

	while (left) {
		uint64_t t = 0;
		enum kind k;

		if (!cs_disasm_iter(b->cs, &p, &left, &a, b->in)) {
			b->st.ninvalid++;
			break;
		}
		if (!grow((void **)&b->ins, &b->cap_ins, n + 1, sizeof(*b->ins))) {
			*nomem = 1;
			return 0;
		}
		k = classify(b->in, &t);
		b->ins[n] = (struct insn){ (uint32_t)(b->in->address - s->start),
					   (uint8_t)b->in->size, (uint8_t)k, { 0 }, NO_TARGET,
					   k == K_CALL || k == K_JMP ? t : 0 };
		sb_insn_facts(b->cs, b->in, &b->ins[n].fx);
		/* a direct target inside the function; outside = tail call */
		if ((k == K_JCC || k == K_JMP) && t - s->start < s->size)
			b->ins[n].toff = (uint32_t)(t - s->start);
		n++;
	}
	b->st.ninsns += n;
	return n;
}

/* Pass 2: leaders.  Targets beyond the decoded part get no edge; one
 * inside an instruction moves back to that instruction's start. */
static void find_leaders(struct builder *b, size_t n, uint32_t decoded)
{
	uint8_t *m = b->mark;

	memset(m, 0, decoded);
	for (size_t i = 0; i < n; i++)
		m[b->ins[i].off] = M_START;
	m[0] |= M_LEADER;
	for (size_t i = 0; i < n; i++) {
		struct insn *x = &b->ins[i];

		if (x->kind != K_PLAIN && i + 1 < n)
			m[b->ins[i + 1].off] |= M_LEADER;
		if (x->toff == NO_TARGET)
			continue;
		if (x->toff >= decoded) {
			x->toff = NO_TARGET;
			continue;
		}
		if (!(m[x->toff] & M_START)) {
			b->st.nmidinsn++;
			while (!(m[x->toff] & M_START))
				x->toff--;      /* offset 0 is a start: terminates */
		}
		m[x->toff] |= M_LEADER;
	}
}

static int build_func(struct builder *b, const struct fsym *s, const unsigned char *code)
{
	struct sb_cfg *g = b->g;
	uint32_t decoded, first, bi;
	int nomem = 0;
	size_t n, i;
	long f;

	if (s->size > UINT32_MAX / 2)
		return 0;       /* no real function; keeps offsets in 32 bits */
	if (!grow((void **)&b->mark, &b->cap_mark, s->size, 1) ||
	    !grow((void **)&b->blk, &b->cap_blk, s->size, sizeof(*b->blk)))
		return -1;
	n = sweep(b, s, code, &nomem);
	if (nomem)
		return -1;
	if (!n)
		return 0;       /* nothing decodable: not a function to us */
	decoded = b->ins[n - 1].off + b->ins[n - 1].size;
	find_leaders(b, n, decoded);
	if ((f = sb_cfg_add_func(g, s->name, s->start, s->start + s->size)) < 0)
		return -1;
	first = (uint32_t)g->nblocks;
	/* Pass 3: a block from each leader up to the next one. */
	for (i = 0; i < n;) {
		size_t j = i;
		long idx;

		while (j + 1 < n && !(b->mark[b->ins[j + 1].off] & M_LEADER))
			j++;
		idx = sb_cfg_add_block(g, (uint32_t)f, s->start + b->ins[i].off,
				       s->start + b->ins[j].off + b->ins[j].size,
				       s->start + b->ins[j].off);
		if (idx < 0)
			return -1;
		g->blocks[idx].flags = sb_insn_latch_flags(b->ins, n, i, j) |
				       indirect_tail_flag(b->ins, i, j);
		b->blk[b->ins[i].off] = (uint32_t)idx;
		i = j + 1;
	}
	/* Pass 4: edges out of each block, from its last instruction (the
	 * one before the next leader).  All targets have blocks by now. */
	for (i = 0, bi = first; i < n; i++) {
		const struct insn *x = &b->ins[i];
		bool next = i + 1 < n;  /* a next block in this function */
		long r = 0;

		if (next && !(b->mark[b->ins[i + 1].off] & M_LEADER))
			continue;
		switch (x->kind) {
		case K_JCC:
			if (x->toff != NO_TARGET)
				r |= sb_cfg_add_edge(g, bi, b->blk[x->toff], SB_EDGE_TAKEN);
			if (next)
				r |= sb_cfg_add_edge(g, bi, bi + 1, SB_EDGE_FALLTHROUGH);
			break;
		case K_JMP:
			if (x->toff != NO_TARGET) {
				r |= sb_cfg_add_edge(g, bi, b->blk[x->toff], SB_EDGE_JUMP);
			} else if (x->call) {   /* out of the function: a tail call */
				if (!grow((void **)&b->calls, &b->cap_calls, b->ncalls + 1,
					  sizeof(*b->calls)))
					return -1;
				b->calls[b->ncalls++] = (struct call){ bi, x->call, true };
			}
			break;
		case K_CALL:    /* noreturn callees are not known: see the header */
			if (next)
				r |= sb_cfg_add_edge(g, bi, bi + 1, SB_EDGE_CALL_RETURN);
			if (x->call) {  /* its callee may not be built yet */
				if (!grow((void **)&b->calls, &b->cap_calls, b->ncalls + 1,
					  sizeof(*b->calls)))
					return -1;
				b->calls[b->ncalls++] = (struct call){ bi, x->call, false };
			}
			break;
		case K_PLAIN:
			if (next)
				r |= sb_cfg_add_edge(g, bi, bi + 1, SB_EDGE_SEQUENTIAL);
			break;
		default:        /* ret, indirect jmp, hlt/ud2: no known successor */
			break;
		}
		if (r < 0)
			return -1;
		bi++;
	}
	b->st.nfuncs++;
	return 0;
}

/* ---- the whole binary ---- */

static void builder_close(struct builder *b)
{
	if (b->in)
		cs_free(b->in, 1);
	if (b->cs)
		cs_close(&b->cs);
	if (b->elf)
		elf_end(b->elf);
	if (b->fd >= 0)
		close(b->fd);
	if (b->dbg_elf)
		elf_end(b->dbg_elf);
	if (b->dbg_fd >= 0)
		close(b->dbg_fd);
	free(b->scn);
	free(b->syms);
	free(b->ins);
	free(b->mark);
	free(b->blk);
	free(b->calls);
}

struct sb_cfg *sb_cfg_build_stats(struct sb_elf *e, struct sb_cfg_build_stats *stats,
				  char *err, size_t errlen)
{
	struct builder b = { .e = e, .fd = -1, .dbg_fd = -1 };
	const char *bid = sb_elf_build_id(e);
	uint64_t end = 0;

	if (load_sections(&b, err, errlen))
		goto fail;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &b.cs) != CS_ERR_OK) {
		b.cs = 0;
		snprintf(err, errlen, "capstone: cannot start");
		goto fail;
	}
	cs_option(b.cs, CS_OPT_DETAIL, CS_OPT_ON);      /* operands and groups */
	if (!(b.in = cs_malloc(b.cs)) || !(b.g = sb_cfg_alloc()) ||
	    (bid && !(b.g->build_id = strdup(bid))) || collect_syms(&b))
		goto nomem;
	b.g->has_flags = true;
	b.g->has_tail_calls = true;
	b.g->has_indirect_tails = true;
	for (size_t i = 0; i < b.nsyms; i++) {
		const struct fsym *s = &b.syms[i];
		const unsigned char *code;

		/* Overlapping symbols (a function and a label-like symbol
		 * inside it) would make blocks overlap: the first one wins. */
		if (s->start < end) {
			b.st.noverlap++;
			continue;
		}
		if (!(code = code_at(&b, s->start, s->size))) {
			b.st.nnotext++;
			continue;
		}
		if (build_func(&b, s, code))
			goto nomem;
		end = s->start + s->size;
	}
	/* Calls into a function of this binary, and jumps out of one to
	 * another's entry (tail calls, SB_BLOCK_TAIL_CALL): an edge to its
	 * entry.  A jump to anything else (a .cold part's middle) gets none. */
	for (size_t k = 0; k < b.ncalls; k++) {
		long dst = sb_cfg_block_at(b.g, b.calls[k].target);

		if (dst < 0 || b.g->blocks[dst].start != b.calls[k].target ||
		    b.g->funcs[b.g->blocks[dst].func].first_block != (uint32_t)dst)
			continue;
		/* gcc's foo.cold is foo's code split off: its jumps go back
		 * into foo, a jump into it is no call */
		if (b.calls[k].tail && b.g->funcs[b.g->blocks[dst].func].name &&
		    strstr(b.g->funcs[b.g->blocks[dst].func].name, ".cold"))
			continue;
		if (sb_cfg_add_edge(b.g, b.calls[k].src, (uint32_t)dst, SB_EDGE_CALL) < 0)
			goto nomem;
		if (b.calls[k].tail)
			b.g->blocks[b.calls[k].src].flags |= SB_BLOCK_TAIL_CALL;
	}
	/* cfg.c qsort()s g->edges: NULL (no edge at all) upsets UBSan */
	if (!b.g->edges && (b.g->edges = malloc(sizeof(*b.g->edges))))
		b.g->cap_edges = 1;
	if (!b.g->edges || sb_cfg_finalize(b.g))
		goto nomem;
	if (stats)
		*stats = b.st;
	builder_close(&b);
	return b.g;
nomem:
	snprintf(err, errlen, "%s: out of memory building the CFG", sb_elf_path(e));
fail:
	sb_cfg_free(b.g);
	builder_close(&b);
	return NULL;
}

struct sb_cfg *sb_cfg_build(struct sb_elf *e, char *err, size_t errlen)
{
	return sb_cfg_build_stats(e, NULL, err, errlen);
}
