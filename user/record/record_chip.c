// SPDX-License-Identifier: MIT
/*
 * The CHIP chunk of a recording (analysis/profile/profile.h): a row per
 * section whose `scalebpf cc --chip` counters the builder summed
 * (SB_KEY_TOTAL keys, on_chip in record_route.c), and the machine model
 * the report predicts with: this machine's cached `scalebpf calibrate`,
 * stored in the profile so a report elsewhere predicts for the machine
 * that ran the program.
 */
#include "record_chip.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate/calibrate.h"
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

/* The largest cache sysfs lists for CPU 0 (the last level), 0 if none. */
static uint64_t sysfs_llc(void)
{
	uint64_t best = 0;

	for (int i = 0; i < 8; i++) {
		char path[96], buf[32], *end;
		unsigned long long v;
		FILE *f;

		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
		if (!(f = fopen(path, "r")))
			continue;
		if (fgets(buf, sizeof(buf), f)) {
			v = strtoull(buf, &end, 10);
			v <<= *end == 'K' ? 10 : *end == 'M' ? 20 : 0;
			if (v > best)
				best = v;
		}
		fclose(f);
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
		sb_profile_meta_set_u64(p, "chip_machine_llc_nominal", sysfs_llc());
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

int sb_rec_chip_rows(struct sb_rec *r, struct sb_profile *p, size_t base, const uint64_t *c)
{
	size_t cap = p->nchip;

	if (!r->plan.chip)
		return 0;
	sb_profile_meta_set_u64(p, "chip_batches", r->chip.batches);
	sb_profile_meta_set_u64(p, "chip_batches_reshaped", r->chip.reshaped);
	sb_profile_meta_set_u64(p, "drops_chip", c[SB_CNT_DROP_CHIP]);
	sb_profile_meta_set_u64(p, "chip_faults", c[SB_CNT_CHIP_FAULT]);
	machine_meta(p);
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
	return 0;
}
