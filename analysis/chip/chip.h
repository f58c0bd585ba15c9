/* SPDX-License-Identifier: MIT */
/*
 * CHiP, the Cache Hit Profile (Brett et al., ../shared/papers/chip.txt
 * §IV-§V): how a region's hit ratio falls as the cache it gets shrinks,
 * and from that, the DRAM bandwidth the region needs at N threads.
 *
 * The structure (§IV-A).  Line addresses are mapped to w CacheSets (by
 * their number modulo w, each block of w lines rotated: chip.c says why
 * not a plain hash), each an LRU array of d = 16 lines, most recent
 * first; an access scans its set
 * from the front, counts the depth where it found the line (or a miss, the
 * 17th counter) and moves the line to the front.  The first n depths of all
 * sets together are a cache of n × w × line bytes, so one pass gives the
 * hit ratio at 16 cache sizes: max_bytes × k / 16, k = 1..16, where
 * w = max_bytes / (16 × line) (§IV-B).  A set-associative approximation of
 * the stack-distance algorithm (a 1-wide, infinitely deep set), as the
 * paper says; its error against a full LRU stack is measured in
 * tests/unit/chip.
 *
 * The state (the sets) belongs to a thread and carries across its regions,
 * as a cache does; the counters belong to a region (struct sb_chip_counts,
 * the caller's), so one pass profiles every region a thread runs.
 *
 * Spatially hashed sampling (SHARDS, Waldspurger et al. FAST'15): with
 * rate R < 1 only lines whose hash falls below R × 2^24 of 2^24 are
 * tracked, in one LRU stack of R × max_bytes / line lines cut into 16
 * segments (a cache of C bytes holds R × C/line sampled lines;
 * chip_priv.h says why not sets), and every reference is still counted
 * in `accesses`, so
 * the estimate (sb_chip_estimate) scales the sampled depths by 1/R and puts
 * the difference between the expected and the actual number of sampled
 * references into the first depth (SHARDS_adj).
 *
 * The analytical model (§V-C, equations 1-7) is in chip_model.c.  Pure
 * computation: never prints, -errno and a message.
 */
#ifndef SB_CHIP_H
#define SB_CHIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Sampled profiles: hit ratios from sampled reuses (StatStack, HOTL);
 * without a PMU, the footprint curve and the DRAM demand it implies. */
#include "chip_reuse.h"
#include "chip_footprint.h"

#define SB_CHIP_DEPTH 16                     /* d: entries per CacheSet */
#define SB_CHIP_COUNTS (SB_CHIP_DEPTH + 1)   /* hits at depth 1..d, misses */
#define SB_CHIP_RATE_SCALE (1u << 24)        /* SHARDS' P */

struct sb_chip_opts {
	uint64_t max_bytes;   /* the largest cache mapped: 16 × w × line, w
			       * rounded up to a power of two (sb_chip_opts_of
			       * says what was mapped) */
	uint32_t line;        /* bytes, a power of two (64) */
	double rate;          /* SHARDS R in (0, 1]; 1: every line */
};

/* A region's counters, summed over its references. */
struct sb_chip_counts {
	uint64_t depth[SB_CHIP_COUNTS];   /* sampled references by depth found
					   * (0-based: [0] = the front), [16] =
					   * not found (a miss at every size) */
	uint64_t accesses;                /* every reference, sampled or not */
};

struct sb_chip;

/* The CacheSets of one thread.  -EINVAL (max_bytes under 16 lines, line
 * not a power of two, rate outside (0, 1]) or -ENOMEM, with err. */
int sb_chip_alloc(struct sb_chip **out, const struct sb_chip_opts *o, char *err, size_t len);
void sb_chip_free(struct sb_chip *c);
/* Its width w (sets; at R < 1, the sampled sets) and its memory (§IV-D). */
uint32_t sb_chip_width(const struct sb_chip *c);
size_t sb_chip_bytes(const struct sb_chip *c);
const struct sb_chip_opts *sb_chip_opts_of(const struct sb_chip *c);

