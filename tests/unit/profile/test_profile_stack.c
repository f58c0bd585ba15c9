// SPDX-License-Identifier: MIT
/*
 * test_profile_stack: the STACK chunk (profile_stack.c) round trip with
 * every field at an edge value; rows with a section out of range, no
 * threads or an unknown pirate kind refused on write; a profile without
 * the chunk reads as no rows.
 */
#include "profile_builder.h"

static void round_trip(void)
{
	struct sb_profile *p = make_full(), *q = NULL;
	char path[256], err[256] = "";
	struct sb_stack_row r = { .section = 0, .threads = UINT32_MAX, .pirate = 2, .held = 1,
				  .base_ns = UINT64_MAX, .time_ns = 1, .nolock_ns = UINT64_MAX - 1,
				  .free_ns = 7, .imbalance_ns = 0, .pirate_bytes = UINT64_MAX,
				  .slowdown_ppm = 1000000 };

	CHECK(sb_profile_stack_append(p, &r) == 0, "append");
	r.section = (uint32_t)p->nsections - 1;
	r.threads = 1;
	r.pirate = 0;
	r.held = 0;
	CHECK(sb_profile_stack_append(p, &r) == 0, "append");
	tpath(path, sizeof(path), "stack.sbp");
	CHECK(sb_profile_write(p, path, err, sizeof(err)) == SB_OK, "write: %s", err);
	CHECK(sb_profile_read(path, &q, err, sizeof(err)) == SB_OK && q, "read: %s", err);
	if (q) {
		check_same(p, q);
		CHECK(q->nstack == 2 && !memcmp(q->stack, p->stack, 2 * sizeof(*q->stack)),
		      "rows equal (%zu)", q->nstack);
		sb_profile_free(q);
	}
	p->stack[1].section = (uint32_t)p->nsections;
	CHECK(sb_profile_write(p, path, err, sizeof(err)) != SB_OK && strstr(err, "stack row 1"),
	      "section out of range: %s", err);
	p->stack[1].section = 0;
	p->stack[1].threads = 0;
	CHECK(sb_profile_write(p, path, err, sizeof(err)) != SB_OK, "no threads: %s", err);
	p->stack[1].threads = 2;
	p->stack[1].pirate = 3;
	CHECK(sb_profile_write(p, path, err, sizeof(err)) != SB_OK && strstr(err, "pirate"),
	      "unknown pirate: %s", err);
	free(p->stack);
	p->stack = NULL;
	p->nstack = 0;
	CHECK(sb_profile_write(p, path, err, sizeof(err)) == SB_OK, "write without: %s", err);
	CHECK(sb_profile_read(path, &q, err, sizeof(err)) == SB_OK && q && !q->nstack,
	      "no rows: %s", err);
	sb_profile_free(q);
	unlink(path);
	sb_profile_free(p);
}

int main(void)
{
	round_trip();
	return CHECK_DONE("test_profile_stack");
}
