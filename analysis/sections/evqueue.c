// SPDX-License-Identifier: MIT
#include "evqueue.h"

#include <stdlib.h>

#include "sections.h"

struct item {
	struct sb_event ev;
	uint64_t seq;
};

struct sb_evqueue {
	struct item *h;
	size_t n, cap;
	uint64_t seq, released_ts, late;
};

struct sb_evqueue *sb_evqueue_alloc(void)
{
	return calloc(1, sizeof(struct sb_evqueue));
}

void sb_evqueue_free(struct sb_evqueue *q)
{
	if (!q)
		return;
	free(q->h);
	free(q);
}

static bool before(const struct item *a, const struct item *b)
{
	return a->ev.ts < b->ev.ts || (a->ev.ts == b->ev.ts && a->seq < b->seq);
}

static void swap(struct item *a, struct item *b)
{
	struct item t = *a;

	*a = *b;
	*b = t;
}

int sb_evqueue_push(struct sb_evqueue *q, const struct sb_event *ev)
{
	size_t i;

	if (q->n == q->cap) {
		size_t ncap = q->cap ? q->cap * 2 : 1024;
		struct item *h = realloc(q->h, ncap * sizeof(*h));

		if (!h)
			return -1;
		q->h = h;
		q->cap = ncap;
	}
	if (ev->ts < q->released_ts)
		q->late++;
	i = q->n++;
	q->h[i].ev = *ev;
	q->h[i].seq = q->seq++;
	while (i > 0 && before(&q->h[i], &q->h[(i - 1) / 2])) {
		swap(&q->h[i], &q->h[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	return 0;
}

bool sb_evqueue_pop_until(struct sb_evqueue *q, uint64_t watermark, struct sb_event *out)
{
	size_t i = 0;

	if (q->n == 0 || q->h[0].ev.ts > watermark)
		return false;
	*out = q->h[0].ev;
	if (out->ts > q->released_ts)
		q->released_ts = out->ts;
	q->h[0] = q->h[--q->n];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < q->n && before(&q->h[l], &q->h[m]))
			m = l;
		if (r < q->n && before(&q->h[r], &q->h[m]))
			m = r;
		if (m == i)
			break;
		swap(&q->h[i], &q->h[m]);
		i = m;
	}
	return true;
}

size_t sb_evqueue_size(const struct sb_evqueue *q)
{
	return q->n;
}

uint64_t sb_evqueue_late(const struct sb_evqueue *q)
{
	return q->late;
}
