// SPDX-License-Identifier: MIT
/* Following exec, fork and dlopen: see follow.h. */
#include "follow.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gelf.h>

#include "addr_sampler.h"
#include "binary/elfsym.h"
#include "binary/procmaps.h"
#include "clock.h"
#include "record_bpf.h"
#include "record_session.h"
#include "util/idmap.h"

/* The key of an image's dlopen hook in the attached set. */
#define DL_HOOK_KEY UINT32_MAX

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
	sb_records_release(&p->recs);
	sb_maps_free(p->maps);
	for (size_t i = 0; i < p->nbins; i++)
		free(p->bins[i]);
	free(p->bins);
	free(p->exe);
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

static struct sb_proc *proc_new(struct sb_rec *r, int pid, const char *exe, unsigned gen,
				int parent)
{
	struct sb_follow_state *fw = &r->fw;
	struct sb_proc *p, **np;

	if (fw->nprocs >= SB_MAX_PROCS)
		reclaim(r);
	if (fw->nprocs >= SB_MAX_PROCS || !(p = calloc(1, sizeof(*p))))
		return NULL;
	p->pid = pid;
	p->parent = parent;
	p->gen = gen;
	p->exe = strdup(exe);
	p->maps = sb_maps_alloc();
	p->threads = sb_idmap_alloc();
	p->builder = sb_builder_alloc(r->max_instances);
	p->addrs = p->maps ? sb_addr_sampler_alloc(p->maps, pid, 0) : NULL;
	p->recs.plan = &r->plan;
	p->recs.maps = p->maps;
	p->recs.pid = pid;
	p->start_ns = sb_now_ns();
	np = realloc(fw->procs, (fw->nprocs + 1) * sizeof(*np));
	if (!p->exe || !p->maps || !p->threads || !p->builder || !p->addrs || !np) {
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
	r->threads = p->threads;
	r->nthreads_live = p->nthreads_live;
}

int sb_follow_init(struct sb_rec *r)
{
	struct sb_proc *p;

	r->fw.tid_proc = sb_idmap_alloc();
	r->fw.attached = sb_idmap_alloc();
	p = r->fw.tid_proc && r->fw.attached ? proc_new(r, r->pid, r->exe, 0, 0) : NULL;
	if (!p)
		return -ENOMEM;
	sb_follow_use(r, p);
	return 0;
}

static bool has_bin(const struct sb_proc *p, const char *path)
{
	for (size_t i = 0; i < p->nbins; i++)
		if (!strcmp(p->bins[i], path))
			return true;
	return false;
}

/* Under the name given and its canonical one (as maps and the plan's
 * libraries spell it). */
static void add_bin(struct sb_proc *p, const char *path)
{
	char real[PATH_MAX];
	const char *names[2] = { path, realpath(path, real) ? real : path };

	for (int i = 0; i < 2; i++) {
		char **nb;

		if (has_bin(p, names[i]) || !(nb = realloc(p->bins, (p->nbins + 1) * sizeof(*nb))))
			continue;
		p->bins = nb;
		if ((nb[p->nbins] = strdup(names[i])))
			p->nbins++;
	}
}

struct plan_ctx {
	struct sb_rec *r;
	struct sb_proc *p;
};

/* What planning an image says: printed (errors always), kept with the
 * image; the profile's notes get those of the image it is made of. */
static void image_note(void *ctx, const char *fmt, ...)
{
	struct plan_ctx *c = ctx;
	size_t len = strlen(c->p->notes);
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (!c->r->quiet || !strncmp(line, "error", 5))
		fprintf(stderr, "scalebpf: %s\n", line);
	if (strncmp(line, "error", 5) && len + strlen(line) + 2 < sizeof(c->p->notes))
		snprintf(c->p->notes + len, sizeof(c->p->notes) - len, "%s%s",
			 len ? "; " : "", line);
}

static void add_library(const char *path, void *ctx)
{
	struct plan_ctx *c = ctx;

	add_bin(c->p, path);
	sb_plan_add_library(&c->r->plan, path);
}

/* Whether an executable creates threads: it imports (or, static, has)
 * pthread_create or an OpenMP fork. */
static bool starts_threads(const char *exe)
{
	static const char *const fns[] = { "pthread_create", "GOMP_parallel",
					   "__kmpc_fork_call", NULL };
	char err[256];
	struct sb_elf *e = sb_elf_open(exe, err, sizeof(err));
	bool yes = false;

	for (int i = 0; e && fns[i] && !yes; i++)
		yes = sb_elf_imports(e, fns[i]) || !sb_elf_func_by_name(e, fns[i], NULL, NULL);
	sb_elf_close(e);
	return yes;
}

/*
 * Executables planned already, by identity: their probes are in the plan
 * (global, deduplicated), so another image of one needs only its binary
 * list and notes.  Planning anew (ld.so --list, ELF symbols) took ~30-60
 * ms a command on the development VM; a driver script runs hundreds.
 */
static int follow_plan_new(struct sb_rec *r, struct sb_proc *p, bool from_maps,
			   struct plan_ctx *cp);

struct sb_image_plan {
	struct sb_image_plan *next;
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	struct sb_proc *bins;   /* bins and notes only */
};

static struct sb_image_plan *planned(struct sb_rec *r, const struct stat *st)
{
	for (struct sb_image_plan *ip = r->fw.planned; ip; ip = ip->next)
		if (ip->dev == st->st_dev && ip->ino == st->st_ino &&
		    ip->mtime.tv_sec == st->st_mtim.tv_sec &&
		    ip->mtime.tv_nsec == st->st_mtim.tv_nsec)
			return ip;
	return NULL;
}

static void remember_plan(struct sb_rec *r, const struct stat *st, const struct sb_proc *p)
{
	struct sb_image_plan *ip = calloc(1, sizeof(*ip));

	if (!ip || !(ip->bins = calloc(1, sizeof(*ip->bins)))) {
		free(ip);
		return;
	}
	ip->dev = st->st_dev;
	ip->ino = st->st_ino;
	ip->mtime = st->st_mtim;
	for (size_t i = 0; i < p->nbins; i++)
		add_bin(ip->bins, p->bins[i]);
	memcpy(ip->bins->notes, p->notes, sizeof(p->notes));
	ip->next = r->fw.planned;
	r->fw.planned = ip;
}

int sb_follow_plan_image(struct sb_rec *r, struct sb_proc *p, bool from_maps)
{
	struct plan_ctx c = { r, p };
	struct sb_image_plan *ip;
	struct stat st;
	bool known = !from_maps && !stat(p->exe, &st);
	int ret;

	if (known && (ip = planned(r, &st))) {
		for (size_t i = 0; i < ip->bins->nbins; i++)
			add_bin(p, ip->bins->bins[i]);
		add_bin(p, p->exe);
		memcpy(p->notes, ip->bins->notes, sizeof(p->notes));
		return 0;
	}
	ret = follow_plan_new(r, p, from_maps, &c);
	if (known && ret >= 0)
		remember_plan(r, &st, p);
	return ret;
}

static int follow_plan_new(struct sb_rec *r, struct sb_proc *p, bool from_maps,
			   struct plan_ctx *cp)
{
	struct plan_ctx c = *cp;
	int ret;

	add_bin(p, p->exe);
	if (from_maps) {
		if ((ret = sb_maps_refresh(p->maps, p->pid)))
			return ret;
		for (size_t i = 0; i < sb_maps_nbinaries(p->maps); i++)
			add_library(sb_maps_binary_path(p->maps, (int)i), &c);
	} else {
		sb_target_libraries(p->exe, add_library, &c);
	}
	/* Launchers run first: a --barrier in none of their images is
	 * only an error once no image had it (sb_rec_write).  A command
	 * that starts threads itself is the program: a name it lacks is a
	 * typo, said at once as without following. */
	r->plan.lenient = r->follow && r->spawned &&
			  (p != r->fw.procs[0] || !starts_threads(p->exe));
	return sb_plan_build(&r->plan, p->exe, r->barriers, r->nbarriers, r->auto_barrier,
			     image_note, &c);
}

/* ld.so's r_debug (an object: elfsym.h finds functions only). */
static int r_debug_vaddr(const char *path, uint64_t *vaddr)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = -1;
	Elf_Scn *scn = NULL;
	Elf *e;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	while (e && ret && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 1; sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *n;

			if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF ||
			    !(n = elf_strptr(e, sh.sh_link, s.st_name)) || strcmp(n, "_r_debug"))
				continue;
			*vaddr = s.st_value;
			ret = 0;
			break;
		}
	}
	elf_end(e);
	close(fd);
	return ret;
}

