// SPDX-License-Identifier: MIT
/* CHiP's analytical model (chip.h; ../shared/papers/chip.txt §V-C). */
#include "chip.h"
#include "chip_priv.h"

void sb_chip_estimate(const struct sb_chip_counts *k, double rate, double est[SB_CHIP_COUNTS])
{
	double sum = 0;

	if (!(rate > 0 && rate < 1))
		rate = 1;
	for (int i = 0; i < SB_CHIP_COUNTS; i++)
		sum += est[i] = (double)k->depth[i] / rate;
	if (rate >= 1)
		return;
	/* SHARDS_adj: the references sampling was expected to take but did
	 * not (or took too many of: a hot line sampled) are those of the
	 * front, where the most frequent references hit. */
	est[0] += (double)k->accesses - sum;
	if (est[0] < 0) {      /* more than all: scale the rest to the total */
		double rest = sum - (double)k->depth[0] / rate;

		est[0] = 0;
		for (int i = 1; i < SB_CHIP_COUNTS && rest > 0; i++)
			est[i] *= (double)k->accesses / rest;
	}
}

double sb_chip_total(const double est[SB_CHIP_COUNTS])
{
	double t = 0;

	for (int i = 0; i < SB_CHIP_COUNTS; i++)
		t += est[i];
	return t;
}

double sb_chip_hits(const double est[SB_CHIP_COUNTS], double dd)
{
	double h = 0;
	int i;

	if (!(dd > 0))
		return 0;
	if (dd > SB_CHIP_DEPTH)
		dd = SB_CHIP_DEPTH;
	for (i = 0; i + 1 <= dd; i++)
		h += est[i];
	if (i < SB_CHIP_DEPTH && dd > i)
		h += (dd - i) * est[i];
	return h;
}

double sb_chip_hit_ratio(const double est[SB_CHIP_COUNTS], double dd)
{
	double t = sb_chip_total(est);

	return t > 0 ? sb_chip_hits(est, dd) / t : 0;
}

double sb_chip_depth_of(uint64_t cache_bytes, uint64_t max_bytes)
{
	if (!max_bytes)
		return 0;
	return (double)SB_CHIP_DEPTH * (double)cache_bytes / (double)max_bytes;
}

double sb_chip_bandwidth(const double est[SB_CHIP_COUNTS], double dd, uint32_t line, double t)
{
	if (!(t > 0))
		return 0;
	return (sb_chip_total(est) - sb_chip_hits(est, dd)) * line / t;
}

double sb_chip_bandwidth_par(const double est[SB_CHIP_COUNTS], double dd, unsigned sharers,
			     unsigned threads, uint32_t line, double t_ser)
{
	if (!threads || !sharers)
		return 0;
	return sb_chip_bandwidth(est, dd / sharers, line, t_ser / threads);
}

double sb_chip_latency(const double est[SB_CHIP_COUNTS], double dd, double lat_hit,
		       double lat_miss)
{
	double t = sb_chip_total(est), h = sb_chip_hits(est, dd);

	return t > 0 ? (h * lat_hit + (t - h) * lat_miss) / t : 0;
}

unsigned sb_chip_sharers(const struct sb_chip_machine *m, unsigned threads)
{
	uint64_t n;

	if (!m->cache_cpus || !m->cpus || m->cache_cpus >= m->cpus)
		return threads ? threads : 1;
	n = ((uint64_t)threads * m->cache_cpus + m->cpus - 1) / m->cpus;
	return n ? (unsigned)n : 1;
}

const char *sb_chip_verdict_name(int v)
{
	switch (v) {
	case SB_CHIP_SCALES: return "scales";
	case SB_CHIP_CACHE_BOUND: return "cache-bound";
	case SB_CHIP_BANDWIDTH_BOUND: return "bandwidth-bound";
	default: return "no data";
	}
}

int chip_verdict_at(double par, double linear, double machine_bandwidth)
{
	if (machine_bandwidth > 0 && par > machine_bandwidth)
		return SB_CHIP_BANDWIDTH_BOUND;
	if (par > 1.10 * linear && (!(machine_bandwidth > 0) ||
				    par - linear > 0.01 * machine_bandwidth))
		return SB_CHIP_CACHE_BOUND;
	return SB_CHIP_SCALES;
}

int sb_chip_verdict(const double est[SB_CHIP_COUNTS], uint64_t max_bytes,
		    const struct sb_chip_machine *m, double t_ser, unsigned max_threads,
		    unsigned *from)
{
	double dd = sb_chip_depth_of(m->llc_bytes, max_bytes);
	double ser = sb_chip_bandwidth(est, dd, m->line, t_ser);

	*from = 0;
	if (!(sb_chip_total(est) > 0) || !(t_ser > 0))
		return SB_CHIP_NO_DATA;
	if (max_threads > SB_CHIP_MAX_THREADS)   /* a crafted profile's count */
		max_threads = SB_CHIP_MAX_THREADS;
	/* below one depth per thread the profile cannot resolve the share */
	for (unsigned t = 2; t <= max_threads && dd / sb_chip_sharers(m, t) >= 1; t++) {
		double par = sb_chip_bandwidth_par(est, dd, sb_chip_sharers(m, t), t, m->line, t_ser);
		int v = chip_verdict_at(par, ser * t, m->bandwidth);

		*from = t;
		if (v != SB_CHIP_SCALES)
			return v;
	}
	*from = 0;
	return SB_CHIP_SCALES;
}
