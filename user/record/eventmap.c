// SPDX-License-Identifier: MIT
#include "eventmap.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cfg/cfg.h"
#include "binary/cfg_build.h"
#include "cfg/cfg_io.h"
#include "records.h"
#include "binary/elfsym.h"
#include "util/idmap.h"
#include "binary/memop.h"
#include "binary/procmaps.h"
#include "profile/profile.h"
#include "binary/symbolize.h"

struct bincfg {
	struct sb_cfg *cfg;       /* NULL: could not be built */
	int32_t pbin;             /* profile binary index, -1 until known */
	bool used;
	uint8_t *exact_funcs;     /* per function: holds an exact-counted block */
	uint64_t exact_base;      /* runtime address - vaddr */
	uint8_t *sampled_funcs;   /* per function: holds a sampled block */
	uint64_t sampled_base;
};

/*
 * What a key's code says, found before any of its profile events: for
 * every key binary by binary (sb_eventmap_prepare), or for one key when
 * it is first asked for.
 */
struct keycode {
	uint64_t ip;      /* its instruction: the sample's skid-corrected, the
			   * call, or the exact block's callback call */
	int status;       /* enum sb_memop_status of ip (samples) */
	bool moved;       /* skid-corrected */
	bool runtime;     /* a call site in a runtime's frame: no event */
	int bin;          /* maps binary of ip, -1: in none */
	uint64_t vaddr;   /* ip in bin */
};

struct sb_eventmap {
	struct sb_maps *maps;
	struct sb_symbolizer *sym;
	struct sb_profile *p;
	struct sb_idmap *loaded;  /* maps binary -> struct bincfg, owned */
	struct sb_idmap *cfgs;    /* the same, entered as keys first use them: the
				   * order their CFGs and exact blocks go out in */
	struct sb_idmap *events;  /* (maps binary, block) -> event index + 1 */
	struct sb_idmap *ips;     /* runtime IP -> struct ipw */
	struct sb_idmap *prepared; /* key -> index in codes + 1 */
	struct keycode *codes;
	struct sb_memop_ctx *memop;
	struct sb_eventmap_stats st;
};

struct ipw {
	long event;
	uint64_t weight;
	uint64_t ip;      /* skid-corrected */
	int status;       /* enum sb_memop_status of the corrected IP */
	bool moved;
	bool callsite;    /* an inclusive key: a call instruction */
	bool exact;       /* an exact block count (SB_KEY_EXACT) */
};

struct sb_eventmap *sb_eventmap_alloc(struct sb_maps *maps, struct sb_symbolizer *sym,
				      struct sb_profile *p)
{
	struct sb_eventmap *em = calloc(1, sizeof(*em));

	if (!em)
		return NULL;
	em->maps = maps;
	em->sym = sym;
	em->p = p;
	em->loaded = sb_idmap_alloc();
	em->cfgs = sb_idmap_alloc();
	em->events = sb_idmap_alloc();
	em->ips = sb_idmap_alloc();
	em->prepared = sb_idmap_alloc();
	em->memop = sb_memop_ctx_new(256);
	if (!em->loaded || !em->cfgs || !em->events || !em->ips || !em->prepared ||
	    !em->memop) {
		sb_eventmap_free(em);
		return NULL;
	}
	return em;
}

static void bincfg_free(void *v)
{
	struct bincfg *bc = v;

	sb_cfg_free(bc->cfg);
	free(bc->exact_funcs);
	free(bc->sampled_funcs);
	free(bc);
}

void sb_eventmap_free(struct sb_eventmap *em)
{
	if (!em)
		return;
	sb_idmap_free_with(em->loaded, bincfg_free);
	sb_idmap_free(em->cfgs);
	sb_idmap_free(em->prepared);
	free(em->codes);
	sb_idmap_free(em->events);
	sb_idmap_free_with(em->ips, free);
	sb_memop_ctx_free(em->memop);
	free(em);
}

/* The CFG of maps binary bin, loaded on first use. */
static struct bincfg *cfg_load(struct sb_eventmap *em, int bin)
{
	void **slot = sb_idmap_slot(em->loaded, (uint64_t)bin, 0, true);
	struct bincfg *bc;
	struct sb_elf *e;
	char err[256];
	bool hit = false;

	if (!slot)
		return NULL;
	if (*slot)
		return *slot;
	bc = calloc(1, sizeof(*bc));
	if (!bc)
		return NULL;
	bc->pbin = -1;
	e = sb_maps_binary_elf(em->maps, bin);
	/* Built once per build-id and cached on disk: the next recording of
	 * the same binary does not redo it. */
	if (e)
		bc->cfg = sb_cfg_cached(e, NULL, &hit, err, sizeof(err));
	em->st.cfg_cache_hits += hit;
	*slot = bc;
	return bc;
}

