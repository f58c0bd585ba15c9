/* SPDX-License-Identifier: MIT */
/*
 * Private to analysis/coherence/ and its tests: the simulator's state.
 *
 * Caches.  Per thread an L1 and an L2, sets x ways of tags with LRU
 * stamps.  The L2 is inclusive: an L2 eviction takes the L1 copy too, so
 * an L1 way can point at its L2 way (l2way) and every access finds the
 * line's coherence state there without a second lookup.  The L2 way holds
 * MESI's state and what the classification needs: the bytes the thread
 * touched while holding the line, the region and lock state of its last
 * access, its last store in the region and the reference that brought the
 * line in.
 *
 * The directory (per line: which L2s hold it, which threads lost it to an
 * invalidation) is only consulted on misses and on stores to shared
 * lines; hits on M/E lines never touch it.  Lines no cache holds and no
 * thread lost leave it, so it is bounded by the caches' capacity plus the
 * kept coherence tags (SB_COH_MAX_LOST, counted when dropped).
 */
#ifndef SB_COHERENCE_PRIV_H
#define SB_COHERENCE_PRIV_H

#include "coherence.h"
#include "util/idmap.h"

#define SB_COH_MAX_LOST (1u << 20)
#define SB_COH_NOREF UINT32_MAX

enum sb_coh_state { SB_COH_I = 0, SB_COH_S, SB_COH_E, SB_COH_M };

struct sb_coh_mask {
	uint64_t w[SB_COHERENCE_MAX_LINE / 64];
};

struct sb_coh_l2way {
	uint64_t tag;              /* line number + 1; 0: empty */
	uint64_t lru;
	uint8_t state;             /* enum sb_coh_state */
	uint8_t locked;            /* the last access held a lock */
	uint8_t others_lost;       /* other threads lost this line to this
				    * cache's stores: later stores change
				    * what their coherence misses will see */
	uint32_t brought;          /* ref that brought the line in */
	uint32_t last_store;       /* ref of the last store in last_store_region */
	uint64_t region;           /* of the last access */
	uint64_t last_store_region;
	struct sb_coh_mask touched;   /* bytes accessed while held */
	struct sb_coh_mask written;   /* bytes stored while held */
	struct sb_coh_mask stored;    /* bytes stored in last_store_region */
};

struct sb_coh_l1way {
	uint64_t tag;
	uint64_t lru;
	uint32_t l2way;            /* index into the thread's l2 ways */
};

struct sb_coh_thread {
	struct sb_coh_l1way *l1;   /* l1_sets * l1_ways */
	struct sb_coh_l2way *l2;
	uint64_t clock;
	int locks;
	struct sb_coherence_counts c;
};

/* A directory entry: holders and losers, nwords bitmap words each. */
struct sb_coh_dir {
	uint32_t nholders, nlost;
	uint64_t bits[];           /* holders[nwords], lost[nwords] */
};

/* A thread's bytes of one shared line, over the run. */
struct sb_coh_foot {
	uint32_t thread;
	struct sb_coh_mask touched, written;
};

struct sb_coh_footv {
	struct sb_coh_foot *v;
	uint32_t n, cap;
};

struct sb_coherence_sim {
	struct sb_coherence_opts o;
	uint32_t nthreads, nwords;
	uint32_t line_shift;
	uint32_t l1_sets, l2_sets;
	uint64_t region;
	struct sb_coh_thread *th;
	struct sb_idmap *dir;      /* (line, 0) -> struct sb_coh_dir * */
	struct sb_idmap *lost;     /* (line, thread) -> struct sb_coh_mask *:
				    * bytes others stored since it was lost */
	size_t nlost;
	uint64_t lost_dropped;
	struct sb_idmap *refmap;   /* (pc, 0) -> ref index + 1 */
	struct sb_coherence_ref *refs;
	size_t nrefs, caprefs;
	struct sb_idmap *linemap;  /* (line, 0) -> line index + 1 */
	struct sb_coherence_line *lines;
	struct sb_coh_footv *feet;      /* by line index, caplines */
	size_t nlines, caplines;
	struct sb_idmap *invmap;   /* (victim | store << 32, thread) -> count */
	struct sb_idmap *racemap;  /* (a, b) -> count, a <= b */
	struct sb_idmap *partmap;  /* (line, thread >= 64): took part */
	uint64_t regions_seen;
	bool any_region;
};

static inline void sb_coh_mask_range(struct sb_coh_mask *m, uint32_t off, uint32_t n)
{
	for (uint32_t b = off; b < off + n; b++)
		m->w[b >> 6] |= 1ull << (b & 63);
}

