/* gen_emit.c — the planted cause's code.
 *
 * Every cause makes threads do different amounts of the same kind of work
 * per instance (or, for the cache cause, the same work at different
 * memory cost), decided at one line whose number is recorded as it is
 * written (accept_here).  Causes are written as people write them: an
 * ownership test, a root-only branch, a data-dependent trip count, a
 * triangular loop, an early exit from a search, a working set that fits a
 * cache or not, a lock held longer by some.  Where the work sits is
 * gen_work.c's; a search or a pointer chase places its own loop.
 */
#include <stdlib.h>
#include <string.h>

#include "gen.h"

#define UNIT_US 1.3     /* one work unit: 1000 LCG steps, ~1.3 us here */

static int owner_nb, owner_dim, owner_rot, owner_form, owner_fn;
static int root_id, root_k, root_form;
static int trip_lo, trip_mul, trip_sp, trip_rot;
static int tri_k, tri_chunk;
static long srch_len;
static int srch_form;
static int cache_kb_small, cache_mb_big, cache_mod;
static int lock_h0, lock_h1, lock_mod;
static int bal_units;

/* --- the causes ------------------------------------------------------ */

static double tw[64];    /* per-thread work (us) of one instance at scale 1 */
static double serial_us; /* work that cannot overlap (lock holds) */

static int owner_count(struct prog *p, int t)
{
	int c = 0;

	if (owner_dim == 1) {
		for (int b = 0; b < owner_nb; b++)
			c += b % p->nt == t;
		return c;
	}
	for (int i = 0; i < owner_nb; i++)
		for (int j = 0; j < owner_nb; j++)
			c += (owner_form ? (i + 2 * j) : (i + j)) % p->nt == t;
	return c;
}

/* Draws the cause's parameters; fills tw[] (per-thread us per unit of
 * scale) for the run-length plan; p->params says them. */