/* The dlopen hook of an image: ld.so's _dl_debug_state, pid-filtered. */
static int attach_dl_hook(struct sb_rec *r, struct sb_proc *p, char *err, size_t errlen)
{
	char interp[PATH_MAX], real[PATH_MAX];
	uint64_t fn, size, off, rd;
	struct sb_elf *e;
	void **slot = sb_idmap_slot(r->fw.attached, (uint64_t)p->pid, DL_HOOK_KEY, true);
	int ret = 0;

	if (!slot)
		return -ENOMEM;
	if (*slot || sb_target_interp(p->exe, interp, sizeof(interp)))
		return 0;   /* in already, or static: no dlopen to follow */
	if (!realpath(interp, real) || !(e = sb_elf_open(real, err, errlen)))
		return 0;
	/* r_debug.r_state: after int r_version, r_map and r_brk (8 bytes each). */
	if (!sb_elf_func_by_name(e, "_dl_debug_state", &fn, &size) &&
	    !sb_elf_vaddr_to_offset(e, fn, &off) && !r_debug_vaddr(real, &rd)) {
		ret = sb_bpf_attach_dl_state(r->bpf, real, off, (int64_t)(rd + 24 - fn), p->pid,
					     err, errlen);
		if (!ret)
			*slot = (void *)1;
	}
	sb_elf_close(e);
	return ret;
}

