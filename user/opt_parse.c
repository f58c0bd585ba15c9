// SPDX-License-Identifier: MIT
#include "opt_parse.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

int sb_opt_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	unsigned long long v;
	char *end;

	/* strtoull would take " 1", "+1" and "-1" (negated: a huge value). */
	if (s && s[0] == '-' && is_digit(s[1]) && strtoull(s + 1, NULL, 10))
		return -ERANGE;   /* a number, below any range of ours */
	if (!s || !is_digit(*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end)
		return -EINVAL;
	if (errno == ERANGE || v < lo || v > hi)
		return -ERANGE;
	*out = v;
	return 0;
}

int sb_opt_double(const char *s, double lo, double hi, double *out)
{
	const char *p = s;
	double v;
	char *end;

	/* Plain decimal only: strtod also reads "nan", "inf", "0x1p4" and
	 * skips blanks. */
	if (!s)
		return -EINVAL;
	if (*p == '-' || *p == '+')
		p++;
	if (!is_digit(*p) && !(*p == '.' && is_digit(p[1])))
		return -EINVAL;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (*end || end == s)
		return -EINVAL;
	if (errno == ERANGE || !isfinite(v) || !(v > lo) || !(v <= hi))
		return -ERANGE;
	*out = v;
	return 0;
}

const char *sb_opt_why(int err)
{
	return err == -ERANGE ? "out of range" : "not a number";
}
