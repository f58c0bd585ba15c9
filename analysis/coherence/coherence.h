/* SPDX-License-Identifier: MIT */
/*
 * ccSIM (Marathe, Mueller, de Supinski; ../shared/papers/ccsim.txt §II-C,
 * §II-D): which data ping-pongs between the private caches of a program's
 * threads, simulated exactly from per-thread memory traces.
 *
 * The model.  Each thread is a processor with private, inclusive L1 and
 * L2 caches (set-associative, LRU), kept coherent by MESI: a store to a
 * line other caches hold invalidates their copies; a load of a line
 * another cache holds modified downgrades it (no invalidation).  Counts
 * are taken at the L2, the lowermost private level, as the paper does.
 *
 * Each invalidation is classified (Fig. 3):
 *   true   the store's bytes overlap bytes the invalidated cache's thread
 *          touched while it held the line; false otherwise (disjoint bytes
 *          of one line);
 *   in region / across region   the victim's last access to the line was
 *          in the store's region (the execution between two successive
 *          barriers) or in an earlier one;
 *   in-region true sharing is further split: lock-protected when both the
 *          store and the victim's last access held a lock; else, when the
 *          victim had also stored to the same bytes in the region, a
 *          possible data race (both references are named).
 * A coherence miss is a miss on a line this cache lost to an invalidation
 * (its tag is kept); it is true when the missing access touches bytes
 * other threads wrote since, false otherwise.  An invalidator list says,
 * for the reference that brought a line in, which store references on
 * which threads invalidated it.
 *
 * A reference is an instruction (its pc); the caller names them.  Pure
 * computation over what it is fed; the trace driver (coherence_trace.c)
 * feeds it from files.  Never prints: -errno and a message.
 */
#ifndef SB_COHERENCE_H
#define SB_COHERENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SB_COHERENCE_MAX_THREADS 1024
#define SB_COHERENCE_MAX_LINE 128

enum sb_coherence_mode {
	SB_COHERENCE_PIPED = 0,        /* a thread's references up to its next
					* sync, thread after thread (§II-C) */
	SB_COHERENCE_INTERLEAVED = 1,  /* one reference per thread, round
					* robin; a seed != 0 shuffles each round */
};

struct sb_coherence_level {
	uint32_t size;                 /* bytes */
	uint32_t ways;
};

struct sb_coherence_opts {
	uint32_t line;                 /* bytes: a power of two, 8..128 */
	struct sb_coherence_level l1, l2;
	enum sb_coherence_mode mode;
	uint64_t seed;                 /* interleaved only */
};

/* 64-byte lines, 32 KiB 8-way L1, 1 MiB 16-way L2, piped. */
void sb_coherence_opts_default(struct sb_coherence_opts *o);
/* 0, or -EINVAL and why (sets not a power of two, line out of range...). */
int sb_coherence_opts_check(const struct sb_coherence_opts *o, char *err, size_t len);

/* Invalidations by class; "in_true" includes its locked and racy parts. */
struct sb_coherence_inv {
	uint64_t in_true, in_true_locked, in_true_race, in_false;
	uint64_t across_true, across_false;
};

static inline uint64_t sb_coherence_inv_total(const struct sb_coherence_inv *v)
{
	return v->in_true + v->in_false + v->across_true + v->across_false;
}

struct sb_coherence_counts {
	uint64_t loads, stores;
	uint64_t l1_hits, l2_hits, misses;
	uint64_t coh_true, coh_false;  /* coherence misses, part of misses */
	struct sb_coherence_inv inv;   /* invalidations of data it held */
};

/* A reference: counts of its own accesses; inv are the invalidations of
 * lines it brought into a cache, caused those its stores caused. */
struct sb_coherence_ref {
	uint64_t pc;
	struct sb_coherence_counts c;
	struct sb_coherence_inv caused;
};

