/* SPDX-License-Identifier: MIT */
/*
 * Counter keys -> profile events at the end of a recording: a sampled IP
 * becomes "samples in CFG block B of binary X" (the block's location
 * symbolized), and the CFG of every binary that has events goes into the
 * profile, so LIME needs no binary at report time.
 */
#ifndef SB_EVENTMAP_H
#define SB_EVENTMAP_H

#include <stddef.h>
#include <stdint.h>

struct sb_maps;
struct sb_profile;
struct sb_symbolizer;
struct sb_eventmap;

struct sb_eventmap *sb_eventmap_alloc(struct sb_maps *maps, struct sb_symbolizer *sym,
				      struct sb_profile *p);
void sb_eventmap_free(struct sb_eventmap *em);

/*
 * Optional, once, before sb_eventmap_block: decodes the instructions of
 * the n keys that will be asked for (skid correction, call sites in a
 * runtime) and loads their binaries' CFGs, in address order so that each
 * binary is done in one stretch.  Nothing enters the profile here: its
 * events and locations follow the order of the sb_eventmap_block calls.
 * 0, -ENOMEM, or -EINVAL when called again.
 */
int sb_eventmap_prepare(struct sb_eventmap *em, const uint64_t *keys, size_t n);

/* The event of a sampled IP, or -1 (no mapping, no CFG, not inside any
 * block: counted as unmapped), created on its first call; weight (its
 * samples, summed over the calls) elects each block's hottest
 * instruction.  Keys tagged SB_KEY_EXACT are exact counts of the block
 * holding the coverage callback's call: SB_EVK_BLOCK_COUNT events.  A key
 * that sb_eventmap_prepare was not given is decoded here, on its own. */
long sb_eventmap_block(struct sb_eventmap *em, uint64_t ip, uint64_t weight);

/* Names each block event's hottest instruction and adds the CFGs of the
 * binaries that have events.  0 or -ENOMEM. */
int sb_eventmap_finish(struct sb_eventmap *em);

struct sb_eventmap_stats {
	uint64_t keys, unmapped, binaries, cfg_cache_hits;
	/* samples (weights) by what their instruction is: a memory access
	 * whose address the sampled registers give, none, or an access that
	 * cannot be decoded (it overwrote its own address register...) */
	uint64_t samples_access, samples_none, samples_undecodable;
	uint64_t samples_skid;   /* moved back to the access that stalled */
	/* exact mode: blocks with exact counts, and those not in any CFG */
	uint64_t exact_keys, exact_unmapped;
	uint64_t exact_runtime;  /* sampled keys in the exact-mode runtime: left out */
};
void sb_eventmap_get_stats(const struct sb_eventmap *em, struct sb_eventmap_stats *st);

#endif
