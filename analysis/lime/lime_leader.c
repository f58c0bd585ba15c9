// SPDX-License-Identifier: MIT
/*
 * LIME §3.3-§3.4: the causes a regression-selected cluster stands for.
 *
 * §3.3: a cluster holding any EDGE or BLOCK event is a control-flow
 * cluster; its hardware events ride along (control flow explains them).
 * A cluster of hardware events only reports each of them.
 *
 * §3.4 on edge profiles.  The paper's clusters are sets of vertices; ours
 * are sets of edges.  A vertex is "in" an edge cluster when one of its
 * outgoing edges is: the block that takes the cluster's edges, as the
 * if-statement of Figure 3 (left) belongs to the cluster of its then-path
 * though its own execution count does not vary.  Then the paper's
 * definition applies unchanged: v in C is a leader when every incoming
 * non-back edge (s, v) has s outside C.  For a loop cluster {H->B, B->L,
 * L->H} the header H is in C through H->B and its only in-cluster
 * predecessor L comes by the back edge, so H leads (Figure 3, middle).
 *
 * Eq. 1 takes the max over a vertex's edges on each side, as the paper
 * writes it: s_v = max_x r(oe_x, T) - max_y r(ie_y, T), back edges left
 * out of both sides, an edge without a (varying) event counting r = 0 and
 * an empty side counting 0.
 *
 * Block profiles (software sampling): a BLOCK event counts samples, i.e.
 * time spent in the block, not executions.  The vertices of a cluster are
 * its blocks.  Edge counts are not observed, so eq. 1 uses each edge's
 * source block as its estimate: flow out of v is v's own samples, flow
 * into v is its (non-back) predecessors' samples.  Whether a block's
 * extra samples are extra executions or slower ones (cache misses with
 * identical control flow) cannot be told from samples, so every cause
 * found through block events is SB_CAUSE_UNDETERMINED: never a confident
 * control-flow cause, always at the right block.
 *
 * Call sites in block profiles.  A sample also counts for every call site
 * on its call chain, so a call site's block holds the time of everything
 * it runs.  A callee's loop then varies exactly as its caller's decision
 * does, and the CFG's CALL edge cannot tie them: the callee's entry block
 * runs too briefly to be sampled, and tail calls (a wrapper that ends in
 * `jmp`) keep no frame: their CALL edge (version 4 graphs) comes from a
 * block that holds none of the callee's samples.  The samples show the call instead: call
 * site A, in another function than block v, accounts for v's variation
 * when v - A does not vary beyond Poisson noise (sb_lime_overdispersed;
 * everything v does differently across threads it does under A).  Such an
 * A counts as v's predecessor, as a CALL edge into v's function would: v
 * is no leader when A is in the cluster, and A is on eq. 1's incoming
 * side.  A v that itself calls into A's function is A's caller, not its
 * callee; so is a v with clearly fewer samples than A: A then runs under
 * v through further calls (v -> f -> helper, A the helper's call, which
 * also holds the helper's time from other callers), and taking A for v's
 * caller would make a cycle with no leader, hiding v's decision.
 *
 * Kinds of edge-profile leaders: a back edge into v among the cluster's
 * edges -> LOOP (v heads the loop whose trip count varies); else a
 * conditional (taken/fall-through) cluster edge out of v -> BRANCH; else
 * (jumps, call-returns, straight-line) -> CALL.  The address is v's last
 * instruction, the branch or call that decides.
 *
 * A cluster without any leader (a cycle with no back edge, irreducible
 * flow) reports its member vertex with the highest eq. 1 score instead.
 */
#include "lime_priv.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

struct sb_lime_leaders {
	const struct sb_cfg *cfg;
	const struct sb_lime_instance *in;
	const double *ecorr;
	bool edge_mode;                 /* the instance has EDGE events */
	uint32_t *edge_ev, *block_ev;   /* first event of an edge / block */
	double *out_r, *in_r;           /* eq. 1 scratch, nedges + 1 */
	/* Per block, valid when stamped with the current cluster's gen. */
	uint32_t *in_c, *via_edge, *loop, *cond;
	uint32_t *ein;                  /* per edge: in the cluster (gen) */
	uint32_t *ev;                   /* the event that names the vertex */
	uint32_t *verts;                /* the cluster's vertices */
	size_t nverts;
	uint32_t gen;
	uint32_t *calls;                /* block mode: live call-site events */
	size_t ncalls;
	double alpha;                   /* level of "does not vary beyond" */
	uint32_t *rseen, *rstack, rgen; /* under(): per block stamp, stack */
};