/* The same, entered in em->cfgs when a key first uses it. */
static struct bincfg *cfg_of(struct sb_eventmap *em, int bin)
{
	void **slot = sb_idmap_slot(em->cfgs, (uint64_t)bin, 0, true);

	if (!slot)
		return NULL;
	if (!*slot && !(*slot = cfg_load(em, bin)))
		sb_idmap_remove(em->cfgs, (uint64_t)bin, 0);
	return *slot;
}

static long block_event(struct sb_eventmap *em, const struct keycode *kc);
static long exact_event(struct sb_eventmap *em, const struct keycode *kc);

/*
 * A timer sample lands just after the instruction that stalled (skid,
 * ../shared/notes/platform.md): when the instruction before the sample
 * accessed memory the sample belongs to it.  That depends on the code
 * only, so it is decided once per distinct IP, here, and not per sample
 * while the target runs.  Returns the corrected IP and its class.
 */
static uint64_t skid_correct(struct sb_eventmap *em, uint64_t ip, int *status, bool *moved)
{
	static const uint64_t regs[SB_NREGS];   /* addresses are not needed here */
	struct sb_memop mo;
	struct sb_elf *e;
	uint64_t vaddr;
	int bin;

	*moved = false;
	*status = SB_MEMOP_NOCODE;
	if (sb_maps_resolve(em->maps, ip, &bin, &vaddr) ||
	    !(e = sb_maps_binary_elf(em->maps, bin)))
		return ip;
	*status = sb_memop_decode(em->memop, e, vaddr, ip, regs, 0, &mo);
	if (*status != SB_MEMOP_NONE && *status != SB_MEMOP_NOCODE && mo.previous &&
	    mo.insn < vaddr) {
		*moved = true;
		return ip - (vaddr - mo.insn);
	}
	return ip;
}

/* A key's code, from the key alone (no profile events). */
static void code_find(struct sb_eventmap *em, uint64_t key, struct keycode *kc)
{
	memset(kc, 0, sizeof(*kc));
	if (key & SB_KEY_EXACT) {
		/* inside the call to the callback, ending the block */
		kc->ip = (key & ~SB_KEY_EXACT) - 1;
	} else if (key & SB_KEY_CALLSITE) {   /* a caller's call instruction */
		kc->ip = key & ~SB_KEY_CALLSITE;
		kc->status = SB_MEMOP_NONE;
	} else {
		kc->ip = skid_correct(em, key, &kc->status, &kc->moved);
	}
	if (sb_maps_resolve(em->maps, kc->ip, &kc->bin, &kc->vaddr)) {
		kc->bin = -1;
		kc->vaddr = 0;
	}
	/* A runtime's frames (start_thread, gomp_thread_start) are on every
	 * stack: their inclusive counts are time itself. */
	kc->runtime = (key & SB_KEY_CALLSITE) && kc->bin >= 0 &&
		      sb_records_is_runtime(sb_maps_binary_name(em->maps, kc->bin));
}

/* The key's instruction, or the address its code is found at. */
static uint64_t key_addr(uint64_t key)
{
	if (key & SB_KEY_EXACT)
		return (key & ~SB_KEY_EXACT) - 1;
	return key & ~SB_KEY_CALLSITE;
}

static int by_addr(const void *x, const void *y)
{
	uint64_t kx = *(const uint64_t *)x, ky = *(const uint64_t *)y;
	uint64_t a = key_addr(kx), b = key_addr(ky);

	if (a != b)
		return a > b ? 1 : -1;
	return (kx > ky) - (kx < ky);
}

int sb_eventmap_prepare(struct sb_eventmap *em, const uint64_t *keys, size_t n)
{
	uint64_t *sorted = malloc((n ? n : 1) * sizeof(*sorted));
	struct keycode *codes = calloc(n ? n : 1, sizeof(*codes));
	size_t ncodes = 0;

	if (em->codes) {
		free(sorted);
		free(codes);
		return -EINVAL;
	}
	if (!sorted || !codes) {
		free(sorted);
		free(codes);
		return -ENOMEM;
	}
	/* By address: a binary's keys come together, its code decoded and
	 * its CFG loaded in one stretch.  Its events come later, in the
	 * callers' order, which the profile's order follows. */
	memcpy(sorted, keys, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), by_addr);
	em->codes = codes;
	for (size_t i = 0; i < n; i++) {
		void **slot = sb_idmap_slot(em->prepared, sorted[i], 0, true);
		struct keycode *kc = &codes[ncodes];

		if (!slot) {
			free(sorted);
			return -ENOMEM;
		}
		if (*slot)
			continue;
		code_find(em, sorted[i], kc);
		/* Every key in a binary uses its CFG (block_event, exact_event)
		 * but the runtime's call sites, which have no event. */
		if (kc->bin >= 0 && !kc->runtime && !cfg_load(em, kc->bin)) {
			free(sorted);
			return -ENOMEM;
		}
		*slot = (void *)(uintptr_t)++ncodes;
	}
	free(sorted);
	return 0;
}

