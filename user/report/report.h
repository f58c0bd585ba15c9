/* SPDX-License-Identifier: MIT */
/* Report output: text for people, JSON for scripts (a stable contract). */
#ifndef SB_REPORT_H
#define SB_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "causes/causes.h"
#include "profile/profile.h"

struct sb_report_opts {
	const char *input;
	const char *sort;      /* sections: lost (default), imbalance, instances, wait */
	size_t top;            /* sections shown in full (text) */
	int color;
};

/* "function (file.c:LINE)", or the best there is: "function+0x1a (bin)",
 * "0x401234 (bin)". */
void sb_loc_format(const struct sb_profile *p, int32_t loc, char *buf, size_t len);
/* "file.c:LINE" (basename), or "bin+0xOFF" / "0xADDR" without a line. */
void sb_loc_short(const struct sb_profile *p, int32_t loc, char *buf, size_t len);
/* Human duration: "1.23 s", "45.6 ms", "789 us", "12 ns". */
void sb_fmt_ns(uint64_t ns, char *buf, size_t len);

/* JSON pieces: a quoted, escaped string; "location": .., "function": ..,
 * "address": .. of a profile location. */
void sb_json_str(FILE *f, const char *s);
void sb_json_loc_fields(FILE *f, const struct sb_profile *p, int32_t loc);

/* `report --counts`: each section's events with per-thread totals over its
 * stored instances (exact block counts, block samples), text or JSON. */
int sb_report_counts(const struct sb_profile *p, int json, FILE *f);

int sb_report_text(const struct sb_profile *p, const struct sb_causes *c,
		   const struct sb_report_opts *o, FILE *out);
int sb_report_json(const struct sb_profile *p, const struct sb_causes *c, FILE *out);
/* The "Causes" view for the sections in order (the first top). */
int sb_report_causes_text(const struct sb_profile *p, const struct sb_causes *c,
			  const size_t *order, size_t top, FILE *f);

/* Sampled data addresses (report_addrs.c): a summary line for the text
 * header, an "addresses" member for JSON (nothing for profiles without
 * address counts), and the kept records as a tab-separated table. */
void sb_report_addrs_text(const struct sb_profile *p, FILE *f);
void sb_report_addrs_json(const struct sb_profile *p, FILE *f);
int sb_report_addrs_table(const struct sb_profile *p, FILE *f);

#endif
