/* SPDX-License-Identifier: MIT */
/*
 * Per-thread event vectors: sparse counters a thread accumulates during
 * one segment (keyed by a sampled IP, an edge id...), and the dense
 * keys x threads matrix they become when its section instance ends.
 */
#ifndef SB_VECTORS_H
#define SB_VECTORS_H

#include <stddef.h>
#include <stdint.h>

struct sb_counts;

struct sb_counts *sb_counts_alloc(void);
void sb_counts_free(struct sb_counts *c);
/* 0, or -1 on ENOMEM. */
int sb_counts_add(struct sb_counts *c, uint64_t key, uint64_t n);
size_t sb_counts_size(const struct sb_counts *c);
/* key's count, 0 when absent (or c NULL). */
uint64_t sb_counts_get(const struct sb_counts *c, uint64_t key);

struct sb_vecset {
	uint32_t nkeys, nthreads;
	uint64_t *keys;      /* ascending */
	uint64_t *counts;    /* nkeys x nthreads, row per key */
};

/* The union of the threads' keys, each thread a column; a NULL counter
 * is a thread that counted nothing.  Section totals (SB_KEY_TOTAL keys,
 * include/sbpf_keys.h) are not vector entries and are left out.  0, or
 * -1 on ENOMEM. */
int sb_vecset_build(struct sb_counts *const *per_thread, uint32_t nthreads,
		    struct sb_vecset *out);
void sb_vecset_free(struct sb_vecset *v);

#endif
