// SPDX-License-Identifier: MIT
/*
 * `record --rotate SEC -o DIR`: a complete profile per interval, for a
 * recorder that runs beside a service for days.
 *
 * The rule: an instance (and the waits, samples and counts that finished
 * in it) belongs to the interval in which it ended.  At each boundary
 * every image's section builder is cut (sb_builder_cut): what finished
 * goes out, what is open stays and ends in a later interval.  Counts the
 * recorder keeps for the whole run (BPF counters, records, drops: the
 * metadata keys that add when profiles merge, sb_merge_meta_adds) are
 * written less the previous interval's, and each thread's on-CPU time
 * less what it had at the last boundary; so `report -i DIR` adds the
 * intervals back to the whole run, nothing counted twice.  CHiP,
 * sharing, sampled addresses and call-chain statistics are whole-run
 * figures: they come with the last profile (written at the end).
 *
 * Files are DIR/<comm>-<pid>-<UTC start>.sbp (name order is time order),
 * each written atomically.  --keep N and --max-bytes B bound the
 * directory by deleting the oldest profiles this recorder wrote -- never
 * a file it did not write.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "follow.h"
#include "merge/merge.h"
#include "record_bpf.h"
#include "record_session.h"
#include "util/idmap.h"

/* Counts already the interval's: the section builder's per cut, and the
 * eventmap's, made anew for each profile from its stored instances. */
static const char *const per_cut[] = {
	"duration_ns", "instances", "instances_stored", "instances_partial",
	"instances_unfinished", "events_unmatched", "events_late", "tids_reused",
	"thread_exits_unjoined", "exact_counts_unplaced", "samples_memory_access",
	"samples_no_memory_access", "samples_undecodable", "samples_skid_corrected",
	"sample_keys", "sample_keys_unmapped", "cfg_cache_hits", "exact_blocks",
	"exact_blocks_unmapped", "sample_keys_in_exact_runtime", "threads_evicted",
};

struct written {
	char *path;
	uint64_t bytes;
};

struct sb_rotation {
	char dir[4096];
	uint64_t next_ns;            /* the next boundary */
	uint64_t from_ns;            /* this interval's start */
	struct sb_profile *prev;     /* the counts at the last boundary (meta only) */
	struct sb_idmap *oncpu;      /* (tid, start) -> on-CPU ns at the last boundary */
	struct sb_idmap *oncpu_next; /* ... being taken at this one */
	char last[4096];             /* the path of the profile at the end */
	struct written *files;       /* what this recorder wrote, oldest first */
	size_t nfiles, capfiles;
	uint64_t bytes;              /* their size together */
	uint64_t intervals, failed, pruned;
};

static int number(const char *arg, uint64_t max, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(arg, &end, 10);
	return *arg >= '0' && *arg <= '9' && !*end && !errno && *v <= max ? 0 : -1;
}

int sb_rec_rotate_option(struct sb_rec *r, int opt, const char *arg)
{
	uint64_t v;

	switch (opt) {
	case 'T':
		if (number(arg, 86400 * 365, &v) || v < 1) {
			fprintf(stderr, "scalebpf record: invalid --rotate '%s' (seconds an "
				"interval, 1..31536000)\n", arg);
			return 2;
		}
		r->rotate_s = (double)v;
		return 0;
	case 'k':
		if (number(arg, 1000000000, &v) || v < 1) {
			fprintf(stderr, "scalebpf record: invalid --keep '%s' (profiles to keep, "
				">= 1)\n", arg);
			return 2;
		}
		r->keep = v;
		return 0;
	default:   /* 'B' */
		if (number(arg, UINT64_MAX / 2, &v) || v < 4096) {
			fprintf(stderr, "scalebpf record: invalid --max-bytes '%s' (bytes, >= "
				"4096)\n", arg);
			return 2;
		}
		r->max_bytes = v;
		return 0;
	}
}

