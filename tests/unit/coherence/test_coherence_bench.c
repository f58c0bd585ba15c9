// SPDX-License-Identifier: MIT
/*
 * ccSIM's throughput (issue 13's goal: >= 20 M references/s per core in
 * piped mode), through trace files as `scalebpf cc --trace-mem` writes
 * them: 4 threads, R regions, each thread sweeping a 512 KiB array of its
 * own (loads and stores of 8 bytes: L1 misses, L2 hits) and, every 64th
 * access, adding into its own double of one shared line (false sharing).
 * Prints the rates without asserting on them; asserts the planted
 * sharing's piped count, R * N - 1 invalidations (test_coherence.c
 * derives it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "coherence/coherence.h"
#include "sbpf_trace.h"

enum { N = 4, R = 10, ARRAY = 512 << 10, PER_REGION = 500000 };

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int write_traces(const char *dir)
{
	static struct sb_trace_rec buf[4096];

	for (uint32_t t = 0; t < N; t++) {
		struct sb_trace_hdr h = { .magic = SB_TRACE_MAGIC, .pid = 1, .tid = 10 + t };
		char path[512];
		uint64_t base = 0x10000000ull + (uint64_t)t * 0x1000000, shared = 0x8000;
		size_t n = 0;
		FILE *f;

		snprintf(path, sizeof(path), "%s/trace.%u", dir, 10 + t);
		f = fopen(path, "wb");
		if (!f)
			return -1;
		fwrite(&h, sizeof(h), 1, f);
		for (uint64_t r = 0; r < R; r++) {
			buf[n++] = (struct sb_trace_rec){ .addr = 1000 * r + t, .kind = SB_TRACE_RESUME };
			for (uint64_t i = 0; i < PER_REGION; i++) {
				bool share = i % 64 == 0;
				uint64_t a = share ? shared + 8 * t : base + (i * 8) % ARRAY;
				bool store = share ? (i / 64) & 1 : i & 1;

				buf[n++] = (struct sb_trace_rec){ .addr = a, .pc = 0x401000 + share * 16 +
								  store * 8, .size = 8,
								  .kind = store ? SB_TRACE_STORE :
										  SB_TRACE_LOAD };
				if (n == sizeof(buf) / sizeof(buf[0])) {
					fwrite(buf, sizeof(buf[0]), n, f);
					n = 0;
				}
			}
			buf[n++] = (struct sb_trace_rec){ .addr = 1000 * r + 500 + t, .pc = 0xba7,
							  .size = SB_TSYNC_BARRIER << 8,
							  .kind = SB_TRACE_SYNC };
			fwrite(buf, sizeof(buf[0]), n, f);
			n = 0;
		}
		fclose(f);
	}
	return 0;
}

int main(void)
{
	char dir[] = "/tmp/sb_coh_bench.XXXXXX", err[512] = "";
	struct sb_coherence_opts o;
	double rate[2] = { 0, 0 };
	uint64_t inv[2] = { 0, 0 };

	CHECK(mkdtemp(dir), "mkdtemp");
	CHECK(write_traces(dir) == 0, "traces in %s", dir);
	sb_coherence_opts_default(&o);
	for (int m = 0; m < 2; m++) {
		struct sb_coherence_result r;
		struct sb_coherence_trace_info info;
		struct sb_coherence_counts c;
		double t0;
		int ret;

		o.mode = m ? SB_COHERENCE_INTERLEAVED : SB_COHERENCE_PIPED;
		t0 = now();
		ret = sb_coherence_trace_run(dir, 0, &o, &r, &info, err, sizeof(err));
		CHECK(ret == 0, "run: %s", err);
		if (ret)
			break;
		rate[m] = (double)info.accesses / (now() - t0);
		sb_coherence_result_total(&r, &c);
		inv[m] = sb_coherence_inv_total(&c.inv);
		CHECK(info.accesses == (uint64_t)N * R * PER_REGION && info.regions == R,
		      "%lu accesses, %lu regions", (unsigned long)info.accesses,
		      (unsigned long)info.regions);
		sb_coherence_result_free(&r);
		sb_coherence_trace_info_free(&info);
	}
	CHECK(inv[0] == (uint64_t)R * N - 1, "piped invalidations %lu, want %d",
	      (unsigned long)inv[0], R * N - 1);
	CHECK(inv[1] > inv[0], "interleaved %lu > piped %lu", (unsigned long)inv[1],
	      (unsigned long)inv[0]);
	printf("coherence bench: %d M references of %d threads from trace files: piped %.1f M/s, "
	       "interleaved %.1f M/s (goal: piped >= 20 M/s per core)\n",
	       N * R * PER_REGION / 1000000, N, rate[0] / 1e6, rate[1] / 1e6);
	for (uint32_t t = 0; t < N; t++) {
		char path[512];

		snprintf(path, sizeof(path), "%s/trace.%u", dir, 10 + t);
		unlink(path);
	}
	rmdir(dir);
	return CHECK_DONE("test_coherence_bench");
}