static void draw_cause(struct prog *p)
{
	int nt = p->nt;

	bal_units = p->place == P_SHARED ? 1 + pick(p, 3) : pick(p, 3);
	if (p->cause == C_TRI && p->region_per_iter)
		bal_units = 0;   /* the region is the loop: nothing before it */
	for (int t = 0; t < nt; t++)
		tw[t] = bal_units * UNIT_US;
	serial_us = 0;
	switch (p->cause) {
	case C_OWNER:
		owner_dim = 1 + pick(p, 2);
		owner_rot = pick(p, 2);
		owner_form = pick(p, 2);
		owner_fn = pick(p, 2);
		for (int tries = 0;; tries++) {
			int mx = 0, sum = 0;

			owner_nb = owner_dim == 1 ? nt * (1 + pick(p, 3)) + 1 + pick(p, nt - 1)
						  : nt / 2 + 1 + pick(p, nt);
			for (int t = 0; t < nt; t++) {
				int c = owner_count(p, t);
				sum += c;
				mx = c > mx ? c : mx;
			}
			if (mx * nt >= 1.12 * sum || tries > 50)
				break;
		}
		for (int t = 0; t < nt; t++)
			tw[t] += owner_count(p, t) * UNIT_US;
		snprintf(p->params, sizeof(p->params), "owner_dim=%d blocks=%d rotate=%d form=%s helper_fn=%d",
			 owner_dim, owner_nb, owner_rot, owner_form ? "i+2j" : "i+j", owner_fn);
		break;
	case C_ROOT:
		root_id = pick(p, 3) == 0 ? pick(p, nt) : 0;
		root_k = 2 + pick(p, 6);
		root_form = pick(p, 3);
		tw[root_id] += root_k * UNIT_US;
		snprintf(p->params, sizeof(p->params), "root=%d extra_units=%d", root_id, root_k);
		break;
	case C_TRIP:
		trip_lo = 1 + pick(p, 4);
		trip_mul = 3 + 2 * pick(p, 5);
		trip_sp = 2 + pick(p, 6);
		trip_rot = pick(p, 2);
		for (int t = 0; t < nt; t++)
			tw[t] += (trip_lo + (t * trip_mul + 1) % trip_sp) * UNIT_US;
		snprintf(p->params, sizeof(p->params), "trip_lo=%d trip_mul=%d trip_spread=%d rotate=%d",
			 trip_lo, trip_mul, trip_sp, trip_rot);
		break;
	case C_TRI:
		tri_k = 2 + pick(p, 4);
		tri_chunk = p->omp_dyn ? 1 + pick(p, tri_k) : 0;
		for (int t = 0; t < nt; t++) {
			long lo = (long)t * tri_k, hi = lo + tri_k;
			tw[t] += (double)(hi * (hi - 1) - lo * (lo - 1)) / 2 * UNIT_US * 0.1;
		}
		snprintf(p->params, sizeof(p->params), "rows=%d chunk=%d", nt * tri_k, tri_chunk);
		break;
	case C_SEARCH:
		srch_len = 4096L << pick(p, 4);
		srch_form = pick(p, 2);
		for (int t = 0; t < nt; t++)   /* strlen: vectorized, ~0.012 ns a byte here */
			tw[t] += p->place == P_LIB ? (double)(srch_len * 4 + (long)(((unsigned long)t * 2654435761UL) % (unsigned long)(srch_len * 12))) * 0.000012
						 : (srch_len / 8 + ((long)t * 2654435761L) % (srch_len * 3 / 4)) * 0.0006;
		snprintf(p->params, sizeof(p->params), "len=%ld form=%s", srch_len,
			 srch_form ? "for+break" : "one-line");
		break;
	case C_CACHE:
		cache_kb_small = 8 << pick(p, 3);
		cache_mb_big = (nt > 16 ? 4 : 8) << pick(p, 2);
		cache_mod = 2 + pick(p, 2);
		for (int t = 0; t < nt; t++)
			tw[t] += (t % cache_mod == 0 ? 0.08 : p->place == P_LIB ? 0.0025 : 0.0015) * 1000;
		snprintf(p->params, sizeof(p->params), "small_kib=%d big_mib=%d big_if=me%%%d==0",
			 cache_kb_small, cache_mb_big, cache_mod);
		break;
	case C_LOCK:
		lock_h0 = 1 + pick(p, 2);
		lock_h1 = 2 + pick(p, 5);
		lock_mod = 2 + pick(p, 3);
		for (int t = 0; t < nt; t++) {
			double h = (lock_h0 + (t % lock_mod == 1 ? lock_h1 : 0)) * UNIT_US;
			tw[t] += h;
			serial_us += h;
		}
		snprintf(p->params, sizeof(p->params), "hold=%d+%d_if_me%%%d==1", lock_h0, lock_h1, lock_mod);
		break;
	}
}

/* A planted cause must be one: the busiest thread does >= 25% more than
 * the mean (estimated; a dynamic schedule may even it out, as it does in
 * real programs).  Then the instance's length at scale 1. */
void plan_cause(struct prog *p)
{
	int nt = p->nt;

	for (int tries = 0; tries < 40; tries++) {
		double mx = 0, sum = 0;

		draw_cause(p);
		for (int t = 0; t < nt; t++) {
			mx = tw[t] > mx ? tw[t] : mx;
			sum += tw[t];
		}
		if (mx * nt >= 1.25 * sum)
			break;
	}
	/* one instance at scale 1: the busiest thread, the cores' share, or
	 * the serialized holds, whichever is longest; barriers cost ~20 us */
	double mx = 0, sum = 0;

	for (int t = 0; t < nt; t++) {
		mx = tw[t] > mx ? tw[t] : mx;
		sum += tw[t];
	}
	p->inst_us = mx > sum / 2 ? mx : sum / 2;
	p->inst_us = p->inst_us > serial_us ? p->inst_us : serial_us;
}