int sb_follow_attach(struct sb_rec *r, struct sb_proc *p, bool strict)
{
	char err[512];
	int added = 0;

	p->nprobes = 0;
	for (size_t i = 0; i < r->plan.n; i++) {
		const struct sb_probe *pr = &r->plan.probes[i];
		uint64_t flags = pr->arg, cookie;
		bool exact = pr->role == SB_ROLE_EXACT;
		void **slot;

		if (!has_bin(p, pr->binary))
			continue;
		if (!(slot = sb_idmap_slot(r->fw.attached, (uint64_t)p->pid, i, true)))
			return strict ? sb_rec_fail(r, "out of memory") * -1 : -ENOMEM;
		p->nprobes++;
		if (*slot)   /* this pid has it (a libc probe survives exec) */
			continue;
		if (pr->role == SB_ROLE_SYNC || pr->role == SB_ROLE_JOIN)
			flags |= SB_COOKIE_SYNC;
		cookie = SB_COOKIE_MAKE(i, flags);
		if (sb_bpf_attach_uprobe(r->bpf, pr->binary, pr->offset, false, exact, cookie,
					 p->pid, err, sizeof(err)) ||
		    (!exact && sb_bpf_attach_uprobe(r->bpf, pr->binary, pr->offset, true, false,
						    cookie, p->pid, err, sizeof(err)))) {
			if (strict && !sb_target_alive(p->pid))
				return -sb_rec_fail(r, "process %d exited during attach", p->pid);
			if (strict)
				return -sb_rec_fail(r, "%s", err);
			r->fw.attach_errors++;
			continue;
		}
		*slot = (void *)1;
		added++;
	}
	if (r->follow_image && attach_dl_hook(r, p, err, sizeof(err)) && !strict)
		r->fw.attach_errors++;
	/* Its children stop until probed only when there is something to
	 * probe in them: the dlopen hook alone goes in while they run. */
	sb_bpf_fork_stop(r->bpf, p->pid, p->nprobes > 0);
	return added;
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

	if (len + 64 < sizeof(r->fw.not_followed))
		snprintf(r->fw.not_followed + len, sizeof(r->fw.not_followed) - len,
			 "%s%d %.40s (%s)", len ? ", " : "", pid, what, why);
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
		not_followed(r, (int)t->tgid, comm, "forked; --no-follow");
		return;
	}
	if (!parent || r->fw.stopping ||
	    !(p = proc_new(r, (int)t->tgid, parent->exe, 0, parent->pid))) {
		sb_bpf_follow(r->bpf, (int)t->tgid, false);
		not_followed(r, (int)t->tgid, comm, !parent ? "parent unknown" :
			     r->fw.stopping ? "after recording stopped" : "limit of processes");
		return;
	}
	memcpy(p->comm, comm, sizeof(p->comm));
	for (size_t i = 0; i < parent->nbins; i++)
		add_bin(p, parent->bins[i]);
	sb_follow_use(r, p);
	sb_rec_thread_seen(r, t->hdr.tid, 0, t->hdr.ts, comm, SB_EV_THREAD_START);
	late(r, sb_follow_attach(r, p, false));
}