long sb_eventmap_block(struct sb_eventmap *em, uint64_t ip, uint64_t weight)
{
	void **slot = sb_idmap_slot(em->ips, ip, 0, true);
	void **prep;
	struct keycode kc;
	struct ipw *w;

	if (!slot)
		return -1;
	if (!*slot) {
		if (!(w = calloc(1, sizeof(*w))))
			return -1;
		prep = sb_idmap_slot(em->prepared, ip, 0, false);
		if (prep && *prep)
			kc = em->codes[(uintptr_t)*prep - 1];
		else
			code_find(em, ip, &kc);
		if (ip & SB_KEY_EXACT) {
			w->event = exact_event(em, &kc);
			w->exact = true;
		} else {
			w->ip = kc.ip;
			w->status = kc.status;
			w->moved = kc.moved;
			w->callsite = ip & SB_KEY_CALLSITE;
			w->event = kc.runtime ? -1 : block_event(em, &kc);
		}
		*slot = w;
	}
	w = *slot;
	if (w->exact)
		return w->event;
	w->weight += weight;
	if (w->callsite)
		return w->event;   /* the sample was counted at its own IP */
	if (w->status == SB_MEMOP_OK || w->status == SB_MEMOP_FS)
		em->st.samples_access += weight;
	else if (w->status == SB_MEMOP_NONE)
		em->st.samples_none += weight;
	else
		em->st.samples_undecodable += weight;
	em->st.samples_skid += w->moved ? weight : 0;
	return w->event;
}

/* The event of block blk of maps binary bin, created on first use; base
 * turns the binary's vaddrs into runtime addresses. */
static long event_of_block(struct sb_eventmap *em, int bin, struct bincfg *bc, long blk,
			   uint64_t base, uint32_t kind)
{
	struct sb_event_def d = { .kind = kind, .loc_hot = -1 };
	/* one event per (block, kind): samples and exact counts side by side */
	void **slot = sb_idmap_slot(em->events, (uint64_t)bin | (uint64_t)kind << 32,
				    (uint64_t)blk, true);
	long idx, loc;

	if (!slot)
		return -1;
	if (*slot)
		return (long)(uintptr_t)*slot - 1;
	/* The block's start, as a runtime address, names it in the profile. */
	d.vaddr = bc->cfg->blocks[blk].start;
	loc = sb_symbolizer_loc(em->sym, base + d.vaddr);
	if (loc < 0)
		return -1;
	d.loc = (int32_t)loc;
	d.stmt_line = kind == SB_EVK_BLOCK_SAMPLES ? sb_symbolizer_ghost_line(em->sym, base + d.vaddr)
						   : 0;
	if (d.stmt_line) {
		/* the statement's own location, for a cause shown at it */
		struct sb_loc l = em->p->locs[loc];

		l.line = d.stmt_line;
		if (sb_profile_add_loc(em->p, &l) < 0)
			d.stmt_line = 0;
	}
	/* The block's last instruction: the branch a cause is reported at. */
	d.vaddr2 = bc->cfg->blocks[blk].last_insn;
	loc = sb_symbolizer_loc(em->sym, base + d.vaddr2);
	if (loc < 0)
		return -1;
	d.loc2 = (int32_t)loc;
	d.binary = em->p->locs[loc].binary;
	bc->pbin = d.binary;
	bc->used = true;
	idx = sb_profile_add_event(em->p, &d);
	if (idx < 0)
		return -1;
	*slot = (void *)(uintptr_t)(idx + 1);
	return idx;
}


/*
 * Code of the exact-mode runtime linked into a `scalebpf cc` program
 * (user/rt/): its coverage callback's time is the cost of counting, and
 * its thread and task trampolines are on every stack (time itself).
 */
