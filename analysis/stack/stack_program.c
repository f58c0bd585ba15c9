// SPDX-License-Identifier: MIT
/* The program's serial part and Amdahl's limit (stack.h). */
#include "stack.h"

#include <errno.h>
#include <stdlib.h>

struct span {
	uint64_t start, end;
};

static int by_start(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

int sb_stack_program(const struct sb_profile *p, uint64_t *total_ns, uint64_t *parallel_ns)
{
	uint64_t first = UINT64_MAX, last = 0, in = 0, extra = 0, reach = 0;
	struct span *s;
	size_t n = 0;

	for (size_t i = 0; i < p->nthreads; i++) {
		if (p->threads[i].start_ns < first)
			first = p->threads[i].start_ns;
		if (p->threads[i].end_ns > last)
			last = p->threads[i].end_ns;
	}
	if (!p->nthreads || last <= first)
		return -EINVAL;
	if (!(s = malloc((p->ninstances + 1) * sizeof(*s))))
		return -ENOMEM;
	for (size_t i = 0; i < p->ninstances; i++)
		if (p->instances[i].end_ns > p->instances[i].start_ns)
			s[n++] = (struct span){ p->instances[i].start_ns, p->instances[i].end_ns };
	/* the union: nested sections (a barrier's inside its fork-join)
	 * counted once */
	qsort(s, n, sizeof(*s), by_start);
	for (size_t i = 0; i < n; i++) {
		uint64_t a = s[i].start > reach ? s[i].start : reach;

		if (s[i].end > a)
			in += s[i].end - a;
		if (s[i].end > reach)
			reach = s[i].end;
	}
	free(s);
	/* instances beyond the stored ones: their section's mean span each
	 * (a nested one's may then count twice: the stored-instance limit is
	 * large, a section past it rare) */
	for (size_t k = 0; k < p->nsections; k++) {
		uint64_t stored = 0, span = 0;

		for (size_t i = 0; i < p->ninstances; i++)
			if (p->instances[i].section == k) {
				stored++;
				if (p->instances[i].end_ns > p->instances[i].start_ns)
					span += p->instances[i].end_ns - p->instances[i].start_ns;
			}
		if (stored && p->sections[k].ninstances > stored)
			extra += (uint64_t)((double)span / (double)stored *
					    (double)(p->sections[k].ninstances - stored));
	}
	*total_ns = last - first;
	*parallel_ns = in + extra < *total_ns ? in + extra : *total_ns;
	return 0;
}

double sb_stack_amdahl(double serial, unsigned threads)
{
	if (!threads || serial < 0 || serial > 1)
		return 0;
	return 1 / (serial + (1 - serial) / threads);
}
