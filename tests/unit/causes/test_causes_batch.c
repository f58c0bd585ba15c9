/*
 * Sampled mode, three threads with a persistent imbalance (causes_samples.c,
 * per-thread columns in batches of instances).  Pooled per thread, the
 * section gives LIME three observations and an F-test with one degree of
 * freedom, which no pooled block passes unless it explains 99.7% of the
 * busy time: a thread that also spends time nothing samples (a page
 * fault, a syscall: thread 0 here, 0.9 ms an instance) leaves the work
 * block at about 95%, and the section read "no cause" however many
 * samples it had.  In batches of instances the same threads are busy in
 * each, and the test has the degrees of freedom the recording holds.
 *
 *   B0 entry (40) -> B1 work (46) -> B2 other work (48) -> B3 barrier
 *   call (52, B6) -> B4 latch (41, back to B1) -> B5 return.
 *
 * Known answer: thread t samples B1 {2, 4, 3}[t] times an instance (a
 * little noise), B2 the same for all; the cause is B1 (line 46).
 */
#include <stdlib.h>

#include "causes/causes.h"
#include "cfg/cfg.h"
#include "cfg/cfg_io.h"
#include "check.h"

#define NT 3
#define NI 400
#define NB 6

static struct sb_cfg *graph(void)
{
	struct sb_cfg *g = sb_cfg_alloc();

	sb_cfg_add_func(g, "worker", 0x1000, 0x1000 + 0x10 * NB);
	for (uint64_t b = 0; b < NB; b++)
		sb_cfg_add_block(g, 0, 0x1000 + 0x10 * b, 0x1010 + 0x10 * b, 0x100c + 0x10 * b);
	sb_cfg_add_func(g, "barrier", 0x2000, 0x2010);
	sb_cfg_add_block(g, 1, 0x2000, 0x2010, 0x200c);
	sb_cfg_add_edge(g, 0, 1, SB_EDGE_SEQUENTIAL);
	sb_cfg_add_edge(g, 1, 2, SB_EDGE_SEQUENTIAL);
	sb_cfg_add_edge(g, 2, 3, SB_EDGE_SEQUENTIAL);
	sb_cfg_add_edge(g, 3, 6, SB_EDGE_CALL);
	sb_cfg_add_edge(g, 3, 4, SB_EDGE_CALL_RETURN);
	sb_cfg_add_edge(g, 4, 1, SB_EDGE_TAKEN);
	sb_cfg_add_edge(g, 4, 5, SB_EDGE_FALLTHROUGH);
	sb_cfg_finalize(g);
	return g;
}

static long loc(struct sb_profile *p, uint64_t addr, unsigned line)
{
	struct sb_loc l = { .addr = addr, .offset = addr, .binary = 0, .line = line,
			    .function = "worker", .file = "w.c" };

	return sb_profile_add_loc(p, &l);
}

/* Samples of thread t in block e (0: B1, the work; 1: B2; 2: B3) in instance i. */
static uint64_t smp(uint32_t e, int i, uint32_t t)
{
	static const uint64_t work[NT] = { 2, 4, 3 };
	uint64_t noise = (uint64_t)((i * 7 + (int)t * 3) % 3);   /* 0..2 */

	return e == 0 ? 2 * work[t] + noise : e == 1 ? 2 + (uint64_t)((i + (int)t) % 2)
						    : (t + (uint32_t)i) % 3 == 0;
}

static struct sb_profile *profile(void)
{
	static const unsigned line[NB + 1] = { 40, 46, 48, 52, 41, 55, 60 };
	static const uint64_t unsampled_ns[NT] = { 900000, 0, 300000 };
	struct sb_profile *p = sb_profile_alloc();
	struct sb_cfg *g = graph();
	struct sb_thread_time pt[NT];
	struct sb_section sec = { .kind = SB_SECT_BARRIER, .nthreads = NT, .per_thread = pt };
	unsigned char *blob;
	size_t len;

	sb_profile_add_binary(p, "/bin/w", "ab");
	sec.loc = (uint32_t)loc(p, 0x103c, 52);
	sb_cfg_serialize(g, &blob, &len);
	sb_profile_add_cfg(p, 0, blob, len);
	free(blob);
	sb_cfg_free(g);
	for (uint64_t b = 1; b <= 3; b++) {
		struct sb_event_def d = {
			.kind = SB_EVK_BLOCK_SAMPLES, .binary = 0,
			.vaddr = 0x1000 + 0x10 * b, .vaddr2 = 0x100c + 0x10 * b,
		};

		d.loc = (int32_t)loc(p, d.vaddr, line[b]);
		d.loc2 = (int32_t)loc(p, d.vaddr2, line[b]);
		d.hot = d.vaddr + 4;
		d.loc_hot = (int32_t)loc(p, d.hot, line[b]);
		sb_profile_add_event(p, &d);
	}
	for (uint32_t t = 0; t < NT; t++)
		pt[t] = (struct sb_thread_time){ 100 + t, 0, 0, 0 };
	sb_profile_add_section(p, &sec);
	for (int i = 0; i < NI; i++) {
		struct sb_instance in = { .section = 0, .seq = (uint64_t)i, .nthreads = NT,
					  .per_thread = pt };

		/* 0.5 ms a sample, the unsampled time, a little jitter */
		for (uint32_t t = 0; t < NT; t++)
			pt[t].busy_ns = 500000 * (smp(0, i, t) + smp(1, i, t)) + unsampled_ns[t] +
					10000 * ((t * 7 + (uint32_t)i * 3) % 5);
		sb_profile_add_instance(p, &in);
		for (uint32_t e = 0; e < 3; e++) {
			uint64_t c[NT];
			struct sb_vector v = { .instance = (uint32_t)i, .event = e, .nthreads = NT,
					       .counts = c };

			for (uint32_t t = 0; t < NT; t++)
				c[t] = smp(e, i, t);
			sb_profile_add_vector(p, &v);
		}
	}
	return p;
}

int main(void)
{
	struct sb_profile *p = profile();
	struct sb_lime_opts o;
	struct sb_causes c;
	char err[256] = "";
	int ret;

	sb_lime_opts_default(&o);
	ret = sb_causes_compute(p, &o, &c, err, sizeof(err));
	CHECK(ret == 0, "compute: %d %s", ret, err);
	if (!ret) {
		CHECK(!c.exact_counts && c.nsections_analyzed == 1, "samples, one section");
		CHECK(c.n > 0, "three threads, 400 instances: a cause found");
		if (c.n)
			CHECK(c.c[0].loc >= 0 && p->locs[c.c[0].loc].line == 46,
			      "the work block (line 46): line %u at %#llx",
			      c.c[0].loc >= 0 ? p->locs[c.c[0].loc].line : 0,
			      (unsigned long long)c.c[0].addr);
		sb_causes_free(&c);
	}
	sb_profile_free(p);
	return CHECK_DONE("test_causes_batch");
}