static bool exact_runtime(const struct sb_cfg *g, long blk)
{
	static const char *const prefix[] = {
		"__sanitizer_cov_", "sb_exact_", "scalebpf_exact_", "__wrap_", "sbx_",
	};
	const char *name = g->funcs[g->blocks[blk].func].name;

	for (size_t i = 0; name && i < sizeof(prefix) / sizeof(prefix[0]); i++)
		if (!strncmp(name, prefix[i], strlen(prefix[i])))
			return true;
	return false;
}

static long block_event(struct sb_eventmap *em, const struct keycode *kc)
{
	uint64_t base = kc->ip - kc->vaddr;
	int bin = kc->bin;
	uint32_t gs[SB_CFG_MAX_GUARDS];
	struct bincfg *bc;
	long blk, idx, pred, ng;

	em->st.keys++;
	if (bin < 0 || !(bc = cfg_of(em, bin)) || !bc->cfg ||
	    (blk = sb_cfg_block_at(bc->cfg, kc->vaddr)) < 0) {
		em->st.unmapped++;
		return -1;
	}
	if (exact_runtime(bc->cfg, blk)) {
		em->st.exact_runtime++;
		return -1;
	}
	idx = event_of_block(em, bin, bc, blk, base, SB_EVK_BLOCK_SAMPLES);
	if (idx >= 0 && !bc->sampled_funcs &&
	    !(bc->sampled_funcs = calloc(bc->cfg->nfuncs + 1, 1)))
		return -1;
	if (idx >= 0) {
		bc->sampled_funcs[bc->cfg->blocks[blk].func] = 1;
		bc->sampled_base = base;
	}
	/* A block guarded by conditional branches: the causes view shows
	 * the branch (one test, if the compiler duplicated it), so name them
	 * too, even without samples of their own (no vector then). */
	ng = idx >= 0 ? sb_cfg_guards(bc->cfg, (uint32_t)blk, gs, SB_CFG_MAX_GUARDS) : -1;
	for (long i = 0; i < ng; i++)
		if (event_of_block(em, bin, bc, gs[i], base, SB_EVK_BLOCK_SAMPLES) < 0)
			return -1;
	/* Likewise a loop's latch, where a loop cause is shown. */
	pred = idx >= 0 ? sb_cfg_latch(bc->cfg, (uint32_t)blk) : -1;
	if (pred >= 0 && event_of_block(em, bin, bc, pred, base, SB_EVK_BLOCK_SAMPLES) < 0)
		return -1;
	/* And the branches that enter the loop of a header or latch past
	 * its preheader: where a cause is shown when some threads never
	 * entered the loop (analysis/causes/causes_entered.c). */
	pred = idx >= 0 ? sb_cfg_loop_entry(bc->cfg, (uint32_t)blk) : -1;
	ng = pred >= 0 ? sb_cfg_guards(bc->cfg, (uint32_t)pred, gs, SB_CFG_MAX_GUARDS) : -1;
	for (long i = 0; i < ng; i++)
		if (event_of_block(em, bin, bc, gs[i], base, SB_EVK_BLOCK_SAMPLES) < 0)
			return -1;
	return idx;
}

static long exact_event(struct sb_eventmap *em, const struct keycode *kc)
{
	uint64_t base = kc->ip - kc->vaddr;
	int bin = kc->bin;
	struct bincfg *bc;
	long blk;

	em->st.exact_keys++;
	if (bin < 0 || !(bc = cfg_of(em, bin)) || !bc->cfg ||
	    (blk = sb_cfg_block_at(bc->cfg, kc->vaddr)) < 0) {
		em->st.exact_unmapped++;
		return -1;
	}
	bc->exact_base = base;
	if (!bc->exact_funcs && !(bc->exact_funcs = calloc(bc->cfg->nfuncs + 1, 1)))
		return -1;
	bc->exact_funcs[bc->cfg->blocks[blk].func] = 1;
	return event_of_block(em, bin, bc, blk, base, SB_EVK_BLOCK_COUNT);
}

/*
 * Exact counts determine the other blocks of a counted function (the
 * machine code cuts an IR block at each call, and branches end them):
 * any of them may be a cause, so all are named in the profile, those
 * without counts of their own without a vector.
 */
static int name_exact_functions(struct sb_eventmap *em)
{
	size_t it = 0;
	uint64_t bin;
	void *v;

	while (sb_idmap_next(em->cfgs, &it, &bin, NULL, &v)) {
		struct bincfg *bc = v;

		for (size_t f = 0; bc->exact_funcs && f < bc->cfg->nfuncs; f++) {
			const struct sb_cfg_func *fn = &bc->cfg->funcs[f];

			if (!bc->exact_funcs[f])
				continue;
			for (uint32_t b = fn->first_block; b < fn->first_block + fn->nblocks; b++)
				if (event_of_block(em, (int)bin, bc, b, bc->exact_base,
						   SB_EVK_BLOCK_COUNT) < 0)
					return -ENOMEM;
		}
	}
	return 0;
}