int sb_rec_rotate_prepare(struct sb_rec *r)
{
	struct sb_rotation *rot;
	char probe[4200], err[512];
	struct stat st;
	size_t n;

	if (!(rot = calloc(1, sizeof(*rot))) || !(rot->oncpu = sb_idmap_alloc()) ||
	    !(rot->prev = sb_profile_alloc())) {
		if (rot) {
			sb_idmap_free(rot->oncpu);
			free(rot);
		}
		return sb_rec_fail(r, "out of memory");
	}
	r->rot = rot;
	/* -o names the directory; its default is one of its own */
	snprintf(rot->dir, sizeof(rot->dir), "%s",
		 strcmp(r->output, "scalebpf.data") ? r->output : "scalebpf-profiles");
	n = strlen(rot->dir);
	while (n > 1 && rot->dir[n - 1] == '/')
		rot->dir[--n] = 0;
	if (mkdir(rot->dir, 0700) && errno != EEXIST)
		return sb_rec_fail(r, "--rotate: cannot make the directory %s: %s (nothing "
				   "recorded)", rot->dir, strerror(errno));
	if (stat(rot->dir, &st) || !S_ISDIR(st.st_mode))
		return sb_rec_fail(r, "--rotate: -o %s is not a directory: with --rotate, -o "
				   "names the directory the intervals go to", rot->dir);
	snprintf(probe, sizeof(probe), "%s/.scalebpf-probe.sbp", rot->dir);
	if (sb_profile_check_path(probe, err, sizeof(err)) != SB_OK)
		return sb_rec_fail(r, "--rotate: %s (nothing recorded)", err);
	if (r->keep && r->max_bytes == 0 && r->keep > 1000000)
		r->keep = 1000000;
	return 0;
}

const char *sb_rec_rotate_dir(struct sb_rec *r)
{
	return r->rot ? r->rot->dir : r->output;
}

/* DIR/<comm>-<pid>-<UTC start>.sbp for an interval from ns (monotonic). */
static void interval_path(struct sb_rec *r, uint64_t from_ns, char *buf, size_t len)
{
	int64_t real_ns = r->start_realtime * 1000000000ll + (int64_t)(from_ns - r->start_ns);
	time_t sec = (time_t)(real_ns / 1000000000ll);
	struct tm tm;
	char when[32];
	const char *exe = r->fw.cur && r->fw.cur->exe ? strrchr(r->fw.cur->exe, '/') : NULL;
	const char *comm = r->fw.cur && *r->fw.cur->comm ? r->fw.cur->comm
			   : exe && exe[1] ? exe + 1 : "target";
	int pid = r->fw.cur ? r->fw.cur->pid : r->pid;

	gmtime_r(&sec, &tm);
	strftime(when, sizeof(when), "%Y%m%dT%H%M%S", &tm);
	snprintf(buf, len, "%s/%s-%d-%s.%03dZ.sbp", r->rot->dir, comm, pid, when,
		 (int)(real_ns / 1000000 % 1000));
	for (char *c = strrchr(buf, '/') + 1; *c; c++)
		if (*c == '/' || *c == ' ')
			*c = '_';   /* a comm is the program's to choose */
}

const char *sb_rec_rotate_last_path(struct sb_rec *r)
{
	interval_path(r, r->rot->from_ns ? r->rot->from_ns : r->start_ns, r->rot->last,
		      sizeof(r->rot->last));
	return r->rot->last;
}

/* ---- what a profile of the rotation is given ---- */

static bool per_cut_key(const char *key)
{
	for (size_t i = 0; i < sizeof(per_cut) / sizeof(per_cut[0]); i++)
		if (!strcmp(key, per_cut[i]))
			return true;
	return false;
}

static void meta_counts(struct sb_rotation *rot, struct sb_profile *p)
{
	for (size_t i = 0; i < p->nmeta; i++) {
		const char *key = p->meta[i].key, *val = p->meta[i].value;
		uint64_t now, before;
		char buf[24];

		if (!val || *val < '0' || *val > '9' || per_cut_key(key) ||
		    !sb_merge_meta_adds(key))
			continue;
		now = strtoull(val, NULL, 10);
		before = sb_profile_meta_get_u64(rot->prev, key);
		/* the whole run's, for the next boundary */
		sb_profile_meta_set(rot->prev, key, val);
		snprintf(buf, sizeof(buf), "%" PRIu64, now > before ? now - before : 0);
		free(p->meta[i].value);
		p->meta[i].value = strdup(buf);
	}
}

