/* SPDX-License-Identifier: MIT */
/*
 * LBR and PEBS sample parsing: hardware-path records -> branches and
 * loads.  Pure functions, no libbpf: records of bpf/hwsample.bpf.c
 * (struct sb_rec_lbr, sb_rec_load) and raw perf_event samples (the
 * kernel's PERF_RECORD_SAMPLE layout, turned into the same records so one
 * parser serves both) are checked and unpacked here.  This machine kind has no PMU, so the unit tests feed
 * fixtures built to the ABI through exactly these functions.
 */
#ifndef SB_LBR_PEBS_H
#define SB_LBR_PEBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sbpf_events.h"

/* One LBR entry with its flag bits unpacked (struct perf_branch_entry). */
struct sb_hw_branch {
	uint64_t from, to;
	bool mispred, predicted;
	uint16_t cycles;          /* cycles since the previous branch, 0 unknown */
	uint8_t type;             /* PERF_BR_*, 0 unknown */
};

/* The checked record, or NULL when type, size or nr are wrong. */
const struct sb_rec_lbr *sb_hw_lbr_check(const void *data, size_t size);
void sb_hw_branch_unpack(const struct sb_branch *raw, struct sb_hw_branch *out);

/*
 * The straight-line code run between two recorded branches: from the
 * target of the older branch br[i+1].to to the source of the newer one
 * br[i].from.  0 with [*start, *end] (inclusive instruction addresses),
 * -1 when the pair is inconsistent (end before start, or farther apart
 * than any basic block: an interrupt or a lost entry in between).
 */
#define SB_HW_MAX_RANGE 65536
int sb_hw_lbr_range(const struct sb_rec_lbr *r, uint32_t i, uint64_t *start, uint64_t *end);

/* Where a sampled load was served from (perf_mem_data_src). */
enum sb_mem_level {
	SB_MEM_UNKNOWN = 0,
	SB_MEM_L1,
	SB_MEM_LFB,               /* line fill buffer: a miss already in flight */
	SB_MEM_L2,
	SB_MEM_L3,
	SB_MEM_L4,
	SB_MEM_DRAM,              /* local memory */
	SB_MEM_REMOTE_DRAM,
	SB_MEM_REMOTE_CACHE,      /* another socket's cache */
	SB_MEM_PMEM,
	SB_MEM_CXL,
	SB_MEM_IO,
	SB_MEM_UNCACHED,
	SB_MEM_LVL_MAX
};
const char *sb_mem_level_name(unsigned level);

struct sb_mem_src {
	bool load, store;
	uint8_t level;            /* enum sb_mem_level */
	bool hit, miss;           /* at that level */
	bool remote;
	bool snoop_hit, snoop_hitm; /* hitm: a modified line in another core */
	bool tlb_hit, tlb_miss;
	bool locked;
};
void sb_hw_data_src(uint64_t raw, struct sb_mem_src *out);

struct sb_hw_load {
	uint32_t tid;
	uint64_t ts;
	uint64_t ip;
	uint64_t addr;            /* 0 unless flags & SB_LOAD_HAVE_ADDR */
	uint64_t weight;          /* latency, 0 unless SB_LOAD_HAVE_WEIGHT */
	uint32_t flags;           /* enum sb_load_flags */
	bool store;               /* a store sample (SB_LOAD_STORE or its data source) */
	struct sb_mem_src src;    /* level SB_MEM_UNKNOWN unless SB_LOAD_HAVE_SRC */
};
/* 0, or -1 when the record is not a well-formed SB_REC_LOAD. */
int sb_hw_load_decode(const void *data, size_t size, struct sb_hw_load *out);

/* Where a load came from, for reuse probes (analysis/chip/chip_reuse.h):
 * 1 the core's private caches served it (L1, a fill buffer, L2: its line
 * came back within the L2's capacity), 0 a level beyond them, -1 not
 * known (no data source, or a store). */
int sb_hw_load_private(const struct sb_hw_load *l);

/* A PEBS load or store as a sampled access for sharing
 * (analysis/coherence/).  A load whose data source says HITM (the line
 * was modified in another core) or another socket's cache makes its line
 * a candidate; a precise store names a writer, its thread and bytes.
 * Evidence only, not time (the cost is in cpu-clock samples).  false when
 * the sample has no data address. */
struct sb_cosample_access;
bool sb_hw_load_access(const struct sb_hw_load *l, struct sb_cosample_access *a);

/*
 * A raw PERF_RECORD_SAMPLE (header included) of an event opened with
 * sample_type a subset of IP|TID|TIME|ADDR|CPU|PERIOD|BRANCH_STACK|
 * WEIGHT|WEIGHT_STRUCT|DATA_SRC (and branch_sample_type, for HW_INDEX),
 * turned into the records the BPF programs emit: an LBR record when it
 * has a branch stack, else a load record.  Returns SB_REC_LBR or
 * SB_REC_LOAD, -EINVAL for unsupported sample_type bits, -1 for a
 * truncated or inconsistent sample.
 */
int sb_hw_perf_sample_to_rec(const void *rec, size_t size, uint64_t sample_type,
			     uint64_t branch_sample_type, struct sb_rec_lbr *lbr,
			     struct sb_rec_load *load);

#endif
