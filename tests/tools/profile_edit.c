// SPDX-License-Identifier: MIT
/*
 * profile_edit IN OUT EDIT...: a crafted profile from a recorded one, for
 * the tests of what `scalebpf report` reads and prints when a profile
 * lies (tests/integration/report_input.sh).  The profile is read and
 * written through the analysis library, so the result is well formed
 * (valid CRCs): only its strings say what an attacker chose.  Edits:
 *   file=PATH      every location that has a source file names PATH
 *   func=NAME      every location that has a function is named NAME
 *   comm=NAME      every thread's name
 *   binary=PATH    every binary's path
 *   meta:KEY=VAL   metadata KEY set to VAL (added when absent)
 * Values are taken byte for byte (control characters included).
 * Built by the test itself against build/analysis/ objects.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"

static void set(char **dst, const char *v)
{
	char *s = strdup(v);

	if (!s) {
		perror("profile_edit");
		exit(1);
	}
	free(*dst);
	*dst = s;
}

static int edit(struct sb_profile *p, const char *e)
{
	const char *v = strchr(e, '=');

	if (!v)
		return -1;
	v++;
	if (!strncmp(e, "file=", 5)) {
		for (size_t i = 0; i < p->nlocs; i++)
			if (p->locs[i].file)
				set(&p->locs[i].file, v);
	} else if (!strncmp(e, "line+=", 6)) {
		/* Shift every known line: the file stays the one DWARF names. */
		for (size_t i = 0; i < p->nlocs; i++)
			if (p->locs[i].line)
				p->locs[i].line += (uint32_t)atoi(v);
	} else if (!strncmp(e, "func=", 5)) {
		for (size_t i = 0; i < p->nlocs; i++)
			if (p->locs[i].function)
				set(&p->locs[i].function, v);
	} else if (!strncmp(e, "comm=", 5)) {
		for (size_t i = 0; i < p->nthreads; i++)
			set(&p->threads[i].comm, v);
	} else if (!strncmp(e, "binary=", 7)) {
		for (size_t i = 0; i < p->nbinaries; i++)
			set(&p->binaries[i].path, v);
	} else if (!strncmp(e, "meta:", 5)) {
		size_t klen = (size_t)(v - 1 - (e + 5));
		size_t i;

		for (i = 0; i < p->nmeta; i++)
			if (strlen(p->meta[i].key) == klen && !memcmp(p->meta[i].key, e + 5, klen))
				break;
		if (i < p->nmeta) {
			set(&p->meta[i].value, v);
		} else {
			char *k = strndup(e + 5, klen);

			if (!k || sb_profile_meta_set(p, k, v) < 0) {
				free(k);
				return -1;
			}
			free(k);
		}
	} else {
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct sb_profile *p;
	char err[512];

	if (argc < 3) {
		fprintf(stderr, "usage: profile_edit IN OUT [file=|line+=|func=|comm=|binary=|"
			"meta:KEY=]VALUE...\n");
		return 2;
	}
	if (sb_profile_read(argv[1], &p, err, sizeof(err))) {
		fprintf(stderr, "profile_edit: %s\n", err);
		return 1;
	}
	for (int i = 3; i < argc; i++)
		if (edit(p, argv[i])) {
			fprintf(stderr, "profile_edit: bad edit '%s'\n", argv[i]);
			sb_profile_free(p);
			return 2;
		}
	if (sb_profile_write(p, argv[2], err, sizeof(err))) {
		fprintf(stderr, "profile_edit: %s\n", err);
		sb_profile_free(p);
		return 1;
	}
	sb_profile_free(p);
	return 0;
}
