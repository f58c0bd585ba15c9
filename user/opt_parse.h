/* SPDX-License-Identifier: MIT */
/*
 * Strict parsing of numeric command-line values.  strtoul and friends
 * wrap around ("-1" is ULONG_MAX, 4294967296 cast to unsigned is 0), skip
 * leading blanks, and strtod takes "nan" and "inf": an option value is
 * taken only when it is the whole number, in range, as written.
 */
#ifndef SB_OPT_PARSE_H
#define SB_OPT_PARSE_H

#include <stdint.h>

/* A decimal unsigned integer in [lo, hi]: digits only (no sign, no
 * blanks, no junk after).  0, -EINVAL (not such a number) or -ERANGE
 * (out of [lo, hi], overflow included); *out is set on 0 only. */
int sb_opt_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);

/* A finite decimal number in (lo, hi]: no blanks, no junk, no nan, inf
 * or hex.  Same returns as sb_opt_u64. */
int sb_opt_double(const char *s, double lo, double hi, double *out);

/* "not a number" or "out of range": the reason an sb_opt_* call failed. */
const char *sb_opt_why(int err);

#endif
