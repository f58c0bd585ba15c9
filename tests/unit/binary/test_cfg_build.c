// SPDX-License-Identifier: MIT
/*
 * test_cfg_build: compiles functions of known shape at test time (loops,
 * a diamond, a jump-table switch, a tail call; -fcf-protection for
 * endbr64 and notrack jmp) and checks the CFG against objdump: block
 * starts, every edge with its kind, and back edges against a DFS of the
 * objdump-derived graph (retreating edges = back edges in the reducible
 * graphs a compiler makes from structured C).  Then stripped binaries
 * and the system libc (time, counts, pthread_barrier_wait).  The cache
 * is test_cfg_build_cache.c.
 */
#include "binary/cfg_build.h"
#include "cfg/cfg_io.h"
#include "check.h"
#include "binary/elfsym.h"
#include "cfg_build_test.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"

static char dir[] = "/tmp/sb_cfgb_XXXXXX";

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ---- objdump's view ---- */

enum okind { O_PLAIN, O_JCC, O_JMP, O_IJMP, O_CALL, O_RET, O_HALT };

struct oinsn {
	uint64_t addr, target;
	bool has_target;
	enum okind kind;
};

static struct oinsn *oins;
static size_t noins;

static enum okind okind_of(const char *m)
{
	if (!strcmp(m, "jmp"))
		return O_JMP;
	if (m[0] == 'j' || !strncmp(m, "loop", 4) || !strcmp(m, "xbegin"))
		return O_JCC;
	if (!strncmp(m, "call", 4))
		return O_CALL;
	if (!strncmp(m, "ret", 3) || !strcmp(m, "lret") || !strncmp(m, "iret", 4))
		return O_RET;
	if (!strcmp(m, "hlt") || !strcmp(m, "ud2") || !strcmp(m, "ud0"))
		return O_HALT;
	return O_PLAIN;
}

/* Every instruction objdump shows, with branch targets ("jle 116b <f+0x2a>"). */
static void load_objdump(const char *bin)
{
	static const char *const prefixes[] = { "notrack", "bnd", "lock", "rep", "repz",
		"repnz", "repe", "repne", "data16", "cs", "ds", "addr32", NULL };
	char cmd[512], line[512];
	size_t cap = 0;
	FILE *f;

	free(oins);
	oins = NULL;
	noins = 0;
	snprintf(cmd, sizeof(cmd), "objdump -d -w --no-show-raw-insn %s", bin);
	if (!(f = popen(cmd, "r")))
		return;
	while (fgets(line, sizeof(line), f)) {
		char *tab = strchr(line, '\t'), *tok, *save = NULL;
		struct oinsn o = { 0 };

		if (!tab || sscanf(line, " %" SCNx64 ":", &o.addr) != 1)
			continue;
		tok = strtok_r(tab + 1, " \n", &save);
		for (int i = 0; tok && prefixes[i]; i++)
			if (!strcmp(tok, prefixes[i])) {
				tok = strtok_r(NULL, " \n", &save);
				i = -1;
			}
		if (!tok)
			continue;
		o.kind = okind_of(tok);
		if ((tok = strtok_r(NULL, " \n", &save)) && tok[0] != '*' &&
		    sscanf(tok, "%" SCNx64, &o.target) == 1 && o.kind != O_PLAIN)
			o.has_target = true;
		if (o.kind == O_JMP && !o.has_target)
			o.kind = O_IJMP;
		if (noins == cap) {
			cap = cap ? 2 * cap : 4096;
			oins = realloc(oins, cap * sizeof(*oins));
		}
		oins[noins++] = o;
	}
	pclose(f);
}