double sb_lime_eq1(const double *out_r, size_t nout, const double *in_r, size_t nin)
{
	double o = nout ? -INFINITY : 0, i = nin ? -INFINITY : 0;

	for (size_t k = 0; k < nout; k++)
		o = fmax(o, out_r[k]);
	for (size_t k = 0; k < nin; k++)
		i = fmax(i, in_r[k]);
	return o - i;
}

int sb_lime_causes_push(struct sb_lime_causes *c, const struct sb_lime_cause *x)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 16;
		struct sb_lime_cause *v = realloc(c->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		c->v = v;
		c->cap = cap;
	}
	c->v[c->n++] = *x;
	return 0;
}

static uint32_t *nones(size_t n)
{
	uint32_t *a = malloc((n ? n : 1) * sizeof(*a));

	for (size_t i = 0; a && i < n; i++)
		a[i] = SB_LIME_NONE;
	return a;
}

static bool is_call_site(const struct sb_cfg *g, uint32_t b)
{
	/* a tail call's block holds none of its callee's samples: no frame */
	if (g->blocks[b].flags & SB_BLOCK_TAIL_CALL)
		return false;
	for (uint32_t i = g->out_start[b]; i < g->out_start[b + 1]; i++)
		if (g->edges[i].kind == SB_EDGE_CALL_RETURN || g->edges[i].kind == SB_EDGE_CALL)
			return true;
	return false;
}

/* The live block events whose block ends in a call. */
static int find_calls(struct sb_lime_leaders *l, const uint32_t *cluster_of)
{
	const struct sb_lime_instance *in = l->in;

	l->calls = malloc((in->nevents ? in->nevents : 1) * sizeof(*l->calls));
	if (!l->calls)
		return -ENOMEM;
	for (size_t e = 0; e < in->nevents; e++)
		if (in->events[e].kind == SB_LIME_BLOCK && cluster_of[e] != SB_LIME_NO_CLUSTER &&
		    is_call_site(l->cfg, in->events[e].id))
			l->calls[l->ncalls++] = (uint32_t)e;
	return 0;
}

struct sb_lime_leaders *sb_lime_leaders_new(const struct sb_cfg *cfg,
					    const struct sb_lime_instance *in,
					    const double *ecorr, const uint32_t *cluster_of,
					    double alpha)
{
	struct sb_lime_leaders *l = calloc(1, sizeof(*l));
	size_t nb = cfg ? cfg->nblocks : 0, ne = cfg ? cfg->nedges : 0;

	if (!l)
		return NULL;
	l->cfg = cfg;
	l->in = in;
	l->ecorr = ecorr;
	l->edge_ev = nones(ne);
	l->block_ev = nones(nb);
	l->alpha = alpha;
	l->out_r = malloc((2 * ne + 1) * sizeof(double));
	l->in_r = malloc((ne + in->nevents + 1) * sizeof(double));
	l->in_c = calloc(nb + 1, sizeof(uint32_t));
	l->via_edge = calloc(nb + 1, sizeof(uint32_t));
	l->loop = calloc(nb + 1, sizeof(uint32_t));
	l->cond = calloc(nb + 1, sizeof(uint32_t));
	l->ein = calloc(ne + 1, sizeof(uint32_t));
	l->ev = malloc((nb + 1) * sizeof(uint32_t));
	l->verts = malloc((nb + 1) * sizeof(uint32_t));
	l->rseen = calloc(nb + 1, sizeof(uint32_t));
	l->rstack = malloc((nb + 1) * sizeof(uint32_t));
	if (!l->rseen || !l->rstack || !l->edge_ev || !l->block_ev || !l->out_r || !l->in_r || !l->in_c ||
	    !l->via_edge || !l->loop || !l->cond || !l->ein || !l->ev || !l->verts) {
		sb_lime_leaders_free(l);
		return NULL;
	}
	for (size_t e = in->nevents; e-- > 0;) {
		const struct sb_lime_event *x = &in->events[e];

		if (x->kind == SB_LIME_EDGE) {
			l->edge_ev[x->id] = (uint32_t)e;
			l->edge_mode = true;
		} else if (x->kind == SB_LIME_BLOCK) {
			l->block_ev[x->id] = (uint32_t)e;
		}
	}
	if (!l->edge_mode && find_calls(l, cluster_of)) {
		sb_lime_leaders_free(l);
		return NULL;
	}
	return l;
}

