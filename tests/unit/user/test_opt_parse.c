// SPDX-License-Identifier: MIT
/* user/opt_parse.c: numeric option values taken only as written. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "opt_parse.h"

static void u64_cases(void)
{
	static const struct {
		const char *s;
		uint64_t lo, hi;
		int ret;
		uint64_t want;
	} c[] = {
		{ "0", 0, 10, 0, 0 },
		{ "10", 0, 10, 0, 10 },
		{ "11", 0, 10, -ERANGE, 0 },
		{ "4294967296", 0, 10000, -ERANGE, 0 },    /* was -F 0 Hz */
		{ "4294967297", 1, INT32_MAX, -ERANGE, 0 }, /* was PID 1 */
		{ "18446744073709551615", 0, UINT64_MAX, 0, UINT64_MAX },
		{ "18446744073709551616", 0, UINT64_MAX, -ERANGE, 0 },
		{ "-1", 0, UINT64_MAX, -ERANGE, 0 },       /* strtoull: UINT64_MAX */
		{ "-18446744073709551615", 1, 1024, -ERANGE, 0 }, /* strtoull: 1 */
		{ "-0", 1, INT32_MAX, -EINVAL, 0 },        /* -p -0: not a number, not "out of range" */
		{ "+1", 0, 10, -EINVAL, 0 },
		{ " 1", 0, 10, -EINVAL, 0 },
		{ "1 ", 0, 10, -EINVAL, 0 },
		{ "1x", 0, 10, -EINVAL, 0 },
		{ "0x10", 0, 100, -EINVAL, 0 },
		{ "", 0, 10, -EINVAL, 0 },
		{ "-", 0, 10, -EINVAL, 0 },
		{ "007", 0, 10, 0, 7 },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		uint64_t v = 12345;
		int ret = sb_opt_u64(c[i].s, c[i].lo, c[i].hi, &v);

		CHECK(ret == c[i].ret, "'%s' in [%llu, %llu]: %d, want %d", c[i].s,
		      (unsigned long long)c[i].lo, (unsigned long long)c[i].hi, ret, c[i].ret);
		CHECK(ret ? v == 12345 : v == c[i].want, "'%s': value %llu", c[i].s,
		      (unsigned long long)v);
	}
	CHECK(sb_opt_u64(NULL, 0, 1, &(uint64_t){ 0 }) == -EINVAL, "NULL");
}

static void double_cases(void)
{
	static const struct {
		const char *s;
		double lo, hi;
		int ret;
		double want;
	} c[] = {
		{ "1", 0, 1e9, 0, 1 },
		{ "0.5", 0, 1e9, 0, 0.5 },
		{ ".5", 0, 1e9, 0, 0.5 },
		{ "5.", 0, 1e9, 0, 5 },
		{ "1e3", 0, 1e9, 0, 1000 },
		{ "+2", 0, 1e9, 0, 2 },
		{ "0", 0, 1e9, -ERANGE, 0 },               /* lo is excluded */
		{ "-0", 0, 1e9, -ERANGE, 0 },
		{ "-1", 0, 1e9, -ERANGE, 0 },
		{ "1e10", 0, 1e9, -ERANGE, 0 },
		{ "1e400", 0, 1e9, -ERANGE, 0 },           /* overflow: HUGE_VAL */
		{ "1e-400", 0, 1e9, -ERANGE, 0 },          /* underflow */
		{ "nan", 0, 1e9, -EINVAL, 0 },
		{ "NAN", 0, 1e9, -EINVAL, 0 },
		{ "inf", 0, 1e9, -EINVAL, 0 },
		{ "-inf", 0, 1e9, -EINVAL, 0 },
		{ "infinity", 0, 1e9, -EINVAL, 0 },
		{ "0x10", 0, 1e9, -EINVAL, 0 },
		{ " 1", 0, 1e9, -EINVAL, 0 },
		{ "1 ", 0, 1e9, -EINVAL, 0 },
		{ "1s", 0, 1e9, -EINVAL, 0 },
		{ "", 0, 1e9, -EINVAL, 0 },
		{ ".", 0, 1e9, -EINVAL, 0 },
		{ "1", 0, 1, 0, 1 },                      /* hi is included */
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		double v = -7;
		int ret = sb_opt_double(c[i].s, c[i].lo, c[i].hi, &v);

		CHECK(ret == c[i].ret, "'%s' in (%g, %g]: %d, want %d", c[i].s, c[i].lo, c[i].hi,
		      ret, c[i].ret);
		CHECK(ret ? v == -7 : v == c[i].want, "'%s': value %g", c[i].s, v);
	}
	CHECK(!strcmp(sb_opt_why(-ERANGE), "out of range"), "why ERANGE");
	CHECK(!strcmp(sb_opt_why(-EINVAL), "not a number"), "why EINVAL");
}

int main(void)
{
	u64_cases();
	double_cases();
	return CHECK_DONE("opt_parse");
}