static size_t oins_at(uint64_t a)      /* first instruction at or after a */
{
	size_t lo = 0, hi = noins;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (oins[mid].addr < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct xedge { uint32_t src, dst, kind; };

static int xedge_cmp(const void *a, const void *b)
{
	const struct xedge *x = a, *y = b;

	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	if (x->dst != y->dst)
		return x->dst < y->dst ? -1 : 1;
	return (int)x->kind - (int)y->kind;
}

static long func_index(const struct sb_cfg *g, uint64_t start)
{
	for (size_t f = 0; f < g->nfuncs; f++)
		if (g->funcs[f].start == start)
			return (long)f;
	return -1;
}

/* DFS from the entry: an edge to a block still on the stack retreats. */
static void dfs(const struct xedge *ex, size_t nex, uint32_t b, uint8_t *state, bool *retreat)
{
	state[b] = 1;
	for (size_t i = 0; i < nex; i++) {
		if (ex[i].src != b)
			continue;
		if (state[ex[i].dst] == 1)
			retreat[i] = true;
		else if (!state[ex[i].dst])
			dfs(ex, nex, ex[i].dst, state, retreat);
	}
	state[b] = 2;
}

/*
 * Checks function f against objdump: leaders, block_at for every
 * instruction, edges with kinds, back edges.  Returns the number of back
 * edges and stores their destinations (block start addresses) in heads.
 */
static int check_func(const struct sb_cfg *g, const char *name, uint64_t start,
		      uint64_t size, uint64_t *heads, int maxheads)
{
	long f = func_index(g, start);
	size_t i0 = oins_at(start), i1 = oins_at(start + size), nl = 0, nex = 0;
	uint64_t *lead = calloc(size + 1, sizeof(*lead));
	struct xedge *ex = calloc(2 * (i1 - i0) + 1, sizeof(*ex));
	bool *retreat = calloc(2 * (i1 - i0) + 1, sizeof(*retreat)), leaders_ok;
	uint8_t *state;
	int nback = 0, ok = 1;
	const struct sb_cfg_func *fn;

	CHECK(f >= 0 && i1 > i0, "%s in the CFG and in objdump", name);
	if (f < 0 || i1 == i0)
		goto out;
	fn = &g->funcs[f];
	CHECK(fn->end == start + size && fn->nblocks > 0, "%s: bounds", name);
	/* leaders: start, direct targets inside, the insn after any branch */
	uint8_t *is_lead = calloc(size, 1);

	is_lead[0] = 1;
	for (size_t i = i0; i < i1; i++) {
		const struct oinsn *o = &oins[i];

		if (o->kind != O_PLAIN && i + 1 < i1)
			is_lead[oins[i + 1].addr - start] = 1;
		if ((o->kind == O_JCC || o->kind == O_JMP) && o->target - start < size)
			is_lead[o->target - start] = 1;
	}
	for (uint64_t k = 0; k < size; k++)
		if (is_lead[k])
			lead[nl++] = start + k;
	free(is_lead);
	leaders_ok = nl == fn->nblocks;
	for (size_t k = 0; leaders_ok && k < nl; k++)
		leaders_ok = g->blocks[fn->first_block + k].start == lead[k];
	CHECK(leaders_ok, "%s: %zu leaders from objdump, %u blocks", name, nl, fn->nblocks);
	if (!leaders_ok)
		goto out;
	/* every instruction lies in the block block_at names */
	for (size_t i = i0; i < i1; i++) {
		long b = sb_cfg_block_at(g, oins[i].addr);

		ok &= b >= (long)fn->first_block && b < (long)(fn->first_block + fn->nblocks) &&
		      g->blocks[b].start <= oins[i].addr && oins[i].addr < g->blocks[b].end;
	}
	CHECK(ok, "%s: block_at maps every instruction into its block", name);
	CHECK(g->blocks[fn->first_block + fn->nblocks - 1].end == start + size,
	      "%s: decoded to the end", name);
	/* the edges objdump implies, in local block numbers */
	for (size_t i = i0; i < i1; i++) {
		const struct oinsn *o = &oins[i];
		bool last = i + 1 == i1, in = o->has_target && o->target - start < size;
		uint32_t src, nxt;

		if (!last && !(o->kind != O_PLAIN ||
			       sb_cfg_block_at(g, oins[i + 1].addr) != sb_cfg_block_at(g, o->addr)))
			continue;
		src = (uint32_t)(sb_cfg_block_at(g, o->addr) - fn->first_block);
		nxt = src + 1;
		if (o->kind == O_JCC && in)
			ex[nex++] = (struct xedge){ src, (uint32_t)(sb_cfg_block_at(g, o->target) -
						    fn->first_block), SB_EDGE_TAKEN };
		if (o->kind == O_JMP && in)
			ex[nex++] = (struct xedge){ src, (uint32_t)(sb_cfg_block_at(g, o->target) -
						    fn->first_block), SB_EDGE_JUMP };
		if (!last && (o->kind == O_JCC || o->kind == O_CALL || o->kind == O_PLAIN))
			ex[nex++] = (struct xedge){ src, nxt, o->kind == O_JCC ? SB_EDGE_FALLTHROUGH :
				o->kind == O_CALL ? SB_EDGE_CALL_RETURN : SB_EDGE_SEQUENTIAL };
	}
	qsort(ex, nex, sizeof(*ex), xedge_cmp);
	state = calloc(fn->nblocks, 1);
	dfs(ex, nex, 0, state, retreat);
	free(state);
	/* the CFG's edges out of this function's blocks, in sorted order;
	 * interprocedural CALL edges are checked apart (check_call_edges) */
	uint32_t b0 = fn->first_block, e0 = g->out_start[b0], e1 = g->out_start[b0 + fn->nblocks];
	const struct sb_cfg_edge **own = calloc(e1 - e0 + 1, sizeof(*own));
	uint32_t nown = 0;

	for (uint32_t k = e0; own && k < e1; k++)
		if (g->edges[k].kind != SB_EDGE_CALL)
			own[nown++] = &g->edges[k];
	ok = own && nown == nex;
	for (size_t k = 0; ok && k < nex; k++) {
		const struct sb_cfg_edge *e = own[k];

		ok = e->src - b0 == ex[k].src && e->dst - b0 == ex[k].dst && e->kind == ex[k].kind;
		if (!ok)
			fprintf(stderr, "  %s edge %zu: %u->%u kind %u, objdump %u->%u kind %u\n",
				name, k, e->src - b0, e->dst - b0, e->kind, ex[k].src,
				ex[k].dst, ex[k].kind);
	}
	CHECK(ok, "%s: %u edges, %zu from objdump", name, nown, nex);
	for (size_t k = 0; ok && k < nex; k++) {
		const struct sb_cfg_edge *e = own[k];

		CHECK(e->back == retreat[k], "%s: edge %u->%u back=%u, DFS says %d", name,
		      e->src - b0, e->dst - b0, e->back, retreat[k]);
		if (e->back && nback < maxheads)
			heads[nback] = g->blocks[e->dst].start;
		nback += e->back;
	}
	free(own);
out:
	free(lead);
	free(ex);
	free(retreat);
	return nback;
}

static int check_named(struct sb_elf *e, const struct sb_cfg *g, const char *name,
		       uint64_t *heads, int maxheads)
{
	uint64_t start = 0, size = 0;

	CHECK(sb_elf_func_by_name(e, name, &start, &size) == 0, "symbol %s", name);
	return check_func(g, name, start, size, heads, maxheads);
}

/* The block whose last instruction is the first one of a kind in f. */
static long block_ending_in(struct sb_elf *e, const struct sb_cfg *g, const char *name,
			    enum okind kind)
{
	uint64_t start = 0, size = 0;

	sb_elf_func_by_name(e, name, &start, &size);
	for (size_t i = oins_at(start); i < noins && oins[i].addr < start + size; i++)
		if (oins[i].kind == kind)
			return sb_cfg_block_at(g, oins[i].addr);
	return -1;
}

/* The block ending in f's first backward conditional jump (a latch). */
static long backward_jcc_block(struct sb_elf *e, const struct sb_cfg *g, const char *name)
{
	uint64_t start = 0, size = 0;

	sb_elf_func_by_name(e, name, &start, &size);
	for (size_t i = oins_at(start); i < noins && oins[i].addr < start + size; i++)
		if (oins[i].kind == O_JCC && oins[i].target < oins[i].addr)
			return sb_cfg_block_at(g, oins[i].addr);
	return -1;
}

/* Every CALL edge leaves a block that ends in `call rel32` and enters the
 * first block of the function at that call's target. */
static void check_call_edges(struct sb_elf *e, const struct sb_cfg *g)
{
	size_t ncall = 0, bad = 0, ntail = 0;

	for (size_t i = 0; i < g->nedges; i++) {
		const struct sb_cfg_edge *x = &g->edges[i];
		const struct sb_cfg_block *src = &g->blocks[x->src];
		unsigned char code[5];
		int32_t rel;

		if (x->kind != SB_EDGE_CALL)
			continue;
		ncall++;
		/* a call (e8 rel32), or a tail call's jmp (e9 rel32, eb rel8)
		 * from a block flagged so */
		if (sb_elf_read(e, src->last_insn, code, 5) != 5 ||
		    (code[0] != 0xe8 && !((src->flags & SB_BLOCK_TAIL_CALL) &&
					  (code[0] == 0xe9 || code[0] == 0xeb)))) {
			bad++;
			continue;
		}
		if (code[0] == 0xeb)
			rel = (int8_t)code[1] - 3;      /* as if 5 bytes long */
		else
			memcpy(&rel, code + 1, 4);
		bad += src->last_insn + 5 + (int64_t)rel != g->blocks[x->dst].start ||
		       g->funcs[g->blocks[x->dst].func].first_block != x->dst || x->back ||
		       ((src->flags & SB_BLOCK_TAIL_CALL) && sb_cfg_nout(g, x->src) != 1);
		ntail += !!(src->flags & SB_BLOCK_TAIL_CALL);
	}
	CHECK(ncall > 0, "direct calls between local functions have CALL edges");
	CHECK(bad == 0, "%zu of %zu CALL edges do not match their call instruction", bad, ncall);
	CHECK(ntail > 0 && g->has_tail_calls, "tail calls (tailer's jmp) have CALL edges (%zu)",
	      ntail);
}

static void test_shapes(const char *bin)
{
	char err[256];
	struct sb_elf *e = sb_elf_open(bin, err, sizeof(err));
	struct sb_cfg_build_stats st;
	struct sb_cfg *g = e ? sb_cfg_build_stats(e, &st, err, sizeof(err)) : NULL;
	uint64_t heads[4], lstart = 0, jt = 0;
	long b;
	int n;

	CHECK(g != NULL, "build %s: %s", bin, g ? "" : err);
	if (!g) {
		sb_elf_close(e);
		return;
	}
	load_objdump(bin);
	CHECK(st.symsrc == SB_CFG_SYMS_SYMTAB && st.ninvalid == 0 && st.nfuncs == g->nfuncs,
	      "symtab, no invalid bytes (%" PRIu64 ")", st.ninvalid);
	CHECK(g->build_id && !strcmp(g->build_id, sb_elf_build_id(e)), "build-id set");
	/* the simple loop: one back edge, to the target of its backward jne */
	n = check_named(e, g, "counted_loop", heads, 4);
	sb_elf_func_by_name(e, "counted_loop", &lstart, NULL);
	for (size_t i = oins_at(lstart); i < noins && oins[i].kind != O_RET; i++)
		if (oins[i].kind == O_JCC && oins[i].target < oins[i].addr)
			jt = oins[i].target;
	CHECK(n == 1 && heads[0] == jt, "counted_loop: 1 back edge to %#" PRIx64 " (got %d)",
	      jt, n);
	/* its latch compares with n, a register: no constant bound; the
	 * latch of fixed_loop (`add $1; cmp $0x60d; jne`) has one */
	CHECK(g->has_flags, "a built graph has block flags");
	b = backward_jcc_block(e, g, "counted_loop");
	CHECK(b >= 0 && !(g->blocks[b].flags & SB_BLOCK_CONST_BOUND),
	      "counted_loop: latch bound is not a constant");
	n = check_named(e, g, "fixed_loop", heads, 4);
	b = backward_jcc_block(e, g, "fixed_loop");
	CHECK(n == 1 && b >= 0 && (g->blocks[b].flags & SB_BLOCK_CONST_BOUND),
	      "fixed_loop: 1 loop, its latch has a constant bound (%d, %ld)", n, b);
	/* a trip count chosen before the loop (2 or 8: a cmov, a branch)
	 * is no constant, however the compiler counts it */
	b = backward_jcc_block(e, g, "chosen_loop");
	CHECK(b >= 0 && !(g->blocks[b].flags & SB_BLOCK_CONST_BOUND),
	      "chosen_loop: a chosen trip count is not a constant bound (%ld)", b);
	/* a counter the body writes too, or whose start is a partial write
	 * (`setne %al`): no constant trip count, whatever the bound */
	for (size_t k = 0; k < 3; k++) {
		static const char *const f[] = { "skip_loop", "jump_loop", "set_start_loop" };

		b = backward_jcc_block(e, g, f[k]);
		CHECK(b < 0 || !(g->blocks[b].flags & SB_BLOCK_CONST_BOUND),
		      "%s: a counter written in the body or set from a variable is no constant "
		      "bound (%ld)", f[k], b);
	}
	n = check_named(e, g, "nested_loop", heads, 4);
	CHECK(n == 2 && heads[0] != heads[1], "nested_loop: 2 back edges, 2 headers (got %d)", n);
	n = check_named(e, g, "diamond", heads, 4);
	CHECK(n == 0, "diamond: no back edge (got %d)", n);
	b = block_ending_in(e, g, "diamond", O_JCC);
	CHECK(b >= 0 && sb_cfg_nout(g, (uint32_t)b) == 2, "diamond: the test block has 2 successors");
	n = check_named(e, g, "switcher", heads, 4);
	CHECK(n == 0, "switcher: no back edge (got %d)", n);
	b = block_ending_in(e, g, "switcher", O_IJMP);
	CHECK(b >= 0 && sb_cfg_nout(g, (uint32_t)b) == 0 &&
	      !(g->blocks[b].flags & SB_BLOCK_TAIL_INDIRECT),
	      "switcher: jump table not followed, no tail call");
	b = block_ending_in(e, g, "ptr_tailer", O_IJMP);
	CHECK(b >= 0 && sb_cfg_nout(g, (uint32_t)b) == 0 && g->has_indirect_tails &&
	      (g->blocks[b].flags & SB_BLOCK_TAIL_INDIRECT),
	      "ptr_tailer: a jump through a pointer, flagged a tail call, no edge");
	n = check_named(e, g, "tailer", heads, 4);
	check_call_edges(e, g);
	b = block_ending_in(e, g, "tailer", O_JMP);
	CHECK(n == 0 && b >= 0 && (g->blocks[b].flags & SB_BLOCK_TAIL_CALL) &&
	      sb_cfg_nout(g, (uint32_t)b) == 1 &&
	      g->edges[g->out_start[b]].kind == SB_EDGE_CALL,
	      "tailer: tail call, flagged, one CALL edge to the callee's entry");
	/* a callee-saved counter set before calls still starts constant */
	b = backward_jcc_block(e, g, "saved_loop");
	CHECK(b >= 0 && (g->blocks[b].flags & SB_BLOCK_CONST_BOUND),
	      "saved_loop: %%rbx set before a call, kept by it, stepped before the body's "
	      "call: constant bound (%ld)", b);
	b = backward_jcc_block(e, g, "branch_step_loop");
	CHECK(b >= 0 && !(g->blocks[b].flags & SB_BLOCK_CONST_BOUND),
	      "branch_step_loop: a step behind a branch is no constant bound (%ld)", b);
	b = backward_jcc_block(e, g, "jump_entry_loop");
	CHECK(b >= 0 && (g->blocks[b].flags & SB_BLOCK_CONST_BOUND),
	      "jump_entry_loop: entered by a jump into the loop, %%rbx set before the jump: "
	      "constant bound (%ld)", b);
	b = backward_jcc_block(e, g, "clobbered_loop");
	CHECK(b >= 0 && !(g->blocks[b].flags & SB_BLOCK_CONST_BOUND),
	      "clobbered_loop: %%rcx set before a call, which may clobber it: no constant "
	      "bound (%ld)", b);
	/* and every other function of the program (crt code: hlt, jmp *) */
	for (size_t f = 0; f < g->nfuncs; f++)
		check_func(g, g->funcs[f].name, g->funcs[f].start,
			   g->funcs[f].end - g->funcs[f].start, heads, 0);
	sb_cfg_free(g);
	sb_elf_close(e);
}

/* A stripped copy has only .dynsym's (exported) functions. */
static void test_stripped(const char *bin)
{
	char path[512], err[256];
	struct sb_cfg_build_stats s1, s2;
	struct sb_elf *e1 = sb_elf_open(bin, err, sizeof(err)), *e2;
	struct sb_cfg *g1 = e1 ? sb_cfg_build_stats(e1, &s1, err, sizeof(err)) : NULL, *g2;
	uint64_t a;

	snprintf(path, sizeof(path), "%s.stripped", bin);
	CHECK(run("objcopy --strip-all %s %s", bin, path) == 0, "strip");
	e2 = sb_elf_open(path, err, sizeof(err));
	g2 = e2 ? sb_cfg_build_stats(e2, &s2, err, sizeof(err)) : NULL;
	CHECK(g1 && g2, "build both");
	if (g1 && g2) {
		long f1, f2;

		CHECK(s2.symsrc == SB_CFG_SYMS_DYNSYM && s2.nfuncs == g2->nfuncs &&
		      g2->nfuncs > 0 && g2->nfuncs < g1->nfuncs,
		      "stripped: %zu of %zu functions", g2->nfuncs, g1->nfuncs);
		CHECK(sb_elf_func_by_name(e1, "hidden_fn", &a, NULL) == 0 &&
		      func_index(g1, a) >= 0 && func_index(g2, a) < 0, "static function gone");
		sb_elf_func_by_name(e1, "nested_loop", &a, NULL);
		f1 = func_index(g1, a);
		f2 = func_index(g2, a);
		CHECK(f1 >= 0 && f2 >= 0 && g1->funcs[f1].nblocks == g2->funcs[f2].nblocks &&
		      g1->blocks[g1->funcs[f1].first_block].start ==
		      g2->blocks[g2->funcs[f2].first_block].start, "exported function unchanged");
	}
	sb_cfg_free(g1);
	sb_cfg_free(g2);
	sb_elf_close(e1);
	sb_elf_close(e2);
}

static void test_libc(void)
{
	char err[256];
	struct sb_elf *e = sb_elf_open(LIBC, err, sizeof(err));
	struct sb_cfg_build_stats st;
	struct sb_cfg *g;
	uint64_t start = 0, size = 0, prev_end = 0;
	double t;
	long f;
	int ok = 1;

	CHECK(e != NULL, "open libc: %s", e ? "" : err);
	if (!e)
		return;
	t = now();
	g = sb_cfg_build_stats(e, &st, err, sizeof(err));
	t = now() - t;
	CHECK(g != NULL, "build libc: %s", g ? "" : err);
	if (!g) {
		sb_elf_close(e);
		return;
	}
	printf("libc: %.3f s, %zu functions (symbols from %s), %zu blocks, %zu edges, "
	       "%" PRIu64 " instructions, %" PRIu64 " stopped at undecodable bytes\n", t,
	       g->nfuncs, st.symsrc == SB_CFG_SYMS_DEBUGFILE ? "debug file" :
	       st.symsrc == SB_CFG_SYMS_DYNSYM ? ".dynsym" : ".symtab", g->nblocks,
	       g->nedges, st.ninsns, st.ninvalid);
	CHECK(g->nfuncs > (st.symsrc == SB_CFG_SYMS_DYNSYM ? 1500u : 3000u), "libc functions");
	/* functions in order, every block inside its function */
	for (size_t i = 0; i < g->nfuncs; i++) {
		const struct sb_cfg_func *fn = &g->funcs[i];

		ok &= fn->start >= prev_end;
		prev_end = fn->end;
		for (uint32_t k = fn->first_block; k < fn->first_block + fn->nblocks; k++)
			ok &= g->blocks[k].start >= fn->start && g->blocks[k].end <= fn->end;
	}
	CHECK(ok, "libc: functions ordered, blocks inside them");
	CHECK(sb_elf_func_by_name(e, "pthread_barrier_wait", &start, &size) == 0,
	      "pthread_barrier_wait");
	f = func_index(g, start);
	CHECK(f >= 0 && g->funcs[f].nblocks > 3, "pthread_barrier_wait has blocks");
	if (f >= 0) {
		const struct sb_cfg_func *fn = &g->funcs[f];

		ok = sb_cfg_block_at(g, start) == fn->first_block;
		for (uint32_t k = fn->first_block; k < fn->first_block + fn->nblocks; k++)
			ok &= g->blocks[k].start >= start && g->blocks[k].end <= start + size;
		CHECK(ok, "pthread_barrier_wait: %u blocks within [%#" PRIx64 ", +%" PRIu64 ")",
		      fn->nblocks, start, size);
	}
	sb_cfg_free(g);
	sb_elf_close(e);
}

int main(void)
{
	char bin[256];

	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp");
		return CHECK_DONE("test_cfg_build");
	}
	snprintf(bin, sizeof(bin), "%s/prog", dir);
	CHECK(write_prog_source(dir), "write source");
	CHECK(compile_prog(dir) == 0, "compile");
	test_shapes(bin);
	test_stripped(bin);
	test_libc();
	free(oins);
	run("rm -rf %s", dir);
	return CHECK_DONE("test_cfg_build");
}
