/* SPDX-License-Identifier: MIT */
/*
 * Counter keys: the obj of the section builder's SB_EV_COUNT events.  A
 * plain key is a sampled IP (user space, < 2^47); the bits below tag the
 * other namespaces.  Here because two layers make keys and neither may
 * include the other's headers: user/record (call sites, exact counts)
 * and user/hw (LBR edges, PEBS loads).  At the end of a recording every
 * key goes to its profile event by these bits (user/record/record_write.c:
 * edges and loads to sb_hwagg_event, the rest to sb_eventmap_block).  Userspace only: BPF never sees a key.
 */
#ifndef SBPF_KEYS_H
#define SBPF_KEYS_H

/* A call site on a sample's call chain, rather than the sampled
 * instruction: counted "inclusively" in the caller's block, and never
 * moved over skid. */
#define SB_KEY_CALLSITE (1ull << 63)

/* Hardware path (user/hw/hwagg.c): an edge key carries the index of
 * (from, to) in the aggregator's edge table, a load key the load's IP. */
#define SB_KEY_EDGE (1ull << 62)
#define SB_KEY_LOAD (1ull << 61)
#define SB_KEY_HW_MASK (SB_KEY_EDGE | SB_KEY_LOAD)

/* An exact block count of a `scalebpf cc` program: the return address of
 * the block's coverage callback. */
#define SB_KEY_EXACT (1ull << 60)

/* A section total, not a per-thread vector entry: summed over every
 * instance of the section (stored or not) and kept out of LIME's vectors.
 * SB_KEY_TOTAL | i, i < SB_KEY_TOTALS: CHiP's counters of `scalebpf cc
 * --chip` code (i < 17: hits at depth i + 1, then misses; 17: every
 * reference). */
#define SB_KEY_TOTAL (1ull << 59)
#define SB_KEY_TOTALS 18
#define SB_KEY_CHIP_ACCESSES 17

#endif
