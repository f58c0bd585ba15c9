// SPDX-License-Identifier: MIT
/*
 * Writes the seed corpus of fuzz_profile into the directory given: small
 * profiles made by the profile module's own writer, one per path through
 * the report, so that mutations start from files that go deep (every
 * chunk type, CFGs that deserialize, vectors LIME can analyse in each of
 * its three modes).  Generated at build time: no binary is committed.
 *
 *   empty.sbp    no records at all
 *   full.sbp     the unit tests' reference profile (edge values in every
 *                field, waits of every kind) plus sampled addresses and a
 *                cache hit profile with calibrated machine keys (the Cache
 *                view's model)
 *   samples.sbp  block samples (cpu-clock) over one CFG: causes undetermined
 *   lbr.sbp      LBR edges and a PEBS load: branch/loop/hardware causes
 *   exact.sbp    exact block counts (scalebpf cc): flow-derived edges
 */
#include "profile_builder.h"

#include "addrs/addrs.h"
#include "cfg/cfg.h"
#include "cfg/cfg_io.h"

#define NT 4

static const char *outdir;

static void save(const struct sb_profile *p, const char *name)
{
	char path[4096], err[256];

	snprintf(path, sizeof(path), "%s/%s", outdir, name);
	if (sb_profile_write(p, path, err, sizeof(err)) != SB_OK) {
		fprintf(stderr, "fuzz_seeds: %s\n", err);
		exit(1);
	}
}

/* B0 entry -> B1 if -> B2 loop body (back edge to itself) -> B3 exit */
static void add_cfg(struct sb_profile *p)
{
	struct sb_cfg *g = sb_cfg_alloc();
	unsigned char *blob;
	size_t len;

	sb_cfg_add_func(g, "worker", 0x1000, 0x1040);
	sb_cfg_add_block(g, 0, 0x1000, 0x1010, 0x100c);
	sb_cfg_add_block(g, 0, 0x1010, 0x1020, 0x101c);
	sb_cfg_add_block(g, 0, 0x1020, 0x1030, 0x102c);
	sb_cfg_add_block(g, 0, 0x1030, 0x1040, 0x103c);
	sb_cfg_add_edge(g, 0, 1, SB_EDGE_SEQUENTIAL);
	sb_cfg_add_edge(g, 1, 2, SB_EDGE_FALLTHROUGH);
	sb_cfg_add_edge(g, 1, 3, SB_EDGE_TAKEN);
	sb_cfg_add_edge(g, 2, 2, SB_EDGE_TAKEN);
	sb_cfg_add_edge(g, 2, 3, SB_EDGE_FALLTHROUGH);
	/* the current format (version 3: per-block flags): the fuzzer starts
	 * from what the recorder writes; B2's latch has a constant bound */
	g->has_flags = true;
	g->blocks[2].flags = SB_BLOCK_CONST_BOUND;
	if (sb_cfg_finalize(g) || sb_cfg_serialize(g, &blob, &len)) {
		fprintf(stderr, "fuzz_seeds: cannot build the CFG\n");
		exit(1);
	}
	sb_profile_add_cfg(p, 0, blob, len);
	free(blob);
	sb_cfg_free(g);
}

static int32_t add_loc(struct sb_profile *p, uint64_t addr, unsigned line)
{
	struct sb_loc l = { .addr = 0x555500000000 + addr, .offset = addr, .binary = 0,
			    .line = line, .function = "worker", .file = "src/w.c" };

	return (int32_t)sb_profile_add_loc(p, &l);
}

static void add_event(struct sb_profile *p, uint32_t kind, uint64_t a, uint64_t b)
{
	struct sb_event_def d = { .kind = kind, .binary = 0, .vaddr = a, .vaddr2 = b,
				  .loc2 = -1, .hot = 0, .loc_hot = -1 };

	d.loc = add_loc(p, a, 10 + (unsigned)(a & 0xff) / 4);
	if (b)
		d.loc2 = add_loc(p, b, 10 + (unsigned)(b & 0xff) / 4);
	if (kind == SB_EVK_BLOCK_SAMPLES) {
		d.hot = a + 4;
		d.loc_hot = add_loc(p, d.hot, 11);
	}
	sb_profile_add_event(p, &d);
}