/* On-CPU time in the interval; threads that ended before it go. */
static void threads_interval(struct sb_rotation *rot, struct sb_profile *p)
{
	size_t k = 0;

	sb_idmap_free(rot->oncpu_next);
	rot->oncpu_next = sb_idmap_alloc();
	for (size_t i = 0; i < p->nthreads; i++) {
		struct sb_thread t = p->threads[i];
		void **was = sb_idmap_slot(rot->oncpu, t.tid, t.start_ns, false);
		void **now = rot->oncpu_next ? sb_idmap_slot(rot->oncpu_next, t.tid, t.start_ns,
							     true) : NULL;
		uint64_t before = was ? (uint64_t)(uintptr_t)*was : 0;

		if (now)
			*now = (void *)(uintptr_t)t.oncpu_ns;
		if (t.end_ns && t.end_ns < rot->from_ns) {
			free(t.comm);   /* gone before the interval */
			continue;
		}
		t.oncpu_ns = t.oncpu_ns > before ? t.oncpu_ns - before : 0;
		t.start_ns = t.start_ns > rot->from_ns ? t.start_ns : rot->from_ns;
		p->threads[k++] = t;
	}
	p->nthreads = k;
	sb_idmap_free(rot->oncpu);
	rot->oncpu = rot->oncpu_next;
	rot->oncpu_next = NULL;
	if (!rot->oncpu)
		rot->oncpu = sb_idmap_alloc();
}

void sb_rec_rotate_adjust(struct sb_rec *r, struct sb_profile *p)
{
	struct sb_rotation *rot = r->rot;
	uint64_t from = rot->from_ns ? rot->from_ns : r->start_ns;
	uint64_t to = r->end_ns;   /* the boundary (sb_rec_rotate_tick), or the end */
	int64_t real = r->start_realtime + (int64_t)((from - r->start_ns) / 1000000000ull);

	rot->from_ns = from;
	meta_counts(rot, p);
	threads_interval(rot, p);
	sb_profile_meta_set_u64(p, "start_ns", from);
	sb_profile_meta_set_u64(p, "start_realtime", (uint64_t)real);
	sb_profile_meta_set_u64(p, "duration_ns", to > from ? to - from : 0);
	sb_profile_meta_set_u64(p, "rotate_interval", rot->intervals + 1);
	sb_profile_meta_set_u64(p, "rotate_seconds", (uint64_t)r->rotate_s);
	sb_profile_meta_set_u64(p, "rotate_intervals_failed", rot->failed);
	sb_profile_meta_set_u64(p, "rotate_profiles_pruned", rot->pruned);
}

/* Deletes the oldest profiles written here while --keep or --max-bytes
 * is exceeded (never the newest). */
static void prune(struct sb_rec *r)
{
	struct sb_rotation *rot = r->rot;
	size_t drop = 0;

	while (rot->nfiles - drop > 1 &&
	       ((r->keep && rot->nfiles - drop > r->keep) ||
		(r->max_bytes && rot->bytes > r->max_bytes))) {
		struct written *w = &rot->files[drop++];

		if (unlink(w->path) && errno != ENOENT)
			fprintf(stderr, "scalebpf: warning: --keep/--max-bytes: cannot delete %s: "
				"%s\n", w->path, strerror(errno));
		rot->bytes -= w->bytes;
		rot->pruned++;
		free(w->path);
	}
	memmove(rot->files, rot->files + drop, (rot->nfiles - drop) * sizeof(*rot->files));
	rot->nfiles -= drop;
}

void sb_rec_rotate_written(struct sb_rec *r, const char *path)
{
	struct sb_rotation *rot = r->rot;
	struct stat st;

	rot->intervals++;
	if (rot->nfiles == rot->capfiles) {
		size_t cap = rot->capfiles ? rot->capfiles * 2 : 16;
		struct written *a = realloc(rot->files, cap * sizeof(*a));

		if (!a)
			return;   /* not tracked: never pruned, never lost */
		rot->files = a;
		rot->capfiles = cap;
	}
	rot->files[rot->nfiles].path = strdup(path);
	rot->files[rot->nfiles].bytes = stat(path, &st) ? 0 : (uint64_t)st.st_size;
	if (!rot->files[rot->nfiles].path)
		return;
	rot->bytes += rot->files[rot->nfiles++].bytes;
	prune(r);
}

