// SPDX-License-Identifier: MIT
/* A profile's CHiP rows through the model (chip.h, sb_chip_summarize). */
#include "chip.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "chip_priv.h"
#include "profile/profile.h"

static void machine_of(const struct sb_profile *p, struct sb_chip_summary *s)
{
	uint64_t eff = sb_profile_meta_get_u64(p, "chip_machine_llc_effective");

	s->llc_nominal = sb_profile_meta_get_u64(p, "chip_machine_llc_nominal");
	s->machine.line = s->line;
	if (eff) {
		s->machine.llc_bytes = eff;
		s->machine.bandwidth = (double)sb_profile_meta_get_u64(p, "chip_machine_bandwidth");
		s->machine.lat_hit =
			(double)sb_profile_meta_get_u64(p, "chip_machine_llc_latency_ps") / 1000;
		s->machine.lat_miss =
			(double)sb_profile_meta_get_u64(p, "chip_machine_dram_latency_ps") / 1000;
		s->machine.cache_cpus =
			(unsigned)sb_profile_meta_get_u64(p, "chip_machine_llc_cpus");
		s->machine.cpus = (unsigned)sb_profile_meta_get_u64(p, "chip_machine_cpus");
		s->machine_from = "scalebpf calibrate";
		return;
	}
	/* not calibrated: the nominal last level the recorder found (sysfs),
	 * else half the largest size mapped (it was sized as twice the LLC,
	 * then rounded up) */
	s->machine.llc_bytes = s->llc_nominal ? s->llc_nominal : s->max_bytes / 2;
	s->machine.bandwidth = 0;
	s->machine_from = s->llc_nominal ? "nominal (sysfs; bandwidth unknown: run scalebpf "
					   "calibrate before recording)" :
			  "nominal (half the profile's largest size; bandwidth unknown: run "
			  "scalebpf calibrate before recording)";
}

static uint64_t busy_of(const struct sb_section *s)
{
	uint64_t busy = 0;

	for (uint32_t t = 0; t < s->nthreads; t++)
		busy += s->per_thread[t].busy_ns;
	return busy;
}

/* The busy time of t's section matching p's section s (the k-th alike in
 * each), or -1. */
static int64_t matched_busy(const struct sb_profile *p, size_t s, const struct sb_profile *t)
{
	long j = sb_section_match(p, s, t);

	return j >= 0 ? (int64_t)busy_of(&t->sections[j]) : -1;
}

/* Every thread's on-CPU time: the whole run's busy time. */
static uint64_t run_busy(const struct sb_profile *p)
{
	uint64_t busy = 0;

	for (size_t t = 0; t < p->nthreads; t++)
		busy += p->threads[t].oncpu_ns;
	return busy;
}

const char *sb_chip_region_name(const struct sb_profile *p, uint32_t region)
{
	char key[48];

	snprintf(key, sizeof(key), "chip_region_%u", region);
	return sb_profile_meta_get(p, key);
}

void sb_chip_region_key(char *buf, size_t len, uint32_t region, enum sb_chip_region_field f)
{
	static const char *const names[SB_CHIP_REGION_NFIELDS] = {
		[SB_CHIP_REGION_CALLS] = "calls", [SB_CHIP_REGION_BUSY_NS] = "busy_ns",
		[SB_CHIP_REGION_THREADS] = "threads", [SB_CHIP_REGION_OPEN] = "open",
		[SB_CHIP_REGION_UNREAD] = "unread", [SB_CHIP_REGION_UNMATCHED] = "unmatched",
		[SB_CHIP_REGION_LOST] = "lost", [SB_CHIP_REGION_UNCOUNTED] = "uncounted",
	};

	snprintf(buf, len, "chip_region_%u_%s", region,
		 (unsigned)f < SB_CHIP_REGION_NFIELDS ? names[f] : "?");
}

uint64_t sb_chip_region_get(const struct sb_profile *p, uint32_t region,
			    enum sb_chip_region_field f)
{
	char key[64];

	sb_chip_region_key(key, sizeof(key), region, f);
	return sb_profile_meta_get_u64(p, key);
}

/* The busy time t recorded for the --region function named name, or -1. */
static int64_t region_busy(const struct sb_profile *t, const char *name)
{
	const char *v;

	for (uint32_t k = 0; name && k < SB_CHIP_MAX_REGIONS && (v = sb_chip_region_name(t, k));
	     k++)
		if (!strcmp(v, name)) {
			/* none called there (inlined in that build): no time */
			if (!sb_chip_region_get(t, k, SB_CHIP_REGION_CALLS))
				return -1;
			return (int64_t)(sb_chip_region_get(t, k, SB_CHIP_REGION_BUSY_NS) & INT64_MAX);
		}
	return -1;
}

