/* SPDX-License-Identifier: MIT */
/*
 * `scalebpf calibrate`: what this machine's memory really does, measured,
 * for the models that predict from a profile (CHiP's bandwidth and
 * verdicts, the virtual cache pirate of the speedup stacks).
 *
 *   - Load latency by working-set size: a random cyclic pointer chase over
 *     one line per node (Sattolo's permutation: no prefetcher follows it),
 *     huge pages asked for, from 16 KB to well past the nominal LLC.  From
 *     it, the DRAM latency (the largest set) and the effective cache
 *     capacity (sb_chip_effective_capacity): on a VM hwloc may describe the
 *     host's L3, of which the guest sees little or nothing.
 *   - Whether two CPUs share that cache: if each chasing its own working
 *     set of the effective size slows the other (beyond what the same at
 *     a private cache's size does), they share it; else each has its own.
 *   - Sustainable read bandwidth (STREAM-like sums over a 256 MB set), one
 *     thread and one per CPU, best of three.
 *   - The nominal topology from hwloc, for comparison.
 *
 * The result is cached per machine (its identity: CPU model, CPUs online,
 * memory, kernel) in $SCALEBPF_CALIBRATION, else
 * $XDG_CACHE_HOME/scalebpf/calibration, else ~/.cache/scalebpf/calibration;
 * a cache of another machine is not used.
 */
#ifndef SB_CALIBRATE_H
#define SB_CALIBRATE_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define SB_CAL_MAX_SIZES 40

struct sb_calibration {
	char identity[256];
	time_t when;
	uint32_t line;                 /* bytes */
	uint64_t llc_nominal;          /* hwloc's last cache level, bytes */
	unsigned llc_shared_by;        /* CPUs under it */
	uint64_t llc_effective;        /* measured: what behaves like cache */
	/* measured: whether two CPUs share it: a chase of the effective size
	 * on one CPU, alone and while another CPU chases its own (each ratio
	 * over the same with a private-cache size, which the two CPUs slow
	 * down only by what else they share: SMT, a busy host) */
	unsigned llc_effective_shared_by;  /* 2: shared by both, 1: private, 0: not measured */
	double shared_slowdown, private_slowdown;
	double dram_latency_ns;
	double bw_one, bw_all;         /* read bytes/s: one thread, all CPUs */
	unsigned threads_all;
	size_t n;                      /* latency points */
	uint64_t ws[SB_CAL_MAX_SIZES];
	double latency_ns[SB_CAL_MAX_SIZES];
};

struct sb_calibrate_opts {
	uint64_t max_bytes;            /* largest working set; 0: 256 MB or 8 ×
					* the nominal LLC, whichever is larger */
	unsigned quick;                /* fewer loads (tests): noisier */
};

/* Called before each measurement ("latency 2 MB", "bandwidth, 2 threads"). */
typedef void (*sb_calibrate_progress_fn)(const char *what, void *ctx);

/* Measures (a few seconds).  0, or -errno with err. */
int sb_calibrate_run(struct sb_calibration *c, const struct sb_calibrate_opts *o,
		     sb_calibrate_progress_fn progress, void *ctx, char *err, size_t len);

/* This machine's identity, as the cache keys it. */
void sb_calibrate_identity(char *buf, size_t len);
/* The cache file's path; -ENOENT when neither variable nor HOME says. */
int sb_calibrate_path(char *buf, size_t len);
/* Written atomically (a temporary renamed over it), directories made. */
int sb_calibrate_save(const struct sb_calibration *c, const char *path, char *err,
		      size_t len);
/* -ENOENT (none), -EINVAL (malformed: err says where), or 0. */
int sb_calibrate_load(struct sb_calibration *c, const char *path, char *err, size_t len);
/* A hit in the effective cache: the latency curve at half its size (a
 * working set that fits well), 0 when the curve has no such point. */
double sb_calibrate_llc_latency(const struct sb_calibration *c);
/* The cached calibration of this machine: 0, or -ENOENT / -ESTALE (of
 * another machine) / -EINVAL with why ("run scalebpf calibrate"). */
int sb_calibrate_cached(struct sb_calibration *c, char *why, size_t len);

#endif
