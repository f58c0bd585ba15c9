// SPDX-License-Identifier: MIT
/*
 * The causes driver (causes.h): per section, its instances pooled (block
 * samples in causes_samples.c, exact counts in causes_exact.c, LBR edges
 * in causes_hw.c,
 * on the helpers of causes_pool.c), LIME run and combined, and each cause
 * placed at a profile location a reader can act on (causes_locate.c).
 */
#include "causes.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "causes_loops.h"
#include "causes_priv.h"
#include "cfg/cfg.h"

const char *sb_cause_kind_name(uint16_t kind)
{
	switch (kind) {
	case SB_CAUSE_BRANCH: return "branch";
	case SB_CAUSE_LOOP: return "loop";
	case SB_CAUSE_CALL: return "call";
	case SB_CAUSE_HW: return "hardware";
	case SB_CAUSE_UNDETERMINED: return "undetermined";
	default: return "unknown";
	}
}

/* The cluster of comb's cause k in the result that contributed it, or
 * SB_LIME_NO_CLUSTER. */
static uint32_t cluster_of(struct sb_lime_result *const *res, size_t nres,
			   const struct sb_lime_cause *c)
{
	for (size_t i = 0; i < nres; i++)
		for (size_t j = 0; j < res[i]->ncauses; j++)
			if (res[i]->causes[j].kind == c->kind && res[i]->causes[j].addr == c->addr &&
			    res[i]->cluster_of)
				return res[i]->cluster_of[res[i]->causes[j].event];
	return SB_LIME_NO_CLUSTER;
}

/* Block b reaches block d by forward flow and calls (not back edges). */
static bool reaches(const struct sb_cfg *g, uint32_t b, uint32_t d, uint8_t *seen,
		    uint32_t *stack)
{
	size_t sp = 0;
	bool found = false;

	memset(seen, 0, g->nblocks);
	seen[b] = 1;
	stack[sp++] = b;
	while (sp && !found) {
		uint32_t u = stack[--sp];

		for (uint32_t k = g->out_start[u]; k < g->out_start[u + 1]; k++) {
			uint32_t w = g->edges[k].dst;

			if (g->edges[k].back || seen[w])
				continue;
			found |= w == d;
			seen[w] = 1;
			stack[sp++] = w;
		}
	}
	return found;
}

/*
 * Exact tie j is the outer loop's test of a rotated nest whose inner
 * test is tie b (sb_causes_rotated_outer): the inner test runs first,
 * and reaches the outer's, but its count is the outer trips times its
 * own fixed N; the outer's trips are the decision.
 */
static bool rotated_nest(const struct sb_cfg *g, const struct sb_lime_result *comb, size_t b,
			 size_t j)
{
	long bb = sb_cfg_block_at(g, comb->causes[b].addr), bj = sb_cfg_block_at(g, comb->causes[j].addr);

	return comb->causes[j].kind == SB_CAUSE_LOOP &&
	       (comb->causes[b].kind == SB_CAUSE_BRANCH || comb->causes[b].kind == SB_CAUSE_LOOP) &&
	       bb >= 0 && bj >= 0 && sb_causes_rotated_outer(g, (uint32_t)bj, (uint32_t)bb);
}

/*
 * Ties of one cluster: leaders whose scores are equal are perfectly
 * correlated (eq. 1 and beta alike): one decision seen at several blocks
 * (the test, the loops it runs, a callee's loop).  One is shown, the one
 * no other of them reaches (the decision comes first; a callee's loop
 * never before the call that chose it), the others are kept under it
 * (same[k] = the index of the shown one, else k itself).
 */
