/* SPDX-License-Identifier: MIT */
/* sb_builder_emit's two phases for builder tests: one profile location
 * per address, events from a function of the key. */
#ifndef SB_LOC_TEST_H
#define SB_LOC_TEST_H

#include "profile/profile.h"
#include "sections/sections.h"

static long test_loc_of(void *ctx, uint64_t addr)
{
	struct sb_profile *p = ctx;
	struct sb_loc l = { .addr = addr, .binary = -1 };

	for (size_t i = 0; i < p->nlocs; i++)
		if (p->locs[i].addr == addr)
			return (long)i;
	return sb_profile_add_loc(p, &l);
}

/* event_of: a key's event, -1 to drop it; NULL: no vectors.  0 or
 * SB_ERR_NOMEM, as sb_builder_emit. */
static int test_emit(struct sb_builder *b, struct sb_profile *p, long (*event_of)(uint64_t key))
{
	struct sb_sect_table t;
	int ret = sb_builder_keys(b, &t);

	/* The order the table documents: sections' sites, keys, waits' sites. */
	for (size_t i = 0; !ret && i < t.nsection_sites; i++)
		t.locs[i] = (int32_t)test_loc_of(p, t.sites[i]);
	for (size_t i = 0; !ret && event_of && i < t.nkeys; i++)
		t.keys[i].event = (int32_t)event_of(t.keys[i].key);
	for (size_t i = t.nsection_sites; !ret && i < t.nsites; i++)
		t.locs[i] = (int32_t)test_loc_of(p, t.sites[i]);
	if (!ret)
		ret = sb_builder_emit(b, p, &t);
	sb_sect_table_free(&t);
	return ret;
}

#endif
