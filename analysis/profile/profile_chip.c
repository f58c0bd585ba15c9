// SPDX-License-Identifier: MIT
/*
 * The optional CHIP chunk: cache hit profile rows (struct sb_chip_row,
 * made by the recorder from analysis/chip/ counters).  Record layout
 * (version 1):
 *
 *   CHIP  section u32, mode u32, threads u32, line u32, max_bytes u64,
 *         rate_t u32, accesses u64, n u32, n x u64 depth counts,
 *         [kind u32, region u32, busy_ns u64,
 *          [m u32, m x (window_ns u64, probes u64, touched u64), universe u64,
 *           [reuse_samples u64, resolved u32]]]
 *
 * Depths beyond those this reader knows are skipped, missing ones read 0.
 * The bracketed tail came with function and whole-run regions: a row
 * without it is a section's (the first profiles had sections only); the
 * innermost came with mode sampled-pmu (0 in rows of other modes).
 */
#include "profile_priv.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sb_pfmt_enc_chip(struct sb_bytes_buf *b, const struct sb_profile *p, size_t i)
{
	const struct sb_chip_row *r = &p->chip[i];

	sb_bytes_put_u32(b, r->section);
	sb_bytes_put_u32(b, r->mode);
	sb_bytes_put_u32(b, r->threads);
	sb_bytes_put_u32(b, r->line);
	sb_bytes_put_u64(b, r->max_bytes);
	sb_bytes_put_u32(b, r->rate_t);
	sb_bytes_put_u64(b, r->accesses);
	sb_bytes_put_u32(b, SB_CHIP_ROW_DEPTHS);
	for (size_t k = 0; k < SB_CHIP_ROW_DEPTHS; k++)
		sb_bytes_put_u64(b, r->depth[k]);
	sb_bytes_put_u32(b, r->kind);
	sb_bytes_put_u32(b, r->region);
	sb_bytes_put_u64(b, r->busy_ns);
	sb_bytes_put_u32(b, SB_CHIP_ROW_WINDOWS);
	for (size_t k = 0; k < SB_CHIP_ROW_WINDOWS; k++) {
		sb_bytes_put_u64(b, r->fp_window_ns[k]);
		sb_bytes_put_u64(b, r->fp_probes[k]);
		sb_bytes_put_u64(b, r->fp_touched[k]);
	}
	sb_bytes_put_u64(b, r->fp_universe);
	sb_bytes_put_u64(b, r->reuse_samples);
	sb_bytes_put_u32(b, r->resolved);
}

void sb_pfmt_dec_chip(struct sb_bytes_cur *c, void *elem)
{
	struct sb_chip_row *r = elem;
	uint32_t n;

	r->section = sb_bytes_get_u32(c);
	r->mode = sb_bytes_get_u32(c);
	r->threads = sb_bytes_get_u32(c);
	r->line = sb_bytes_get_u32(c);
	r->max_bytes = sb_bytes_get_u64(c);
	r->rate_t = sb_bytes_get_u32(c);
	r->accesses = sb_bytes_get_u64(c);
	n = sb_bytes_get_u32(c);
	if (n > sb_bytes_left(c) / 8) {
		c->bad = 1;
		return;
	}
	for (uint32_t k = 0; k < n; k++) {
		uint64_t v = sb_bytes_get_u64(c);

		if (k < SB_CHIP_ROW_DEPTHS)
			r->depth[k] = v;
	}
	if (sb_bytes_left(c) >= 16) {
		r->kind = sb_bytes_get_u32(c);
		r->region = sb_bytes_get_u32(c);
		r->busy_ns = sb_bytes_get_u64(c);
	}
	if (sb_bytes_left(c) >= 4) {
		n = sb_bytes_get_u32(c);
		if (n > (sb_bytes_left(c) - 8) / 24 || sb_bytes_left(c) < 8) {
			c->bad = 1;
			return;
		}
		for (uint32_t k = 0; k < n; k++) {
			uint64_t w = sb_bytes_get_u64(c), pr = sb_bytes_get_u64(c);
			uint64_t t = sb_bytes_get_u64(c);

			if (k < SB_CHIP_ROW_WINDOWS) {
				r->fp_window_ns[k] = w;
				r->fp_probes[k] = pr;
				r->fp_touched[k] = t;
			}
		}
		r->fp_universe = sb_bytes_get_u64(c);
	}
	if (sb_bytes_left(c) >= 12) {
		r->reuse_samples = sb_bytes_get_u64(c);
		r->resolved = sb_bytes_get_u32(c);
	}
}

