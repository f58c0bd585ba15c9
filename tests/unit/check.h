/* SPDX-License-Identifier: MIT */
/* A tiny assertion harness: each unit test binary ends with one line
 * "<name>: N passed, M failed" and exits non-zero if anything failed. */
#ifndef SB_CHECK_H
#define SB_CHECK_H

#include <math.h>
#include <stdio.h>

static int sb_check_pass, sb_check_fail;

#define CHECK(cond, ...)                                                    \
	do {                                                                \
		if (cond) {                                                 \
			sb_check_pass++;                                    \
		} else {                                                    \
			sb_check_fail++;                                    \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__,       \
				__LINE__, #cond);                           \
			fprintf(stderr, __VA_ARGS__);                       \
			fputc('\n', stderr);                                \
		}                                                           \
	} while (0)

#define CHECK_NEAR(got, want, tol)                                          \
	CHECK(fabs((double)(got) - (double)(want)) <= (double)(tol),        \
	      "got %.6g want %.6g (tol %.3g)", (double)(got),               \
	      (double)(want), (double)(tol))

#define CHECK_DONE(name)                                                    \
	(printf("%s: %d passed, %d failed\n", (name), sb_check_pass,        \
		sb_check_fail),                                             \
	 sb_check_fail ? 1 : 0)

#endif
