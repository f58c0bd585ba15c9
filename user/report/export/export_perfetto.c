// SPDX-License-Identifier: MIT
/*
 * A profile as a Chrome trace-event JSON timeline (export.h), for
 * ui.perfetto.dev: {"traceEvents": [...]}, times in microseconds from the
 * recording's start (ns kept as decimals).
 *   - one track per thread (its name: comm and tid); per stored section
 *     instance two complete ("X") slices: "work" from the thread's segment
 *     start to its arrival (args: busy_ns on-CPU, blocked_ns), then
 *     "wait: PRIMITIVE @ SECTION" to the instance's end (args: wait_ns).
 *     A thread's departure is taken as the instance's end: the profile
 *     keeps each thread's segment length and wait, not its own clock;
 *   - per section a process-level track (async slices, named by the
 *     section) with one slice per instance;
 *   - flow arrows from the last thread to arrive (the one that waited
 *     least: it released the others) to each waiter's wait slice;
 *   - a "samples/s" counter: each instance's cpu-clock samples over its
 *     span.
 * Slices of one track are written in time order, each nested in the one
 * open or after it (one that straddles an open slice's end is trimmed to
 * start there).  Instances beyond the
 * stored ones are not on the timeline (metadata says how many); busy and
 * wait per thread then total less than the text report's.
 */
#include "export.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

enum ev_kind { EV_WORK, EV_WAIT };

#define MAX_NEST 64   /* slices open at once on a track (deeper: not tracked) */

struct ev {
	uint32_t tid;
	uint32_t kind;
	uint64_t ts, dur;        /* ns from t0 */
	size_t instance;
	uint32_t slot;           /* the thread's entry in the instance */
};

struct perfetto {
	const struct sb_profile *p;
	FILE *f;
	uint64_t t0;
	uint32_t pid;
	char **section_names;
	char **sec_json, **wait_json;   /* per section, as JSON strings */
	int first;
};

/* A slice's line, built with memcpy and hand-made decimals: a trace of a
 * million slices is written in about a second. */
struct line {
	char b[2048];
	size_t n;
};

static void put(struct line *l, const char *s)
{
	size_t n = strlen(s);

	if (n > sizeof(l->b) - 1 - l->n)
		n = sizeof(l->b) - 1 - l->n;
	memcpy(l->b + l->n, s, n);
	l->n += n;
}

