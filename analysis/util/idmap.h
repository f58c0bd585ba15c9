/* SPDX-License-Identifier: MIT */
/* A hash map from a pair of u64 keys to a pointer (open addressing). */
#ifndef SB_IDMAP_H
#define SB_IDMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sb_idmap;

struct sb_idmap *sb_idmap_alloc(void);
void sb_idmap_free(struct sb_idmap *m);
/* Frees every non-NULL value with free_value, then the map; a NULL map
 * is a no-op. */
void sb_idmap_free_with(struct sb_idmap *m, void (*free_value)(void *));
/* The value slot of (k1, k2).  With create, a missing key gets a NULL
 * slot; without, NULL is returned for it.  NULL also on ENOMEM. */
void **sb_idmap_slot(struct sb_idmap *m, uint64_t k1, uint64_t k2, bool create);
/* Removes the key; returns its value or NULL. */
void *sb_idmap_remove(struct sb_idmap *m, uint64_t k1, uint64_t k2);
size_t sb_idmap_count(const struct sb_idmap *m);
/* Iteration: *it starts at 0; returns false when done. */
bool sb_idmap_next(const struct sb_idmap *m, size_t *it, uint64_t *k1,
		   uint64_t *k2, void **val);

#endif