/*
 * The blocks of a sampled function, named though no sample hit them: the
 * causes view shows a cause at the branch that decides it (a guard above a
 * loop's preheader, an outer loop's latch, the copy of a test a compiler
 * duplicated), and a 3-instruction `cmp; jne` is rarely sampled even when
 * the loop it closes holds all the time.  Without its line the cause
 * could only be shown where the time went.  Best effort: a block that
 * cannot be named is left out (it was not needed for the samples), and a
 * function of more than SAMPLED_FUNC_MAX_BLOCKS blocks is left as sampled.
 * The program's own code only: a library's blocks are no place a reader
 * acts on (the causes view takes their samples at the program's call), and
 * libc's sampled functions alone would add hundreds of events (the
 * profile's "executable" is set before this runs).
 */
#define SAMPLED_FUNC_MAX_BLOCKS 4096
static void name_sampled_functions(struct sb_eventmap *em)
{
	size_t it = 0;
	uint64_t bin;
	void *v;

	while (sb_idmap_next(em->cfgs, &it, &bin, NULL, &v)) {
		struct bincfg *bc = v;

		if (!bc->sampled_funcs || bc->pbin < 0 || sb_profile_library(em->p, bc->pbin))
			continue;
		for (size_t f = 0; f < bc->cfg->nfuncs; f++) {
			const struct sb_cfg_func *fn = &bc->cfg->funcs[f];

			/* (an exact-counted function's blocks are named already) */
			if (!bc->sampled_funcs[f] || fn->nblocks > SAMPLED_FUNC_MAX_BLOCKS ||
			    (bc->exact_funcs && bc->exact_funcs[f]))
				continue;
			for (uint32_t b = fn->first_block; b < fn->first_block + fn->nblocks; b++)
				(void)event_of_block(em, (int)bin, bc, b, bc->sampled_base,
						     SB_EVK_BLOCK_SAMPLES);
		}
	}
}

/* Each block's most sampled instruction: where its time goes, shown for
 * causes that are about time rather than control flow. */
static int name_hot(struct sb_eventmap *em)
{
	uint64_t *best = calloc(em->p->nevents ? em->p->nevents : 1, sizeof(*best));
	uint64_t *best_ip = calloc(em->p->nevents ? em->p->nevents : 1, sizeof(*best_ip));
	size_t it = 0;
	void *v;

	if (!best || !best_ip) {
		free(best);
		free(best_ip);
		return -ENOMEM;
	}
	while (sb_idmap_next(em->ips, &it, NULL, NULL, &v)) {
		const struct ipw *w = v;

		/* Where a block's own time goes: its sampled instructions only. */
		if (w->event >= 0 && !w->callsite && !w->exact && w->weight > best[w->event]) {
			best[w->event] = w->weight;
			best_ip[w->event] = w->ip;
		}
	}
	for (size_t e = 0; e < em->p->nevents; e++) {
		struct sb_event_def *d = &em->p->events[e];
		uint64_t vaddr;
		long loc;
		int bin;

		if (!best[e] || sb_maps_resolve(em->maps, best_ip[e], &bin, &vaddr))
			continue;
		loc = sb_symbolizer_loc(em->sym, best_ip[e]);
		if (loc < 0)
			break;
		d = &em->p->events[e];   /* the loc may have grown the arrays */
		d->hot = vaddr;
		d->loc_hot = (int32_t)loc;
	}
	free(best);
	free(best_ip);
	return 0;
}

int sb_eventmap_finish(struct sb_eventmap *em)
{
	size_t it = 0;
	void *v;

	if (name_hot(em) || name_exact_functions(em))
		return -ENOMEM;
	name_sampled_functions(em);

	while (sb_idmap_next(em->cfgs, &it, NULL, NULL, &v)) {
		struct bincfg *bc = v;
		unsigned char *buf = NULL;
		size_t len = 0;
		long r;

		if (!bc->used || !bc->cfg || bc->pbin < 0)
			continue;
		em->st.binaries++;
		if (sb_cfg_serialize(bc->cfg, &buf, &len))
			return -ENOMEM;
		r = sb_profile_add_cfg(em->p, bc->pbin, buf, len);
		free(buf);
		if (r < 0)
			return -ENOMEM;
	}
	return 0;
}

void sb_eventmap_get_stats(const struct sb_eventmap *em, struct sb_eventmap_stats *st)
{
	*st = em->st;
}
