/* SPDX-License-Identifier: MIT */
/* An sb_loc_fn for builder tests: one profile location per address. */
#ifndef SB_LOC_TEST_H
#define SB_LOC_TEST_H

#include "profile/profile.h"

static long test_loc_of(void *ctx, uint64_t addr)
{
	struct sb_profile *p = ctx;
	struct sb_loc l = { .addr = addr, .binary = -1 };

	for (size_t i = 0; i < p->nlocs; i++)
		if (p->locs[i].addr == addr)
			return (long)i;
	return sb_profile_add_loc(p, &l);
}

#endif
