// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: one input is one profile file image, taken through
 * everything `scalebpf report` does with a profile: decode and validate
 * (sb_profile_read_mem), the summaries, the address counts, LIME's causes
 * (which deserialize the CFGs the profile carries), then every view of
 * the text, JSON and HTML reports, every listing and every export
 * (pprof, perfetto), written to /dev/null.
 *
 * Invariant checked beyond "no crash, no leak, no sanitizer report": a
 * profile the reader accepts is one the writer would write (sb_pfmt_check),
 * so report and record agree on what a valid profile is.
 *
 * Chunk CRCs would stop almost every mutation at the first check, so an
 * input refused for a CRC mismatch is read a second time with every CRC
 * recomputed: mutations reach the decoders, and the check itself is still
 * fuzzed on the first read.
 *
 * Hermetic: profiles name source files and binaries, and the causes view
 * prints source lines from them.  Fuzzed paths must not make the fuzzer
 * read this machine's files, so the report runs with no_source (as
 * `report --no-source`): the source view is taken through, nothing opened.
 *
 * Built by `make build/fuzz/fuzz_profile` (clang, libFuzzer, ASan, UBSan);
 * run briefly by `make check`, longer by `make fuzz` (tests/fuzz/run-fuzz.sh).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addrs/addrs.h"
#include "causes/causes.h"
#include "profile/profile.h"
#include "profile/profile_priv.h"
#include "report/export/export.h"
#include "report/report.h"
#include "summary/summary.h"
#include "util/bytes.h"

static FILE *sink(void)
{
	static FILE *f;

	if (!f)
		f = fopen("/dev/null", "w");
	if (!f)
		abort();
	return f;
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* Recomputes the CRC of every chunk that lies within the image. */
static void fix_crcs(unsigned char *d, size_t n)
{
	for (size_t off = 16; off + 16 <= n;) {
		uint64_t plen = le32(d + off + 8) | (uint64_t)le32(d + off + 12) << 32;
		uint32_t crc;

		if (plen > n - off - 16 || n - off - 16 - plen < 4)
			return;
		crc = sb_bytes_crc32(sb_bytes_crc32(0, d + off, 16), d + off + 16, plen);
		for (int i = 0; i < 4; i++)
			d[off + 16 + plen + i] = (unsigned char)(crc >> (8 * i));
		off += 16 + plen + 4;
	}
}

static void summaries(const struct sb_profile *p)
{
	struct sb_summary_prim_total prims[SB_PRIM_MAX];
	struct sb_summary_lock_total *locks = NULL;
	struct sb_addrs_counts ac;
	size_t *ranked;
	double sum = 0;

	ranked = sb_summary_sections_ranked(p);
	for (size_t i = 0; ranked && i < p->nsections; i++)
		sum += sb_summary_imbalance_pct(&p->sections[ranked[i]]);
	free(ranked);
	if (sb_summary_waits_by_prim(p, prims) > SB_PRIM_MAX)
		abort();
	if (sb_summary_locks_ranked(p, &locks) > (long)p->nwaits)
		abort();
	free(locks);
	sb_addrs_counts_read(p, &ac);
	/* keeps the imbalance computation from being optimized out */
	fprintf(sink(), "%g\n", sum);
}

static void reports(const struct sb_profile *p)
{
	static const char *const sorts[] = { "lost", "imbalance", "instances", "wait" };
	struct sb_report_opts o = { .input = "fuzz", .sort = "lost", .top = 5,
				    .no_source = 1 };
	struct sb_lime_opts lo;
	struct sb_causes c;
	char err[512];

	for (size_t i = 0; i < sizeof(sorts) / sizeof(sorts[0]); i++)
		free(sb_report_sections_sorted(p, sorts[i]));
	for (size_t i = 0; i < sb_report_nviews; i++) {
		if (!sb_report_views[i]->list_text)
			continue;
		sb_report_list(sb_report_views[i], p, &o, 0, sink());
		sb_report_list(sb_report_views[i], p, &o, 1, sink());
	}
	for (size_t i = 0; sb_export_formats[i]; i++)
		if (sb_export_formats[i]->write(p, sink(), err, sizeof(err)) && !err[0])
			abort();    /* a failure must say why */
	sb_lime_opts_default(&lo);
	if (sb_causes_compute(p, &lo, &c, err, sizeof(err))) {
		if (!err[0])
			abort();    /* a failure must say why */
		return;
	}
	sb_report_text(p, &c, &o, sink());
	sb_report_json(p, &c, &o, sink());
	sb_report_html(p, &c, &o, sink());
	sb_causes_free(&c);
}

/* Reads one image; 0 when it went through the whole report. */
static int one(const uint8_t *data, size_t len, char *err, size_t errlen)
{
	struct sb_profile *p;
	char why[160];
	int st;

	st = sb_profile_read_mem(data, len, "fuzz.sbp", &p, err, errlen);
	if (st) {
		/* Refused: a known status, a message, nothing returned. */
		if (st < SB_ERR_NOMEM || st > SB_ERR_IO || !err[0] || p)
			abort();
		return st;
	}
	if (sb_pfmt_check(p, why, sizeof(why))) {
		fprintf(stderr, "the reader accepted what the writer refuses: %s\n", why);
		abort();
	}
	summaries(p);
	reports(p);
	sb_profile_free(p);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	unsigned char *copy;
	char err[512];

	if (one(data, len, err, sizeof(err)) == SB_ERR_CORRUPT && strstr(err, "CRC mismatch")) {
		copy = malloc(len ? len : 1);
		if (!copy)
			abort();
		memcpy(copy, data, len);
		fix_crcs(copy, len);
		one(copy, len, err, sizeof(err));
		free(copy);
	}
	return 0;
}
