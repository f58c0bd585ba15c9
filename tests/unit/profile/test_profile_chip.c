// SPDX-License-Identifier: MIT
/*
 * test_profile_chip: the CHIP chunk (profile_chip.c) round trip with every
 * field at an edge value, a row of each region kind and mode; rows with a
 * section, region, kind, mode or shape out of range, or a sampled-pmu row
 * without probes, refused on write; a profile without the chunk reads as
 * no rows.
 */
#include "profile_builder.h"

static struct sb_chip_row row(uint32_t section, uint32_t mode)
{
	struct sb_chip_row r;

	/* zeroed padding too: the round trip compares rows with memcmp */
	memset(&r, 0, sizeof(r));
	r.section = section;
	r.mode = mode;
	r.threads = UINT32_MAX;
	r.line = 128;
	r.max_bytes = UINT64_MAX;
	r.rate_t = 1u << 24;
	r.accesses = UINT64_MAX - 1;

	for (size_t k = 0; k < SB_CHIP_ROW_DEPTHS; k++)
		r.depth[k] = k % 2 ? UINT64_MAX - k : k * 7;
	return r;
}

static void round_trip(void)
{
	struct sb_profile *p = make_full(), *q = NULL;
	char path[256], err[256] = "";

	p->chip = calloc(5, sizeof(*p->chip));
	if (!p->chip)
		abort();
	p->chip[0] = row(0, SB_CHIP_MODE_EXACT);
	p->chip[1] = row((uint32_t)p->nsections - 1, SB_CHIP_MODE_SAMPLED_PMU);
	p->chip[1].rate_t = 1;
	p->chip[1].reuse_samples = UINT64_MAX;   /* the PMU's reuse probes */
	p->chip[1].resolved = 0xffff;
	/* a function region (its name in the meta) and the whole run */
	p->chip[2] = row(0, SB_CHIP_MODE_EXACT);
	p->chip[2].kind = SB_CHIP_KIND_FUNCTION;
	p->chip[2].region = 7;
	p->chip[2].busy_ns = UINT64_MAX;
	sb_profile_meta_set(p, "chip_region_7", "phase_two");
	p->chip[3] = row(0, SB_CHIP_MODE_EXACT);
	p->chip[3].kind = SB_CHIP_KIND_RUN;
	/* a sampled row: footprint probes, no access count */
	p->chip[4] = row(0, SB_CHIP_MODE_SAMPLED);
	p->chip[4].kind = SB_CHIP_KIND_RUN;
	p->chip[4].accesses = 0;
	for (size_t k = 0; k < SB_CHIP_ROW_WINDOWS; k++) {
		p->chip[4].fp_window_ns[k] = 100000 << k;
		p->chip[4].fp_probes[k] = UINT64_MAX - k;
		p->chip[4].fp_touched[k] = k * 3;
	}
	p->chip[4].fp_universe = UINT64_MAX;
	p->nchip = 5;
	tpath(path, sizeof(path), "chip.sbp");
	CHECK(sb_profile_write(p, path, err, sizeof(err)) == SB_OK, "write: %s", err);
	CHECK(sb_profile_read(path, &q, err, sizeof(err)) == SB_OK && q, "read: %s", err);
	if (q) {
		check_same(p, q);
		CHECK(q->nchip == 5 && !memcmp(q->chip, p->chip, 5 * sizeof(*q->chip)),
		      "rows equal (%zu)", q->nchip);
		sb_profile_free(q);
	}
	/* refused: a function region whose name is not in the meta, a kind
	 * this reader does not know */
	p->chip[2].region = 8;
	CHECK(sb_profile_write(p, path, err, sizeof(err)) != SB_OK &&
	      strstr(err, "chip_region_8"), "region without a name: %s", err);
	p->chip[2].region = 7;
	p->chip[3].kind = SB_CHIP_KIND_MAX;
	CHECK(sb_profile_write(p, path, err, sizeof(err)) != SB_OK && strstr(err, "kind"),
	      "unknown kind: %s", err);
	p->chip[3].kind = SB_CHIP_KIND_RUN;
	/* refused: a sampled row with more touched than probes, windows out
	 * of order, no probe at all */
	p->chip[4].fp_touched[2] = p->chip[4].fp_probes[2] + 1;
	CHECK(sb_profile_write(p, path, err, sizeof(err)) != SB_OK && strstr(err, "footprint"),
	      "touched > probes: %s", err);
	p->chip[4].fp_touched[2] = 0;
	p->chip[4].fp_window_ns[3] = p->chip[4].fp_window_ns[2];
	CHECK(sb_profile_write(p, path, err, sizeof(err)) != SB_OK && strstr(err, "footprint"),
	      "windows out of order: %s", err);
	p->chip[4].fp_window_ns[3] = p->chip[4].fp_window_ns[2] * 2;
	memset(p->chip[4].fp_probes, 0, sizeof(p->chip[4].fp_probes));
	memset(p->chip[4].fp_touched, 0, sizeof(p->chip[4].fp_touched));
	CHECK(sb_profile_write(p, path, err, sizeof(err)) != SB_OK && strstr(err, "no footprint"),
	      "no probes: %s", err);
	p->nchip = 4;
	/* refused: a sampled-pmu row without probes, or resolving a 17th size */
	p->chip[1].reuse_samples = 0;
	CHECK(sb_profile_write(p, path, err, sizeof(err)) != SB_OK && strstr(err, "sampled-pmu"),
	      "sampled-pmu without probes: %s", err);
	p->chip[1].reuse_samples = 9;
	p->chip[1].resolved = 0x1ffff;
	CHECK(sb_profile_write(p, path, err, sizeof(err)) != SB_OK && strstr(err, "sampled-pmu"),
	      "a 17th size resolved: %s", err);
	p->chip[1].resolved = 0x7;
	/* refused: a section beyond the last, an unknown mode, a line that is
	 * no power of two, a rate of 0 */
	p->chip[1].section = (uint32_t)p->nsections;
	CHECK(sb_profile_write(p, path, err, sizeof(err)) != SB_OK && strstr(err, "chip row 1"),
	      "section out of range: %s", err);
	p->chip[1] = row(0, SB_CHIP_MODE_MAX);
	CHECK(sb_profile_write(p, path, err, sizeof(err)) != SB_OK && strstr(err, "mode"),
	      "unknown mode: %s", err);
	p->chip[1] = row(0, SB_CHIP_MODE_EXACT);
	p->chip[1].line = 96;
	CHECK(sb_profile_write(p, path, err, sizeof(err)) != SB_OK, "line 96: %s", err);
	p->chip[1].line = 64;
	p->chip[1].rate_t = 0;
	CHECK(sb_profile_write(p, path, err, sizeof(err)) != SB_OK, "rate 0: %s", err);
	/* without the chunk */
	free(p->chip);
	p->chip = NULL;
	p->nchip = 0;
	CHECK(sb_profile_write(p, path, err, sizeof(err)) == SB_OK, "write without: %s", err);
	CHECK(sb_profile_read(path, &q, err, sizeof(err)) == SB_OK && q && !q->nchip,
	      "no rows: %s", err);
	sb_profile_free(q);
	unlink(path);
	sb_profile_free(p);
}

int main(void)
{
	round_trip();
	return CHECK_DONE("test_profile_chip");
}
