// SPDX-License-Identifier: MIT
/*
 * Footprint probes to DRAM demand (analysis/chip/chip_footprint.c)
 * against the analytic answer: uniform random accesses over L lines at
 * λ per second touch a given line within t with probability 1 - e^(-λt/L),
 * so F(t) = 64 L (1 - e^(-λt/L)) bytes, and an LRU cache of C bytes misses
 * (1 - C/64L) of them: λ × 64 × (1 - C/64L) bytes/s from DRAM.  Probes
 * are drawn as the recorder draws them, from a universe twice the data
 * (idle memory never touched).  Checked: F at each window within 4
 * standard errors, the fit nondecreasing and concave, the demand at a
 * quarter, half and three quarters of the data within 10%, a cache past
 * the longest window's footprint unresolved, bad input refused.  And the
 * recorder's windows as a row keeps them (sb_chip_fp_ascend): at their
 * probes' mean lengths, merged until they strictly ascend, on the case
 * of a recorder that woke late (short windows of ~1 ms; a merge that
 * falls below the window before merges again) and of empty windows.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "chip/chip.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;

static double uniform(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

static void check_ascend(void)
{
	/* a section of a recording on a busy host: windows asked 0.1, 0.2,
	 * 0.5, 1, 2, 5, 10, 20 ms lasted ~1 ms up to the fourth */
	const uint64_t probes[8] = { 45, 45, 43, 47, 47, 47, 44, 36 };
	const uint64_t touched[8] = { 1, 1, 0, 0, 0, 4, 1, 0 };
	const uint64_t watched[8] = { 23, 32, 21, 26, 30, 23, 19, 15 };
	const uint64_t len[8] = { 23664413, 35262253, 16683095, 26436055,
				  67623460, 142446646, 202973314, 307341038 };
	/* 1.10 ms then 0.79 ms pool into 0.95 ms, which is then below the
	 * 1.03 ms before it: the three pool into one; 1.02 ms stays apart */
	const double first = (45.0 * 1028887 + 45.0 * 1101945 + 43.0 * 794433) / 133;
	const uint64_t none[8] = { 0 }, some[8] = { 10, 0, 10, 0, 0, 0, 0, 0 };
	struct sb_chip_fp f;
	bool up = true;

	sb_chip_fp_ascend(probes, touched, len, watched, &f);
	for (int k = 1; k < 6; k++)
		up &= f.window_ns[k] > f.window_ns[k - 1];
	CHECK(up && f.probes[0] == 133 && f.touched[0] == 2 && f.probes[5] == 36 &&
	      !f.probes[6] && fabs((double)f.window_ns[0] - first) <= 2 &&
	      f.window_ns[1] == 26436055 / 26 && f.probes[1] == 47,
	      "late windows pooled: %llu ns x %llu, then %llu ns x %llu",
	      (unsigned long long)f.window_ns[0], (unsigned long long)f.probes[0],
	      (unsigned long long)f.window_ns[1], (unsigned long long)f.probes[1]);
	/* untouched pages alone (none watched): at the lengths asked; an
	 * empty window is left out */
	sb_chip_fp_ascend(some, none, none, none, &f);
	CHECK(f.window_ns[0] == sb_chip_fp_window_ns[0] && f.window_ns[1] == sb_chip_fp_window_ns[2] &&
	      f.probes[1] == 10 && !f.probes[2], "unwatched windows as asked");
}

int main(void)
{
	check_ascend();
	const double lines = 100000, lambda = 50e6, data = 64 * lines;
	struct sb_chip_fp f;
	struct sb_chip_fp_curve c;
	bool ok;

	memset(&f, 0, sizeof(f));
	CHECK(sb_chip_fp_curve(&f, &c) == -EINVAL, "no universe refused");
	f.universe = 2 * data;
	CHECK(sb_chip_fp_curve(&f, &c) == -EINVAL, "no probes refused");
	for (unsigned w = 0; w < SB_CHIP_FP_WINDOWS; w++) {
		double t = (double)sb_chip_fp_window_ns[w] / 1e9;

		f.window_ns[w] = sb_chip_fp_window_ns[w];
		for (int k = 0; k < 6000; k++) {
			f.probes[w]++;
			/* half the universe is data, the rest never touched */
			if (uniform() < 0.5 && uniform() < 1 - exp(-lambda * t / lines))
				f.touched[w]++;
		}
	}
	CHECK(sb_chip_fp_curve(&f, &c) == 0 && c.n == SB_CHIP_FP_WINDOWS, "curve");
	for (unsigned i = 0; i < c.n; i++) {
		double want = data * (1 - exp(-lambda * c.t[i] / lines));

		CHECK(fabs(c.bytes[i] - want) <= 4 * c.err[i] + 1, "F(%.4f s) = %.0f, want %.0f +- %.0f",
		      c.t[i], c.bytes[i], want, c.err[i]);
		CHECK(i == 0 || c.fit[i] >= c.fit[i - 1], "fit nondecreasing at %u", i);
		if (i >= 2)
			CHECK((c.fit[i] - c.fit[i - 1]) / (c.t[i] - c.t[i - 1]) <=
			      (c.fit[i - 1] - c.fit[i - 2]) / (c.t[i - 1] - c.t[i - 2]) * (1 + 1e-9),
			      "fit concave at %u", i);
	}
	for (int q = 1; q <= 3; q++) {
		double cbytes = data * q / 4, want = lambda * 64 * (1 - cbytes / data);
		double got = sb_chip_fp_demand(&c, cbytes, &ok);

		printf("demand at %d/4 of the data: %.3g B/s, analytic %.3g (%+.1f%%)\n", q, got,
		       want, 100 * (got / want - 1));
		CHECK(ok && fabs(got - want) <= 0.10 * want, "demand at %d/4 of the data: %.3g, "
		      "want %.3g", q, got, want);
	}
	sb_chip_fp_demand(&c, 1.5 * data, &ok);
	CHECK(!ok, "a cache past the footprint: unresolved");
	/* a window without probes is left out, one with more touches than
	 * probes (a crafted profile) too */
	f.probes[3] = 0;
	f.touched[5] = f.probes[5] + 1;
	CHECK(sb_chip_fp_curve(&f, &c) == 0 && c.n == SB_CHIP_FP_WINDOWS - 2, "windows skipped");
	return CHECK_DONE("test_chip_footprint");
}