/* A line any invalidation or coherence miss touched. */
struct sb_coherence_line {
	uint64_t addr;                 /* line-aligned */
	struct sb_coherence_inv inv;
	uint64_t coh_true, coh_false;
	uint64_t threads;              /* bit t: thread t took part (t < 64) */
	uint32_t nthreads;             /* threads that took part */
	uint32_t refs[4];              /* ref indexes of its stores and victims,
					* first seen first; UINT32_MAX: none */
	/* Its bytes by who touched them over the run (each thread's
	 * footprint while it held the line, gathered at every invalidation
	 * and coherence miss): true sharing when some byte was touched by
	 * two threads and written by one of them, false when the threads'
	 * bytes are disjoint.  Not one pair of accesses: under a lock each
	 * thread may touch one bucket per stay, yet all share them all. */
	bool footprint_true;
	uint64_t bytes_true;           /* those bytes (bit b: byte b < 64) */
	uint32_t name_off, name_len;   /* the bytes its data is named by: from
					* the first to the last true-shared one,
					* else touched one (not the line's first
					* byte: padding or a neighbour) */
};

struct sb_coherence_invalidator {
	uint32_t victim;               /* ref index that brought the line in */
	uint32_t store;                /* ref index of the invalidating store */
	uint32_t thread;               /* the storing thread */
	uint64_t count;
};

struct sb_coherence_race {
	uint32_t a, b;                 /* ref indexes of the two stores */
	uint64_t count;
};

struct sb_coherence_result {
	enum sb_coherence_mode mode;
	uint32_t nthreads;
	struct sb_coherence_counts *threads;   /* nthreads */
	struct sb_coherence_ref *refs;         /* by first sight */
	size_t nrefs;
	struct sb_coherence_line *lines;       /* by invalidations, then misses */
	size_t nlines;
	struct sb_coherence_invalidator *invalidators; /* by victim, count desc */
	size_t ninvalidators;
	struct sb_coherence_race *races;       /* count desc */
	size_t nraces;
	uint64_t regions;                      /* barrier regions simulated */
	uint64_t lost_tags_dropped;            /* coherence tags over the bound */
};

struct sb_coherence_sim;

/* nthreads 1..SB_COHERENCE_MAX_THREADS; NULL and a message on failure. */
struct sb_coherence_sim *sb_coherence_sim_alloc(uint32_t nthreads,
						const struct sb_coherence_opts *o,
						char *err, size_t len);
void sb_coherence_sim_free(struct sb_coherence_sim *s);

/* The region the following accesses belong to (0, 1, ...: increasing). */
void sb_coherence_sim_region(struct sb_coherence_sim *s, uint64_t region);
/* Thread t took (+1) or gave back (-1) a lock: its accesses are locked
 * while it holds any. */
void sb_coherence_sim_lock(struct sb_coherence_sim *s, uint32_t t, int delta);
/* One access of size bytes (split at line borders); 0 or -ENOMEM. */
int sb_coherence_sim_access(struct sb_coherence_sim *s, uint32_t t, uint64_t addr,
			    uint32_t size, bool store, uint64_t pc);

/* The counts so far (the simulator stays usable); caller frees with
 * sb_coherence_result_free.  0 or -ENOMEM. */
int sb_coherence_sim_result(const struct sb_coherence_sim *s, struct sb_coherence_result *r);
void sb_coherence_result_free(struct sb_coherence_result *r);

/*
 * The trace driver (coherence_trace.c): the per-thread traces of
 * `scalebpf cc --trace-mem` in dir (include/sbpf_trace.h), one simulated
 * thread per file in tid order, through the simulator in o->mode; with
 * pid != 0 only the files whose header names that process.
 *
 * Regions come from what each SYNC waited for (coherence_regions.c): a
 * barrier round, an OpenMP region, a join or a condvar wait ends one where
 * no recording thread runs through it.  Piped mode runs each region's
 * threads one after another; interleaved mode one access per thread per
 * round, keeping locks exclusive: a thread at the ACQUIRE of a lock
 * another holds waits.  Files are read sequentially through a buffer;
 * the simulator's memory grows with the caches (about 1.5 MiB of L2 ways
 * a thread at 1 MiB), the shared lines and the kept coherence tags.
 */