void sb_chip_row_run(struct sb_chip_row *row, uint32_t mode, uint32_t threads, uint32_t line,
		     uint64_t max_bytes)
{
	memset(row, 0, sizeof(*row));
	row->kind = SB_CHIP_KIND_RUN;
	/* out of every range an older reader knows: it refuses the row
	 * instead of taking it for section 0's */
	row->section = UINT32_MAX;
	row->mode = mode;
	row->threads = threads;
	row->line = line;
	row->max_bytes = max_bytes;
	row->rate_t = 1u << 24;           /* of 2^24: every line (not SHARDS) */
}

int sb_profile_chip_append(struct sb_profile *p, const struct sb_chip_row *row)
{
	struct sb_chip_row *v = realloc(p->chip, (p->nchip + 1) * sizeof(*v));

	if (!v)
		return -1;
	p->chip = v;
	p->chip[p->nchip++] = *row;
	return 0;
}

/* A sampled row's probes: ascending windows, touched <= probes, some
 * probes, a universe. */
static bool fp_ok(const struct sb_chip_row *r, size_t i, char *why, size_t len)
{
	uint64_t probes = 0, prev = 0;

	for (size_t k = 0; k < SB_CHIP_ROW_WINDOWS; k++) {
		if (!r->fp_probes[k])
			continue;
		if (r->fp_touched[k] > r->fp_probes[k] || r->fp_window_ns[k] <= prev) {
			snprintf(why, len, "chip row %zu: footprint window %zu has %" PRIu64
				 " of %" PRIu64 " probes touched at %" PRIu64 " ns", i, k,
				 r->fp_touched[k], r->fp_probes[k], r->fp_window_ns[k]);
			return false;
		}
		prev = r->fp_window_ns[k];
		probes += r->fp_probes[k];
	}
	if (!probes || !r->fp_universe) {
		snprintf(why, len, "chip row %zu: sampled, with no footprint probe", i);
		return false;
	}
	return true;
}

uint32_t sb_pfmt_check_chip(const struct sb_profile *p, char *why, size_t len)
{
	for (size_t i = 0; i < p->nchip; i++) {
		const struct sb_chip_row *r = &p->chip[i];

		if (r->kind >= SB_CHIP_KIND_MAX) {
			snprintf(why, len, "chip row %zu has region kind %" PRIu32, i, r->kind);
			return SB_CHUNK_CHIP;
		}
		if (r->kind == SB_CHIP_KIND_FUNCTION) {
			char key[48];

			snprintf(key, sizeof(key), "chip_region_%" PRIu32, r->region);
			if (r->region >= SB_CHIP_MAX_REGIONS || !sb_profile_meta_get(p, key)) {
				snprintf(why, len, "chip row %zu names region %" PRIu32
					 ", which has no %s", i, r->region, key);
				return SB_CHUNK_CHIP;
			}
		}
		if (r->kind == SB_CHIP_KIND_SECTION && r->section >= p->nsections) {
			snprintf(why, len, "chip row %zu refers to section %" PRIu32 " of %zu", i,
				 r->section, p->nsections);
			return SB_CHUNK_CHIP;
		}
		if (r->mode == SB_CHIP_MODE_SAMPLED && !fp_ok(r, i, why, len))
			return SB_CHUNK_CHIP;
		if (r->mode == SB_CHIP_MODE_SAMPLED_PMU &&
		    (!r->reuse_samples || r->resolved >> (SB_CHIP_ROW_DEPTHS - 1))) {
			snprintf(why, len, "chip row %zu: sampled-pmu, from %" PRIu64 " reuses with "
				 "sizes 0x%" PRIx32 " resolved", i, r->reuse_samples, r->resolved);
			return SB_CHUNK_CHIP;
		}
		if (!r->mode || r->mode >= SB_CHIP_MODE_MAX || !r->line ||
		    (!r->accesses && r->mode != SB_CHIP_MODE_SAMPLED) ||
		    (r->line & (r->line - 1)) || r->max_bytes < 16ull * r->line ||
		    !r->rate_t || r->rate_t > (1u << 24)) {
			snprintf(why, len, "chip row %zu has mode %" PRIu32 ", line %" PRIu32
				 ", max %" PRIu64 ", rate %" PRIu32 "/2^24, %" PRIu64 " accesses", i,
				 r->mode, r->line, r->max_bytes, r->rate_t, r->accesses);
			return SB_CHUNK_CHIP;
		}
	}
	return 0;
}
