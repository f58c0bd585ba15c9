/* SPDX-License-Identifier: MIT */
/*
 * Report output: text for people, JSON for scripts (a stable contract).
 *
 * The report is made of views, listed in order in one table
 * (report_views.c); each report_<view>.c defines its sb_view_<name>.  The
 * text report is every view's head lines (what was recorded), a blank
 * line, then every view's body; the JSON report is one object with the
 * members the views write.  A view with a listing is also shown alone,
 * instead of the report, by `report --<name>`.  A new view is a new file
 * and one line in the table.
 */
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
	/* Source lines beside causes (report_source.c): from the files the
	 * recorded binaries' debug info names, or only from under source_dir
	 * when it is set; none with no_source. */
	const char *source_dir;
	int no_source;
	/* --times: a recording of the plain build, whose section times the
	 * Cache view uses for an exact (scalebpf cc --chip) profile's */
	const char *times_input;
	const struct sb_profile *times;
};

/* What every view is given. */
struct sb_report_ctx {
	const struct sb_profile *p;
	const struct sb_causes *causes;     /* the report's causes; NULL for listings */
	const struct sb_report_opts *o;
	const size_t *order;   /* text: sections in --sort order (NULL without sections) */
};

/* The top-level JSON object of a report, which the views fill member by
 * member. */
struct sb_json {
	FILE *f;
	size_t nmembers;
};

/* Starts a member of the object: the separator, the indent and the key;
 * the view then writes the value. */
void sb_json_member(struct sb_json *j, const char *name);

struct sb_report_view {
	const char *name;      /* its JSON member, and a listing's --<name> */
	/* The full report; any of the three may be NULL. */
	void (*head)(const struct sb_report_ctx *r, FILE *f);  /* lines of the header */
	int (*text)(const struct sb_report_ctx *r, FILE *f);   /* a part of the body */
	int (*json)(const struct sb_report_ctx *r, struct sb_json *j);
	/*
	 * `report --<name>`: the view alone, instead of the report (the first
	 * such option in table order wins).  list_json is NULL when the text
	 * listing is already meant for scripts: it is then given for both
	 * formats.  list_help, required with list_text, is the option's
	 * lines in the usage text.
	 */
	int (*list_text)(const struct sb_report_ctx *r, FILE *f);
	int (*list_json)(const struct sb_report_ctx *r, struct sb_json *j);
	const char *list_help;
	/* The HTML page's panel (report_html.c), titled `title`: 0, 1 when
	 * the profile has nothing of it ("not recorded"), -1 on error. */
	const char *title;
	int (*html)(const struct sb_report_ctx *r, FILE *f);
};

/* The table (report_views.c), in report order. */
extern const struct sb_report_view *const sb_report_views[];
extern const size_t sb_report_nviews;

extern const struct sb_report_view sb_view_meta;       /* report_meta.c */
extern const struct sb_report_view sb_view_addresses;  /* report_addrs.c */
extern const struct sb_report_view sb_view_sections;   /* report_sections.c */
extern const struct sb_report_view sb_view_causes;     /* report_causes.c */
extern const struct sb_report_view sb_view_waits;      /* report_waits.c */
extern const struct sb_report_view sb_view_locks;      /* report_waits.c */
extern const struct sb_report_view sb_view_counts;     /* report_counts.c */
extern const struct sb_report_view sb_view_sharing;    /* report_sharing.c */
extern const struct sb_report_view sb_view_cache;      /* report_cache.c */
extern const struct sb_report_view sb_view_stack;      /* report_stack.c */
/* Of a sharing variable (report_sharing.c): "load", "store" or
 * "load+store", what its reference at loc did in that mode; and its fix. */
struct sb_coherence_var;
const char *sb_report_sharing_access(const struct sb_profile *p, uint32_t mode, int32_t loc);
const char *sb_report_sharing_hint(const struct sb_coherence_var *v);
/* The sharing view's sampled part (report_sharing_sampled.c). */
int sb_report_sharing_sampled_text(const struct sb_report_ctx *r, FILE *f);
/* `report --sharing` (report_sharing_list.c). */
int sb_report_sharing_list_text(const struct sb_report_ctx *r, FILE *f);
int sb_report_sharing_list_json(const struct sb_report_ctx *r, struct sb_json *j);

/* The whole report through every view (report_views.c); 0 or -1. */
int sb_report_text(const struct sb_profile *p, const struct sb_causes *c,
		   const struct sb_report_opts *o, FILE *f);
int sb_report_json(const struct sb_profile *p, const struct sb_causes *c,
		   const struct sb_report_opts *o, FILE *f);
/* The whole report as one HTML page (report_html.c); 0 or -1. */
int sb_report_html(const struct sb_profile *p, const struct sb_causes *c,
		   const struct sb_report_opts *o, FILE *f);
/* HTML pieces: a profile string, text- then HTML-escaped; a horizontal
 * stacked bar of parts (colours var(--NAME), tooltips names) over total;
 * a colour key. */
