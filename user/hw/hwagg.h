/* SPDX-License-Identifier: MIT */
/*
 * Hardware-path aggregation: sampled counts per taken-branch edge (LBR)
 * and sampled loads per IP with their latency and data source (PEBS),
 * fed from parsed records (lbr_pebs.h).  Edges and loads also reach the
 * section builder as SB_EV_COUNT events, so they get per-thread vectors
 * per section instance like block samples; their counter keys live in
 * namespaces of their own (below), and at the end sb_hwagg_event turns a
 * key into a profile event (SB_EVK_EDGE, SB_EVK_HW).  No libbpf here.
 */
#ifndef SB_HWAGG_H
#define SB_HWAGG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "binary/symbolize.h"
#include "lbr_pebs.h"
#include "sbpf_keys.h"
#include "sections/sections.h"

struct sb_maps;
struct sb_profile;

/* An edge or load key (SB_KEY_EDGE, SB_KEY_LOAD: sbpf_keys.h). */
static inline bool sb_hwagg_is_key(uint64_t key)
{
	return (key & SB_KEY_HW_MASK) && !(key >> 63);
}

struct sb_hw_edge {
	uint64_t from, to;        /* runtime addresses: branch and its target */
	uint64_t count;           /* times sampled */
	uint64_t mispred;
	uint64_t cycles_sum, cycles_n;  /* LBR cycle counts, when the CPU has them */
};

struct sb_hw_loadip {
	uint64_t ip;
	uint64_t samples;
	uint64_t weighted;        /* samples that had a latency */
	uint64_t weight_sum, weight_max;
	uint64_t levels[SB_MEM_LVL_MAX];
};

struct sb_hwagg_stats {
	uint64_t lbr_records, branches, branches_kernel;
	uint64_t ranges, ranges_bad;      /* fall-through ranges between branches */
	uint64_t loads, loads_weighted;
	uint64_t stores;                  /* PEBS store samples: sharing's, not
					   * LIME's (record_watch.c) */
	uint64_t bad_records;             /* malformed: type, size, counts */
	uint64_t edges, load_ips;         /* distinct */
	uint64_t edges_cross_binary;      /* not mapped to a profile event; once
					   * per stored instance that sampled it */
	uint64_t nomem;
};

struct sb_hwagg;

struct sb_hwagg *sb_hwagg_alloc(void);
void sb_hwagg_free(struct sb_hwagg *a);

/* A record of type SB_REC_LBR or SB_REC_LOAD: checked, aggregated and,
 * when b is not NULL, added to it as count events of the sampled thread.
 * 0, or -1 for a malformed record (counted in bad_records). */
int sb_hwagg_record(struct sb_hwagg *a, struct sb_builder *b, const void *data, size_t size);

/* The key of edge (from, to), created on first use; 0 on ENOMEM. */
uint64_t sb_hwagg_edge_key(struct sb_hwagg *a, uint64_t from, uint64_t to);
/* The edge a key names, or NULL. */
const struct sb_hw_edge *sb_hwagg_edge(const struct sb_hwagg *a, uint64_t key);
/* Aggregated loads at ip, or NULL. */
const struct sb_hw_loadip *sb_hwagg_load(const struct sb_hwagg *a, uint64_t ip);

void sb_hwagg_get_stats(const struct sb_hwagg *a, struct sb_hwagg_stats *st);

/* "IP: N samples, mean L cycles, LEVEL P%; ..." for the n most sampled
 * load IPs, most sampled first. */
void sb_hwagg_loads_summary(const struct sb_hwagg *a, size_t n, char *buf, size_t len);

/*
 * The profile event of an edge or load key (sb_hwagg_is_key), created
 * on first use: an edge is SB_EVK_EDGE with vaddr = the branch, vaddr2 =
 * its target (the last instruction of the source block and the start of
 * the destination block, as binary addresses); a load is SB_EVK_HW at
 * its instruction.  -1 when the addresses are in no mapped binary or an
 * edge crosses binaries (a call into a library).  loc_of names a runtime
 * address as a profile location (sb_symbolizer_loc); instances: the
 * stored section instances that counted the key (sb_sect_key), how much
 * a cross-binary edge adds to edges_cross_binary.
 */
long sb_hwagg_event(struct sb_hwagg *a, struct sb_maps *maps, struct sb_profile *p,
		    sb_loc_fn loc_of, void *loc_ctx, uint64_t key,
		    uint32_t instances);

#endif
