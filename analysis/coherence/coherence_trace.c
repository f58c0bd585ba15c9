// SPDX-License-Identifier: MIT
/*
 * The trace driver of coherence.h: per-thread trace files -> regions ->
 * the simulator, piped or interleaved.
 *
 * Two passes over each file, both sequential.  The first finds the
 * thread's runs (between SYNCs) and what each SYNC waited for; the
 * regions come from them (coherence_regions.c).  The second feeds the
 * simulator region by region: a thread's records of region k are the
 * ones up to the end of its last run in k, so every file is read once
 * more from start to end, whatever the mode.
 */
#include "coherence_priv.h"
#include "coherence_regions.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sbpf_trace.h"
#include "util/rng.h"

#define BUF_RECS 4096

struct reader {
	FILE *f;
	struct sb_trace_rec buf[BUF_RECS];
	size_t n, i;
	uint64_t done;             /* records handed out */
};

struct driver {
	const char *dir;
	uint32_t pid;
	uint32_t n;
	uint32_t *tids;
	struct sb_coh_runs rs;
	struct sb_coherence_trace_info *info;
	char *err;
	size_t len;
};

static int by_tid(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static void trace_path(const struct driver *d, uint32_t tid, char *path, size_t len)
{
	snprintf(path, len, "%s/trace.%u", d->dir, tid);
}

/* The file open past its header, *h read; NULL when it cannot be opened
 * (errno) or has no trace header (errno 0). */
static FILE *open_header(const char *path, struct sb_trace_hdr *h)
{
	FILE *f = fopen(path, "rb");

	if (f && (fread(h, sizeof(*h), 1, f) != 1 || memcmp(h->magic, SB_TRACE_MAGIC, 8))) {
		fclose(f);
		errno = 0;
		return NULL;
	}
	return f;
}

static int list_threads(struct driver *d)
{
	DIR *dp = opendir(d->dir);
	struct dirent *e;
	struct stat st;
	size_t cap = 0;

	if (!dp) {
		int e2 = errno;

		snprintf(d->err, d->len, "%s: %s", d->dir, strerror(e2));
		return -e2;
	}
	while ((e = readdir(dp))) {
		char *end;
		unsigned long tid;

		if (strncmp(e->d_name, "trace.", 6))
			continue;
		tid = strtoul(e->d_name + 6, &end, 10);
		if (*end || end == e->d_name + 6 || tid > UINT32_MAX)
			continue;
		if (fstatat(dirfd(dp), e->d_name, &st, 0) == 0 && st.st_size == 0) {
			d->info->files_skipped++;   /* its thread could not write */
			continue;
		}
		if (d->n == cap) {
			uint32_t *n;

			cap = cap ? 2 * cap : 16;
			n = realloc(d->tids, cap * sizeof(*n));
			if (!n) {
				closedir(dp);
				snprintf(d->err, d->len, "out of memory");
				return -ENOMEM;
			}
			d->tids = n;
		}
		d->tids[d->n++] = (uint32_t)tid;
	}
	closedir(dp);
	{
		/* A file that is no trace (cut before its header, another
		 * tool's) is skipped, counted; another process's files (an
		 * earlier run into the same directory) are not this one's
		 * threads. */
		uint32_t keep = 0;

		for (uint32_t i = 0; i < d->n; i++) {
			char path[4200];
			struct sb_trace_hdr h;
			FILE *f;
			bool ok;

			trace_path(d, d->tids[i], path, sizeof(path));
			f = open_header(path, &h);
			ok = f != NULL;
			if (f)
				fclose(f);
			if (!ok)
				d->info->files_bad++;
			else if (d->pid && h.pid != d->pid)
				d->info->files_other++;
			else
				d->tids[keep++] = d->tids[i];
		}
		d->n = keep;
	}
	if (!d->n) {
		snprintf(d->err, d->len, "%s holds no trace.TID files%s%s (was the program built "
			 "with `scalebpf cc --trace-mem`?)", d->dir,
			 d->info->files_other ? " of the recorded process" : "",
			 d->info->files_bad ? " with a trace header" : "");
		return -ENOENT;
	}
	if (d->n > SB_COHERENCE_MAX_THREADS) {
		snprintf(d->err, d->len, "%s: %u threads' traces; at most %u can be simulated",
			 d->dir, d->n, SB_COHERENCE_MAX_THREADS);
		return -E2BIG;
	}
	qsort(d->tids, d->n, sizeof(*d->tids), by_tid);
	return 0;
}

/* Opens thread t's file past its header; NULL (message set) on failure. */
static FILE *open_trace(struct driver *d, uint32_t t, uint64_t *bytes)
{
	char path[4200];
	struct sb_trace_hdr h;
	struct stat st;
	FILE *f;

	trace_path(d, d->tids[t], path, sizeof(path));
	f = open_header(path, &h);
	if (!f && errno) {
		snprintf(d->err, d->len, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if (!f) {
		snprintf(d->err, d->len, "%s is not a scalebpf memory trace (no %s header)", path,
			 SB_TRACE_MAGIC);
		return NULL;
	}
	if (fstat(fileno(f), &st) == 0 && bytes)
		*bytes = (uint64_t)st.st_size;
	return f;
}

/* The next record, or NULL at the end (a cut last record is dropped). */
static const struct sb_trace_rec *next_rec(struct reader *r, bool *partial)
{
	if (r->i == r->n) {
		size_t got = fread(r->buf, 1, sizeof(r->buf), r->f);

		if (got % sizeof(r->buf[0]) && feof(r->f))
			*partial = true;
		r->n = got / sizeof(r->buf[0]);
		r->i = 0;
		if (!r->n)
			return NULL;
	}
	r->done++;
	return &r->buf[r->i++];
}

/* Pass 1 over thread t: its runs. */
static int scan_runs(struct driver *d, uint32_t t, struct reader *rd)
{
	const struct sb_trace_rec *rec;
	bool partial = false;
	uint64_t bytes = 0;
	int err;

	rd->f = open_trace(d, t, &bytes);
	if (!rd->f)
		return -EINVAL;
	rd->n = rd->i = rd->done = 0;
	d->info->bytes += bytes;
	err = sb_coh_runs_thread(&d->rs, t);
	while (!err && (rec = next_rec(rd, &partial))) {
		d->info->records++;
		switch (rec->kind) {
		case SB_TRACE_RESUME:
			d->info->resumes = true;
			sb_coh_runs_resume(&d->rs, rec->addr);
			break;
		case SB_TRACE_STACK:
			if (d->info->stacks && rec->pc > rec->addr)
				d->info->stacks[t] = (struct sb_coherence_stack){ rec->addr, rec->pc };
			break;
		case SB_TRACE_SYNC:
			d->info->syncs++;
			err = sb_coh_runs_sync(&d->rs, rec->addr, rec->size >> 8 & 0xff, rec->pc,
					       rd->done);
			break;
		default:
			sb_coh_runs_record(&d->rs);
		}
	}
	if (!err)
		sb_coh_runs_end_thread(&d->rs, rd->done);
	d->info->partial += partial;
	fclose(rd->f);
	rd->f = NULL;
	if (err)
		snprintf(d->err, d->len, "out of memory");
	return err;
}

/* Pass 2 state of a thread: its reader and its next run. */
struct cursor {
	struct reader rd;
	size_t run, run_end;       /* index into runs; one past its last */
	uint64_t limit;            /* records it may read in this region */
	bool partial;
};

static int feed(struct sb_coherence_sim *s, struct driver *d, uint32_t t,
		const struct sb_trace_rec *rec)
{
	switch (rec->kind) {
	case SB_TRACE_LOAD:
	case SB_TRACE_STORE:
		if (!rec->size || rec->size > 64) {
			d->info->bad_records++;
			return 0;
		}
		d->info->accesses++;
		return sb_coherence_sim_access(s, t, rec->addr, rec->size,
					       rec->kind == SB_TRACE_STORE, rec->pc);
	case SB_TRACE_ACQUIRE:
		d->info->locks++;
		sb_coherence_sim_lock(s, t, +1);
		return 0;
	case SB_TRACE_RELEASE:
		sb_coherence_sim_lock(s, t, -1);
		return 0;
	case SB_TRACE_SYNC:
	case SB_TRACE_RESUME:
	case SB_TRACE_STACK:
		return 0;
	default:
		d->info->bad_records++;
		return 0;
	}
}

/* Thread t's record limit for region k: the end of its last run in k. */
static void limit_for(struct driver *d, struct cursor *c, uint64_t k)
{
	while (c->run < c->run_end && d->rs.runs[c->run].region == k)
		c->limit = d->rs.runs[c->run++].last;
}

static int interleave(struct sb_coherence_sim *s, struct driver *d, struct cursor *c,
		      uint64_t seed);

static int simulate(struct sb_coherence_sim *s, struct driver *d, uint64_t nregions,
		    uint64_t seed)
{
	struct cursor *c = calloc(d->n, sizeof(*c));
	size_t r = 0;
	int err = 0;

	if (!c) {
		snprintf(d->err, d->len, "out of memory");
		return -ENOMEM;
	}
	for (uint32_t t = 0; t < d->n && !err; t++) {
		c[t].run = r;
		while (r < d->rs.nruns && d->rs.runs[r].thread == t)
			r++;
		c[t].run_end = r;
		c[t].rd.f = open_trace(d, t, NULL);
		if (!c[t].rd.f)
			err = -EINVAL;
	}
	for (uint64_t k = 0; k < nregions && !err; k++) {
		sb_coherence_sim_region(s, k);
		for (uint32_t t = 0; t < d->n; t++)
			limit_for(d, &c[t], k);
		if (s->o.mode == SB_COHERENCE_INTERLEAVED) {
			err = interleave(s, d, c, seed);
			continue;
		}
		for (uint32_t t = 0; t < d->n && !err; t++) {
			const struct sb_trace_rec *rec;

			while (!err && c[t].rd.done < c[t].limit &&
			       (rec = next_rec(&c[t].rd, &c[t].partial)))
				err = feed(s, d, t, rec);
		}
	}
	if (err == -ENOMEM)
		snprintf(d->err, d->len, "out of memory in the simulation");
	for (uint32_t t = 0; t < d->n; t++)
		if (c[t].rd.f)
			fclose(c[t].rd.f);
	free(c);
	return err;
}

/* A held lock in the interleaved mode's map: its thread and depth. */
static void *held_by(uint32_t t, uintptr_t depth)
{
	return (void *)((uintptr_t)t + 1 + (depth << 20));
}

static uint32_t owner_of(const void *v)
{
	return (uint32_t)(((uintptr_t)v & ((1u << 20) - 1)) - 1);
}

static uintptr_t depth_of(const void *v)
{
	return (uintptr_t)v >> 20;
}

/*
 * Interleaved mode over one region: rounds of one access per thread that
 * still has records in it (in thread order, or shuffled per round with a
 * seed).  Taking a lock does not use up a thread's turn.  A thread at the
 * ACQUIRE of a lock another thread holds waits; when every thread waits,
 * the traces disagree with mutual exclusion (a lock the tracer did not
 * see given back) and the first waiter is let in, counted.
 */
static int interleave(struct sb_coherence_sim *s, struct driver *d, struct cursor *c,
		      uint64_t seed)
{
	struct sb_idmap *held = sb_idmap_alloc();
	uint32_t *order = malloc(d->n * sizeof(*order));
	const struct sb_trace_rec **pending = calloc(d->n, sizeof(*pending));
	uint64_t rng = seed;
	int err = 0;

	if (!held || !order || !pending) {
		err = -ENOMEM;
		goto out;
	}
	for (;;) {
		bool any = false, moved = false;
		uint32_t first_waiter = UINT32_MAX;

		for (uint32_t i = 0; i < d->n; i++)
			order[i] = i;
		for (uint32_t i = d->n; seed && i > 1; i--) {
			uint32_t j = (uint32_t)(sb_rng_next(&rng) % i), x = order[i - 1];

			order[i - 1] = order[j];
			order[j] = x;
		}
		for (uint32_t i = 0; i < d->n && !err; i++) {
			uint32_t t = order[i];
			bool used = false;

			while (!err && !used) {
				const struct sb_trace_rec *rec = pending[t];
				void **slot;

				if (!rec) {
					if (c[t].rd.done >= c[t].limit ||
					    !(rec = next_rec(&c[t].rd, &c[t].partial)))
						break;
				}
				pending[t] = NULL;
				any = true;
				if (rec->kind == SB_TRACE_ACQUIRE) {
					slot = sb_idmap_slot(held, rec->addr, 0, true);
					if (!slot) {
						err = -ENOMEM;
						break;
					}
					if (*slot && owner_of(*slot) != t) {
						/* Held: wait, keeping the record (the
						 * buffer slot stays valid until the
						 * next read, which waits too). */
						pending[t] = rec;
						if (first_waiter == UINT32_MAX)
							first_waiter = t;
						break;
					}
					/* a nest lock or a recursive mutex again */
					*slot = held_by(t, *slot ? depth_of(*slot) + 1 : 1);
				} else if (rec->kind == SB_TRACE_RELEASE) {
					slot = sb_idmap_slot(held, rec->addr, 0, false);
					/* a release of a lock it does not hold (its
					 * acquire was not traced) frees no one's */
					if (slot && owner_of(*slot) == t) {
						if (depth_of(*slot) > 1)
							*slot = held_by(t, depth_of(*slot) - 1);
						else
							sb_idmap_remove(held, rec->addr, 0);
					}
				}
				/* A release ends the turn too: a waiting thread
				 * takes the lock before the releaser can take it
				 * back (a fair hand-off, the ping-pong of §IV-A). */
				used = rec->kind == SB_TRACE_LOAD || rec->kind == SB_TRACE_STORE ||
				       rec->kind == SB_TRACE_RELEASE;
				moved = true;
				err = feed(s, d, t, rec);
			}
		}
		if (err || !any)
			break;
		if (!moved && first_waiter != UINT32_MAX) {
			const struct sb_trace_rec *rec = pending[first_waiter];
			void **slot = sb_idmap_slot(held, rec->addr, 0, true);

			if (!slot) {
				err = -ENOMEM;
				break;
			}
			*slot = held_by(first_waiter, 1);
			pending[first_waiter] = NULL;
			d->info->locks_forced++;
			err = feed(s, d, first_waiter, rec);
		}
	}
out:
	sb_idmap_free(held);
	free(order);
	free(pending);
	return err;
}

int sb_coherence_trace_run(const char *dir, uint32_t pid, const struct sb_coherence_opts *o,
			   struct sb_coherence_result *r, struct sb_coherence_trace_info *info,
			   char *err, size_t len)
{
	struct driver d = { .dir = dir, .pid = pid, .info = info, .err = err, .len = len };
	struct sb_coherence_sim *s = NULL;
	struct reader *rd = NULL;
	uint64_t nregions;
	int ret;

	memset(info, 0, sizeof(*info));
	memset(r, 0, sizeof(*r));
	ret = list_threads(&d);
	if (ret)
		goto out;
	rd = malloc(sizeof(*rd));
	if (!rd) {
		ret = -ENOMEM;
		snprintf(err, len, "out of memory");
		goto out;
	}
	info->stacks = calloc(d.n, sizeof(*info->stacks));
	if (!info->stacks) {
		ret = -ENOMEM;
		snprintf(err, len, "out of memory");
		goto out;
	}
	for (uint32_t t = 0; t < d.n; t++) {
		ret = scan_runs(&d, t, rd);
		if (ret)
			goto out;
	}
	ret = sb_coh_runs_regions(&d.rs, &nregions);
	if (ret) {
		snprintf(err, len, "out of memory");
		goto out;
	}
	info->regions = nregions;
	s = sb_coherence_sim_alloc(d.n, o, err, len);
	if (!s) {
		ret = -EINVAL;
		goto out;
	}
	ret = simulate(s, &d, nregions, o->seed);
	if (!ret && sb_coherence_sim_result(s, r)) {
		ret = -ENOMEM;
		snprintf(err, len, "out of memory");
	}
out:
	if (!ret) {
		info->nthreads = d.n;
		info->tids = d.tids;
		d.tids = NULL;
	} else {
		free(info->stacks);
		info->stacks = NULL;
	}
	sb_coherence_sim_free(s);
	free(rd);
	free(d.tids);
	sb_coh_runs_free(&d.rs);
	return ret;
}

void sb_coherence_trace_info_free(struct sb_coherence_trace_info *info)
{
	free(info->tids);
	free(info->stacks);
	info->tids = NULL;
	info->stacks = NULL;
}