#define TIE_EPS 1e-9
static int collapse_ties(const struct sb_cfg *g, struct sb_lime_result *const *res,
			 size_t nres, const struct sb_lime_result *comb, size_t *same)
{
	uint32_t *clus = malloc((comb->ncauses ? comb->ncauses : 1) * sizeof(*clus));
	uint8_t *seen = malloc(g->nblocks ? g->nblocks : 1);
	uint32_t *stack = malloc((g->nblocks ? g->nblocks : 1) * sizeof(*stack));

	if (!clus || !seen || !stack) {
		free(clus);
		free(seen);
		free(stack);
		return -ENOMEM;
	}
	for (size_t k = 0; k < comb->ncauses; k++) {
		clus[k] = cluster_of(res, nres, &comb->causes[k]);
		same[k] = k;
	}
	for (size_t k = 0; k < comb->ncauses; k++) {
		size_t best = k;

		if (same[k] != k || clus[k] == SB_LIME_NO_CLUSTER || comb->causes[k].kind == SB_CAUSE_HW)
			continue;
		/* the group: k and the later ties of its cluster */
		for (size_t j = k + 1; j < comb->ncauses; j++) {
			long bb, bj;

			if (clus[j] != clus[k] || same[j] != j || comb->causes[j].kind == SB_CAUSE_HW ||
			    fabs(comb->causes[j].score - comb->causes[k].score) > TIE_EPS)
				continue;
			bb = sb_cfg_block_at(g, comb->causes[best].addr);
			bj = sb_cfg_block_at(g, comb->causes[j].addr);
			if (bb >= 0 && bj >= 0 && rotated_nest(g, comb, best, j))
				best = j;
			else if (bb >= 0 && bj >= 0 && !rotated_nest(g, comb, j, best) &&
				 reaches(g, (uint32_t)bj, (uint32_t)bb, seen, stack) &&
				 !reaches(g, (uint32_t)bb, (uint32_t)bj, seen, stack))
				best = j;
			same[j] = k;   /* provisional: all point at the group */
		}
		for (size_t j = k; j < comb->ncauses; j++)
			if (same[j] == k || j == k)
				same[j] = best;
	}
	free(clus);
	free(seen);
	free(stack);
	return 0;
}

/*
 * Tied hardware causes (one hardware cluster: one beta, one score) are
 * one behaviour seen at several blocks.  A block that ends in a call holds
 * its callee's samples (a library's, causes_exact.c), a block of its own
 * work holds its own: the load that misses comes first, then the calls.
 */
static bool call_block(const struct sb_cfg *g, uint64_t addr)
{
	long b = sb_cfg_block_at(g, addr);

	return b >= 0 && sb_cfg_ends_in_call(g, (uint32_t)b);
}

static void order_hw_ties(const struct sb_cfg *g, struct sb_lime_result *r)
{
	for (size_t i = 1; i < r->ncauses; i++)
		for (size_t j = i; j > 0; j--) {
			struct sb_lime_cause *x = &r->causes[j - 1], *y = &r->causes[j], t;

			if (x->kind != SB_CAUSE_HW || y->kind != SB_CAUSE_HW ||
			    fabs(x->score - y->score) > 1e-9 || !call_block(g, x->addr) ||
			    call_block(g, y->addr))
				break;
			t = *x;
			*x = *y;
			*y = t;
		}
}

/*
 * Block samples: the decisions the last cause's samples cannot be told
 * from (causes_alternatives.c), listed right after it with its score, each marked
 * as its alternative.  0 or -ENOMEM.
 */
#define MAX_ALTERNATIVES 2
static int add_alternatives(const struct sb_profile *p, const struct sb_causes_graph *g,
			    uint32_t s, struct sb_causes *out, uint32_t *nrank)
{
	struct sb_cause alt[MAX_ALTERNATIVES], *arr, tg = out->c[out->n - 1];
	size_t at = out->n - 1;
	long n;

	/* work only tail calls reach (causes_tail.c): shown at the branch
	 * that sends threads there, the work's own place its alternative */
	if (sb_causes_tail_guard(p, g, s, sb_causes_cause_block(p, g, &tg), &tg)) {
		alt[0] = out->c[at];
		out->c[at].loc = tg.loc;
		out->c[at].addr = tg.addr;
		n = 1;
	} else {
		n = sb_causes_alternatives(p, g, s, &out->c[at], alt, MAX_ALTERNATIVES);
	}
	if (n <= 0)
		return (int)n;
	if (!(arr = realloc(out->c, (out->n + (size_t)n) * sizeof(*arr))))
		return -ENOMEM;
	out->c = arr;
	for (long i = 0; i < n; i++) {
		struct sb_cause *a = &out->c[out->n++];

		*a = alt[i];
		a->section = s;
		a->rank = ++*nrank;
		a->score = out->c[at].score;
		a->same_cluster = 0;
		a->alternative_of = out->c[at].rank;
		a->nalternatives = 0;
	}
	out->c[at].nalternatives = (uint32_t)n;
	return 0;
}

