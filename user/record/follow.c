// SPDX-License-Identifier: MIT
/* Following exec, fork and dlopen: see follow.h. */
#include "follow.h"
#include "rec_timing.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "addr_sampler.h"
#include "stacks.h"
#include "binary/procmaps.h"
#include "binary/procpath.h"
#include "clock.h"
#include "record_bpf.h"
#include "record_session.h"
#include "target.h"
#include "util/idmap.h"

static void free_thread(void *p)
{
	struct sb_thread *t = p;

	free(t->comm);
	free(t);
}

static void free_proc(struct sb_proc *p)
{
	if (!p)
		return;
	sb_idmap_free_with(p->threads, free_thread);
	sb_builder_free(p->builder);
	sb_addr_sampler_free(p->addrs);
	sb_stacks_free(p->stacks);
	sb_records_release(&p->recs);
	sb_maps_free(p->maps);
	for (size_t i = 0; i < p->nbins; i++)
		free(p->bins[i]);
	free(p->bins);
	free(p->exe);
	free(p->exe_open);
	sb_pin_close(&p->pin);
	free(p);
}

/*
 * At the limit of images: drop those that ended without a section (a
 * script's date, cat, sed...), so a long driver script cannot use up
 * the slots before its real worker starts.  They are counted, not
 * listed.  Never the first image nor the current one.
 */
static void reclaim(struct sb_rec *r)
{
	struct sb_follow_state *fw = &r->fw;
	size_t k = 1;

	for (size_t i = 1; i < fw->nprocs; i++) {
		struct sb_proc *p = fw->procs[i];
		struct sb_builder_stats st;
		size_t it = 0;
		uint64_t tid;
		void *v;

		sb_builder_get_stats(p->builder, &st);
		if (p == fw->cur || !(p->done || p->end_ns) || st.instances) {
			fw->procs[k++] = p;
			continue;
		}
		while (sb_idmap_next(fw->tid_proc, &it, &tid, NULL, &v))
			if (v == p) {   /* removing shifts entries: start over */
				sb_idmap_remove(fw->tid_proc, tid, 0);
				it = 0;
			}
		free_proc(p);
		fw->reclaimed++;
	}
	fw->nprocs = fw->nprocs ? k : 0;
}

static struct sb_proc *proc_new(struct sb_rec *r, int pid, const char *exe,
				const char *exe_open, unsigned gen, int parent)
{
	struct sb_follow_state *fw = &r->fw;
	struct sb_proc *p, **np;

	if (fw->nprocs >= SB_MAX_PROCS)
		reclaim(r);
	if (fw->nprocs >= SB_MAX_PROCS || !(p = calloc(1, sizeof(*p))))
		return NULL;
	p->pid = pid;
	p->parent = parent;
	/* Pinned now, while its exec or fork holds it for us (stopped in
	 * launch mode), so the pid names it.  Unpinned (gone, out of
	 * descriptors): never signalled. */
	if (sb_target_pin(pid, &p->pin)) {
		p->pin.fd = -1;
		p->pin.pid = 0;
	}
	p->gen = gen;
	p->exe = strdup(exe);
	p->exe_open = strdup(exe_open);
	p->maps = sb_maps_alloc();
	p->threads = sb_idmap_alloc();
	p->builder = sb_builder_alloc(r->max_instances);
	if (p->builder)
		sb_builder_single_joins(p->builder, r->single_joins);
	p->addrs = p->maps ? sb_addr_sampler_alloc(p->maps, pid, 0) : NULL;
	p->stacks = p->maps ? sb_stacks_alloc(p->maps, pid) : NULL;
	p->recs.plan = &r->plan;
	p->recs.maps = p->maps;
	p->recs.pid = pid;
	p->start_ns = sb_now_ns();
	np = realloc(fw->procs, (fw->nprocs + 1) * sizeof(*np));
	if (!p->exe || !p->exe_open || !p->maps || !p->threads || !p->builder || !p->addrs || !p->stacks ||
	    !np) {
		if (np)
			fw->procs = np;
		free_proc(p);
		return NULL;
	}
	fw->procs = np;
	fw->procs[fw->nprocs++] = p;
	return p;
}