/* exec: the image before ends (its thread with it), a new one begins. */
static void on_exec(struct sb_rec *r, const struct sb_rec_proc *e)
{
	struct sb_proc *old = proc_of_tid(r, e->old_tid), *p;
	int pid = (int)e->tgid;
	char exe[PATH_MAX];

	if (r->fw.first_exec_pending && pid == r->child.pid) {
		r->fw.first_exec_pending = false;   /* the gate's exec: planned already */
		return;
	}
	if (sb_target_exe(pid, exe, sizeof(exe)))
		return;   /* gone already */
	if (!r->follow_image) {
		not_followed(r, pid, exe, "exec; --no-follow");
		return;
	}
	if (old) {
		struct sb_rec_thread x = { .hdr = { .type = SB_REC_THREAD_EXIT, .size = sizeof(x),
						    .tid = e->old_tid, .ts = e->hdr.ts },
					   .tgid = e->tgid, .oncpu_ns = e->oncpu_ns };

		memcpy(x.comm, old->comm, sizeof(x.comm));
		sb_follow_use(r, old);
		sb_rec_thread_exit(r, &x);
		/* Its maps are frozen: the pid's mappings are the new image's. */
		r->recs.pid = 0;
		old->done = true;
		old->end_ns = e->hdr.ts;
	}
	if (r->fw.stopping || !(p = proc_new(r, pid, exe, old ? old->gen + 1 : 1,
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
	sb_maps_refresh(p->maps, pid);
}

/* ld.so mapped (or unmapped) libraries: the new ones get their probes
 * before dlopen returns (before their constructors, in stop mode). */
static void on_dlopen(struct sb_rec *r, const struct sb_rec_proc *e)
{
	struct sb_proc *p = proc_of_pid(r, (int)e->tgid);
	struct plan_ctx c = { r, p };
	size_t before;
	int n;

	r->fw.dlopen_events++;
	if (!p || r->fw.stopping || sb_maps_refresh(p->maps, p->pid))
		return;
	before = r->plan.nlibs;
	for (size_t i = 0; i < sb_maps_nbinaries(p->maps); i++) {
		const char *path = sb_maps_binary_path(p->maps, (int)i);

		/* ld.so maps its cache too: only ELF files are libraries. */
		if (has_bin(p, path) || !sb_maps_binary_elf(p->maps, (int)i))
			continue;
		add_library(path, &c);
		r->fw.dlopen_libs++;
		if (strlen(r->fw.late_libs) + strlen(path) + 3 < sizeof(r->fw.late_libs))
			snprintf(r->fw.late_libs + strlen(r->fw.late_libs),
				 sizeof(r->fw.late_libs) - strlen(r->fw.late_libs), "%s%s",
				 *r->fw.late_libs ? ", " : "", path);
		if (sb_plan_add_user_binary(&r->plan, path, r->auto_barrier && !r->nbarriers,
					    image_note, &c) < 0)
			r->fw.attach_errors++;
	}
	if (r->plan.nlibs != before && sb_plan_add_runtime(&r->plan, p->exe) < 0)
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
	if (!p) {
		r->fw.unrouted++;
		p = r->fw.procs[0];
	}
	sb_follow_use(r, p);
	p->records++;
	return false;
}

void sb_follow_thread_gone(struct sb_rec *r, uint32_t tid)
{
	sb_idmap_remove(r->fw.tid_proc, tid, 0);
	if (!r->nthreads_live && r->fw.cur && !r->fw.cur->end_ns)
		r->fw.cur->end_ns = sb_now_ns();   /* its last thread: it exited */
}

void sb_follow_refresh(struct sb_rec *r)
{
	struct sb_proc *last = NULL;

	for (size_t i = 0; i < r->fw.nprocs; i++) {
		struct sb_proc *p = r->fw.procs[i];

		if (p->done)
			continue;
		if (sb_maps_refresh(p->maps, p->pid) == -ESRCH && !p->end_ns)
			p->end_ns = sb_now_ns();
		else
			last = p;
	}
	/* Spin ranges are addresses of one address space: the newest image. */
	if (last) {
		sb_follow_use(r, last);
		sb_rec_set_spin_ranges(r);
	}
}

bool sb_follow_alive(struct sb_rec *r)
{
	for (size_t i = 0; i < r->fw.nprocs; i++) {
		const struct sb_proc *p = r->fw.procs[i];

		if (!p->done && p->pid != r->child.pid && sb_target_alive(p->pid))
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
	while (r->fw.planned) {
		struct sb_image_plan *ip = r->fw.planned;

		r->fw.planned = ip->next;
		free_proc(ip->bins);
		free(ip);
	}
	sb_idmap_free(r->fw.tid_proc);
	sb_idmap_free(r->fw.attached);
	memset(&r->fw, 0, sizeof(r->fw));
	memset(&r->recs, 0, sizeof(r->recs));   /* the current image's copy */
	r->maps = NULL;
	r->builder = NULL;
	r->addrs = NULL;
	r->threads = NULL;
}