/* Leaders placed at one line (the decision several blocks of its work
 * lead to: the guard that enters a compiler's copy of a loop, found from
 * each block of that copy) are one cause: the later ones are kept under
 * the first shown, as its cluster's are. */
static void fold_same_line(const struct sb_profile *p, const struct sb_lime_result *comb,
			   const struct sb_cause *at, size_t *same)
{
	for (size_t k = 0; k < comb->ncauses; k++) {
		if (same[k] != k || at[k].loc < 0 || !p->locs[at[k].loc].line ||
		    !(comb->causes[k].score > 0))
			continue;
		for (size_t j = 0; j < k; j++)
			if (same[j] == j && at[j].loc >= 0 && comb->causes[j].score > 0 &&
			    sb_causes_same_line(&p->locs[at[j].loc], &p->locs[at[k].loc])) {
				for (size_t i = k; i < comb->ncauses; i++)
					if (same[i] == k)
						same[i] = j;
				break;
			}
	}
}

/* Where a profile's vectors come from, most telling first. */
enum vec_path {
	PATH_SAMPLES,   /* cpu-clock samples per block: time */
	PATH_LBR,       /* LBR-sampled edges (+ PEBS loads): --events hw */
	PATH_EXACT,     /* exact block counts: scalebpf cc */
};

static int section_causes(const struct sb_profile *p, const struct sb_causes_graph *g,
			  const struct sb_lime_opts *o, uint32_t s, size_t **by_inst,
			  size_t *ninst_vec, enum vec_path path, struct sb_causes *out)
{
	struct sb_lime_result **res = calloc(p->ninstances ? p->ninstances : 1, sizeof(*res));
	double *w = calloc(p->ninstances ? p->ninstances : 1, sizeof(*w));
	struct sb_lime_result *comb = NULL;
	size_t nres = 0, *same = NULL;
	uint32_t *rank = NULL, nrank = 0;
	struct sb_cause *at = NULL;
	int ret = -ENOMEM;

	if (!res || !w)
		goto out;
	{
		struct sb_causes_pooled li;

		ret = path == PATH_EXACT ? sb_causes_pool_exact(p, g, s, by_inst, ninst_vec, &li, NULL)
		    : path == PATH_LBR ? sb_causes_pool_hw(p, g, s, by_inst, ninst_vec, &li)
				       : sb_causes_pool_samples(p, g, s, by_inst, ninst_vec, &li);
		if (!ret && li.in.nevents && li.in.nthreads >= 3)
			ret = sb_lime_analyze(g->merged, &li.in, o, &res[nres]);
		if (!ret && li.in.nevents && li.in.nthreads >= 3)
			w[nres++] = li.in.imbalance ? li.in.imbalance : 1;
		sb_causes_pooled_free(&li);
		if (ret && ret != -ENOENT)
			goto out;
	}
	ret = 0;
	if (!nres)
		goto out;
	for (uint32_t i = 0; i < p->ninstances; i++)
		out->ninstances += p->instances[i].section == s && ninst_vec[i];
	out->nsections_analyzed++;
	ret = sb_lime_combine((const struct sb_lime_result *const *)res, w, nres, &comb);
	if (ret)
		goto out;
	sb_causes_order_ties(g->merged, comb);
	order_hw_ties(g->merged, comb);
	same = malloc((comb->ncauses ? comb->ncauses : 1) * sizeof(*same));
	rank = calloc(comb->ncauses ? comb->ncauses : 1, sizeof(*rank));
	at = malloc((comb->ncauses ? comb->ncauses : 1) * sizeof(*at));
	if (!same || !rank || !at || sb_causes_sink_sync(p, g, s, comb, at) ||
	    (ret = collapse_ties(g->merged, res, nres, comb, same))) {
		ret = -ENOMEM;
		goto out;
	}
	fold_same_line(p, comb, at, same);
	/* shown causes ranked 1..k in score order, then those kept under them */
	for (int pass = 0; pass < 2; pass++)
		for (size_t k = 0; k < comb->ncauses; k++) {
			struct sb_cause *c, *arr;

			if ((same[k] == k) != (pass == 0))
				continue;
			/* more of it, less time: it explains no imbalance */
			if (!(comb->causes[k].score > 0))
				continue;
			if (!(arr = realloc(out->c, (out->n + 1) * sizeof(*arr)))) {
				ret = -ENOMEM;
				goto out;
			}
			out->c = arr;
			c = &out->c[out->n++];
			memset(c, 0, sizeof(*c));
			c->section = s;
			c->rank = ++nrank;
			if (same[k] == k)
				rank[k] = c->rank;
			else
				c->same_cluster = rank[same[k]];
			c->score = comb->causes[k].score;
			/* shown at the decision, placed once (sb_causes_sink_sync) */
			c->kind = at[k].kind;
			c->loc = at[k].loc;
			c->addr = at[k].addr;
			c->binary = at[k].binary;
			/* a branch LIME moved to the guard of its leader block
			 * (lime_leader.c) that the profile has no line for (an
			 * unsampled, uncounted block): the leader's own block,
			 * which has one, rather than a bare address */
			if (comb->causes[k].own_addr && (c->loc < 0 || !p->locs[c->loc].line)) {
				struct sb_cause own = *c;

				own.kind = SB_CAUSE_CALL;
				sb_causes_locate(p, g, comb->causes[k].own_addr, &own);
				if (own.loc >= 0 && p->locs[own.loc].line)
					*c = own;
			}
			if (path == PATH_SAMPLES && same[k] == k &&
			    (ret = add_alternatives(p, g, s, out, &nrank)))
				goto out;
		}
out:
	for (size_t i = 0; i < nres; i++)
		sb_lime_result_free(res[i]);
	sb_lime_result_free(comb);
	free(res);
	free(w);
	free(same);
	free(rank);
	free(at);
	return ret;
}

