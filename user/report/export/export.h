/* SPDX-License-Identifier: MIT */
/*
 * `scalebpf report --format NAME -o FILE`: a profile exported for other
 * tools, one file per format, each reading only the profile (no root, no
 * BPF):
 *   pprof     gzipped profile.proto (go tool pprof, Pyroscope, Parca)
 *   perfetto  Chrome trace-event JSON (ui.perfetto.dev, chrome://tracing)
 * A writer writes to f and says what went wrong in err; the caller owns
 * the file (written whole to a temporary, renamed over FILE).
 */
#ifndef SB_EXPORT_H
#define SB_EXPORT_H

#include <stddef.h>
#include <stdio.h>

#include "profile/profile.h"

struct sb_export_format {
	const char *name;
	const char *what;      /* one line of --help */
	int binary;            /* never to a terminal */
	/* 0, or -errno with err */
	int (*write)(const struct sb_profile *p, FILE *f, char *err, size_t len);
};

extern const struct sb_export_format sb_export_pprof;
extern const struct sb_export_format sb_export_perfetto;

/* The format called name, or NULL. */
const struct sb_export_format *sb_export_find(const char *name);
/* Every format, NULL-terminated (the --help list). */
extern const struct sb_export_format *const sb_export_formats[];

#endif