/* One barrier section of NT threads, `ninst` instances; thread t does
 * t+1 times the loop's work, and every event's count follows that. */
static struct sb_profile *lime_profile(uint32_t kind_mask, int ninst)
{
	struct sb_profile *p = sb_profile_alloc();
	struct sb_thread_time pt[NT];
	struct sb_section sec = { .kind = SB_SECT_BARRIER, .nthreads = NT, .per_thread = pt };
	uint64_t counts[NT];

	sb_profile_meta_set(p, "command", "./w 4");
	sb_profile_add_binary(p, "/usr/bin/w", "00112233445566778899aabbccddeeff00112233");
	add_cfg(p);
	sec.loc = (uint32_t)add_loc(p, 0x1100, 60);
	for (uint64_t b = 0; b < 4; b++) {
		if (kind_mask & 1u << SB_EVK_BLOCK_SAMPLES)
			add_event(p, SB_EVK_BLOCK_SAMPLES, 0x1000 + 0x10 * b, 0x100c + 0x10 * b);
		if (kind_mask & 1u << SB_EVK_BLOCK_COUNT)
			add_event(p, SB_EVK_BLOCK_COUNT, 0x1000 + 0x10 * b, 0x100c + 0x10 * b);
	}
	if (kind_mask & 1u << SB_EVK_EDGE) {
		add_event(p, SB_EVK_EDGE, 0x101c, 0x1030);
		add_event(p, SB_EVK_EDGE, 0x102c, 0x1020);
		add_event(p, SB_EVK_EDGE, 0x103c, 0x5000);
	}
	if (kind_mask & 1u << SB_EVK_HW)
		add_event(p, SB_EVK_HW, 0x1024, 0);
	for (uint32_t t = 0; t < NT; t++) {
		struct sb_thread th = { 100 + t, t ? 100 : 0, "w", 10, 90000000, 0 };

		th.oncpu_ns = 1000000 * (t + 1);
		sb_profile_add_thread(p, &th);
		pt[t] = (struct sb_thread_time){ 100 + t, 10000000 * (t + 1),
						 10000000 * (NT - t), 10000000 * (NT + 1) };
	}
	sec.ninstances = (uint64_t)ninst;
	sb_profile_add_section(p, &sec);
	for (int i = 0; i < ninst; i++) {
		struct sb_instance in = { .section = 0, .seq = (uint64_t)i, .nthreads = NT,
					  .per_thread = pt, .start_ns = 1000 * (uint64_t)i,
					  .end_ns = 1000 * (uint64_t)i + 900 };

		sb_profile_add_instance(p, &in);
		for (uint32_t e = 0; e < p->nevents; e++) {
			struct sb_vector v = { .instance = (uint32_t)i, .event = e,
					       .nthreads = NT, .counts = counts };

			for (uint32_t t = 0; t < NT; t++)
				counts[t] = (e % 3 == 1 ? 7 : 20 * (t + 1)) + (uint64_t)i;
			sb_profile_add_vector(p, &v);
		}
	}
	return p;
}

/* Through the reservoir, as the recorder does: records and addr_* meta. */
/* CHIP rows: section 0's, a --region function's, a sampled whole run's;
 * and the machine keys the view reads. */
