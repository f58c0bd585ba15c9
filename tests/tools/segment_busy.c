// SPDX-License-Identifier: MIT
/*
 * segment_busy PROFILE FILE:LINE: one line per stored instance of the
 * section closed at FILE:LINE (its closing sync's location, as the report
 * names it) and thread in it: "SEQ THREAD_NAME BUSY_NS".  The report only
 * shows sums; the tests of on-CPU time (tests/integration/oncpu.sh) need
 * each thread's segments, which a lost or unseen context switch cuts short
 * while sums barely move.  Built by the test itself against build/analysis/
 * objects.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"

static const char *base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static const char *thread_name(const struct sb_profile *p, uint32_t tid)
{
	for (size_t i = 0; i < p->nthreads; i++)
		if (p->threads[i].tid == tid && p->threads[i].comm)
			return p->threads[i].comm;
	return "?";
}

static int section_at(const struct sb_profile *p, const char *where)
{
	char buf[4096];

	for (size_t s = 0; s < p->nsections; s++) {
		const struct sb_loc *l = &p->locs[p->sections[s].loc];

		if (!l->file)
			continue;
		snprintf(buf, sizeof(buf), "%s:%u", base(l->file), l->line);
		if (!strcmp(buf, where))
			return (int)s;
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct sb_profile *p;
	char err[256];
	int s;

	if (argc != 3) {
		fprintf(stderr, "usage: segment_busy PROFILE FILE:LINE\n");
		return 2;
	}
	if (sb_profile_read(argv[1], &p, err, sizeof(err))) {
		fprintf(stderr, "segment_busy: %s: %s\n", argv[1], err);
		return 1;
	}
	s = section_at(p, argv[2]);
	if (s < 0) {
		fprintf(stderr, "segment_busy: no section closed at %s\n", argv[2]);
		sb_profile_free(p);
		return 1;
	}
	for (size_t i = 0; i < p->ninstances; i++) {
		const struct sb_instance *in = &p->instances[i];

		if (in->section != (uint32_t)s)
			continue;
		for (uint32_t t = 0; t < in->nthreads; t++)
			printf("%llu %s %llu\n", (unsigned long long)in->seq,
			       thread_name(p, in->per_thread[t].tid),
			       (unsigned long long)in->per_thread[t].busy_ns);
	}
	sb_profile_free(p);
	return 0;
}