struct sb_coherence_trace_info {
	uint32_t nthreads;
	uint32_t *tids;                /* thread index -> tid, nthreads */
	uint64_t records, accesses, syncs, locks;
	uint64_t regions;
	uint64_t bytes;                /* of the trace files */
	uint64_t partial;              /* files ending in a cut record */
	uint64_t bad_records;          /* of an unknown kind or size, skipped */
	uint64_t files_skipped;        /* empty files (a thread that wrote
					* nothing) */
	uint64_t files_other;          /* of another process: left out */
	uint64_t files_bad;            /* no trace header: skipped */
	uint64_t locks_forced;         /* interleaved: rounds where every
					* thread waited for a lock, one let in */
	bool resumes;                  /* the traces have RESUME records */
	struct sb_coherence_stack {
		uint64_t lo, hi;       /* 0, 0: not recorded */
	} *stacks;                     /* thread index -> its stack */
};

int sb_coherence_trace_run(const char *dir, uint32_t pid, const struct sb_coherence_opts *o,
			   struct sb_coherence_result *r, struct sb_coherence_trace_info *info,
			   char *err, size_t len);
void sb_coherence_trace_info_free(struct sb_coherence_trace_info *info);

/*
 * Into the profile (coherence_store.c): a result as SHARING rows of mode
 * SB_SHARING_PIPED or _INTERLEAVED: per line (named by name_of), per
 * reference and per thread (tids[t], the trace driver's), invalidator
 * and race pairs, references as locations through loc_of (-1: none).
 * Only references that took part in sharing get rows.  0 or -ENOMEM.
 */
struct sb_profile;
typedef long (*sb_coherence_loc_fn)(void *ctx, uint64_t pc);
/* Writes the name of the data at [addr, addr + len) into buf: the
 * variable, then optionally a tab and which part of it ("[0..3]"). */
typedef void (*sb_coherence_name_fn)(void *ctx, uint64_t addr, uint32_t len, char *buf,
				     size_t buflen);
int sb_coherence_store(const struct sb_coherence_result *r, const uint32_t *tids,
		       sb_coherence_loc_fn loc_of, sb_coherence_name_fn name_of, void *ctx,
		       struct sb_profile *p);

/*
 * Sampled estimates (record mode, coherence_sampled.c): no trace, no
 * simulation.  The recorder feeds every decoded data address its
 * cpu-clock samples (or PEBS loads) give; a cache line two threads were
 * sampled touching, one of them storing (or a load a PMU saw hit a line
 * modified in another core, HITM), is a candidate.  Candidates are
 * confirmed with hardware watchpoints: write watches on up to four 8-byte
 * words of the line, armed one-shot in the line's threads for a short
 * window.  A hit says which thread wrote which bytes (the store is decoded
 * at the trap), so the classification is by footprint, as in exact mode:
 * true sharing when some byte one thread wrote was touched by another,
 * false when the threads' bytes are disjoint.
 *
 * A window confirms the line when it saw a write and the line has another
 * thread: writes from two threads in it, or one thread's write and another
 * thread sampled on the line.  The scope is by barrier region, as in exact
 * mode: a pair of a write (a hit) and another thread's touch (a hit or a
 * sample) in one instance of a section makes it in-region; pairs only in
 * different ones across-region (sb_cosample_store, from the instances);
 * without instances, in-region when two threads touched the line within
 * one window.
 *
 * Candidates, first to last: lines sampled touched by two threads, one
 * storing (or HITM), by samples; then lines a store instruction wrote that
 * two threads were sampled storing from into one region of memory (a
 * parallel loop over one array: its lines are too many for two samples to
 * meet on one, yet each may be split between threads), or that the
 * program's code stored to in its static data (globals written while
 * threads run are shared state more often than not: the lock-protected
 * table whose stores hide behind the lock's time), least probed first.
 *
 * The evidence rule: a line is reported only when it has
 *   >= min_samples samples touching it (the sampled access or one its
 *   block was about to make), >= 2 threads seen on it (samples or hits),
 *   >= 1 confirming window and >= min_confirms hits in confirming windows,
 * and a store to it from the program's own code (sampled or a hit): a line
 * only the threading runtime writes (a lock word, a barrier) is sync cost,
 * which the wait analyses report; such lines are counted (sync_lines).  A
 * line is decided, and probed no more, after 2 confirming windows, after
 * max_windows windows, or after half of them without a confirming one.
 * Cost = the samples whose own access was by the line's references (the
 * time spent in the instructions seen touching it) over the samples of its
 * section's busy time, times the fraction of its windows that confirmed.
 */