/* One reference to addr, counted in k (the region it belongs to). */
void sb_chip_access(struct sb_chip *c, uint64_t addr, struct sb_chip_counts *k);

/* Whether SHARDS tracks the line of addr at rate (a pure function of the
 * line: every thread and every run samples the same lines). */
bool sb_chip_sampled(uint64_t line_number, double rate);

/* splitmix64's finalizer: every bit of the line moves every bit. */
static inline uint64_t sb_chip_mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* SHARDS' test for a caller's per-access path (the exact-mode runtime):
 * at R = 0.01, 99% of accesses go to lines the profile drops, and a call
 * into sb_chip_access for each cost the runtime as much again as its
 * callback.  An access the gate stops is only counted (k->accesses++):
 * the profile's state is as if sb_chip_access had taken it.  Open for
 * every line when the profile is not sampled. */
struct sb_chip_gate {
	uint32_t line_shift;
	uint32_t shards;       /* 0: every line passes */
	uint64_t threshold;    /* of SB_CHIP_RATE_SCALE */
};

void sb_chip_gate_of(const struct sb_chip *c, struct sb_chip_gate *g);

/* The test itself, for a sampled gate (shards set), on a line number. */
static inline bool sb_chip_line_passes(const struct sb_chip_gate *g, uint64_t line)
{
	return (sb_chip_mix(line) >> 40) < g->threshold;
}

static inline bool sb_chip_gate_passes(const struct sb_chip_gate *g, uint64_t addr)
{
	return !g->shards || sb_chip_line_passes(g, addr >> g->line_shift);
}

/* a += b */
void sb_chip_counts_add(struct sb_chip_counts *a, const struct sb_chip_counts *b);

/*
 * The model (chip_model.c).  Counts as doubles: the estimate of every
 * reference's depth, est[SB_CHIP_COUNTS], from the sampled ones
 * (SHARDS_adj; at rate 1 the counts themselves).
 */
void sb_chip_estimate(const struct sb_chip_counts *k, double rate,
		      double est[SB_CHIP_COUNTS]);
/* Eq. 1: all references. */
double sb_chip_total(const double est[SB_CHIP_COUNTS]);
/* Eq. 2, 3 at depth dd in [0, 16]: hits in the first dd depths (a
 * fractional depth takes that share of the next one), and their ratio to
 * the total (0 when there is none). */
double sb_chip_hits(const double est[SB_CHIP_COUNTS], double dd);
double sb_chip_hit_ratio(const double est[SB_CHIP_COUNTS], double dd);
/* The depth that maps a cache of cache_bytes in a profile of max_bytes:
 * 16 × cache_bytes / max_bytes.  Beyond 16 for a cache larger than the
 * profile maps: hits there count as at 16 (a lower bound), and a share
 * of it (depth / threads) stays right. */
double sb_chip_depth_of(uint64_t cache_bytes, uint64_t max_bytes);
/* Eq. 4 (and 7 with t = t_par): DRAM bytes per second when the cache is
 * depth dd: total × (1 - hit ratio) × line / t.  0 when t <= 0. */
double sb_chip_bandwidth(const double est[SB_CHIP_COUNTS], double dd, uint32_t line, double t);
/* Eq. 5-7: at `threads` threads each gets depth dd / sharers (the cache
 * divided equally among the threads that share it: all of them in §V-B,
 * sb_chip_sharers where measured) and the region runs in t_ser / threads. */
double sb_chip_bandwidth_par(const double est[SB_CHIP_COUNTS], double dd, unsigned sharers,
			     unsigned threads, uint32_t line, double t_ser);

/* The mean latency of a reference when the cache is depth dd: hits cost
 * lat_hit, the rest lat_miss (ns; a latency-bound model: loads that
 * overlap cost less, in both).  0 without references. */
double sb_chip_latency(const double est[SB_CHIP_COUNTS], double dd, double lat_hit,
		       double lat_miss);

