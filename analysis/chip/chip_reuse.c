// SPDX-License-Identifier: MIT
/* Hit ratios from sampled reuses: StatStack and HOTL (chip_reuse.h). */
#include "chip_reuse.h"

#include <errno.h>
#include <math.h>

unsigned sb_chip_reuse_bucket(uint64_t len)
{
	unsigned e;

	if (len < 16)
		return (unsigned)len;
	e = 63u - (unsigned)__builtin_clzll(len);
	return 16 + (e - 4) * 8 + (unsigned)((len >> (e - 3)) & 7);
}

uint64_t sb_chip_reuse_bucket_lo(unsigned b)
{
	unsigned e;

	if (b < 16)
		return b;
	if (b >= SB_CHIP_REUSE_BUCKETS)
		return UINT64_MAX;
	e = (b - 16) / 8 + 4;
	return (uint64_t)(8 + (b - 16) % 8) << (e - 3);
}

/* A bucket's upper end, as a double (the last one's is 2^64). */
static double bucket_hi(unsigned b)
{
	return b + 1 < SB_CHIP_REUSE_BUCKETS ? (double)sb_chip_reuse_bucket_lo(b + 1)
					     : 18446744073709551616.0;
}

void sb_chip_reuse_add(struct sb_chip_reuse *r, uint64_t len)
{
	r->n[sb_chip_reuse_bucket(len ? len : 1)]++;
}

void sb_chip_reuse_censor(struct sb_chip_reuse *r, uint64_t window)
{
	r->censored++;
	if (!r->window || window < r->window)
		r->window = window;
}

uint64_t sb_chip_reuse_samples(const struct sb_chip_reuse *r)
{
	uint64_t t = r->censored;

	for (unsigned b = 0; b < SB_CHIP_REUSE_BUCKETS; b++)
		t += r->n[b];
	return t;
}

/*
 * The survival function S(x) = P(length > x) of a histogram, lengths
 * spread evenly over their bucket (so S is linear inside one); censored
 * samples are longer than any x up to the window.  above[b]: the samples
 * beyond bucket b; area[b]: ∫_1^lo(b) S, for SD in O(1).
 */
struct survival {
	const struct sb_chip_reuse *r;
	double total;
	double limit;   /* lengths are known up to here (the window), or all */
	double above[SB_CHIP_REUSE_BUCKETS];
	double area[SB_CHIP_REUSE_BUCKETS];
};

static unsigned bucket_of(double x)
{
	return x >= 18446744073709551615.0 ? SB_CHIP_REUSE_BUCKETS - 1
					    : sb_chip_reuse_bucket((uint64_t)x);
}

static double survival_at(const struct survival *s, double x)
{
	unsigned b;
	double lo, hi;

	if (x < 1)
		return 1;
	b = bucket_of(x);
	lo = (double)sb_chip_reuse_bucket_lo(b);
	hi = bucket_hi(b);
	return (s->above[b] + (double)s->r->n[b] * (hi - x) / (hi - lo)) / s->total;
}

static void survival_init(struct survival *s, const struct sb_chip_reuse *r)
{
	double above = (double)r->censored;

	s->r = r;
	s->total = (double)sb_chip_reuse_samples(r);
	s->limit = r->censored ? (double)r->window : 18446744073709551616.0;
	for (unsigned b = SB_CHIP_REUSE_BUCKETS; b-- > 0;) {
		s->above[b] = above;
		above += (double)r->n[b];
	}
	s->area[0] = s->area[1] = 0;
	for (unsigned b = 1; b + 1 < SB_CHIP_REUSE_BUCKETS; b++) {
		double lo = (double)sb_chip_reuse_bucket_lo(b), hi = bucket_hi(b);

		s->area[b + 1] = s->area[b] + (s->total > 0 ?
			(survival_at(s, lo) + (s->above[b] / s->total)) / 2 * (hi - lo) : 0);
	}
}

/*
 * The x at which a growing quantity reaches `want`, by bisection on
 * [lo, hi]: g(x) nondecreasing.  A function pointer keeps one search for
 * SD and F.
 */
typedef double (*grow_fn)(const void *ctx, double x);

static double solve(grow_fn g, const void *ctx, double lo, double hi, double want)
{
	for (int i = 0; i < 200 && hi - lo > 1e-9 * hi; i++) {
		double mid = lo + (hi - lo) / 2;

		if (g(ctx, mid) < want)
			lo = mid;
		else
			hi = mid;
	}
	return lo + (hi - lo) / 2;
}

/* SD(d) = ∫_1^d S(x) dx: the buckets before d's whole, then the
 * trapezoid of d's up to d. */
static double stack_distance(const void *ctx, double d)
{
	const struct survival *s = ctx;
	unsigned b;
	double lo;

	if (d <= 1)
		return 0;
	b = bucket_of(d);
	lo = (double)sb_chip_reuse_bucket_lo(b);
	return s->area[b] + (survival_at(s, lo) + survival_at(s, d)) / 2 * (d - lo);
}

static void point(const struct survival *s, double x, struct sb_chip_reuse_point *p)
{
	double h = 1 - survival_at(s, x);

	p->hit = h;
	p->stderr_ = sqrt(h * (1 - h) / s->total);
	p->resolved = true;
}

int sb_chip_statstack(const struct sb_chip_reuse *reuse, const double *lines, size_t n,
		      struct sb_chip_reuse_point *out)
{
	struct survival s;
	double top;