/* Globals the cause needs (arrays filled in main). */
void emit_cause_globals(struct prog *p)
{
	switch (p->cause) {
	case C_OWNER:
		if (owner_fn) {
			L(p, "static inline int owns(long i, long j, int who)");
			L(p, "{");
			accept_here(p);
			L(p, "\treturn (%s) %% nthreads == who;", owner_form ? "i + 2 * j" : "i + j");
			L(p, "}");
		}
		break;
	case C_TRIP:
		L(p, "static unsigned long trips[64];");
		break;
	case C_SEARCH:
		L(p, "static int *hay;");
		L(p, "static int keys[64];");
		if (p->place == P_LIB)
			L(p, "static char *strs[64];");
		if (p->place != P_INLINE && p->place != P_LIB) {
			L(p, "static __attribute__((noinline)) long find_key(const int *a, long n, int key)");
			L(p, "{");
			L(p, "\tlong k;");
			if (srch_form) {
				accept_here(p);
				L(p, "\tfor (k = 0; k < n; k++)");
				accept_here(p);
				L(p, "\t\tif (a[k] == key)");
				L(p, "\t\t\tbreak;");
			} else {
				accept_here(p);
				L(p, "\tfor (k = 0; k < n && a[k] != key; k++)");
				L(p, "\t\t;");
			}
			L(p, "\treturn k;");
			L(p, "}");
			if (p->place == P_DEEP || p->place == P_TAIL) {
				L(p, "static __attribute__((noinline)) long lookup(const int *a, long n, int key)");
				L(p, "{");
				if (p->place == P_TAIL) {
					L(p, "\treturn find_key(a, n, key);");
				} else {
					L(p, "\tlong r = find_key(a, n, key);");
					L(p, "\tsink += 1;");
					L(p, "\treturn r;");
				}
				L(p, "}");
			}
			if (p->place == P_FPTR)
				L(p, "static long (*volatile find_fn)(const int *, long, int);");
		}
		break;
	case C_CACHE:
		L(p, "static size_t *chains[64];");
		if (p->place == P_LIB)   /* set at run time: memcpy stays a library call */
			L(p, "size_t elem_bytes;");
		if (p->place != P_INLINE && p->place != P_LIB) {
			L(p, "static __attribute__((noinline)) size_t %s(const size_t *c, size_t at, unsigned long n)", p->chase);
			L(p, "{");
			L(p, "\tfor (unsigned long a = 0; a < n; a++)");
			accept_here(p);
			L(p, "\t\tat = c[at];");
			L(p, "\treturn at;");
			L(p, "}");
			if (p->place == P_DEEP || p->place == P_TAIL) {
				L(p, "static __attribute__((noinline)) size_t walk(const size_t *c, size_t at, unsigned long n)");
				L(p, "{");
				if (p->place == P_TAIL) {
					L(p, "\treturn %s(c, at, n);", p->chase);
				} else {
					L(p, "\tsize_t r = %s(c, at, n);", p->chase);
					L(p, "\tsink += 1;");
					L(p, "\treturn r;");
				}
				L(p, "}");
			}
			if (p->place == P_FPTR)
				L(p, "static size_t (*volatile chase_fn)(const size_t *, size_t, unsigned long);");
		}
		break;
	case C_LOCK:
		if (p->rt == R_GOMP || p->rt == R_OMP)
			L(p, "static omp_lock_t big_lock;");
		else
			L(p, "static pthread_mutex_t big_lock = PTHREAD_MUTEX_INITIALIZER;");
		break;
	}
	L(p, "%s", "");
}