void sb_lime_leaders_free(struct sb_lime_leaders *l)
{
	if (!l)
		return;
	free(l->edge_ev);
	free(l->block_ev);
	free(l->out_r);
	free(l->in_r);
	free(l->in_c);
	free(l->via_edge);
	free(l->loop);
	free(l->cond);
	free(l->ein);
	free(l->ev);
	free(l->verts);
	free(l->calls);
	free(l->rseen);
	free(l->rstack);
	free(l);
}

static double event_r(const struct sb_lime_leaders *l, uint32_t e)
{
	return e == SB_LIME_NONE ? 0 : l->ecorr[e];
}

/* No edge out of block b has an event (exact flow left them unknown). */
static bool unknown_out(const struct sb_lime_leaders *l, uint32_t b)
{
	for (uint32_t i = l->cfg->out_start[b]; i < l->cfg->out_start[b + 1]; i++)
		if (l->edge_ev[i] != SB_LIME_NONE)
			return false;
	return true;
}

/* Marks the cluster's vertices; false for a hardware-only cluster. */
static bool mark(struct sb_lime_leaders *l, const uint32_t *members, size_t nm)
{
	uint32_t g = ++l->gen;

	l->nverts = 0;
	for (size_t k = 0; k < nm; k++) {
		uint32_t e = members[k], v;
		const struct sb_lime_event *x = &l->in->events[e];
		const struct sb_cfg_edge *ed = NULL;

		if (x->kind == SB_LIME_EDGE) {
			ed = &l->cfg->edges[x->id];
			v = ed->src;
		} else if (x->kind == SB_LIME_BLOCK) {
			v = x->id;
		} else {
			continue;
		}
		if (l->in_c[v] != g) {
			l->in_c[v] = g;
			l->ev[v] = e;
			l->verts[l->nverts++] = v;
		}
		if (!ed)
			continue;
		l->ein[x->id] = g;
		/* Name a vertex by its cluster edge most correlated with time. */
		if (l->via_edge[v] != g || l->ecorr[e] > l->ecorr[l->ev[v]])
			l->ev[v] = e;
		l->via_edge[v] = g;
		if (ed->kind == SB_EDGE_TAKEN || ed->kind == SB_EDGE_FALLTHROUGH)
			l->cond[v] = g;
		if (ed->back)
			l->loop[ed->dst] = g;
	}
	/* A loop header whose own edges exact flow could not count (a loop
	 * entered between two syncs that close segments: a cycle of unknowns
	 * through "outside") is in the cluster through the back edge into it:
	 * the loop's repetition.  Without it the nested loop it runs would
	 * lead, and the trip count that decides would be lost. */
	for (size_t k = 0; k < nm; k++) {
		const struct sb_lime_event *x = &l->in->events[members[k]];
		uint32_t h;

		if (x->kind != SB_LIME_EDGE || !l->cfg->edges[x->id].back)
			continue;
		h = l->cfg->edges[x->id].dst;
		if (l->in_c[h] == g || !unknown_out(l, h))
			continue;
		l->in_c[h] = l->via_edge[h] = l->loop[h] = g;
		l->ev[h] = members[k];
		l->verts[l->nverts++] = h;
	}
	return l->nverts > 0;
}

/* A direct CALL edge from block a into function f. */
static bool calls_func(const struct sb_cfg *g, uint32_t a, uint32_t f)
{
	for (uint32_t i = g->out_start[a]; i < g->out_start[a + 1]; i++)
		if (g->edges[i].kind == SB_EDGE_CALL && g->blocks[g->edges[i].dst].func == f)
			return true;
	return false;
}