#define SB_COSAMPLE_THREADS 8          /* threads kept per line */
#define SB_COSAMPLE_WORDS 4            /* x86: DR0-DR3 */
#define SB_COSAMPLE_REFS 4             /* references kept per line */
#define SB_COSAMPLE_STAMPS 8           /* sample times kept per line */

struct sb_cosample_opts {
	uint32_t line;                 /* bytes, 64 */
	uint32_t max_lines;            /* lines tracked at once */
	uint32_t min_samples, min_confirms, max_windows;
	uint64_t cooldown_ns;          /* between two windows of one line */
};
/* 64-byte lines, 8192 lines, 1 sample, 2 confirmations, 6 windows,
 * 20 ms cooldown. */
void sb_cosample_opts_default(struct sb_cosample_opts *o);

struct sb_cosample_access {
	uint64_t ts, pc, addr;
	uint32_t tid;
	uint8_t size;                  /* bytes; 0: unknown (8 assumed) */
	bool store;
	bool hitm;                     /* PMU: served from a modified line in
					* another core (or another socket's cache) */
	bool pmu;                      /* a PEBS load or store sample */
	bool runtime;                  /* pc is in the threading runtime */
	bool ahead;                    /* not the sampled access: one its block
					* was about to make (memop.h look-ahead):
					* evidence, not time */
	bool own_stack;                /* addr is near the thread's stack pointer */
	bool static_data;              /* addr is in a binary's data or bss */
};

/* One window to arm: write watches on words (8-byte aligned) in tids. */
struct sb_cosample_probe {
	uint64_t line;
	uint64_t words[SB_COSAMPLE_WORDS];
	uint32_t nwords;
	uint32_t tids[SB_COSAMPLE_THREADS];
	uint32_t ntids;
};

struct sb_cosample_line {
	uint64_t addr;
	uint32_t nthreads;
	uint64_t samples;              /* the sampled access was to it: time */
	uint64_t touches;              /* samples that touched it, ahead too */
	uint64_t stores, hitm;
	uint64_t hits, confirmations;  /* watchpoint hits; those in confirming
					* windows */
	uint64_t windows, windows_confirmed, windows_in_region;
	bool decided, reported, true_sharing;
	bool runtime_only;             /* only the threading runtime stored */
	int64_t stack_tid;             /* a thread's stack holds it; -1 */
	uint64_t bytes_true;           /* bit b: byte b written by one thread
					* and touched by another */
	uint32_t name_off, name_len;   /* the bytes the threads touched */
	uint64_t verdict_ns;           /* when it was confirmed, 0 never */
	uint64_t pcs[SB_COSAMPLE_REFS];
	uint32_t pc_loads[SB_COSAMPLE_REFS], pc_stores[SB_COSAMPLE_REFS];
	uint32_t npcs;
	uint64_t ref_samples;          /* samples whose own access was by one
					* of pcs[], on any line: their time */
	uint32_t stamp_tid[SB_COSAMPLE_STAMPS];   /* some of its samples */
	uint64_t stamp_ts[SB_COSAMPLE_STAMPS];
	uint32_t nstamps;
	uint32_t hit_tid[SB_COSAMPLE_STAMPS];     /* some of its hits */
	uint64_t hit_ts[SB_COSAMPLE_STAMPS];
	uint32_t nhit_stamps;
};

struct sb_cosample_stats {
	uint64_t accesses;             /* offered */
	uint64_t lines_dropped;        /* accesses to lines the table had no
					* room for */
	uint64_t purges;               /* one-thread lines forgotten for room */
	uint64_t candidates, windows, windows_unarmed, decided, reported;
	uint64_t hits, hits_unmatched; /* hits on no line being probed */
	uint64_t hitm_loads;           /* PMU loads flagged HITM */
	uint64_t pmu_loads, pmu_stores; /* PEBS samples offered */
	uint64_t sync_lines;           /* confirmed, but only the runtime stored */
	uint64_t site_windows;         /* windows on lines of a shared store site */
	uint64_t pcs_untracked;        /* accesses of instructions the table had
					* no room for (not store sites) */
	uint64_t first_verdict_ns;     /* first confirmation's time, 0 none */
};