void sb_follow_use(struct sb_rec *r, struct sb_proc *p)
{
	struct sb_proc *c = r->fw.cur;

	if (c == p || !p)
		return;
	if (c) {   /* the record state is copied in and out; the rest are pointers */
		c->recs = r->recs;
		c->nthreads_live = r->nthreads_live;
	}
	r->fw.cur = p;
	r->maps = p->maps;
	r->builder = p->builder;
	r->recs = p->recs;
	r->addrs = p->addrs;
	r->stacks = p->stacks;
	r->threads = p->threads;
	r->nthreads_live = p->nthreads_live;
}

static void not_followed(struct sb_rec *r, int pid, const char *what, const char *why);

/* One process of /proc: its id, its parent's, its name. */
struct proc_ent {
	int pid, ppid;
	char comm[17];
};

/* /proc/PID/stat: "pid (comm) state ppid ...", comm may hold ") ". */
static bool read_stat(int pid, struct proc_ent *pe)
{
	char path[64], buf[512], *open, *close;
	ssize_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (!(f = fopen(path, "re")))
		return false;
	n = (ssize_t)fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	if (!(open = strchr(buf, '(')) || !(close = strrchr(buf, ')')) || close < open ||
	    sscanf(close + 1, " %*c %d", &pe->ppid) != 1)
		return false;
	pe->pid = pid;
	snprintf(pe->comm, sizeof(pe->comm), "%.*s", (int)(close - open - 1), open + 1);
	return true;
}

/*
 * -p: processes the target forked before recording started (a pre-fork
 * server's workers, a driver's running stage) are recorded by no one,
 * with or without --follow (that follows forks from now on): listed as
 * not followed, so a profile without their work says why.
 */
static void list_running_children(struct sb_rec *r)
{
	struct proc_ent *ps = NULL, *np;
	size_t n = 0, cap = 0, nmarked = 0, capmarked = 0;
	int *marked = NULL, *nm;   /* listed: their children are too */
	struct dirent *de;
	DIR *d = opendir("/proc");
	bool more = true;

	while (d && (de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			if (!(np = realloc(ps, cap * sizeof(*ps))))
				break;
			ps = np;
		}
		n += read_stat(atoi(de->d_name), &ps[n]);
	}
	if (d)
		closedir(d);
	/* Descendants, at any depth: the target's children, theirs, ...
	 * (a pass per generation; a listed one's pid turns negative). */
	while (more) {
		more = false;
		for (size_t i = 0; i < n; i++) {
			bool desc = ps[i].pid > 0 && ps[i].ppid == r->pid;

			for (size_t k = 0; k < nmarked && !desc && ps[i].pid > 0; k++)
				desc = ps[i].ppid == marked[k];
			if (!desc)
				continue;
			not_followed(r, ps[i].pid, ps[i].comm, "running before recording");
			if (nmarked == capmarked) {
				capmarked = capmarked ? 2 * capmarked : 16;
				if (!(nm = realloc(marked, capmarked * sizeof(*nm)))) {
					more = false;   /* its children: not looked for */
					break;
				}
				marked = nm;
			}
			marked[nmarked++] = ps[i].pid;
			ps[i].pid = -ps[i].pid;
			more = true;
		}
	}
	free(marked);
	free(ps);
}

int sb_follow_init(struct sb_rec *r)
{
	char shown[PATH_MAX], open[PATH_MAX + 64];
	struct sb_proc *p;

	/* -p: the executable as the process names it, opened where that
	 * path leads to its file (its mount namespace, or deleted). */
	if (r->spawned || sb_proc_exe_path(r->pid, shown, sizeof(shown), open, sizeof(open)) < 0) {
		snprintf(shown, sizeof(shown), "%s", r->exe);
		snprintf(open, sizeof(open), "%s", r->exe);
	}
	r->fw.tid_proc = sb_idmap_alloc();
	r->fw.attached = sb_idmap_alloc();
	p = r->fw.tid_proc && r->fw.attached ? proc_new(r, r->pid, shown, open, 0, 0) : NULL;
	if (!p)
		return -ENOMEM;
	sb_follow_use(r, p);
	if (!r->spawned)
		list_running_children(r);
	return 0;
}

static struct sb_proc *proc_of_pid(struct sb_rec *r, int pid)
{
	for (size_t i = r->fw.nprocs; i-- > 0;)
		if (r->fw.procs[i]->pid == pid && !r->fw.procs[i]->done)
			return r->fw.procs[i];
	return NULL;
}