void sb_html_str(FILE *f, const char *s);
/* Text a view already made safe (sb_text_escape'd): HTML's five only. */
void sb_html_text(FILE *f, const char *s);
/* What fn writes to a FILE, as HTML text (sb_html_text) between before
 * and after; nothing at all when fn writes nothing.  0 or -1. */
int sb_html_capture(FILE *f, void (*fn)(void *ctx, FILE *m), void *ctx, const char *before,
		    const char *after);
void sb_html_bar(FILE *f, const double *parts, const char *const *vars, const char *const *names,
		 size_t n, double total);
void sb_html_key(FILE *f, const char *const *vars, const char *const *names, size_t n);
/* A line chart of y[0..n) (NaN as 0) at evenly spaced x labelled xlabel,
 * from 0 to ymax; what: its title (the tooltip). */
void sb_html_chart(FILE *f, const double *y, const char *const *xlabel, size_t n, double ymax,
		   const char *ytitle, const char *what);
/* Section s's causes, with the source lines around each, as HTML (the
 * sections panel, report_causes.c). */
struct sb_source;
void sb_report_causes_html(const struct sb_report_ctx *r, uint32_t s, struct sb_source *src,
			   FILE *f);
/*
 * `report -i PATH` (report_load.c): the profile at PATH, or, PATH being a
 * directory, its *.sbp in name order merged into one (analysis/merge/);
 * an unreadable one is skipped with a warning on warn and counted
 * (merged_skipped).  0, or -1 with why in err.
 */
int sb_report_load(const char *path, struct sb_profile **out, FILE *warn, char *err,
		   size_t errlen);
/* `report --diff A B` (report_diff.c): B against the baseline A, with
 * their causes (either may be NULL); 0 or -1. */
int sb_report_diff(const char *name_a, const struct sb_profile *a, const struct sb_causes *ca,
		   const char *name_b, const struct sb_profile *b, const struct sb_causes *cb,
		   int json, FILE *f);
/* One view's listing alone, in text or JSON; 0 or -1. */
int sb_report_list(const struct sb_report_view *v, const struct sb_profile *p,
		   const struct sb_report_opts *o, int json, FILE *f);

/* Sections in the order of the --sort key (report_sections.c); NULL
 * without sections or on ENOMEM.  Caller frees. */
size_t *sb_report_sections_sorted(const struct sb_profile *p, const char *sort);

/* "function (file.c:LINE)", or the best there is: "function (bin+0x1a)",
 * "bin+0x1a", "0x401234 (?)". */
void sb_loc_format(const struct sb_profile *p, int32_t loc, char *buf, size_t len);
/* True when locations a and b differ but read the same "function
 * (file.c:LINE)" (the compiler duplicated a call site). */
bool sb_loc_same_line(const struct sb_profile *p, int32_t a, int32_t b);
/* sb_loc_format with the binary offset added, "function (file.c:LINE,
 * bin+0x1a)", to tell apart rows that sb_loc_same_line. */
void sb_loc_format_addr(const struct sb_profile *p, int32_t loc, char *buf, size_t len);
/* A section's location, with the offset when another section reads alike. */
void sb_loc_format_section(const struct sb_profile *p, size_t s, char *buf, size_t len);
/* "file.c:LINE" (basename), or "bin+0xOFF" / "0xADDR" without a line. */
void sb_loc_short(const struct sb_profile *p, int32_t loc, char *buf, size_t len);
/* Human duration: "1.23 s", "45.6 ms", "789 us", "12 ns". */
void sb_fmt_ns(uint64_t ns, char *buf, size_t len);
/* Human size: "1.5 GB", "2 MB", "512 KB". */
void sb_fmt_bytes(uint64_t b, char *buf, size_t len);

/*
 * Text output of strings a profile carries (function and file names,
 * metadata, thread names): a profile may be crafted, so nothing in it
 * reaches the terminal raw.  Control characters (C0, DEL, C1), bytes that
 * are not valid UTF-8 and the Unicode bidirectional overrides are written
 * as escapes (\n, \t, \x1b, \u202e); everything else, UTF-8 names
 * included, is kept.  sb_text_escape writes into buf (always terminated,
 * never cutting an escape or a character in two) and returns buf; NULL
 * reads "?".  sb_text_str prints the same to f.  sb_text_line keeps tabs
 * (source lines).
 */
const char *sb_text_escape(const char *s, char *buf, size_t len);
void sb_text_str(FILE *f, const char *s);
void sb_text_line(FILE *f, const char *s);

/* Source lines around a cause (report_source.c).  One per text report:
 * lines() prints them when a safe source is found; note() says once why
 * some were not shown. */
struct sb_source;
struct sb_source *sb_source_open(const struct sb_profile *p, const struct sb_report_opts *o);
void sb_source_lines(struct sb_source *s, int32_t loc, FILE *f);
void sb_source_note(struct sb_source *s, FILE *f);
void sb_source_close(struct sb_source *s);

/* JSON pieces: a quoted, escaped string; "location": .., "function": ..,
 * "address": .. of a profile location. */
void sb_json_str(FILE *f, const char *s);
void sb_json_loc_fields(FILE *f, const struct sb_profile *p, int32_t loc);

#endif