	survival_init(&s, reuse);
	if (s.total <= 0)
		return -EINVAL;
	top = stack_distance(&s, s.limit);
	for (size_t k = 0; k < n; k++) {
		if (lines[k] > top) {
			/* beyond what the window shows: every reuse seen within it
			 * hits at least; with no censored sample, all hit */
			point(&s, s.limit, &out[k]);
			out[k].resolved = survival_at(&s, s.limit) <= 0;
			if (!out[k].resolved)
				out[k].stderr_ = 0;
			continue;
		}
		point(&s, solve(stack_distance, &s, 1, s.limit, lines[k]), &out[k]);
	}
	return 0;
}

/* The footprint: F(t) = universe × P(first touch <= t). */
struct footprint {
	struct survival first;
	double universe;
};

static double footprint_at(const void *ctx, double t)
{
	const struct footprint *f = ctx;

	return f->universe * (1 - survival_at(&f->first, t));
}

int sb_chip_hotl(const struct sb_chip_reuse *reuse, const struct sb_chip_reuse *first_touch,
		 double universe, const double *granules, size_t n,
		 struct sb_chip_reuse_point *out)
{
	struct footprint f;
	struct survival s;
	double limit, top;

	survival_init(&s, reuse);
	survival_init(&f.first, first_touch);
	f.universe = universe;
	if (s.total <= 0 || f.first.total <= 0 || !(universe > 0))
		return -EINVAL;
	limit = fmin(s.limit, f.first.limit);
	top = footprint_at(&f, limit);
	for (size_t k = 0; k < n; k++) {
		double t, p, rel, lo, hi;

		if (granules[k] > top) {
			/* the footprint stays under C within the windows: every
			 * reuse seen in them hits; one not seen may be a long
			 * reuse that hits or a last touch that misses */
			point(&s, limit, &out[k]);
			/* (the footprint's window may end before the reuses': a
			 * reuse seen beyond it is as unknown as a censored one) */
			out[k].resolved = survival_at(&s, limit) <= 0;
			if (!out[k].resolved)
				out[k].stderr_ = 0;
			continue;
		}
		t = solve(footprint_at, &f, 0, limit, granules[k]);
		point(&s, t, &out[k]);
		/* the footprint's own error moves t_C: its relative binomial
		 * error at C, carried through the curve between C(1 ± rel) */
		p = granules[k] / universe;
		rel = sqrt((1 - p) / (p * f.first.total));
		lo = 1 - survival_at(&s, solve(footprint_at, &f, 0, limit, granules[k] * (1 - rel)));
		hi = granules[k] * (1 + rel) > top ? 1 - survival_at(&s, limit) :
		     1 - survival_at(&s, solve(footprint_at, &f, 0, limit, granules[k] * (1 + rel)));
		out[k].stderr_ = hypot(out[k].stderr_, (hi - lo) / 2);
	}
	return 0;
}

void sb_chip_rdx_arm(struct sb_chip_rdx_probe *p, uint64_t count, bool near)
{
	p->armed = count;
	p->first = 0;
	p->traps = 0;
	p->near = near;
}

bool sb_chip_rdx_trap(struct sb_chip_rdx_probe *p, struct sb_chip_rdx_sum *s, uint64_t count)
{
	if (!p->traps) {
		p->first = count;
		p->traps = 1;
		return false;
	}
	/* a count that did not advance is the same trap again (another
	 * watch on the word), not a reuse */
	if (count <= p->first)
		return false;
	p->traps = 2;
	sb_chip_reuse_add(&s->reuse, count - p->first);
	return true;
}

void sb_chip_rdx_close(struct sb_chip_rdx_probe *p, struct sb_chip_rdx_sum *s, uint64_t count)
{
	uint64_t from = p->traps ? p->first : p->armed;

	if (p->traps > 1)
		return;
	if (!p->traps && p->near) {
		sb_chip_reuse_add(&s->reuse, 1);
		s->dead_near++;
		return;
	}
	sb_chip_reuse_censor(&s->reuse, count > from ? count - from : 1);
}

int sb_chip_rdx_depths(const struct sb_chip_rdx_sum *s, uint64_t accesses, uint64_t max_bytes,
		       uint32_t line, uint64_t depth[17], uint32_t *resolved)
{
	struct sb_chip_reuse_point pt[16];
	double lines[16], prev = 0;
	uint64_t given = 0;
	int ret;

	*resolved = 0;
	for (int k = 0; k < 17; k++)
		depth[k] = 0;
	if (!line)
		return -EINVAL;
	for (int k = 0; k < 16; k++)
		lines[k] = (double)(max_bytes / 16 * (uint64_t)(k + 1)) / line;
	if ((ret = sb_chip_statstack(&s->reuse, lines, 16, pt)))
		return ret;
	for (int k = 0; k < 16; k++) {
		/* a lower bound past the windows: no higher than a resolved
		 * size before it */
		double h = fmax(prev, fmin(pt[k].hit, 1));
		/* short reuses stand for lengths up to the L2's; its size not
		 * known, for every size */
		bool below_l2 = s->dead_near && (!s->near_bytes ||
						 lines[k] * line < (double)s->near_bytes);
		uint64_t upto = (uint64_t)llround((double)accesses * h);

		*resolved |= (uint32_t)(pt[k].resolved && !below_l2) << k;
		/* the running total rounded, so the counts sum to accesses */
		upto = upto > accesses ? accesses : upto < given ? given : upto;
		depth[k] = upto - given;
		given = upto;
		prev = h;
	}
	depth[16] = accesses - given;
	return 0;
}