static struct sb_proc *proc_of_tid(struct sb_rec *r, uint32_t tid)
{
	void **slot = sb_idmap_slot(r->fw.tid_proc, tid, 0, false);

	return slot && *slot ? *slot : proc_of_pid(r, (int)tid);
}

static void not_followed(struct sb_rec *r, int pid, const char *what, const char *why)
{
	size_t len = strlen(r->fw.not_followed);

	r->fw.nnot_followed++;
	if (len + 64 < sizeof(r->fw.not_followed))
		snprintf(r->fw.not_followed + len, sizeof(r->fw.not_followed) - len,
			 "%s%d %.40s (%s)", len ? ", " : "", pid, what, why);
	else
		r->fw.not_listed++;   /* said as "+N more" (sb_follow_meta) */
}

/* Probes attached while the process runs (-p: not stopped for them). */
static void late(struct sb_rec *r, int n)
{
	if (!r->spawned && n > 0)
		r->fw.late_probes += (uint64_t)n;
}

/* A process forked by a followed one: its own image, with its parent's
 * probes attached for it before it returns from fork (stop mode). */
static void on_fork(struct sb_rec *r, const struct sb_rec_thread *t, struct sb_proc *parent)
{
	char comm[17];
	struct sb_proc *p = NULL;

	memcpy(comm, t->comm, 16);
	comm[16] = 0;
	if (!r->follow) {
		not_followed(r, (int)t->tgid, comm, r->spawned ? "forked; --no-follow" :
			     "forked; -p without --follow");
		return;
	}
	if (!parent || r->fw.stopping ||
	    !(p = proc_new(r, (int)t->tgid, parent->exe, parent->exe_open, 0, parent->pid))) {
		sb_bpf_follow(r->bpf, (int)t->tgid, false);
		not_followed(r, (int)t->tgid, comm, !parent ? "parent unknown" :
			     r->fw.stopping ? "after recording stopped" : "limit of processes");
		return;
	}
	memcpy(p->comm, comm, sizeof(p->comm));
	for (size_t i = 0; i < parent->nbins; i++)
		sb_proc_add_bin(p, parent->bins[i]);
	p->condvars = parent->condvars;   /* the same image, forked */
	p->condvars_named = parent->condvars_named;
	sb_follow_keep_log(r, p);
	sb_follow_use(r, p);
	sb_rec_thread_seen(r, t->hdr.tid, 0, t->hdr.ts, comm, SB_EV_THREAD_START);
	late(r, sb_follow_attach(r, p, false));
}

/* exec: the image before ends (its thread with it), a new one begins. */
static void on_exec(struct sb_rec *r, const struct sb_rec_proc *e)
{
	struct sb_proc *old = proc_of_tid(r, e->old_tid), *p;
	int pid = (int)e->tgid;
	char exe[PATH_MAX], open[PATH_MAX + 64];
	bool gone;

	sb_tm_mark("recording: exec seen");
	if (r->fw.first_exec_pending && pid == r->child.pid) {
		r->fw.first_exec_pending = false;   /* the gate's exec: planned already */
		return;
	}
	/* In its mount namespace (unshare -m, a container) or deleted, the
	 * path it names is not the file here: opened through /proc/PID.
	 * Gone already: a program exec'd without a stop (--no-follow, -p)
	 * can run and exit before this record is read; the image before
	 * must end all the same, or the new image's records land in it. */
	gone = sb_proc_exe_path(pid, exe, sizeof(exe), open, sizeof(open)) < 0;
	if (gone)
		snprintf(exe, sizeof(exe), "%.16s", e->comm);
	if (!r->follow_image || gone) {
		/* Its records would land in the image before (whose
		 * addresses they are not): the process is not followed
		 * from here on, the image it was ends. */
		sb_bpf_follow(r->bpf, pid, false);
		not_followed(r, pid, exe, !r->follow_image ? "exec; --no-follow" :
			     "exec; exited before it could be read");
	}
	if (old) {
		struct sb_rec_thread x = { .hdr = { .type = SB_REC_THREAD_EXIT, .size = sizeof(x),
						    .tid = e->old_tid, .ts = e->hdr.ts },
					   .tgid = e->tgid, .oncpu_ns = e->oncpu_ns };

		memcpy(x.comm, old->comm, sizeof(x.comm));
		sb_follow_use(r, old);
		/* Done first: its pid's probes stay for the new image. */
		old->done = true;
		old->end_ns = e->hdr.ts;
		sb_rec_thread_exit(r, &x);
		/* Its maps are frozen: the pid's mappings are the new image's. */
		r->recs.pid = 0;
		if (!r->follow_image || gone)
			sb_follow_detach(r, old);
	}
	if (!r->follow_image || gone)
		return;
	if (e->old_tid != e->tgid)
		sb_follow_exec_leader_gone(r, pid);
	if (r->fw.stopping || !(p = proc_new(r, pid, exe, open, old ? old->gen + 1 : 1,
					      old ? old->parent : 0))) {
		not_followed(r, pid, exe, r->fw.stopping ? "exec; after recording stopped" :
			     "exec; limit of processes");
		return;
	}
	memcpy(p->comm, e->comm, 16);
	sb_follow_use(r, p);
	sb_rec_thread_seen(r, e->tgid, 0, e->hdr.ts, p->comm, SB_EV_THREAD_START);
	r->spin_set = 0;   /* the new image's runtime ranges replace the old */
	if (sb_follow_plan_image(r, p, false) < 0)
		r->fw.attach_errors++;
	late(r, sb_follow_attach(r, p, false));
	sb_tm_mark("recording: exec's image attached");
	sb_maps_refresh(p->maps, pid);
}

