// SPDX-License-Identifier: MIT
/* A program's runs at several thread counts into STACK rows (stack.h). */
#include "stack.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>

/* The CHiP row of section s in p, or -1. */
static long chip_row_of(const struct sb_profile *p, size_t s)
{
	for (size_t i = 0; i < p->nchip; i++)
		if (p->chip[i].kind == SB_CHIP_KIND_SECTION && p->chip[i].section == s)
			return (long)i;
	return -1;
}

int sb_stack_rows(struct sb_profile *out, const struct sb_profile *const *runs,
		  const unsigned *threads, size_t n, size_t *phases)
{
	const struct sb_profile *one = NULL;

	*phases = 0;
	for (size_t k = 0; k < n; k++)
		if (threads[k] == 1)
			one = runs[k];
	if (!one)
		return -EINVAL;
	for (size_t s = 0; s < out->nsections; s++) {
		struct sb_stack_times base;
		long b = sb_section_match(out, s, one), row;
		bool any = false;

		if (b < 0 || sb_stack_section_times(one, (size_t)b, &base))
			continue;
		row = chip_row_of(one, (size_t)b);
		for (size_t k = 0; k < n; k++) {
			struct sb_stack_times t;
			struct sb_stack_row r = { .section = (uint32_t)s, .threads = threads[k] };
			long m = runs[k] == out ? (long)s : sb_section_match(out, s, runs[k]);
			double slow = 1;
			uint64_t bytes = 0;

			if (m < 0 || sb_stack_section_times(runs[k], (size_t)m, &t))
				continue;
			r.base_ns = base.time_ns;
			r.time_ns = t.time_ns;
			r.nolock_ns = t.nolock_ns;
			r.free_ns = t.free_ns;
			r.imbalance_ns = t.imbalance_ns;
			if (row >= 0 &&
			    !sb_stack_virtual_pirate(one, (size_t)row, threads[k], &slow, &bytes)) {
				r.pirate = SB_STACK_PIRATE_VIRTUAL;
				r.held = 1;
				r.pirate_bytes = bytes;
				r.slowdown_ppm = (uint64_t)llround(slow * 1e6);
			}
			if (sb_profile_stack_append(out, &r))
				return -ENOMEM;
			any = true;
		}
		*phases += any;
	}
	return 0;
}
