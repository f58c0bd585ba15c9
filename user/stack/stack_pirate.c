// SPDX-License-Identifier: MIT
/* `scalebpf stack`'s real Cache Pirate runs (stack_pirate.h). */
#include "stack_pirate.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calibrate/calibrate.h"

static double mb(uint64_t b)
{
	return (double)b / (1 << 20);
}

int sb_stack_pirate_plan(struct sb_stack_pirate_runs *sp, bool forced, const char *self, bool quiet)
{
	struct sb_calibration c;
	const char *env = getenv("SCALEBPF_PROFILED_LIB"), *slash;
	char why[256];

	memset(sp, 0, sizeof(*sp));
	if (sb_calibrate_cached(&c, why, sizeof(why))) {
		if (forced) {
			fprintf(stderr, "scalebpf stack: --pirate real needs this machine's "
				"calibration: %s\n", why);
			return -1;
		}
		return 0;   /* the virtual pirate says none, and why, on its own */
	}
	sp->llc = c.llc_effective ? c.llc_effective : c.llc_nominal;
	sp->hit_ns = sb_calibrate_llc_latency(&c);
	sp->miss_ns = c.dram_latency_ns;
	sp->llc_cpus = c.llc_effective_shared_by;
	if (c.llc_effective_shared_by < 2 && !forced) {
		if (!quiet)
			fprintf(stderr, "scalebpf stack: pirate: virtual (the calibration found %s: "
				"a co-runner cannot take any of it from the program)\n",
				c.llc_effective_shared_by == 1 ?
				"each CPU's last-level cache its own" :
				"no measure of whether CPUs share the last-level cache");
		return 0;
	}
	if (!sp->llc || !(sp->hit_ns > 0) || !(sp->miss_ns > sp->hit_ns)) {
		fprintf(stderr, "scalebpf stack: pirate: %s (the calibration has no cache size "
			"or latencies to check the pirate against: run scalebpf calibrate)\n",
			forced ? "cannot run a real one" : "virtual");
		return forced ? -1 : 0;
	}
	if (env && *env)
		snprintf(sp->lib, sizeof(sp->lib), "%s", env);
	else if ((slash = strrchr(self, '/')))
		snprintf(sp->lib, sizeof(sp->lib), "%.*s/libscalebpf-profiled.so",
			 (int)(slash - self), self);
	if (!*sp->lib || access(sp->lib, R_OK)) {
		fprintf(stderr, "scalebpf stack: pirate: %s (the profiled-thread framework %s "
			"is missing: `make` builds it beside scalebpf; SCALEBPF_PROFILED_LIB "
			"names another)\n", forced ? "cannot run a real one" : "virtual",
			*sp->lib ? sp->lib : "library");
		return forced ? -1 : 0;
	}
	if (c.llc_effective_shared_by < 2 && !quiet)
		fprintf(stderr, "scalebpf stack: pirate: real, as asked, though the calibration "
			"found no shared last-level cache: its set sits in its own CPU's cache "
			"and steals nothing from the program\n");
	return 1;
}

uint64_t sb_stack_pirate_bytes(const struct sb_stack_pirate_runs *sp, unsigned t)
{
	return t > 1 ? sp->llc - sp->llc / t : 0;
}