/* ld.so mapped (or unmapped) libraries: the new ones get their probes
 * before dlopen returns (before their constructors, in stop mode). */
static void on_dlopen(struct sb_rec *r, const struct sb_rec_proc *e)
{
	struct sb_proc *p = proc_of_pid(r, (int)e->tgid);
	struct sb_follow_ctx c = { r, p };
	size_t before;
	int n;

	r->fw.dlopen_events++;
	if (!p || r->fw.stopping || sb_maps_refresh(p->maps, p->pid))
		return;
	before = r->plan.nlibs;
	for (size_t i = 0; i < sb_maps_nbinaries(p->maps); i++) {
		const char *path = sb_maps_binary_path(p->maps, (int)i);
		const char *name = sb_maps_binary_name(p->maps, (int)i);

		/* ld.so maps its cache too: only ELF files are libraries. */
		if (sb_proc_has_bin(p, path) || !sb_maps_binary_elf(p->maps, (int)i))
			continue;
		sb_follow_add_library(path, &c);
		r->fw.dlopen_libs++;
		/* Named as the process names it (path may be a /proc one). */
		if (strlen(r->fw.late_libs) + strlen(name) + 3 < sizeof(r->fw.late_libs))
			snprintf(r->fw.late_libs + strlen(r->fw.late_libs),
				 sizeof(r->fw.late_libs) - strlen(r->fw.late_libs), "%s%s",
				 *r->fw.late_libs ? ", " : "", name);
		if (sb_plan_add_user_binary(&r->plan, path, r->auto_barrier && !r->nbarriers,
					    sb_follow_note, &c) < 0)
			r->fw.attach_errors++;
	}
	if (r->plan.nlibs != before && sb_plan_add_runtime(&r->plan, p->exe_open) < 0)
		r->fw.attach_errors++;
	n = sb_follow_attach(r, p, false);
	r->fw.late_probes += n > 0 ? (uint64_t)n : 0;   /* after start, stopped or not */
}

void sb_follow_on_proc(struct sb_rec *r, const struct sb_rec_proc *e)
{
	uint64_t d;

	if (e->kind == SB_PROC_EXEC)
		on_exec(r, e);
	else if (e->kind == SB_PROC_DLOPEN)
		on_dlopen(r, e);
	/* SB_PROC_FORKED: its probes went in with its THREAD_NEW record. */
	d = sb_now_ns() - e->hdr.ts;
	if (e->stopped) {   /* never leave it stopped, whatever happened above */
		kill((pid_t)e->tgid, SIGCONT);
		r->fw.stops++;
		r->fw.stop_ns_total += d;
		if (d > r->fw.stop_ns_max)
			r->fw.stop_ns_max = d;
	} else if (e->kind != SB_PROC_FORKED && d > r->fw.async_delay_max_ns) {
		r->fw.async_delay_max_ns = d;
	}
}