/* A's samples exceed v's beyond Poisson noise (sums over threads). */
static bool more_samples(const double *a, const double *v, uint32_t n)
{
	double sa = 0, sv = 0;

	for (uint32_t t = 0; t < n; t++) {
		sa += a[t];
		sv += v[t];
	}
	return sa - sv > 3 * sqrt(sa + sv);
}

/* Block mode: call-site event c accounts for block v's variation (see the
 * header comment). */
static bool sampled_caller(const struct sb_lime_leaders *l, uint32_t c, uint32_t v)
{
	const struct sb_cfg *g = l->cfg;
	uint32_t a = l->in->events[c].id, ev = l->block_ev[v];
	const double *vc, *ac;

	if (ev == SB_LIME_NONE || a == v || g->blocks[a].func == g->blocks[v].func ||
	    calls_func(g, v, g->blocks[a].func))
		return false;
	vc = l->in->events[ev].counts;
	ac = l->in->events[c].counts;
	/* A call site deeper under v (v -> f -> A) varies as v does too, but
	 * holds v's samples and more (a shared helper's other callers):
	 * it is v's callee, and would hide v's decision. */
	if (more_samples(ac, vc, l->in->nthreads))
		return false;
	return !sb_lime_overdispersed(vc, ac, l->in->nthreads, l->alpha);
}

/* No CALL edge enters function entry v but tail calls' (version 4 graphs
 * give a wrapper's tail `jmp` one): the CFG knows none of the callers
 * whose counted code runs it (a call through a pointer, a tail `jmp`,
 * the runtime). */
static bool no_known_caller(const struct sb_cfg *g, uint32_t v)
{
	for (uint32_t k = g->in_start[v]; k < g->in_start[v + 1]; k++) {
		const struct sb_cfg_edge *e = &g->edges[g->in_edges[k]];

		if (e->kind == SB_EDGE_CALL && !(g->blocks[e->src].flags & SB_BLOCK_TAIL_CALL))
			return false;
	}
	return true;
}

/* Block u runs under function entry v (forward flow and direct calls from
 * v reach it): v's own code or its callees'.  Bounded: a merged graph is
 * large, a callee tree small. */
static bool under(struct sb_lime_leaders *l, uint32_t v, uint32_t u)
{
	const struct sb_cfg *g = l->cfg;
	uint32_t sp = 0, stamp = ++l->rgen, steps = 0;

	l->rseen[v] = stamp;
	l->rstack[sp++] = v;
	while (sp && steps++ < 4096) {
		uint32_t b = l->rstack[--sp];

		if (b == u)
			return true;
		for (uint32_t i = g->out_start[b]; i < g->out_start[b + 1]; i++) {
			uint32_t w = g->edges[i].dst;

			if (l->rseen[w] != stamp) {
				l->rseen[w] = stamp;
				l->rstack[sp++] = w;
			}
		}
	}
	return sp > 0;  /* undecided: counts as under v (keeps v a leader) */
}

/*
 * Edge mode: a function's entry v whose callers the CFG cannot see (a call
 * through a pointer, a tail call through a wrapper) while the cluster holds
 * a call site outside v's own code and callees.  A function's entry runs
 * as often as its callers decide: the decision is theirs (the loop or the
 * branch around the call), never the callee's `{`, so the entry is no
 * leader while such a caller is in the cluster.
 */
static bool called_unseen(struct sb_lime_leaders *l, uint32_t v)
{
	const struct sb_cfg *g = l->cfg;
	uint32_t f = g->blocks[v].func;

	if (!l->edge_mode || g->funcs[f].first_block != v || !no_known_caller(g, v))
		return false;
	for (size_t k = 0; k < l->nverts; k++) {
		uint32_t u = l->verts[k];

		if (g->blocks[u].func != f && sb_cfg_ends_in_call(g, u) &&
		    !under(l, v, u))
			return true;
	}
	return false;
}

