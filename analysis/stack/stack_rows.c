// SPDX-License-Identifier: MIT
/* A program's runs at several thread counts into STACK rows (stack.h). */
#include "stack.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

/* The CHiP row of section s in p, or -1. */
static long chip_row_of(const struct sb_profile *p, size_t s)
{
	for (size_t i = 0; i < p->nchip; i++)
		if (p->chip[i].kind == SB_CHIP_KIND_SECTION && p->chip[i].section == s)
			return (long)i;
	return -1;
}

/* The framework's time at section s's closing site, if it kept one: 1. */
static int site_time(const struct sb_profile *out, size_t s, const struct sb_stack_real *x,
		     uint64_t *busy)
{
	const struct sb_section *sec = &out->sections[s];
	const struct sb_loc *l = sec->loc < out->nlocs ? &out->locs[sec->loc] : NULL;
	const char *bin;

	if (!l || l->binary < 0 || (size_t)l->binary >= out->nbinaries ||
	    !(bin = out->binaries[l->binary].path))
		return 0;
	for (size_t i = 0; i < x->nsites; i++)
		if (x->sites[i].vaddr == l->offset && x->sites[i].busy_ns &&
		    !strcmp(sb_base_name(x->sites[i].binary), sb_base_name(bin))) {
			*busy = x->sites[i].busy_ns;
			return 1;
		}
	return 0;
}

/* Row r's pirate from the framework run x, if it has the phase: 1 when
 * set (held or discarded), 0 when the phase is not in it. */
static int real_pirate(const struct sb_profile *out, size_t s, const struct sb_stack_real *x,
		       struct sb_stack_row *r)
{
	long m;
	uint64_t busy;
	double slow;

	/* a share below a millisecond is thread start-up and timer noise:
	 * the ratio would say nothing about the cache */
	if (r->base_ns / r->threads < SB_STACK_REAL_MIN_NS)
		return 0;
	if (site_time(out, s, x, &busy))
		slow = (double)busy / ((double)r->base_ns / r->threads);
	else if ((m = sb_section_match(out, s, x->run)) < 0 ||
		 sb_stack_real_pirate(x->run, (size_t)m, x->tids, x->ntids, r->threads,
				      r->base_ns, &slow))
		return 0;
	r->pirate = SB_STACK_PIRATE_REAL;
	r->pirate_bytes = x->bytes;
	r->held = x->held ? 1 : 0;
	/* not held: the profiled thread had more cache than its share */
	r->slowdown_ppm = x->held ? (uint64_t)llround(slow * 1e6) : 0;
	return 1;
}

int sb_stack_rows(struct sb_profile *out, const struct sb_profile *const *runs,
		  const unsigned *threads, size_t n, const struct sb_stack_real *real,
		  size_t *phases)
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
			/* a framework run's real pirate first, else the virtual */
			if (!(threads[k] > 1 && real && real[k].run &&
			      real_pirate(out, s, &real[k], &r)) &&
			    row >= 0 &&
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