bool sb_follow_route(struct sb_rec *r, const void *data, size_t size)
{
	const struct sb_rec_hdr *h = data;
	struct sb_proc *p;

	if (h->type == SB_REC_THREAD_NEW && h->size == sizeof(struct sb_rec_thread) &&
	    size >= h->size) {
		const struct sb_rec_thread *t = data;
		struct sb_proc *parent = proc_of_tid(r, t->parent_tid);

		if (t->tgid == t->hdr.tid && (!parent || parent->pid != (int)t->tgid)) {
			on_fork(r, t, parent);
			return true;
		}
		p = proc_of_pid(r, (int)t->tgid);
		p = p ? p : parent;
	} else {
		p = proc_of_tid(r, h->tid);
	}
	/* A thread of no known image: its addresses and times belong to no
	 * image here (an exec'd program not followed, a thread whose start
	 * was lost): counted and dropped.  With one live image only, the
	 * BPF side follows nothing else: it is that image's. */
	if (!p && r->fw.nprocs == 1 && !r->fw.procs[0]->done && !r->fw.procs[0]->end_ns)
		p = r->fw.procs[0];
	if (!p) {
		r->fw.unrouted++;
		return true;
	}
	sb_follow_use(r, p);
	p->records++;
	return false;
}

void sb_follow_thread_gone(struct sb_rec *r, uint32_t tid)
{
	sb_idmap_remove(r->fw.tid_proc, tid, 0);
	if (!r->nthreads_live && r->fw.cur && !r->fw.cur->end_ns) {
		r->fw.cur->end_ns = sb_now_ns();   /* its last thread: it exited */
		if (!r->fw.cur->done)   /* else exec'd: the pid is the next image's */
			sb_follow_detach(r, r->fw.cur);
	}
}

void sb_follow_refresh(struct sb_rec *r)
{
	struct sb_proc *last = NULL;

	for (size_t i = 0; i < r->fw.nprocs; i++) {
		struct sb_proc *p = r->fw.procs[i];

		/* An image that ended is no live process: its pid may be
		 * another's now, whose mappings are not its. */
		if (p->done || p->end_ns)
			continue;
		if (sb_maps_refresh(p->maps, p->pid) == -ESRCH) {
			p->end_ns = sb_now_ns();
			sb_follow_detach(r, p);
		} else {
			last = p;
		}
	}
	/* Spin ranges are addresses of one address space: the newest live image. */
	if (last) {
		sb_follow_use(r, last);
		sb_rec_set_spin_ranges(r);
	}
}

void sb_follow_unstop(struct sb_rec *r)
{
	for (size_t i = 0; i < r->fw.nprocs; i++) {
		const struct sb_proc *p = r->fw.procs[i];

		if (!p->done && !p->end_ns && sb_target_state(p->pid) == 'T')
			/* Through the pin: not the pid's next owner.  Unpinned
			 * (out of descriptors): by pid, left stopped is worse. */
			p->pin.pid ? sb_pin_signal(&p->pin, SIGCONT) : kill(p->pid, SIGCONT);
	}
}

bool sb_follow_alive(struct sb_rec *r)
{
	for (size_t i = 0; i < r->fw.nprocs; i++) {
		const struct sb_proc *p = r->fw.procs[i];

		/* Ended: a live pid is a reused one, not ours to wait for. */
		if (!p->done && !p->end_ns && p->pid != r->child.pid && sb_target_alive(p->pid))
			return true;
	}
	return false;
}

void sb_follow_free(struct sb_rec *r)
{
	if (r->fw.cur)
		r->fw.cur->recs = r->recs;
	for (size_t i = 0; i < r->fw.nprocs; i++)
		free_proc(r->fw.procs[i]);
	free(r->fw.procs);
	sb_follow_free_plans(r);
	sb_idmap_free(r->fw.tid_proc);
	sb_idmap_free(r->fw.attached);
	memset(&r->fw, 0, sizeof(r->fw));
	memset(&r->recs, 0, sizeof(r->recs));   /* the current image's copy */
	r->maps = NULL;
	r->stacks = NULL;
	r->builder = NULL;
	r->addrs = NULL;
	r->threads = NULL;
}