/* Single-threaded setup in main, before the threads start. */
void emit_cause_setup(struct prog *p, const char *ind)
{
	if (p->place == P_FPTR)
		L(p, "%swork_fn = %s;", ind, p->kern);
	if (p->place == P_LIB)
		L(p, "%sfor (int k = 0; k < 40; k++) qtmpl[k] = (unsigned)(k * 2654435761u);", ind);
	switch (p->cause) {
	case C_TRIP:
		L(p, "%sfor (int t = 0; t < 64; t++)", ind);
		L(p, "%s\ttrips[t] = %d + (unsigned long)(t * %d + 1) %% %d;", ind, trip_lo, trip_mul, trip_sp);
		break;
	case C_SEARCH:
		L(p, "%shay = malloc(%ld * sizeof(*hay));", ind, srch_len);
		L(p, "%sfor (long k = 0; k < %ld; k++)", ind, srch_len);
		L(p, "%s\thay[k] = (int)(2 * k + 1);", ind);
		L(p, "%sfor (int t = 0; t < 64; t++)", ind);
		L(p, "%s\tkeys[t] = hay[%ld + ((long)t * 2654435761L) %% %ld];", ind, srch_len / 8, srch_len * 3 / 4);
		if (p->place == P_FPTR)
			L(p, "%sfind_fn = find_key;", ind);
		if (p->place == P_LIB) {
			L(p, "%sfor (int t = 0; t < 64; t++) {", ind);
			L(p, "%s\tsize_t n = %ld + ((size_t)t * 2654435761UL) %% %ld;", ind, srch_len * 4, srch_len * 12);
			L(p, "%s\tstrs[t] = malloc(n + 1);", ind);
			L(p, "%s\tmemset(strs[t], 'x', n);", ind);
			L(p, "%s\tstrs[t][n] = 0;", ind);
			L(p, "%s}", ind);
		}
		break;
	case C_CACHE:
		L(p, "%sfor (int t = 0; t < nthreads && t < 64; t++) {", ind);
		L(p, "%s\tsize_t n = t %% %d == 0 ? (size_t)%d << 17 : (size_t)%d << 7;", ind, cache_mod, cache_mb_big, cache_kb_small);
		L(p, "%s\tunsigned long long x = 88172645463325252ULL + (unsigned)t;", ind);
		L(p, "%s\tchains[t] = malloc(n * sizeof(size_t));", ind);
		L(p, "%s\tfor (size_t k = 0; k < n; k++)", ind);
		L(p, "%s\t\tchains[t][k] = k;", ind);
		L(p, "%s\tfor (size_t k = n - 1; k > 0; k--) {", ind);
		L(p, "%s\t\tsize_t j, s;", ind);
		L(p, "%s\t\tx ^= x << 13; x ^= x >> 7; x ^= x << 17;", ind);
		L(p, "%s\t\tj = (size_t)(x %% k);", ind);
		L(p, "%s\t\ts = chains[t][k]; chains[t][k] = chains[t][j]; chains[t][j] = s;", ind);
		L(p, "%s\t}", ind);
		L(p, "%s}", ind);
		if (p->place == P_FPTR)
			L(p, "%schase_fn = %s;", ind, p->chase);
		if (p->place == P_LIB)
			L(p, "%selem_bytes = sizeof(chains[0][0]);", ind);
		break;
	case C_LOCK:
		if (p->rt == R_GOMP || p->rt == R_OMP)
			L(p, "%somp_init_lock(&big_lock);", ind);
		break;
	}
}

static void search_site(struct prog *p, const char *ind, const char *me)
{
	char ii[16];

	snprintf(ii, sizeof(ii), "%s\t", ind);
	L(p, "%sfor (unsigned long r = 0; r < %lu; r++) {", ind, p->bu);
	switch (p->place) {
	case P_INLINE:
		L(p, "%slong k;", ii);
		if (srch_form) {
			accept_here(p);
			L(p, "%sfor (k = 0; k < %ld; k++)", ii, srch_len);
			accept_here(p);
			L(p, "%s\tif (hay[k] == keys[%s])", ii, me);
			L(p, "%s\t\tbreak;", ii);
		} else {
			accept_here(p);
			L(p, "%sfor (k = 0; k < %ld && hay[k] != keys[%s]; k++)", ii, srch_len, me);
			L(p, "%s\t;", ii);
		}
		L(p, "%ssink += (unsigned long)k;", ii);
		break;
	case P_LIB: /* the scan is strlen's: its call is the line to name */
		accept_here(p);
		L(p, "%ssink += strlen(strs[%s] + (r & 7));", ii, me);  /* not loop-invariant: not hoisted */
		break;
	case P_DEEP: case P_TAIL:
		L(p, "%ssink += (unsigned long)lookup(hay, %ld, keys[%s]);", ii, srch_len, me);
		break;
	case P_FPTR:
		L(p, "%ssink += (unsigned long)find_fn(hay, %ld, keys[%s]);", ii, srch_len, me);
		break;
	default:
		L(p, "%ssink += (unsigned long)find_key(hay, %ld, keys[%s]);", ii, srch_len, me);
	}
	L(p, "%s}", ind);
}

