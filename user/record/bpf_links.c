// SPDX-License-Identifier: MIT
/* Destroying BPF links (bpf_links.h). */
#include "bpf_links.h"

#include "link_closer.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

void sb_link_destroy(struct sb_link *k)
{
	if (k->l)
		bpf_link__destroy(k->l);
	else if (k->fd >= 0)
		close(k->fd);
}

struct destroyer {
	struct sb_link *links;
	unsigned n;
};

static void *destroy_links(void *arg)
{
	struct destroyer *d = arg;

	for (unsigned i = 0; i < d->n; i++)
		sb_link_destroy(&d->links[i]);
	return NULL;
}

/*
 * Detaching a uprobe waits for RCU grace periods (~30-100 ms here):
 * dozens of probes would take seconds one after another.  Detach from
 * several threads so the waits overlap (fully with uprobe_multi links;
 * classic perf-event uprobes serialize in the kernel: see
 * sb_bpf_uprobe_multi_works).
 */
void sb_links_destroy(struct sb_link *links, unsigned n)
{
	enum { NTHREADS = 16 };
	struct destroyer d[NTHREADS];
	pthread_t th[NTHREADS];
	bool started[NTHREADS] = { false };
	unsigned per = (n + NTHREADS - 1) / NTHREADS;

	for (unsigned t = 0; t < NTHREADS; t++) {
		unsigned from = t * per;

		d[t].links = links + from;
		d[t].n = from >= n ? 0 : (n - from < per ? n - from : per);
		if (d[t].n && !pthread_create(&th[t], NULL, destroy_links, &d[t]))
			started[t] = true;
		else if (d[t].n)
			destroy_links(&d[t]);
	}
	for (unsigned t = 0; t < NTHREADS; t++)
		if (started[t])
			pthread_join(th[t], NULL);
}

static void *reap_links(void *arg)
{
	struct sb_reaper *rp = arg;

	pthread_mutex_lock(&rp->mu);
	for (;;) {
		struct sb_link *batch;
		unsigned n;

		while (!rp->n && !rp->quit)
			pthread_cond_wait(&rp->cv, &rp->mu);
		if (!rp->n)
			break;
		batch = rp->q;
		n = rp->n;
		rp->q = NULL;
		rp->n = rp->cap = 0;
		rp->inflight = n;
		pthread_mutex_unlock(&rp->mu);
		sb_links_destroy(batch, n);
		free(batch);
		pthread_mutex_lock(&rp->mu);
		rp->inflight = 0;
		pthread_cond_broadcast(&rp->idle);
	}
	pthread_mutex_unlock(&rp->mu);
	return NULL;
}

/* Queues a link for the closer process or the reaper thread; destroyed
 * here when there is neither. */
void sb_reaper_give(struct sb_reaper *rp, struct sb_link *k)
{
	/* uprobe_multi links (the fd alone): to the closer process. */
	if (!k->l && sb_closer_give(k->fd))
		return;
	if (!rp->started) {
		pthread_mutex_init(&rp->mu, NULL);
		pthread_cond_init(&rp->cv, NULL);
		pthread_cond_init(&rp->idle, NULL);
		rp->started = !pthread_create(&rp->th, NULL, reap_links, rp);
		if (!rp->started) {
			pthread_mutex_destroy(&rp->mu);
			pthread_cond_destroy(&rp->cv);
			pthread_cond_destroy(&rp->idle);
		}
	}
	if (!rp->started) {
		sb_link_destroy(k);
		return;
	}
	pthread_mutex_lock(&rp->mu);
	if (rp->n == rp->cap) {
		unsigned ncap = rp->cap ? rp->cap * 2 : 64;
		struct sb_link *q = realloc(rp->q, ncap * sizeof(*q));

		if (!q) {
			pthread_mutex_unlock(&rp->mu);
			sb_link_destroy(k);
			return;
		}
		rp->q = q;
		rp->cap = ncap;
	}
	rp->q[rp->n++] = *k;
	pthread_cond_signal(&rp->cv);
	pthread_mutex_unlock(&rp->mu);
}

/* Waits until the reaper destroyed every link given to it. */
void sb_reaper_join(struct sb_reaper *rp)
{
	if (!rp->started)
		return;
	pthread_mutex_lock(&rp->mu);
	rp->quit = true;
	pthread_cond_signal(&rp->cv);
	pthread_mutex_unlock(&rp->mu);
	pthread_join(rp->th, NULL);
	pthread_mutex_destroy(&rp->mu);
	pthread_cond_destroy(&rp->cv);
	pthread_cond_destroy(&rp->idle);
	free(rp->q);
	memset(rp, 0, sizeof(*rp));
}

/* Out of fds: those of links of ended processes are being closed
 * (sb_bpf_detach_pid); wait for them.  Whether there were any. */
bool sb_reaper_wait_idle(struct sb_reaper *rp)
{
	bool any;

	if (!rp->started)
		return false;
	pthread_mutex_lock(&rp->mu);
	any = rp->n || rp->inflight;
	while (rp->n || rp->inflight)
		pthread_cond_wait(&rp->idle, &rp->mu);
	pthread_mutex_unlock(&rp->mu);
	return any;
}