/* Row r's busy time in seconds, from times when it has the region. */
static double busy_seconds(const struct sb_profile *p, const struct sb_chip_row *r,
			   const struct sb_profile *times, bool *native)
{
	int64_t from = -1;
	uint64_t own;

	switch (r->kind) {
	case SB_CHIP_KIND_FUNCTION:
		own = r->busy_ns;
		if (times)
			from = region_busy(times, sb_chip_region_name(p, r->region));
		break;
	case SB_CHIP_KIND_RUN:
		own = run_busy(p);
		if (times)
			from = (int64_t)(run_busy(times) & INT64_MAX);
		break;
	default:
		own = busy_of(&p->sections[r->section]);
		if (times)
			from = matched_busy(p, r->section, times);
	}
	*native = from >= 0;
	return (double)(from >= 0 ? (uint64_t)from : own) / 1e9;
}

/* Thread count t takes the next prediction slot unless it is under 2 or
 * has one (2, 4 and N may coincide). */
static bool new_count(struct sb_chip_summary *s, unsigned t)
{
	for (unsigned j = 0; j < s->npredict; j++)
		if (s->threads[j] == t)
			return false;
	if (t < 2)
		return false;
	s->threads[s->npredict] = t;
	return true;
}

/* A sampled row's bandwidth at t threads: t × the demand at each one's
 * share of the machine's cache. */
static double sampled_bandwidth(const struct sb_chip_summary *s, unsigned t)
{
	bool ok;

	return t * sb_chip_fp_demand(&s->fp, (double)s->machine.llc_bytes /
				     sb_chip_sharers(&s->machine, t), &ok);
}

/*
 * A sampled row (no PMU): the footprint probes' curve gives the DRAM
 * demand at each size (chip_footprint.h) where an exact row's hit ratios
 * and time give it: bandwidth at T threads = T × the demand at the
 * cache's share, the verdict as sb_chip_verdict's.  No hit ratio: no
 * access count.
 */
static void summarize_sampled(const struct sb_chip_row *r, const unsigned *want,
			      struct sb_chip_summary *s)
{
	struct sb_chip_fp f;
	double llc = (double)s->machine.llc_bytes;
	bool ok;

	memset(&f, 0, sizeof(f));
	for (int k = 0; k < SB_CHIP_FP_WINDOWS && k < SB_CHIP_ROW_WINDOWS; k++) {
		f.window_ns[k] = r->fp_window_ns[k];
		f.probes[k] = r->fp_probes[k];
		f.touched[k] = r->fp_touched[k];
	}
	f.universe = (double)r->fp_universe;
	s->sampled = true;
	s->verdict = SB_CHIP_NO_DATA;
	for (int d = 0; d < SB_CHIP_DEPTH; d++)
		s->hit_ratio[d] = NAN;
	if (sb_chip_fp_curve(&f, &s->fp))
		return;
	for (int d = 0; d < SB_CHIP_DEPTH; d++)
		s->demand[d] = sb_chip_fp_demand(&s->fp, (double)s->cache_bytes[d],
						 &s->demand_resolved[d]);
	s->bw_serial = sb_chip_fp_demand(&s->fp, llc, &ok);
	for (unsigned w = 0; w < SB_CHIP_MAX_PREDICT; w++) {
		unsigned t = want[w];

		if (!new_count(s, t))
			continue;
		s->bw_par[s->npredict] = sampled_bandwidth(s, t);
		s->bw_linear[s->npredict] = t * s->bw_serial;
		s->npredict++;
	}
	for (unsigned t = 2; t <= s->max_threads; t++) {
		s->verdict = chip_verdict_at(sampled_bandwidth(s, t), t * s->bw_serial,
					     s->machine.bandwidth);
		s->verdict_from = t;
		if (s->verdict != SB_CHIP_SCALES)
			return;
	}
	s->verdict = SB_CHIP_SCALES;
	s->verdict_from = 0;
}