static void cache_site(struct prog *p, const char *ind, const char *me)
{
	switch (p->place) {
	case P_INLINE:
		L(p, "%s{", ind);
		L(p, "%s\tsize_t at = 0;", ind);
		L(p, "%s\tfor (unsigned long a = 0; a < %lu; a++)", ind, p->bu * 1000);
		accept_here(p);
		L(p, "%s\t\tat = chains[%s][at];", ind, me);
		L(p, "%s\tsink = at;", ind);
		L(p, "%s}", ind);
		break;
	case P_LIB: /* the same chase, each load made by memcpy: a generic
		     * element copy whose size is known at run time only */
		L(p, "%s{", ind);
		L(p, "%s\tsize_t at = 0;", ind);
		L(p, "%s\tfor (unsigned long a = 0; a < %lu; a++)", ind, p->bu * 1000);
		accept_here(p);
		L(p, "%s\t\tmemcpy(&at, chains[%s] + at, elem_bytes);", ind, me);
		L(p, "%s\tsink = at;", ind);
		L(p, "%s}", ind);
		break;
	case P_DEEP: case P_TAIL:
		L(p, "%ssink = walk(chains[%s], 0, %lu);", ind, me, p->bu * 1000);
		break;
	case P_FPTR:
		L(p, "%ssink = chase_fn(chains[%s], 0, %lu);", ind, me, p->bu * 1000);
		break;
	default:
		L(p, "%ssink = %s(chains[%s], 0, %lu);", ind, p->chase, me, p->bu * 1000);
	}
}

/* The balanced part, then the planted cause, in the worker's loop body
 * (the iteration is `it`, the thread `me`-by-another-name). */