/* What the region will do as threads are added (the report's verdict). */
enum sb_chip_verdict {
	SB_CHIP_SCALES = 0,         /* up to the threads asked about */
	SB_CHIP_CACHE_BOUND,        /* from T threads its share of the cache no
				     * longer holds it: the bandwidth it needs
				     * grows faster than linear (the paper's
				     * green bar) */
	SB_CHIP_BANDWIDTH_BOUND,    /* from T threads it needs more than the
				     * machine's measured bandwidth */
	SB_CHIP_NO_DATA,            /* no references or no time */
};
const char *sb_chip_verdict_name(int v);   /* "scales", "cache-bound", ... */

struct sb_chip_machine {
	uint64_t llc_bytes;         /* the shared cache the region would get */
	double bandwidth;           /* sustainable DRAM bytes/s; 0: unknown */
	uint32_t line;
	double lat_hit, lat_miss;   /* ns: a load served by it, by DRAM; 0: unknown */
	unsigned cache_cpus;        /* CPUs one cache instance serves (measured);
				     * 0: unknown: all of them, as the paper assumes */
	unsigned cpus;
};

/* How many of `threads` threads share one cache instance, spread evenly
 * over the machine's CPUs: all of them when cache_cpus is unknown (§V-B),
 * ceil(threads × cache_cpus / cpus) otherwise (1 for private caches until
 * there are more threads than CPUs). */
unsigned sb_chip_sharers(const struct sb_chip_machine *m, unsigned threads);

/* The first thread count in 2..max_threads (and no more than the depth
 * of llc_bytes: below one depth a thread's share is beyond the profile's
 * resolution; map a smaller max_bytes for more) at which the region turns
 * cache- or bandwidth-bound (bandwidth first: it is the harder limit),
 * else SB_CHIP_SCALES; *from gets that count (0 when it scales).  Cache-
 * bound: the parallel bandwidth exceeds the linear one (serial × T) by
 * more than 10% and by more than 1% of the machine's bandwidth (when
 * known), so a region that barely touches DRAM is never flagged. */
int sb_chip_verdict(const double est[SB_CHIP_COUNTS], uint64_t max_bytes,
		    const struct sb_chip_machine *m, double t_ser, unsigned max_threads,
		    unsigned *from);

/*
 * The machine model (chip_machine.c).  A load-latency curve by working-set
 * size (a random pointer chase, `scalebpf calibrate`) says how much of the
 * cache hierarchy behaves like cache: on a VM the nominal LLC (hwloc's) may
 * be the host's, partly or not at all the guest's.  The DRAM latency is the
 * curve's last point (the largest working set); the effective capacity is
 * the last size before the first whose latency exceeds half of it (a cache
 * hit, even a far one, costs well under half a DRAM access: 40 vs 90 ns for
 * a bare-metal L3, 44 vs 165 ns for this VM's 2 MB), 0 when even the first
 * size does.  Sizes ascending, at least 3 points, the last well past any
 * cache (the caller measures to 8 × the nominal LLC at least).
 */
uint64_t sb_chip_effective_capacity(const uint64_t *ws_bytes, const double *latency_ns,
				    size_t n);

/*
 * A profile's CHiP rows (analysis/profile: SB_CHUNK_CHIP) read through the
 * model (chip_profile.c): what the Cache view prints.  The machine comes
 * from the profile's chip_machine_* keys (the recording machine's
 * `scalebpf calibrate`), else from its nominal LLC (hwloc, in the
 * coherence_caches key) with the bandwidth unknown.
 */
struct sb_profile;

#define SB_CHIP_MAX_PREDICT 3    /* thread counts predicted: 2, 4, N */
#define SB_CHIP_MAX_THREADS 65536  /* N and the verdict's reach, at most */