struct sb_cosample;
/* NULL with a message when o is invalid or memory is short. */
struct sb_cosample *sb_cosample_alloc(const struct sb_cosample_opts *o, char *err, size_t len);
void sb_cosample_free(struct sb_cosample *s);
void sb_cosample_access(struct sb_cosample *s, const struct sb_cosample_access *a);
/* The candidate to probe now (most samples first, none probed within the
 * cooldown); false when there is none.  The line is then being probed
 * until sb_cosample_window_end. */
bool sb_cosample_next(struct sb_cosample *s, uint64_t now, struct sb_cosample_probe *p);
/* A watchpoint hit: tid wrote [addr, addr + size) of line (size 0: the
 * watched 8-byte word at addr, the store could not be decoded); runtime:
 * the store is the threading runtime's code. */
void sb_cosample_hit(struct sb_cosample *s, uint64_t line, uint32_t tid, uint64_t ts,
		     uint64_t addr, uint32_t size, uint64_t pc, bool runtime);
/* The window on line ended with armed watchpoints in place (0: none could
 * be armed; the window does not count). */
void sb_cosample_window_end(struct sb_cosample *s, uint64_t line, uint32_t armed, uint64_t now);
void sb_cosample_get_stats(const struct sb_cosample *s, struct sb_cosample_stats *st);
/* Every line with a window (reported or not), classified; caller frees. */
int sb_cosample_lines(const struct sb_cosample *s, struct sb_cosample_line **out, size_t *n);
/*
 * Into the profile (mode SB_SHARING_SAMPLED): a LINE row per reported
 * line, named by name_of, with its cost against its section's busy time
 * (the section of most of its sample times, from p's instances;
 * period_ns: the sampling period), and a REF row per reference with its
 * sampled loads and stores.  0 or -ENOMEM.
 */
int sb_cosample_store(const struct sb_cosample *s, uint64_t period_ns,
		      sb_coherence_loc_fn loc_of, sb_coherence_name_fn name_of, void *ctx,
		      struct sb_profile *p);

/*
 * The variables of a profile's sharing rows of one mode: lines grouped by
 * the name of their data (a compiler's ".N" copies of one variable, as
 * clang splits a static array into scalars, under the variable's name),
 * ranked by estimated cost (sampled), coherence misses, then invalidations.
 * The view's input (coherence_vars.c).
 */
#define SB_COHERENCE_ANON "heap or anonymous "   /* a line no symbol names */

struct sb_coherence_var {
	char name[128];                /* the lines' name; unnamed lines close
					* to each other (64 KiB) are one
					* "heap or anonymous lines 0xLO..0xHI" */
	char parts[128];               /* the parts of it its lines hold, from
					* its DWARF type ("[0..7]", ".count"),
					* comma separated; "" when not known */
	uint64_t lo, hi;               /* its lines' addresses */
	uint32_t mode;                 /* enum sb_sharing_mode */
	bool true_sharing;             /* a line of it is true sharing by
					* footprint (sb_coherence_line) */
	bool in_region;                /* at least as many in-region as
					* across-region invalidations */
	uint64_t lines, invalidations, coh_misses;
	uint64_t in_true, in_true_locked, in_true_race, in_false;
	uint64_t across_true, across_false;
	uint64_t loads, stores;        /* its references' accesses */
	uint32_t threads;              /* most threads on one of its lines */
	int32_t refs[8];               /* locations, -1 */
	size_t nrefs;
	/* sampled mode */
	uint64_t samples, confirmations, windows, windows_confirmed, windows_in_region;
	uint64_t pairs_in_region, pairs_across;
	uint64_t cost_ppm;             /* of its section's busy time: its
					* costliest line's */
	int32_t section;               /* a line's section, -1 */
};

/* *vars (caller frees) and *n; 0 or -ENOMEM. */
int sb_coherence_vars(const struct sb_profile *p, uint32_t mode, struct sb_coherence_var **vars,
		      size_t *n);

/* Totals over a result's threads. */
void sb_coherence_result_total(const struct sb_coherence_result *r,
			       struct sb_coherence_counts *c);

#endif