static void add_chip(struct sb_profile *p)
{
	struct sb_chip_row *r = calloc(3, sizeof(*r));

	if (!r)
		exit(1);
	r->section = 0;
	r->mode = SB_CHIP_MODE_EXACT;
	r->threads = 2;
	r->line = 64;
	r->max_bytes = 4u << 20;
	r->rate_t = 1u << 24;
	for (int k = 0; k < SB_CHIP_ROW_DEPTHS; k++)
		r->accesses += r->depth[k] = 1000u * (uint64_t)(k + 1);
	r[1] = r[0];
	r[1].kind = SB_CHIP_KIND_FUNCTION;
	r[1].section = UINT32_MAX;
	r[1].region = 0;
	r[1].busy_ns = 5000000;
	sb_profile_meta_set(p, "chip_region_0", "solve");
	sb_profile_meta_set_u64(p, "chip_region_0_calls", 3);
	sb_profile_meta_set_u64(p, "chip_region_0_busy_ns", 5000000);
	r[2] = r[0];
	r[2].kind = SB_CHIP_KIND_RUN;
	r[2].section = UINT32_MAX;
	r[2].mode = SB_CHIP_MODE_SAMPLED;
	r[2].accesses = 0;
	memset(r[2].depth, 0, sizeof(r[2].depth));
	for (int k = 0; k < SB_CHIP_ROW_WINDOWS; k++) {
		r[2].fp_window_ns[k] = 100000ull << k;
		r[2].fp_probes[k] = 400;
		r[2].fp_touched[k] = 20u * (uint64_t)(k + 1);
	}
	r[2].fp_universe = 16u << 20;
	p->chip = r;
	p->nchip = 3;
	sb_profile_meta_set_u64(p, "chip_machine_llc_effective", 2u << 20);
	sb_profile_meta_set_u64(p, "chip_machine_bandwidth", 10000000000ull);
	sb_profile_meta_set_u64(p, "chip_machine_llc_latency_ps", 12000);
	sb_profile_meta_set_u64(p, "chip_machine_dram_latency_ps", 150000);
	sb_profile_meta_set_u64(p, "chip_machine_llc_cpus", 1);
	sb_profile_meta_set_u64(p, "chip_machine_cpus", 2);
}

/* A phase's stack at 1 and 2 threads (analysis/stack/stack.h). */
static void add_stack(struct sb_profile *p)
{
	struct sb_stack_row r = { .section = 0, .threads = 1, .pirate = 1, .held = 1,
				  .base_ns = 4000000, .time_ns = 4000000, .nolock_ns = 4000000,
				  .free_ns = 3900000, .pirate_bytes = 2u << 20,
				  .slowdown_ppm = 1000000 };

	if (sb_profile_stack_append(p, &r))
		exit(1);
	r.threads = 2;
	r.time_ns = 2600000;
	r.nolock_ns = 2300000;
	r.free_ns = 2100000;
	r.imbalance_ns = 150000;
	r.pirate_bytes = 1u << 20;
	r.slowdown_ppm = 1050000;
	if (sb_profile_stack_append(p, &r))
		exit(1);
}

static void add_addrs(struct sb_profile *p)
{
	struct sb_addrs *r = sb_addrs_alloc(64, 1);

	if (!r)
		exit(1);
	for (uint32_t k = 0; k < 6; k++) {
		struct sb_addr a = { .ts = 100 + k, .ip = p->locs[0].addr,
				     .addr = 0x7ffd0000 + 64 * k, .tid = 101 + k % 2,
				     .loc = 0, .instance = -1, .size = 8,
				     .flags = k % 3 ? SB_ADDR_STORE : SB_ADDR_SKID };

		sb_addrs_offer(r, &a);
	}
	sb_addrs_count(r, SB_ADDRS_UNDECODABLE);
	sb_addrs_count(r, SB_ADDRS_NO_ACCESS);
	sb_addrs_count(r, SB_ADDRS_NO_CODE);
	if (sb_addrs_store(r, p) || sb_addrs_assign_instances(p))
		exit(1);
	sb_addrs_free(r);
}

int main(int argc, char **argv)
{
	struct sb_profile *p;

	if (argc != 2) {
		fprintf(stderr, "usage: fuzz_seeds DIR\n");
		return 2;
	}
	outdir = argv[1];
	p = sb_profile_alloc();
	save(p, "empty.sbp");
	sb_profile_free(p);
	p = make_full();
	add_addrs(p);
	add_chip(p);
	add_stack(p);
	save(p, "full.sbp");
	sb_profile_free(p);
	p = lime_profile(1u << SB_EVK_BLOCK_SAMPLES, 3);
	save(p, "samples.sbp");
	sb_profile_free(p);
	p = lime_profile(1u << SB_EVK_EDGE | 1u << SB_EVK_HW | 1u << SB_EVK_BLOCK_SAMPLES, 2);
	save(p, "lbr.sbp");
	sb_profile_free(p);
	p = lime_profile(1u << SB_EVK_BLOCK_COUNT | 1u << SB_EVK_BLOCK_SAMPLES, 2);
	save(p, "exact.sbp");
	sb_profile_free(p);
	return 0;
}