struct sb_chip_summary {
	uint32_t kind;                        /* enum sb_chip_kind (profile.h) */
	size_t section;                       /* kind SECTION */
	const char *region_name;              /* kind FUNCTION: the profile's */
	uint32_t mode, threads_profiled, line;
	double rate;                          /* SHARDS R (1: every line) */
	uint64_t max_bytes, accesses;
	double est[SB_CHIP_COUNTS];           /* every reference's depth */
	uint64_t cache_bytes[SB_CHIP_DEPTH];  /* the 16 sizes */
	bool sampled;                         /* mode SAMPLED: footprint probes,
					       * no hit ratios (NaN), demands */
	struct sb_chip_fp_curve fp;
	double demand[SB_CHIP_DEPTH];         /* DRAM bytes/s at each size */
	bool demand_resolved[SB_CHIP_DEPTH];  /* false: an upper bound */
	double hit_ratio[SB_CHIP_DEPTH];
	uint32_t resolved;                    /* bit d: size d's hit ratio is
					       * measured (all but in mode
					       * SAMPLED_PMU); else a lower bound */
	uint64_t reuse_samples;               /* SAMPLED_PMU: the reuse probes
					       * and near loads */
	const char *reuse_counter;            /* ... what counted their lengths
					       * (the profile's), or NULL */
	const char *reuse_accesses;           /* ... where the access count came
					       * from, or NULL */
	double hit_stderr[SB_CHIP_DEPTH];     /* SAMPLED_PMU: binomial; else 0 */
	double t_ser;                         /* seconds: the section's busy time */
	bool t_native;                        /* t_ser from the plain recording */
	struct sb_chip_machine machine;
	uint64_t llc_nominal;
	const char *machine_from;             /* "scalebpf calibrate", "nominal" */
	double depth_llc;                     /* the machine LLC's depth */
	double bw_serial;                     /* bytes/s, eq. 4 */
	unsigned npredict;
	unsigned threads[SB_CHIP_MAX_PREDICT];
	double bw_par[SB_CHIP_MAX_PREDICT];   /* eq. 7 */
	double slowdown[SB_CHIP_MAX_PREDICT]; /* per reference, latency-bound:
					       * 0 without the machine's latencies */
	double bw_linear[SB_CHIP_MAX_PREDICT];/* serial × threads */
	int verdict;                          /* enum sb_chip_verdict */
	unsigned verdict_from;
	unsigned max_threads;                 /* the verdict looked this far */
};

/* Row i of p->chip as the view shows it; n_threads: the N to predict for
 * (the section's threads, or the machine's CPUs).  t_ser: a section's
 * threads' busy time, a --region function's time inside its calls, the
 * run's threads' on-CPU time.  times, when not NULL: a recording of the
 * plain (uninstrumented) build, whose matching region gives t_ser
 * instead (an exact profile's own times are its hooks'): the section of
 * the same kind, function, file name and line (the k-th of several that
 * read alike), the --region of the same name, its whole run.  0, or -1
 * for a row whose section is out of range. */
int sb_chip_summarize(const struct sb_profile *p, size_t i, unsigned n_threads,
		      const struct sb_profile *times, struct sb_chip_summary *out);

/* The function --region index region named in p, or NULL. */
const char *sb_chip_region_name(const struct sb_profile *p, uint32_t region);

/* What a recording keeps of each --region function k, as metadata
 * chip_region_<k>_<field> (its name: chip_region_<k>); the recorder
 * writes them and the report reads them by these names only. */
enum sb_chip_region_field {
	SB_CHIP_REGION_CALLS,      /* outermost calls that returned */
	SB_CHIP_REGION_BUSY_NS,    /* on-CPU time inside them */
	SB_CHIP_REGION_THREADS,
	SB_CHIP_REGION_OPEN,       /* still open at the end, not counted */
	SB_CHIP_REGION_UNREAD,     /* counters that could not be read */
	SB_CHIP_REGION_UNMATCHED,  /* returns without their call */
	SB_CHIP_REGION_LOST,       /* calls left without a return */
	SB_CHIP_REGION_UNCOUNTED,  /* calls of threads without counters */
	SB_CHIP_REGION_NFIELDS
};

/* The field's key for region k into buf (64 bytes do). */
void sb_chip_region_key(char *buf, size_t len, uint32_t region, enum sb_chip_region_field f);
uint64_t sb_chip_region_get(const struct sb_profile *p, uint32_t region,
			    enum sb_chip_region_field f);

#endif