int sb_chip_summarize(const struct sb_profile *p, size_t i, unsigned n_threads,
		      const struct sb_profile *times, struct sb_chip_summary *s)
{
	const struct sb_chip_row *r;
	struct sb_chip_counts k;
	double lat_one = 0;
	unsigned want[SB_CHIP_MAX_PREDICT] = { 2, 4, n_threads < SB_CHIP_MAX_THREADS ?
						     n_threads : SB_CHIP_MAX_THREADS };

	memset(s, 0, sizeof(*s));
	if (i >= p->nchip || (p->chip[i].kind == SB_CHIP_KIND_SECTION &&
			      p->chip[i].section >= p->nsections))
		return -1;
	r = &p->chip[i];
	s->kind = r->kind;
	s->section = r->section;
	s->region_name = r->kind == SB_CHIP_KIND_FUNCTION ? sb_chip_region_name(p, r->region)
							  : NULL;
	s->mode = r->mode;
	s->threads_profiled = r->threads;
	s->line = r->line;
	s->max_bytes = r->max_bytes;
	s->accesses = r->accesses;
	s->rate = r->rate_t >= SB_CHIP_RATE_SCALE ? 1 : (double)r->rate_t / SB_CHIP_RATE_SCALE;
	memset(&k, 0, sizeof(k));
	memcpy(k.depth, r->depth, sizeof(k.depth));
	k.accesses = r->accesses;
	sb_chip_estimate(&k, s->rate, s->est);
	for (int d = 0; d < SB_CHIP_DEPTH; d++) {
		s->cache_bytes[d] = r->max_bytes / SB_CHIP_DEPTH * (uint64_t)(d + 1);
		s->hit_ratio[d] = sb_chip_hit_ratio(s->est, d + 1);
	}
	s->resolved = (1u << SB_CHIP_DEPTH) - 1;
	if (r->mode == SB_CHIP_MODE_SAMPLED_PMU) {
		/* the depths are StatStack's from reuse probes; where a size
		 * is not resolved the misses hold its unseen hits too */
		s->resolved = r->resolved & ((1u << SB_CHIP_DEPTH) - 1);
		s->reuse_samples = r->reuse_samples;
		s->reuse_counter = sb_profile_meta_get(p, "chip_rdx_counter");
		s->reuse_accesses = sb_profile_meta_get(p, "chip_rdx_accesses_from");
		for (int d = 0; d < SB_CHIP_DEPTH; d++) {
			double h = s->hit_ratio[d];

			s->hit_stderr[d] = ((s->resolved >> d) & 1) && r->reuse_samples ?
					   sqrt(h * (1 - h) / (double)r->reuse_samples) : 0;
		}
	}
	s->t_ser = busy_seconds(p, r, times, &s->t_native);
	machine_of(p, s);
	s->max_threads = n_threads > 4 ? (n_threads < SB_CHIP_MAX_THREADS ? n_threads :
					  SB_CHIP_MAX_THREADS) : 4;
	if (r->mode == SB_CHIP_MODE_SAMPLED) {
		summarize_sampled(r, want, s);
		return 0;
	}
	s->depth_llc = sb_chip_depth_of(s->machine.llc_bytes, r->max_bytes);
	s->bw_serial = sb_chip_bandwidth(s->est, s->depth_llc, r->line, s->t_ser);
	/* a reference's latency with the whole cache: the slowdowns' base */
	if (s->machine.lat_hit > 0 && s->machine.lat_miss > 0)
		lat_one = sb_chip_latency(s->est, s->depth_llc, s->machine.lat_hit,
					  s->machine.lat_miss);
	for (unsigned w = 0; w < SB_CHIP_MAX_PREDICT; w++) {
		unsigned t = want[w], share;

		if (!new_count(s, t))
			continue;
		share = sb_chip_sharers(&s->machine, t);

		s->bw_par[s->npredict] = sb_chip_bandwidth_par(s->est, s->depth_llc, share, t,
							       r->line, s->t_ser);
		s->bw_linear[s->npredict] = s->bw_serial * t;
		if (lat_one > 0)
			s->slowdown[s->npredict] =
				sb_chip_latency(s->est, s->depth_llc / share, s->machine.lat_hit,
						s->machine.lat_miss) / lat_one;
		s->npredict++;
	}
	s->max_threads = n_threads > 4 ? (n_threads < SB_CHIP_MAX_THREADS ? n_threads :
					  SB_CHIP_MAX_THREADS) : 4;
	s->verdict = sb_chip_verdict(s->est, r->max_bytes, &s->machine, s->t_ser, s->max_threads,
				     &s->verdict_from);
	return 0;
}