static bool is_leader(struct sb_lime_leaders *l, uint32_t v)
{
	const struct sb_cfg *g = l->cfg;

	for (uint32_t k = g->in_start[v]; k < g->in_start[v + 1]; k++) {
		const struct sb_cfg_edge *ed = &g->edges[g->in_edges[k]];

		if (!ed->back && l->in_c[ed->src] == l->gen)
			return false;
	}
	if (called_unseen(l, v))
		return false;
	for (size_t k = 0; k < l->ncalls; k++)
		if (l->in_c[l->in->events[l->calls[k]].id] == l->gen &&
		    sampled_caller(l, l->calls[k], v))
			return false;
	return true;
}

/* Eq. 1 for v, with edge events or with block samples standing in. */
static double leader_score(const struct sb_lime_leaders *l, uint32_t v)
{
	const struct sb_cfg *g = l->cfg;
	size_t no = 0, ni = 0;

	if (!l->edge_mode)
		l->out_r[no++] = event_r(l, l->block_ev[v]);
	/* A loop of one block has no forward edge inside the loop: its own
	 * back edge is the flow out of its header into the loop. */
	for (uint32_t i = g->out_start[v]; l->edge_mode && i < g->out_start[v + 1]; i++)
		if (!g->edges[i].back || g->edges[i].dst == v)
			l->out_r[no++] = event_r(l, l->edge_ev[i]);
	/* A header with uncounted edges out (see mark()): its flow into the
	 * loop is the repetition, the back edges into it. */
	for (uint32_t k = g->in_start[v]; l->edge_mode && unknown_out(l, v) &&
	     k < g->in_start[v + 1]; k++)
		if (g->edges[g->in_edges[k]].back)
			l->out_r[no++] = event_r(l, l->edge_ev[g->in_edges[k]]);
	for (uint32_t k = g->in_start[v]; k < g->in_start[v + 1]; k++) {
		uint32_t i = g->in_edges[k];

		if (g->edges[i].back)
			continue;
		l->in_r[ni++] = event_r(l, l->edge_mode ? l->edge_ev[i]
						       : l->block_ev[g->edges[i].src]);
	}
	for (size_t k = 0; k < l->ncalls; k++)
		if (sampled_caller(l, l->calls[k], v))
			l->in_r[ni++] = event_r(l, l->calls[k]);
	return sb_lime_eq1(l->out_r, no, l->in_r, ni);
}

static uint16_t leader_kind(const struct sb_lime_leaders *l, uint32_t v)
{
	if (!l->edge_mode || l->via_edge[v] != l->gen)
		return SB_CAUSE_UNDETERMINED;
	if (l->loop[v] == l->gen)
		return SB_CAUSE_LOOP;
	if (l->cond[v] == l->gen)
		return SB_CAUSE_BRANCH;
	return SB_CAUSE_CALL;
}

/*
 * Edge mode: a CALL leader v (straight-line work, no branch or loop of
 * its own in the cluster) that conditional branches enter, none of whose
 * edges into v has a varying event (exact flow could not split v's count
 * among them: a rotated loop's two copies of one test).  v is the then-
 * path of Figure 3's if-statement; the decision is its guard's, where the
 * cause is shown, as a BRANCH.  Edges into v whose counts do not vary
 * (padding that never runs falls through into v) decide nothing; blocks
 * of one way in and one way out (a lone `jmp`, alignment padding run
 * through) are looked through to the conditional edge that enters them.  Of
 * several guards (copies of one test), the one whose out edges vary most
 * with time.  Returns the guard block or SB_LIME_NONE.
 */