int sb_causes_compute(const struct sb_profile *p, const struct sb_lime_opts *o,
		      struct sb_causes *out, char *err, size_t errlen)
{
	size_t **by_inst = NULL, *nvec = NULL;
	enum vec_path path = PATH_SAMPLES;
	struct sb_causes_graph g;
	int ret;

	memset(out, 0, sizeof(*out));
	out->block_samples = 1;
	if (!p->nvectors)
		return 0;
	/* Counts decide the kinds of causes: exact ones (`scalebpf cc`)
	 * first, else LBR-sampled edges; block samples cannot. */
	for (size_t v = 0; v < p->nvectors && path != PATH_EXACT; v++) {
		uint32_t k = p->events[p->vectors[v].event].kind;

		if (k == SB_EVK_BLOCK_COUNT)
			path = PATH_EXACT;
		else if (k == SB_EVK_EDGE)
			path = PATH_LBR;
	}
	out->block_samples = path == PATH_SAMPLES;
	out->exact_counts = path == PATH_EXACT;
	ret = sb_causes_graph_load(p, &g, err, errlen);
	if (ret)
		goto out;
	ret = -ENOMEM;
	by_inst = calloc(p->ninstances, sizeof(*by_inst));
	nvec = calloc(p->ninstances, sizeof(*nvec));
	if (!by_inst || !nvec)
		goto out;
	for (size_t v = 0; v < p->nvectors; v++)
		nvec[p->vectors[v].instance]++;
	for (size_t i = 0; i < p->ninstances; i++) {
		by_inst[i] = malloc((nvec[i] ? nvec[i] : 1) * sizeof(size_t));
		if (!by_inst[i])
			goto out;
		nvec[i] = 0;
	}
	for (size_t v = 0; v < p->nvectors; v++) {
		uint32_t i = p->vectors[v].instance;

		by_inst[i][nvec[i]++] = v;
	}
	for (uint32_t s = 0; s < p->nsections; s++)
		if ((ret = section_causes(p, &g, o, s, by_inst, nvec, path, out)))
			goto out;
	ret = sb_causes_evidence_fill(p, &g, o, out);
out:
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory while computing causes");
	for (size_t i = 0; by_inst && i < p->ninstances; i++)
		free(by_inst[i]);
	free(by_inst);
	free(nvec);
	sb_causes_graph_free(&g, p->nbinaries);
	if (ret)
		sb_causes_free(out);
	return ret;
}

void sb_causes_free(struct sb_causes *c)
{
	free(c->c);
	free(c->ev);
	memset(c, 0, sizeof(*c));
}
