// SPDX-License-Identifier: MIT
/*
 * synth_profile OUT INSTANCES THREADS: a profile as a long recording would
 * write, for `make bench` to time the report's exports on: two barrier
 * sections taking turns, INSTANCES instances of THREADS threads each (all
 * stored), a block-sample vector per instance over 8 code blocks, a
 * waits table of 64 call sites.  The trace export writes two slices per
 * thread and instance and one per instance: INSTANCES x (2 THREADS + 1)
 * events.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"

int main(int argc, char **argv)
{
	struct sb_profile *p = sb_profile_alloc();
	unsigned long n, t;
	struct sb_thread_time *tt;
	uint64_t *counts, clock = 1000000;
	char err[256];
	long bin;

	if (argc != 4 || !p || !(n = strtoul(argv[2], NULL, 10)) ||
	    !(t = strtoul(argv[3], NULL, 10)) || t > 4096) {
		fprintf(stderr, "usage: synth_profile OUT INSTANCES THREADS(1-4096)\n");
		return 2;
	}
	tt = calloc(t, sizeof(*tt));
	counts = calloc(t, sizeof(*counts));
	if (!tt || !counts)
		return 1;
	sb_profile_meta_set(p, "executable", "/opt/app/solver");
	sb_profile_meta_set_u64(p, "instances", n);
	bin = sb_profile_add_binary(p, "/opt/app/solver", "0123456789abcdef");
	for (int i = 0; i < 10; i++) {
		struct sb_loc l = { .addr = 0x401000 + 0x40 * (uint64_t)i, .offset = 0x1000 + 0x40 * (uint64_t)i,
				    .binary = (int32_t)bin, .line = 10 + (uint32_t)i,
				    .function = i < 2 ? "phase" : "kernel", .file = "/src/solver.c" };

		sb_profile_add_loc(p, &l);
	}
	for (unsigned long k = 0; k < t; k++) {
		struct sb_thread th = { .tid = 1000 + (uint32_t)k, .comm = "solver",
					.start_ns = clock, .end_ns = clock + n * 1000000 };

		sb_profile_add_thread(p, &th);
		tt[k] = (struct sb_thread_time){ 1000 + (uint32_t)k, 0, 0, 0 };
	}
	for (int s = 0; s < 2; s++) {
		struct sb_section sec = { .kind = SB_SECT_BARRIER, .loc = (uint32_t)s,
					  .ninstances = n / 2 + (s == 0 && n % 2), .nthreads = (uint32_t)t,
					  .per_thread = tt };

		for (unsigned long k = 0; k < t; k++) {
			uint64_t busy = 500000 + 1000 * k;

			tt[k].busy_ns = busy * sec.ninstances;
			tt[k].wait_ns = (900000 - busy) * sec.ninstances;
			tt[k].wall_ns = 900000 * sec.ninstances;
		}
		sb_profile_add_section(p, &sec);
	}
	for (int e = 0; e < 8; e++) {
		struct sb_event_def ev = { .kind = SB_EVK_BLOCK_SAMPLES, .binary = (int32_t)bin,
					   .vaddr = 0x1100 + 0x40 * (uint64_t)e, .loc = 2 + e,
					   .loc2 = -1, .loc_hot = -1 };

		sb_profile_add_event(p, &ev);
	}
	for (unsigned long i = 0; i < n; i++) {
		struct sb_instance in = { .section = (uint32_t)(i % 2), .seq = i / 2,
					  .start_ns = clock, .end_ns = clock + 900000,
					  .nthreads = (uint32_t)t, .per_thread = tt };
		struct sb_vector v = { .instance = (uint32_t)i, .event = (uint32_t)(i % 8),
				       .nthreads = (uint32_t)t, .counts = counts };

		for (unsigned long k = 0; k < t; k++) {
			uint64_t busy = 500000 + 1000 * k;

			tt[k] = (struct sb_thread_time){ 1000 + (uint32_t)k, busy, 900000 - busy, 900000 };
			counts[k] = 5 + k % 3;
		}
		sb_profile_add_instance(p, &in);
		sb_profile_add_vector(p, &v);
		clock += 1000000;
	}
	for (int w = 0; w < 64; w++) {
		struct sb_wait wt = { .prim = (uint32_t)(w % 2 ? SB_PRIM_MUTEX : SB_PRIM_BARRIER),
				      .loc = w % 10, .object = 0x7000 + (uint64_t)w, .count = 100,
				      .wait_ns = 1000000 };

		sb_profile_add_wait(p, &wt);
	}
	if (sb_profile_write(p, argv[1], err, sizeof(err))) {
		fprintf(stderr, "synth_profile: %s\n", err);
		return 1;
	}
	sb_profile_free(p);
	free(tt);
	free(counts);
	return 0;
}