void sb_stack_pirate_judge(struct sb_stack_pirate_runs *sp, size_t k, unsigned t, bool quiet)
{
	struct sb_profiled_stats *st = &sp->st[k];
	const struct sb_pirate_stats *ps = &st->ps;
	char err[512];

	sp->ran[k] = 0;
	if (sb_profiled_stats_read(st, sp->stats[k], err, sizeof(err))) {
		fprintf(stderr, "scalebpf stack: the run at %u threads under the profiled-thread "
			"framework left no stats (%s): the program made no thread with "
			"pthread_create, or did not exit normally; the virtual pirate is used\n",
			t, err);
		return;
	}
	if (st->abandoned) {
		fprintf(stderr, "scalebpf stack: the profiled-thread framework gave up at %u "
			"threads: %s (it controls pthread barriers only: OpenMP's and condition "
			"variables' waits it cannot see); the virtual pirate is used\n", t, st->why);
		return;
	}
	sp->ran[k] = 1;
	if (!st->pirate || !sb_pirate_held(ps))
		fprintf(stderr, "scalebpf stack: at %u threads the pirate did not hold its "
			"%.1f MB (mean fetch ratio %.3f over %llu intervals, at most %.2f allowed): "
			"the program had more cache than its share, the measurement is discarded\n",
			t, mb(ps->bytes), ps->fetch_mean, (unsigned long long)ps->intervals,
			ps->counted ? SB_PIRATE_MAX_FETCH_COUNTED : SB_PIRATE_MAX_FETCH_LATENCY);
	else if (!quiet)
		fprintf(stderr, "scalebpf stack: ... the pirate held %.1f MB (mean fetch ratio "
			"%.3f by %s, %llu of %llu intervals held); the profiled thread ran alone "
			"%llu times\n", mb(ps->bytes), ps->fetch_mean,
			ps->counted ? "counted misses" : "its latency",
			(unsigned long long)ps->intervals_held, (unsigned long long)ps->intervals,
			(unsigned long long)st->turns);
	if (st->main_overlap)
		fprintf(stderr, "scalebpf stack: at %u threads the main thread passed %llu "
			"barrier%s while the profiled thread ran alone: it was not alone\n", t,
			(unsigned long long)st->main_overlap, st->main_overlap == 1 ? "" : "s");
}

int sb_stack_pirate_real(struct sb_stack_pirate_runs *sp, const unsigned *threads, size_t n,
			 struct sb_stack_real *real, struct sb_profile *out)
{
	char err[512], key[64];
	int counted = -1;

	memset(real, 0, n * sizeof(*real));
	for (size_t k = 0; k < n && k < SB_STACK_PIRATE_RUNS; k++) {
		const struct sb_profiled_stats *st = &sp->st[k];
		int held;

		if (!sp->ran[k])
			continue;
		if (sb_profile_read(sp->file[k], &sp->run[k], err, sizeof(err)) != SB_OK) {
			fprintf(stderr, "scalebpf stack: cannot read %s: %s\n", sp->file[k], err);
			return -1;
		}
		held = st->pirate && sb_pirate_held(&st->ps);
		counted = st->ps.counted;
		for (uint32_t i = 0; i < st->nsites; i++)
			sp->sites[k][i] = (struct sb_stack_site){ .vaddr = st->sites[i].vaddr,
								  .binary = st->sites[i].binary,
								  .busy_ns = st->sites[i].busy_ns };
		real[k] = (struct sb_stack_real){ .run = sp->run[k], .tids = st->tids,
						  .ntids = st->ntids, .sites = sp->sites[k],
						  .nsites = st->nsites,
						  .bytes = sp->llc / threads[k], .held = held };
		snprintf(key, sizeof(key), "stack_pirate_%u_run", threads[k]);
		sb_profile_meta_set(out, key, sp->file[k]);
		snprintf(key, sizeof(key), "stack_pirate_%u_held", threads[k]);
		sb_profile_meta_set_u64(out, key, (uint64_t)held);
		snprintf(key, sizeof(key), "stack_pirate_%u_bytes", threads[k]);
		sb_profile_meta_set_u64(out, key, st->ps.bytes);
		snprintf(key, sizeof(key), "stack_pirate_%u_fetch_ppm", threads[k]);
		sb_profile_meta_set_u64(out, key, st->ps.fetch_mean >= 0 ?
					(uint64_t)(st->ps.fetch_mean * 1e6) : 0);
		snprintf(key, sizeof(key), "stack_pirate_%u_turns", threads[k]);
		sb_profile_meta_set_u64(out, key, st->turns);
	}
	sb_profile_meta_set(out, "stack_pirate_check", counted < 0 ? "none ran" :
			    counted ? "fetch ratio (PMU)" : "latency");
	return 0;
}

void sb_stack_pirate_release(struct sb_stack_pirate_runs *sp)
{
	for (size_t k = 0; k < SB_STACK_PIRATE_RUNS; k++) {
		sb_profile_free(sp->run[k]);
		sp->run[k] = NULL;
	}
}
