// SPDX-License-Identifier: MIT
/*
 * The CHIP chunk of a recording (analysis/profile/profile.h): a row per
 * section whose `scalebpf cc --chip` counters the builder summed
 * (SB_KEY_TOTAL keys, on_chip in record_route.c), per --region function
 * and for the whole run (record_region.h), and the machine model
 * the report predicts with: this machine's cached `scalebpf calibrate`,
 * stored in the profile so a report elsewhere predicts for the machine
 * that ran the program.
 */
#include "record_chip.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate/calibrate.h"
#include "chip/chip_probes.h"
#include "chip/chip.h"
#include "record_footprint.h"
#include "record_reuse.h"
#include "record_session.h"
#include "sbpf_keys.h"
#include "sections/sections.h"

static int add_row(struct sb_profile *p, const struct sb_chip_row *row, size_t *cap)
{
	if (p->nchip == *cap) {
		size_t n = *cap ? 2 * *cap : 8;
		struct sb_chip_row *v = realloc(p->chip, n * sizeof(*v));

		if (!v)
			return -1;
		p->chip = v;
		*cap = n;
	}
	p->chip[p->nchip++] = *row;
	return 0;
}

/* A file of CPU 0's cache index i in sysfs: its first line, or "". */
static void cache_attr(int i, const char *name, char *buf, size_t len)
{
	char path[96];
	FILE *f;

	buf[0] = 0;
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/%s", i, name);
	if (!(f = fopen(path, "re")))
		return;
	if (!fgets(buf, (int)len, f))
		buf[0] = 0;
	fclose(f);
}

/* The largest data cache sysfs lists for CPU 0 at level (0: any, so the
 * last level), 0 if none. */
static uint64_t sysfs_cache(int level)
{
	uint64_t best = 0;

	for (int i = 0; i < 8; i++) {
		char buf[32], *end;
		unsigned long long v;

		cache_attr(i, "type", buf, sizeof(buf));
		if (!strncmp(buf, "Instruction", 11))
			continue;
		cache_attr(i, "level", buf, sizeof(buf));
		if (level && atoi(buf) != level)
			continue;
		cache_attr(i, "size", buf, sizeof(buf));
		v = strtoull(buf, &end, 10);
		v <<= *end == 'K' ? 10 : *end == 'M' ? 20 : 0;
		if (v > best)
			best = v;
	}
	return best;
}

/* This machine's model, as `scalebpf calibrate` kept it. */
static void machine_meta(struct sb_profile *p)
{
	struct sb_calibration c;
	char why[512];

	if (sb_calibrate_cached(&c, why, sizeof(why))) {
		sb_profile_meta_set(p, "chip_machine", why);
		sb_profile_meta_set_u64(p, "chip_machine_llc_nominal", sysfs_cache(0));
		return;
	}
	sb_profile_meta_set(p, "chip_machine", c.identity);
	sb_profile_meta_set_u64(p, "chip_machine_when", (uint64_t)c.when);
	sb_profile_meta_set_u64(p, "chip_machine_llc_nominal", c.llc_nominal);
	sb_profile_meta_set_u64(p, "chip_machine_llc_effective", c.llc_effective);
	sb_profile_meta_set_u64(p, "chip_machine_bandwidth", (uint64_t)c.bw_all);
	sb_profile_meta_set_u64(p, "chip_machine_bandwidth_one", (uint64_t)c.bw_one);
	sb_profile_meta_set_u64(p, "chip_machine_dram_latency_ps",
				(uint64_t)(c.dram_latency_ns * 1000));
	/* measured sharing: a cache instance serves all CPUs hwloc puts under
	 * it when two were found to share it, else one */
	if (c.llc_effective_shared_by)
		sb_profile_meta_set_u64(p, "chip_machine_llc_cpus", c.llc_effective_shared_by > 1 ?
					(c.llc_shared_by ? c.llc_shared_by : 2) : 1);
	sb_profile_meta_set_u64(p, "chip_machine_cpus", c.threads_all);
	sb_profile_meta_set_u64(p, "chip_machine_llc_latency_ps",
				(uint64_t)(sb_calibrate_llc_latency(&c) * 1000));
}

/* The --region functions' sums (record_region.h), --chip or not: a
 * plain build's times are what `report --times` matches by name. */
static void region_meta(struct sb_rec *r, struct sb_profile *p)
{
	char key[64];

	for (uint32_t i = 0; i < r->nregions && i < SB_REGION_MAX; i++) {
		const struct sb_region_total *t = &r->regions.tot[i];
		uint64_t v[SB_CHIP_REGION_NFIELDS] = {
			[SB_CHIP_REGION_CALLS] = t->calls, [SB_CHIP_REGION_BUSY_NS] = t->busy_ns,
			[SB_CHIP_REGION_THREADS] = t->threads,
			[SB_CHIP_REGION_OPEN] = r->regions.open ? sb_regions_open(&r->regions, i) : 0,
			[SB_CHIP_REGION_UNREAD] = t->unread, [SB_CHIP_REGION_UNMATCHED] = t->unmatched,
			[SB_CHIP_REGION_LOST] = t->lost, [SB_CHIP_REGION_UNCOUNTED] = t->uncounted,
		};

		snprintf(key, sizeof(key), "chip_region_%u", i);
		sb_profile_meta_set(p, key, r->region_funcs[i]);
		for (int f = 0; f < SB_CHIP_REGION_NFIELDS; f++) {
			sb_chip_region_key(key, sizeof(key), i, (enum sb_chip_region_field)f);
			sb_profile_meta_set_u64(p, key, v[f]);
		}
	}
	if (r->nregions && (r->regions.bad || r->regions.nomem)) {
		sb_profile_meta_set_u64(p, "chip_region_bad", r->regions.bad);
		sb_profile_meta_set_u64(p, "chip_region_nomem", r->regions.nomem);
	}
}