static inline bool sb_coh_mask_meets(const struct sb_coh_mask *a, const struct sb_coh_mask *b)
{
	for (size_t i = 0; i < SB_COHERENCE_MAX_LINE / 64; i++)
		if (a->w[i] & b->w[i])
			return true;
	return false;
}

static inline void sb_coh_mask_or(struct sb_coh_mask *a, const struct sb_coh_mask *b)
{
	for (size_t i = 0; i < SB_COHERENCE_MAX_LINE / 64; i++)
		a->w[i] |= b->w[i];
}

/* coherence_result.c: bookkeeping of references, lines, invalidators. */
long sb_coh_ref_index(struct sb_coherence_sim *s, uint64_t pc);
struct sb_coherence_line *sb_coh_line_stat(struct sb_coherence_sim *s, uint64_t line);
int sb_coh_line_took_part(struct sb_coherence_sim *s, struct sb_coherence_line *l, uint32_t t,
			  uint32_t ref);
int sb_coh_count_pair(struct sb_idmap *m, uint64_t k1, uint64_t k2);
/* Thread t touched (and wrote) these bytes of shared line l. */
int sb_coh_line_foot(struct sb_coherence_sim *s, const struct sb_coherence_line *l, uint32_t t,
		     const struct sb_coh_mask *touched, const struct sb_coh_mask *written);

/* A new SHARING row of p (grown by doubling; *cap its capacity), zeroed,
 * no locations or references (coherence_store.c); NULL on ENOMEM. */
struct sb_sharing;
struct sb_profile;
struct sb_sharing *sb_coherence_row(struct sb_profile *p, size_t *cap, uint32_t kind,
				    uint32_t mode);
/* loc_of(ctx, pc) as a location index, -1 for none or out of range. */
int32_t sb_coherence_loc(sb_coherence_loc_fn loc_of, void *ctx, uint64_t pc);

/* ---- sampled estimates (coherence_sampled.c, coherence_sampled_store.c) ---- */

enum { ST_TRACK = 0, ST_PROBING, ST_DECIDED };

struct cos_thread {
	uint32_t tid;
	uint32_t samples, hits;
	uint64_t touched, written;     /* bit b: byte b of the line */
	uint64_t last_sample;          /* its latest sample's time */
};

struct cos_line {
	uint64_t addr;                 /* line address + 1; 0: empty slot */
	uint64_t samples;              /* samples whose access it was: time */
	uint64_t touches;              /* samples that touched it, ahead too */
	uint64_t stores, hitm, hits, confirmations;
	uint64_t windows, windows_confirmed, windows_in_region;
	uint64_t last_probe, win_start, verdict_ns;
	uint32_t win_hit_threads;      /* bit i: thr[i] hit in this window */
	uint32_t win_hits;
	uint32_t user_stores;          /* stores (sampled or hit) from the
					* program's code, not the runtime's */
	uint32_t static_stores;        /* sampled ones into static data */
	uint32_t unarmed;              /* windows nothing could be armed in */
	int64_t stack_tid;
	uint8_t state, nthr;
	struct cos_thread thr[SB_COSAMPLE_THREADS];
	uint64_t pcs[SB_COSAMPLE_REFS];
	uint32_t pc_loads[SB_COSAMPLE_REFS], pc_stores[SB_COSAMPLE_REFS];
	uint32_t npcs;
	uint32_t stamp_tid[SB_COSAMPLE_STAMPS];
	uint64_t stamp_ts[SB_COSAMPLE_STAMPS];
	uint32_t nstamps;
	uint32_t hit_tid[SB_COSAMPLE_STAMPS];
	uint64_t hit_ts[SB_COSAMPLE_STAMPS];
	uint32_t nhit_stamps;
};

/* An instruction that touched data: how many samples were its own access
 * (time), and which threads it stored for, where.  A store instruction
 * several threads run into one region of memory (a parallel loop over one
 * array) makes its lines worth a window even when the samples, sparse over
 * a large array, never met two threads on one line. */
#define NPCS 4096           /* instructions tracked */
#define SITE_SPAN (4ull << 20)          /* "one region of memory" */

struct cos_pc {
	uint64_t pc;                   /* 0: empty */
	uint64_t samples;
	uint32_t tids[2];              /* the first two storing threads */
	uint64_t lo, hi;               /* its stores' addresses */
};

struct sb_cosample {
	struct sb_cosample_opts o;
	struct cos_pc *pcs;            /* NPCS, open addressing */
	uint64_t purge_backoff;        /* dropped accesses before the next purge */
	uint32_t shift;                /* log2(line) */
	size_t cap, used;              /* slots: a power of two */
	struct cos_line *lines;
	struct sb_cosample_stats st;
};

/* The instruction's entry; add: make one (NULL when the table is full). */
struct cos_pc *sb_cosample_pc(struct sb_cosample *s, uint64_t pc, bool add);

#endif