/* ---- the boundary ---- */

/* Threads that ended by upto were in an interval written: their entries
 * go, so a service that makes and ends threads all day keeps only its
 * live ones (the merge lists every thread from the intervals). */
static void threads_evict(struct sb_idmap *threads, uint64_t upto)
{
	uint64_t (*keys)[2] = NULL;
	size_t n = 0, cap = 0, it = 0;
	uint64_t k1, k2;
	void *v;

	while (sb_idmap_next(threads, &it, &k1, &k2, &v)) {
		const struct sb_thread *t = v;

		if (!t || !t->end_ns || t->end_ns > upto)
			continue;
		if (n == cap) {
			uint64_t (*a)[2] = realloc(keys, (cap = cap ? cap * 2 : 64) * sizeof(*a));

			if (!a)
				break;   /* kept: they cost memory, not correctness */
			keys = a;
		}
		keys[n][0] = k1;
		keys[n++][1] = k2;
	}
	for (size_t i = 0; i < n; i++) {
		struct sb_thread *t = sb_idmap_remove(threads, keys[i][0], keys[i][1]);

		if (t) {
			free(t->comm);
			free(t);
		}
	}
	free(keys);
}

int sb_rec_rotate_tick(struct sb_rec *r, uint64_t now)
{
	struct sb_rotation *rot = r->rot;
	struct sb_builder **cuts, *keep = NULL;
	struct sb_proc *best = NULL;
	uint64_t best_n = 0;
	char path[4200];

	if (!rot)
		return 0;
	if (!rot->next_ns) {
		rot->from_ns = r->start_ns;
		rot->next_ns = r->start_ns + (uint64_t)(r->rotate_s * 1e9);
	}
	if (now < rot->next_ns + 200000000ull)   /* its records may still come */
		return 0;
	if (!(cuts = calloc(r->fw.nprocs + 1, sizeof(*cuts))))
		return sb_rec_fail(r, "out of memory");
	/* every image's finished part; the one that did the most is written,
	 * as at the end (the others are listed there) */
	for (size_t i = 0; i < r->fw.nprocs; i++) {
		struct sb_builder_stats st;

		/* what came by the boundary is processed first */
		if (sb_builder_cut(r->fw.procs[i]->builder, rot->next_ns, &cuts[i]))
			continue;
		sb_builder_get_stats(cuts[i], &st);
		if (!best || st.instances > best_n) {
			best = r->fw.procs[i];
			best_n = st.instances;
		}
	}
	if (best) {
		size_t i = 0;

		while (r->fw.procs[i] != best)
			i++;
		sb_follow_use(r, best);
		keep = r->builder;
		r->builder = cuts[i];
		r->end_ns = rot->next_ns;
		interval_path(r, rot->from_ns, path, sizeof(path));
		if (sb_rec_write_interval(r, path)) {
			rot->failed++;
			fprintf(stderr, "scalebpf: warning: --rotate: the interval from %s was not "
				"written; recording goes on\n", path);
		}
		r->builder = keep;
		r->end_ns = 0;
	}
	for (size_t i = 0; i < r->fw.nprocs; i++) {
		sb_builder_free(cuts[i]);
		if (r->fw.procs[i]->threads)
			threads_evict(r->fw.procs[i]->threads, rot->next_ns);
	}
	free(cuts);
	rot->from_ns = rot->next_ns;
	rot->next_ns += (uint64_t)(r->rotate_s * 1e9);
	return 0;
}

void sb_rec_rotate_free(struct sb_rec *r)
{
	struct sb_rotation *rot = r->rot;

	if (!rot)
		return;
	for (size_t i = 0; i < rot->nfiles; i++)
		free(rot->files[i].path);
	free(rot->files);
	sb_idmap_free(rot->oncpu);
	sb_idmap_free(rot->oncpu_next);
	sb_profile_free(rot->prev);
	free(rot);
	r->rot = NULL;
}