static void put_u64(struct line *l, uint64_t v)
{
	char d[24];
	int k = 0;

	do {
		d[k++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (k && l->n < sizeof(l->b) - 1)
		l->b[l->n++] = d[--k];
}

/* ns as microseconds with three decimals */
static void put_us(struct line *l, uint64_t ns)
{
	uint64_t f = ns % 1000;

	put_u64(l, ns / 1000);
	if (l->n + 4 < sizeof(l->b)) {
		l->b[l->n++] = '.';
		l->b[l->n++] = (char)('0' + f / 100);
		l->b[l->n++] = (char)('0' + f / 10 % 10);
		l->b[l->n++] = (char)('0' + f % 10);
	}
}

/* s as a JSON string, made once (malloc'ed; NULL on ENOMEM). */
static char *json_string(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		return NULL;
	sb_json_str(m, s);
	if (fclose(m)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int by_track(const void *a, const void *b)
{
	const struct ev *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->kind < y->kind ? -1 : x->kind > y->kind;
}

static void sep(struct perfetto *x)
{
	fputs(x->first ? "\n  " : ",\n  ", x->f);
	x->first = 0;
}

static void meta_name(struct perfetto *x, const char *what, uint32_t tid, const char *name)
{
	sep(x);
	fprintf(x->f, "{\"ph\": \"M\", \"name\": \"%s\", \"pid\": %" PRIu32 ", \"tid\": %" PRIu32
		", \"args\": {\"name\": ", what, x->pid, tid);
	sb_json_str(x->f, name);
	fputs("}}", x->f);
}

/* The primitive that closes section kind k, as the waits name it. */
static const char *closing(uint32_t kind)
{
	switch (kind) {
	case SB_SECT_JOIN:
		return "join";
	case SB_SECT_BARRIER:
		return "barrier";
	default:
		return sb_section_kind_name(kind);
	}
}

static void slice(struct perfetto *x, const struct ev *e)
{
	const struct sb_instance *in = &x->p->instances[e->instance];
	int known = in->section < x->p->nsections;
	const struct sb_thread_time *t = &in->per_thread[e->slot];
	struct line l = { .n = 0 };

	put(&l, x->first ? "\n  " : ",\n  ");
	x->first = 0;
	put(&l, "{\"ph\":\"X\",\"pid\":");
	put_u64(&l, x->pid);
	put(&l, ",\"tid\":");
	put_u64(&l, e->tid);
	put(&l, ",\"ts\":");
	put_us(&l, e->ts);
	put(&l, ",\"dur\":");
	put_us(&l, e->dur);
	if (e->kind == EV_WORK) {
		uint64_t used = t->busy_ns + t->wait_ns;

		put(&l, ",\"name\":\"work\",\"args\":{\"section\":");
		put(&l, known ? x->sec_json[in->section] : "\"?\"");
		put(&l, ",\"busy_ns\":");
		put_u64(&l, t->busy_ns);
		put(&l, ",\"blocked_ns\":");
		put_u64(&l, t->wall_ns > used ? t->wall_ns - used : 0);
		put(&l, "}}");
	} else {
		put(&l, ",\"name\":");
		put(&l, known ? x->wait_json[in->section] : "\"wait\"");
		put(&l, ",\"args\":{\"wait_ns\":");
		put_u64(&l, t->wait_ns);
		put(&l, "}}");
	}
	fwrite(l.b, 1, l.n, x->f);
}

/* The events of stored instance i (n so far in ev). */
static size_t instance_events(struct perfetto *x, size_t i, struct ev *ev, size_t n)
{
	const struct sb_instance *in = &x->p->instances[i];
	uint64_t end = in->end_ns > x->t0 ? in->end_ns - x->t0 : 0;

	for (uint32_t k = 0; k < in->nthreads; k++) {
		const struct sb_thread_time *t = &in->per_thread[k];
		uint64_t wall = t->wall_ns < end ? t->wall_ns : end;
		uint64_t wait = t->wait_ns < wall ? t->wait_ns : wall;

		ev[n++] = (struct ev){ t->tid, EV_WORK, end - wall, wall - wait, i, k };
		ev[n++] = (struct ev){ t->tid, EV_WAIT, end - wait, wait, i, k };
	}
	return n;
}

/* Instance i on its section's process-level track: an async slice (b,
 * e) named by the section, its id the instance's index. */
static void instance_slice(struct perfetto *x, size_t i)
{
	const struct sb_instance *in = &x->p->instances[i];
	const char *name = in->section < x->p->nsections ? x->sec_json[in->section] : "\"?\"";
	uint64_t start = in->start_ns > x->t0 ? in->start_ns - x->t0 : 0;
	uint64_t end = in->end_ns > x->t0 ? in->end_ns - x->t0 : 0;
	struct line l = { .n = 0 };

	if (end < start)
		end = start;
	put(&l, x->first ? "\n  " : ",\n  ");
	x->first = 0;
	for (int e = 0; e < 2; e++) {
		put(&l, e ? "},\n  {\"ph\":\"e\",\"pid\":" : "{\"ph\":\"b\",\"pid\":");
		put_u64(&l, x->pid);
		put(&l, ",\"tid\":");
		put_u64(&l, x->pid);
		put(&l, ",\"cat\":\"section\",\"id\":");
		put_u64(&l, i + 1);
		put(&l, ",\"name\":");
		put(&l, name);
		put(&l, ",\"ts\":");
		put_us(&l, e ? end : start);
		if (!e) {
			put(&l, ",\"args\":{\"instance\":");
			put_u64(&l, in->seq);
			put(&l, ",\"threads\":");
			put_u64(&l, in->nthreads);
			put(&l, "}");
		}
	}
	put(&l, "}");
	fwrite(l.b, 1, l.n, x->f);
}

/* One end of a release arrow: head ("{"ph":"s"..."), then the rest. */
static void flow_point(struct perfetto *x, struct line *l, const char *head, uint64_t id,
		       uint32_t tid, uint64_t ts)
{
	put(l, head);
	put_u64(l, id);
	put(l, ",\"pid\":");
	put_u64(l, x->pid);
	put(l, ",\"tid\":");
	put_u64(l, tid);
	put(l, ",\"cat\":\"release\",\"name\":\"release\",\"ts\":");
	put_us(l, ts);
	put(l, "}");
}

/* Flow arrows of instance i: from its last arrival to each waiter. */
static void flows(struct perfetto *x, size_t i, uint64_t *id)
{
	const struct sb_instance *in = &x->p->instances[i];
	uint64_t end = in->end_ns > x->t0 ? in->end_ns - x->t0 : 0;
	uint32_t last = 0;

	if (in->nthreads < 2)
		return;
	for (uint32_t k = 1; k < in->nthreads; k++)
		if (in->per_thread[k].wait_ns < in->per_thread[last].wait_ns)
			last = k;
	for (uint32_t k = 0; k < in->nthreads; k++) {
		const struct sb_thread_time *r = &in->per_thread[last], *w = &in->per_thread[k];
		uint64_t arrive = end - (r->wait_ns < end ? r->wait_ns : end);

		struct line l = { .n = 0 };

		/* a waiter's wait must be longer than a microsecond to hold an
		 * arrow's end inside it */
		if (k == last || w->wait_ns < 2000 || arrive < 1000 ||
		    r->wall_ns - r->wait_ns < 2000)
			continue;
		++*id;
		put(&l, x->first ? "\n  " : ",\n  ");
		x->first = 0;
		flow_point(x, &l, "{\"ph\":\"s\",\"id\":", *id, r->tid, arrive - 1000);
		flow_point(x, &l, ",\n  {\"ph\":\"f\",\"bp\":\"e\",\"id\":", *id, w->tid,
			   end - 1000);
		fwrite(l.b, 1, l.n, x->f);
	}
}

/* samples/s of instance i, from its block-sample vectors. */
static void counters(struct perfetto *x, const uint64_t *samples)
{
	const struct sb_profile *p = x->p;

	for (size_t i = 0; i < p->ninstances; i++) {
		const struct sb_instance *in = &p->instances[i];
		uint64_t start = in->start_ns > x->t0 ? in->start_ns - x->t0 : 0;
		uint64_t end = in->end_ns > x->t0 ? in->end_ns - x->t0 : 0;

		if (end <= start || !samples[i])
			continue;
		struct line l = { .n = 0 };
		char v[32];

		put(&l, x->first ? "\n  " : ",\n  ");
		x->first = 0;
		put(&l, "{\"ph\":\"C\",\"pid\":");
		put_u64(&l, x->pid);
		put(&l, ",\"name\":\"samples/s\",\"ts\":");
		put_us(&l, start);
		snprintf(v, sizeof(v), "%.1f", (double)samples[i] * 1e9 / (double)(end - start));
		put(&l, ",\"args\":{\"samples/s\":");
		put(&l, v);
		put(&l, "}}");
		fwrite(l.b, 1, l.n, x->f);
	}
}

static int perfetto_write(const struct sb_profile *p, FILE *f, char *err, size_t len)
{
	struct perfetto x = { .p = p, .f = f, .first = 1 };
	size_t cap = 0, n = 0;
	struct ev *ev = NULL;
	uint64_t *samples = NULL, flow_id = 0, first_start = UINT64_MAX, open[MAX_NEST];
	char name[320];
	int ret = -ENOMEM;

	for (size_t i = 0; i < p->ninstances; i++)
		cap += 2 * (size_t)p->instances[i].nthreads;
	ev = malloc((cap + 1) * sizeof(*ev));
	samples = calloc(p->ninstances + 1, sizeof(*samples));
	x.section_names = calloc(p->nsections + 1, sizeof(*x.section_names));
	x.sec_json = calloc(p->nsections + 1, sizeof(*x.sec_json));
	x.wait_json = calloc(p->nsections + 1, sizeof(*x.wait_json));
	if (!ev || !samples || !x.section_names || !x.sec_json || !x.wait_json)
		goto out;
	for (size_t s = 0; s < p->nsections; s++) {
		char wait[400];

		sb_loc_format_section(p, s, name, sizeof(name));
		snprintf(wait, sizeof(wait), "wait: %s @ %s", closing(p->sections[s].kind), name);
		if (!(x.section_names[s] = strdup(name)) || !(x.sec_json[s] = json_string(name)) ||
		    !(x.wait_json[s] = json_string(wait)))
			goto out;
	}
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	/* t0: the recording's start as its first thread or instance saw it */
	x.t0 = UINT64_MAX;
	for (size_t t = 0; t < p->nthreads; t++)
		if (p->threads[t].start_ns < first_start) {
			first_start = p->threads[t].start_ns;
			x.pid = p->threads[t].tid;
		}
	x.t0 = first_start;
	for (size_t i = 0; i < p->ninstances; i++)
		if (p->instances[i].start_ns < x.t0)
			x.t0 = p->instances[i].start_ns;
	if (x.t0 == UINT64_MAX)
		x.t0 = 0;
	for (size_t i = 0; i < p->ninstances; i++)
		n = instance_events(&x, i, ev, n);
	for (size_t v = 0; v < p->nvectors; v++) {
		const struct sb_vector *vec = &p->vectors[v];

		if (vec->instance < p->ninstances && vec->event < p->nevents &&
		    p->events[vec->event].kind == SB_EVK_BLOCK_SAMPLES)
			for (uint32_t j = 0; j < vec->nthreads; j++)
				samples[vec->instance] += vec->counts[j];
	}
	qsort(ev, n, sizeof(*ev), by_track);
	fputs("{\"displayTimeUnit\": \"ns\", \"traceEvents\": [", f);
	meta_name(&x, "process_name", 0, sb_profile_meta_get(p, "executable") ?
		  sb_profile_meta_get(p, "executable") : "target");
	for (size_t t = 0; t < p->nthreads; t++) {
		snprintf(name, sizeof(name), "%s %" PRIu32,
			 p->threads[t].comm ? p->threads[t].comm : "thread", p->threads[t].tid);
		meta_name(&x, "thread_name", p->threads[t].tid, name);
	}
	for (size_t i = 0, depth = 0; i < n; i++) {
		struct ev *e = &ev[i];
		uint64_t end = e->ts + e->dur;

		if (i && ev[i - 1].tid != e->tid)
			depth = 0;
		/* a slice either nests in the open one or starts after it: one
		 * that straddles its end is trimmed to start there */
		for (;;) {
			while (depth && open[depth - 1] <= e->ts)
				depth--;
			if (!depth || end <= open[depth - 1])
				break;
			e->ts = open[--depth];
			e->dur = end - e->ts;
		}
		if (!e->dur)
			continue;
		slice(&x, e);
		if (depth < MAX_NEST)
			open[depth++] = end;
	}
	for (size_t i = 0; i < p->ninstances; i++)
		instance_slice(&x, i);
	for (size_t i = 0; i < p->ninstances; i++)
		flows(&x, i, &flow_id);
	counters(&x, samples);
	fprintf(f, "\n], \"metadata\": {\"instances\": %" PRIu64 ", \"instances_stored\": %zu, "
		"\"source\": \"scalebpf " SB_VERSION "\"}}\n",
		sb_profile_meta_get_u64(p, "instances"), p->ninstances);
	ret = ferror(f) ? -EIO : 0;
	if (ret)
		snprintf(err, len, "write: %s", strerror(errno));
out:
	if (ret == -ENOMEM)
		snprintf(err, len, "out of memory");
	for (size_t s = 0; x.section_names && s < p->nsections; s++) {
		free(x.section_names[s]);
		free(x.sec_json ? x.sec_json[s] : NULL);
		free(x.wait_json ? x.wait_json[s] : NULL);
	}
	free(x.section_names);
	free(x.sec_json);
	free(x.wait_json);
	free(ev);
	free(samples);
	return ret;
}

const struct sb_export_format sb_export_perfetto = {
	.name = "perfetto",
	.what = "Chrome trace-event JSON for ui.perfetto.dev: a track per thread\n"
		"                       with work and wait slices, section instances,\n"
		"                       release arrows, samples/s",
	.binary = 0,
	.write = perfetto_write,
};