void emit_cause(struct prog *p, const char *ind)
{
	const char *me = p->me;
	char ii[16], iii[16], u[32];

	snprintf(ii, sizeof(ii), "%s\t", ind);
	snprintf(iii, sizeof(iii), "%s\t\t", ind);
	snprintf(u, sizeof(u), "%luUL", p->bu);
	if (bal_units) {
		char b[32];

		snprintf(b, sizeof(b), "%lu", bal_units * p->bu);
		if (p->place == P_SHARED)
			emit_work(p, ind, b);
		else
			L(p, "%s%s(%s);", ind, p->bal, b);
	}
	switch (p->cause) {
	case C_OWNER: {
		const char *rot = owner_rot ? " + (long)it" : "";

		if (owner_dim == 1) {
			L(p, "%sfor (long b = 0; b < %d; b++) {", ind, owner_nb);
			accept_here(p);
			if (owner_fn)
				L(p, "%sif (owns(b%s, 0, %s)) {", ii, rot, me);
			else
				L(p, "%sif ((b%s) %% nthreads == %s) {", ii, rot, me);
			emit_work(p, iii, u);
			L(p, "%s}", ii);
			L(p, "%s}", ind);
		} else {
			L(p, "%sfor (long i = 0; i < %d; i++) {", ind, owner_nb);
			L(p, "%sfor (long j = 0; j < %d; j++) {", ii, owner_nb);
			accept_here(p);
			if (owner_fn)
				L(p, "%sif (!owns(i%s, j, %s))", iii, rot, me);
			else
				L(p, "%sif ((%s%s) %% nthreads != %s)", iii, owner_form ? "i + 2 * j" : "i + j", rot, me);
			L(p, "%s\tcontinue;", iii);
			emit_work(p, iii, u);
			L(p, "%s}", ii);
			L(p, "%s}", ind);
		}
		break;
	}
	case C_ROOT:
		accept_here(p);
		if (root_form == 0)
			L(p, "%sif (%s == %d) {", ind, me, root_id);
		else if (root_form == 1 && root_id == 0)
			L(p, "%sif (!%s) {", ind, me);
		else
			L(p, "%sif (%d == %s) {", ind, root_id, me);
		snprintf(u, sizeof(u), "%luUL", p->bu * root_k);
		emit_work(p, ii, u);
		L(p, "%s}", ind);
		break;
	case C_TRIP:
		L(p, "%s{", ind);
		if (trip_rot)
			L(p, "%s\tunsigned long cnt = trips[(%s + (int)it) %% nthreads];", ind, me);
		else
			L(p, "%s\tunsigned long cnt = trips[%s];", ind, me);
		accept_here(p);
		L(p, "%s\twhile (cnt-- > 0) {", ind);
		emit_work(p, iii, u);
		L(p, "%s\t}", ind);
		L(p, "%s}", ind);
		break;
	case C_TRI: {
		long rows = (long)p->nt * tri_k;

		if (p->rt == R_GOMP || p->rt == R_OMP) {
			const char *sch = p->omp_dyn ? "dynamic" : "static";
			char ch[16] = "";

			if (p->omp_dyn)
				snprintf(ch, sizeof(ch), ", %d", tri_chunk);
			/* A dynamic schedule deals rows by chunks as threads come:
			 * how many rows a thread took (the worksharing loop's trip
			 * count, the runtime's dispatch, which compilers place at
			 * the pragma) decides its work as much as the rows' lengths
			 * do, so those lines are the cause too.  A static schedule
			 * gives every thread as many rows. */
			if (p->region_per_iter) {  /* the region ends the section */
				sync_here(p);
				if (p->omp_dyn)
					accept_here(p);
				L(p, "%s#pragma omp parallel for schedule(%s%s)", ind, sch, ch);
			} else {
				if (p->omp_dyn)
					accept_here(p);
				L(p, "%s#pragma omp for schedule(%s%s) nowait", ind, sch, ch);
			}
			if (p->omp_dyn)
				accept_here(p);
			L(p, "%sfor (long i = 0; i < %ld; i++) {", ind, rows);
		} else {
			L(p, "%sfor (long i = (long)%s * %ld / nthreads; i < (long)(%s + 1) * %ld / nthreads; i++) {",
			  ind, me, rows, me, rows);
		}
		accept_here(p);
		L(p, "%sfor (long j = 0; j < i; j++) {", ii);
		snprintf(u, sizeof(u), "%luUL / 10 + 1", p->bu);
		emit_work(p, iii, u);
		L(p, "%s}", ii);
		L(p, "%s}", ind);
		break;
	}
	case C_SEARCH:
		search_site(p, ind, me);
		break;
	case C_CACHE:
		cache_site(p, ind, me);
		break;
	case C_LOCK:
		if (p->rt == R_GOMP || p->rt == R_OMP)
			L(p, "%somp_set_lock(&big_lock);", ind);
		else
			L(p, "%spthread_mutex_lock(&big_lock);", ind);
		accept_here(p);
		L(p, "%sfor (int h = 0; h < %d + (%s %% %d == 1 ? %d : 0); h++) {", ind, lock_h0, me, lock_mod, lock_h1);
		emit_work(p, ii, u);
		L(p, "%s}", ind);
		if (p->rt == R_GOMP || p->rt == R_OMP)
			L(p, "%somp_unset_lock(&big_lock);", ind);
		else
			L(p, "%spthread_mutex_unlock(&big_lock);", ind);
		break;
	}
}