static uint32_t unseen_guard(const struct sb_lime_leaders *l, uint32_t v)
{
	const struct sb_cfg *g = l->cfg;
	uint32_t best = SB_LIME_NONE;
	double best_r = -INFINITY;

	if (!l->edge_mode || leader_kind(l, v) != SB_CAUSE_CALL)
		return SB_LIME_NONE;
	for (uint32_t k = g->in_start[v]; k < g->in_start[v + 1]; k++) {
		uint32_t i = g->in_edges[k], gd = SB_LIME_NONE;
		const struct sb_cfg_edge *ed = &g->edges[i];
		double r = 0;

		if (ed->back)
			continue;
		if (l->edge_ev[i] != SB_LIME_NONE && event_r(l, l->edge_ev[i]) != 0)
			return SB_LIME_NONE;   /* LIME saw this edge vary */
		/* back through blocks of one way in and one way out (a lone
		 * `jmp`, alignment padding): they run as their way in decides */
		for (int steps = 0; steps < 8 && gd == SB_LIME_NONE; steps++) {
			if (ed->kind == SB_EDGE_TAKEN || ed->kind == SB_EDGE_FALLTHROUGH)
				gd = ed->src;
			else if ((ed->kind == SB_EDGE_JUMP || ed->kind == SB_EDGE_SEQUENTIAL) &&
				 sb_cfg_nin(g, ed->src) == 1 && sb_cfg_nout(g, ed->src) == 1 &&
				 !g->edges[g->in_edges[g->in_start[ed->src]]].back)
				ed = &g->edges[g->in_edges[g->in_start[ed->src]]];
			else
				break;
		}
		if (gd == SB_LIME_NONE) {
			if (l->edge_ev[i] != SB_LIME_NONE)
				continue;      /* constant: decides nothing */
			return SB_LIME_NONE;   /* reached some unknown way */
		}
		for (uint32_t o = g->out_start[gd]; o < g->out_start[gd + 1]; o++)
			r = fmax(r, fabs(event_r(l, l->edge_ev[o])));
		if (r > best_r) {
			best_r = r;
			best = gd;
		}
	}
	return best;
}

static int push_leader(const struct sb_lime_leaders *l, uint32_t v, double score,
		       double beta, struct sb_lime_causes *out)
{
	uint32_t gd = unseen_guard(l, v);
	/* a header of several loops: the latch whose loop varies decides */
	uint32_t lt = gd == SB_LIME_NONE && l->edge_mode && leader_kind(l, v) == SB_CAUSE_LOOP
		? sb_lime_varying_latch(l->cfg, v, l->ein, l->gen) : SB_LIME_NONE;
	struct sb_lime_cause c = {
		.kind = gd != SB_LIME_NONE ? SB_CAUSE_BRANCH : leader_kind(l, v),
		.event = l->ev[v],
		.addr = l->cfg->blocks[gd != SB_LIME_NONE ? gd : v].last_insn,
		.own_addr = gd != SB_LIME_NONE ? l->cfg->blocks[v].last_insn : 0,
		.leader_score = score,
		.beta = beta,
		.score = sb_lime_final_score(score, beta),
	};

	if (lt != SB_LIME_NONE)
		c.addr = l->cfg->blocks[lt].last_insn;
	else if (c.kind == SB_CAUSE_LOOP && l->in->counted_edges &&
		 (lt = sb_lime_copy_choice(l->cfg, v, l->edge_ev)) != SB_LIME_NONE) {
		c.kind = SB_CAUSE_BRANCH;   /* an unswitched loop's copy */
		c.addr = l->cfg->blocks[lt].last_insn;
	}
	return sb_lime_causes_push(out, &c);
}

static int hw_causes(const struct sb_lime_leaders *l, const uint32_t *members, size_t nm,
		     double beta, struct sb_lime_causes *out)
{
	int err = 0;

	for (size_t k = 0; k < nm && !err; k++) {
		struct sb_lime_cause c = {
			.kind = SB_CAUSE_HW,
			.event = members[k],
			.addr = l->in->events[members[k]].addr,
			.leader_score = 1.0,
			.beta = beta,
			.score = sb_lime_final_score(1.0, beta),
		};

		err = sb_lime_causes_push(out, &c);
	}
	return err;
}

int sb_lime_cluster_causes(struct sb_lime_leaders *l, const uint32_t *members, size_t nm,
			   double beta, struct sb_lime_causes *out)
{
	uint32_t best = SB_LIME_NONE;
	double best_score = -INFINITY;
	size_t found = 0;
	int err = 0;

	if (!mark(l, members, nm))
		return hw_causes(l, members, nm, beta, out);
	for (size_t k = 0; k < l->nverts && !err; k++) {
		uint32_t v = l->verts[k];
		double s = leader_score(l, v);

		if (is_leader(l, v)) {
			err = push_leader(l, v, s, beta, out);
			found++;
		} else if (s > best_score) {
			best_score = s;
			best = v;
		}
	}
	if (!err && !found && best != SB_LIME_NONE)
		err = push_leader(l, best, best_score, beta, out);
	return err;
}
