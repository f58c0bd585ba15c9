/* The shared helper of the lime_s_* workloads (issue 12's sampled-mode
 * failures): a small static noinline function from a header, whose loop
 * runs exactly n times a call, as a program's own header would hold. */
#ifndef LIME_S_WORK_H
#define LIME_S_WORK_H

static volatile double lime_s_sink;

static __attribute__((noinline)) void lime_s_block(double *v, long n)
{
	double x = v[0];

	for (long i = 0; i < n; i++)
		x = x * 0.999999 + 1e-9 * (double)i;
	v[0] = x;
	lime_s_sink = x;
}

#endif