/* A sampled row's sizes: up to twice the cache the model uses (the
 * calibrated effective one, else the nominal), as an exact profile's. */
static uint64_t sampled_bytes(const struct sb_profile *p)
{
	uint64_t llc = sb_profile_meta_get_u64(p, "chip_machine_llc_effective");

	if (!llc)
		llc = sb_profile_meta_get_u64(p, "chip_machine_llc_nominal");
	return llc && llc < (1ull << 37) ? 2 * llc : 64ull << 20;
}

static uint32_t sampled_line(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/cpu0/cache/index0/coherency_line_size", "re");
	unsigned v = 0;

	if (f) {
		if (fscanf(f, "%u", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v >= 16 && v <= 4096 && !(v & (v - 1)) ? v : 64;
}

/* A row of the recording's shape for counts (depths, then accesses). */
static int counts_row(struct sb_rec *r, struct sb_profile *p, size_t *cap, uint32_t kind,
		      uint32_t region, const struct sb_region_total *t)
{
	struct sb_chip_row row;

	if (!t->counts[SB_CHIP_NDEPTH])
		return 0;
	memset(&row, 0, sizeof(row));
	row.kind = kind;
	row.region = region;
	/* out of every range an older reader knows: it refuses the row
	 * instead of taking it for section 0's */
	row.section = UINT32_MAX;
	row.busy_ns = kind == SB_CHIP_KIND_FUNCTION ? t->busy_ns : 0;
	row.mode = SB_CHIP_MODE_EXACT;
	row.threads = t->threads;
	row.line = r->chip.line;
	row.max_bytes = r->chip.max_bytes;
	row.rate_t = r->chip.rate_t;
	row.accesses = t->counts[SB_CHIP_NDEPTH];
	memcpy(row.depth, t->counts, sizeof(row.depth));
	return add_row(p, &row, cap);
}

int sb_rec_chip_rows(struct sb_rec *r, struct sb_profile *p, size_t base, const uint64_t *c)
{
	size_t cap = p->nchip, sections;

	region_meta(r, p);
	if (!r->plan.chip && !r->fprobe && !r->rprobe)
		return 0;
	machine_meta(p);
	if (r->fprobe && sb_fprobe_store(r->fprobe, p, sampled_bytes(p), sampled_line()))
		return -1;
	/* a load the L2 served came back within its capacity */
	if (r->rprobe &&
	    sb_rprobe_store(r->rprobe, p, sampled_bytes(p), sampled_line(), sysfs_cache(2)))
		return -1;
	if (!r->plan.chip)
		return 0;
	cap = p->nchip;
	sb_profile_meta_set_u64(p, "chip_batches", r->chip.batches);
	sb_profile_meta_set_u64(p, "chip_batches_reshaped", r->chip.reshaped);
	sb_profile_meta_set_u64(p, "drops_chip", c[SB_CNT_DROP_CHIP]);
	sb_profile_meta_set_u64(p, "chip_faults", c[SB_CNT_CHIP_FAULT]);
	for (size_t s = 0;; s++) {
		uint64_t tot[SB_KEY_TOTALS];
		struct sb_chip_row row;
		uint32_t threads;

		if (sb_builder_totals(r->builder, s, tot, &threads))
			break;
		if (!tot[SB_KEY_CHIP_ACCESSES])
			continue;
		memset(&row, 0, sizeof(row));
		row.section = (uint32_t)(base + s);
		row.mode = SB_CHIP_MODE_EXACT;
		row.threads = threads;
		row.line = r->chip.line;
		row.max_bytes = r->chip.max_bytes;
		row.rate_t = r->chip.rate_t;
		row.accesses = tot[SB_KEY_CHIP_ACCESSES];
		memcpy(row.depth, tot, sizeof(row.depth));
		if (add_row(p, &row, &cap))
			return -1;
	}
	/* (no batch of a valid shape: no shape to give the rows) */
	if (!r->chip.batches)
		return 0;
	sections = p->nchip;
	for (size_t i = 0; i < r->nregions && i < SB_REGION_MAX; i++)
		if (counts_row(r, p, &cap, SB_CHIP_KIND_FUNCTION, (uint32_t)i,
			       &r->regions.tot[i]))
			return -1;
	/* the whole run where no section was profiled: a serial program's
	 * one region (beside sections it would repeat them) */
	return sections ? 0 : counts_row(r, p, &cap, SB_CHIP_KIND_RUN, 0, &r->regions.run);
}

int sb_rec_chip_region_rows(struct sb_rec *r, struct sb_profile *p)
{
	const struct sb_chip_span *spans = r->regions.spans;
	size_t n = r->regions.nspans, first = p->nchip;

	if (r->fprobe &&
	    sb_fprobe_store_regions(r->fprobe, p, sampled_bytes(p), sampled_line(), spans, n))
		return -1;
	if (r->rprobe && sb_rprobe_store_regions(r->rprobe, p, sampled_bytes(p), sampled_line(),
						 sysfs_cache(2), spans, n))
		return -1;
	/* a function's time is its calls' (its exact rows' too) */
	for (size_t i = first; i < p->nchip; i++)
		if (p->chip[i].kind == SB_CHIP_KIND_FUNCTION && p->chip[i].region < SB_REGION_MAX)
			p->chip[i].busy_ns = r->regions.tot[p->chip[i].region].busy_ns;
	if (r->regions.spans_dropped)
		sb_profile_meta_set_u64(p, "chip_region_spans_dropped", r->regions.spans_dropped);
	return 0;
}
