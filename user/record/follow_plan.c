// SPDX-License-Identifier: MIT
/*
 * Following (follow.h): what an image's probes are and attaching them
 * for its pid: the executable and its libraries planned (once per
 * executable), the plan's probes that fall in its binaries, and ld.so's
 * dlopen hook.
 */
#include "follow.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gelf.h>

#include "binary/elfsym.h"
#include "binary/procmaps.h"
#include "binary/procpath.h"
#include "record_bpf.h"
#include "record_session.h"
#include "util/idmap.h"

/* The key of an image's dlopen hook in the attached set. */
#define DL_HOOK_KEY UINT32_MAX

bool sb_proc_has_bin(const struct sb_proc *p, const char *path)
{
	for (size_t i = 0; i < p->nbins; i++)
		if (!strcmp(p->bins[i], path))
			return true;
	return false;
}

/* Under the name given and its canonical one (as maps and the plan's
 * libraries spell it); a /proc/PID path is canonical already (realpath
 * would resolve it in this mount namespace: another file, or none). */
void sb_proc_add_bin(struct sb_proc *p, const char *path)
{
	char real[PATH_MAX];
	const char *names[2] = { path, !sb_path_is_proc_bound(path) && realpath(path, real) ?
				       real : path };

	for (int i = 0; i < 2; i++) {
		char **nb;

		if (sb_proc_has_bin(p, names[i]) || !(nb = realloc(p->bins, (p->nbins + 1) * sizeof(*nb))))
			continue;
		p->bins = nb;
		if ((nb[p->nbins] = strdup(names[i])))
			p->nbins++;
	}
}

/* What planning an image says: printed (errors always), kept with the
 * image; the profile's notes get those of the image it is made of. */
void sb_follow_note(void *ctx, const char *fmt, ...)
{
	struct sb_follow_ctx *c = ctx;
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

void sb_follow_add_library(const char *path, void *ctx)
{
	struct sb_follow_ctx *c = ctx;

	sb_proc_add_bin(c->p, path);
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
			   struct sb_follow_ctx *cp);

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
		sb_proc_add_bin(ip->bins, p->bins[i]);
	memcpy(ip->bins->notes, p->notes, sizeof(p->notes));
	ip->bins->condvars = p->condvars;
	ip->bins->condvars_named = p->condvars_named;
	ip->next = r->fw.planned;
	r->fw.planned = ip;
}

#define SB_COND_LOG_MAX (4u << 20)

/* Inline condvar barriers show only in the whole history: an image's is
 * kept for the end (SB_COND_LOG_MAX events of 48 bytes at most). */
void sb_follow_keep_log(struct sb_rec *r, struct sb_proc *p)
{
	size_t len = strlen(p->notes);

	/* the image decides (sb_follow_plan_image); a rotation cuts the
	 * history into intervals, where no whole one is kept */
	if (p->condvars && r->rotate_s > 0)
		snprintf(p->notes + len, sizeof(p->notes) - len, "%sinline condvar barriers are "
			 "not looked for with --rotate (they show only in a whole history)",
			 len ? "; " : "");
	else if (p->condvars)
		sb_builder_keep_log(p->builder, SB_COND_LOG_MAX, p->condvars_named);
}

int sb_follow_plan_image(struct sb_rec *r, struct sb_proc *p, bool from_maps)
{
	struct sb_follow_ctx c = { r, p };
	struct sb_image_plan *ip;
	struct stat st;
	/* Not one opened through /proc/PID: the plan's paths lead through
	 * that process, gone when the next one runs the same file. */
	bool known = !from_maps && !sb_path_is_proc_bound(p->exe_open) && !stat(p->exe_open, &st);
	int ret;

	if (known && (ip = planned(r, &st))) {
		for (size_t i = 0; i < ip->bins->nbins; i++)
			sb_proc_add_bin(p, ip->bins->bins[i]);
		sb_proc_add_bin(p, p->exe_open);
		memcpy(p->notes, ip->bins->notes, sizeof(p->notes));
		p->condvars = ip->bins->condvars;
		p->condvars_named = ip->bins->condvars_named;
		sb_follow_keep_log(r, p);
		return 0;
	}
	/* What its planning decides, not an earlier or later image's
	 * (sb_plan_build sets them; a build that fails early does not). */
	r->plan.condvars = r->plan.condvars_named = false;
	ret = follow_plan_new(r, p, from_maps, &c);
	p->condvars = r->plan.condvars;
	p->condvars_named = r->plan.condvars_named;
	if (known && ret >= 0)
		remember_plan(r, &st, p);
	sb_follow_keep_log(r, p);
	return ret;
}

static int follow_plan_new(struct sb_rec *r, struct sb_proc *p, bool from_maps,
			   struct sb_follow_ctx *cp)
{
	struct sb_follow_ctx c = *cp;
	int ret;

	sb_proc_add_bin(p, p->exe_open);
	if (from_maps) {
		if ((ret = sb_maps_refresh(p->maps, p->pid)))
			return ret;
		for (size_t i = 0; i < sb_maps_nbinaries(p->maps); i++)
			sb_follow_add_library(sb_maps_binary_path(p->maps, (int)i), &c);
	} else {
		sb_target_libraries(p->exe_open, sb_follow_add_library, &c);
	}
	/* Launchers run first: a --barrier in none of their images is
	 * only an error once no image had it (sb_rec_write).  A command
	 * that starts threads itself is the program: a name it lacks is a
	 * typo, said at once as without following. */
	r->plan.lenient = r->follow && r->spawned &&
			  (p != r->fw.procs[0] || !starts_threads(p->exe_open));
	return sb_plan_build(&r->plan, p->exe_open, r->barriers, r->nbarriers, r->auto_barrier,
			     r->region_funcs, r->nregions, sb_follow_note, &c);
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
	if (*slot || sb_target_interp(p->exe_open, interp, sizeof(interp)))
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

/*
 * The probes of p not in yet, one link each, each return probe just
 * before its entry.  Not all entries in one batch and then all returns: a
 * call that began in between (the first attach of a run waits a grace
 * period) had its entry and never its return, and a pthread_join entered
 * there broke every join instance after it (-p on a thread churn:
 * thousands of threads missing from their instances).  Nor an entry
 * before its own return: the few ms between two attaches still caught a
 * pthread_join every few runs of that churn.  A call made between a
 * return and its entry shows its return alone, which the BPF side drops
 * and counts (SB_COOKIE_RET).
 */
#define ATTACHED_RETURN ((void *)2)   /* the return probe only: entry failed */
#define ATTACHED_BOTH ((void *)1)

int sb_follow_attach(struct sb_rec *r, struct sb_proc *p, bool strict)
{
	char err[512];
	int added = 0;

	p->nprobes = 0;
	for (size_t i = 0; i < r->plan.n; i++) {
		const struct sb_probe *pr = &r->plan.probes[i];
		uint64_t flags = pr->arg | pr->cookie_flags, cookie;
		bool exact = pr->role == SB_ROLE_EXACT || pr->role == SB_ROLE_CHIP ||
			     pr->role == SB_ROLE_CHIP_THREAD;
		int which = pr->role == SB_ROLE_EXACT ? SB_UPROG_EXACT :
			    pr->role == SB_ROLE_CHIP ? SB_UPROG_CHIP :
			    pr->role == SB_ROLE_CHIP_THREAD ? SB_UPROG_CHIP_THREAD :
			    pr->role == SB_ROLE_USER_REGION ? SB_UPROG_REGION : SB_UPROG_PROBE;
		/* A wake-up call's return tells nothing; a SB_COOKIE_DEPART
		 * call departs at its futex return (sbpf_events.h). */
		bool ret = !exact && pr->role != SB_ROLE_COND_BROADCAST &&
			   !(pr->cookie_flags & SB_COOKIE_DEPART);
		void **slot;

		if (!sb_proc_has_bin(p, pr->binary))
			continue;
		if (!(slot = sb_idmap_slot(r->fw.attached, (uint64_t)p->pid, i, true)))
			return strict ? sb_rec_fail(r, "out of memory") * -1 : -ENOMEM;
		p->nprobes++;
		if (*slot == ATTACHED_BOTH)   /* this pid has it (a libc probe survives exec) */
			continue;
		if (pr->role == SB_ROLE_SYNC || pr->role == SB_ROLE_JOIN)
			flags |= SB_COOKIE_SYNC;
		if (ret && which == SB_UPROG_PROBE)
			flags |= SB_COOKIE_RET;
		cookie = SB_COOKIE_MAKE(i, flags);
		if (ret && *slot != ATTACHED_RETURN) {
			if (sb_bpf_attach_uprobe(r->bpf, pr->binary, pr->offset, true, which,
						 cookie, p->pid, err, sizeof(err))) {
				if (strict)
					return -sb_rec_fail(r, "%s", err);
				r->fw.attach_errors++;
				continue;   /* no entry without its return */
			}
			/* Marked so: a later attach adds the entry alone. */
			*slot = ATTACHED_RETURN;
		}
		if (sb_bpf_attach_uprobe(r->bpf, pr->binary, pr->offset, false, which, cookie,
					 p->pid, err, sizeof(err))) {
			if (strict && !sb_target_alive(p->pid))
				return -sb_rec_fail(r, "process %d exited during attach", p->pid);
			if (strict)
				return -sb_rec_fail(r, "%s", err);
			r->fw.attach_errors++;
			continue;
		}
		/* The entry is in: marked so, or a later attach (a fork, a
		 * dlopen) would add it twice and count every call twice. */
		*slot = ATTACHED_BOTH;
		added++;
	}
	if (r->follow_image && attach_dl_hook(r, p, err, sizeof(err)) && !strict)
		r->fw.attach_errors++;
	/* Its children stop until probed only when there is something to
	 * probe in them: the dlopen hook alone goes in while they run. */
	sb_bpf_fork_stop(r->bpf, p->pid, p->nprobes > 0);
	return added;
}

/* Every uprobe of pid out, its attached set emptied. */
static void detach_pid(struct sb_rec *r, int pid)
{
	sb_bpf_detach_pid(r->bpf, pid);
	for (size_t i = 0; i < r->plan.n; i++)
		sb_idmap_remove(r->fw.attached, (uint64_t)pid, i);
	sb_idmap_remove(r->fw.attached, (uint64_t)pid, DL_HOOK_KEY);
}

void sb_follow_exec_leader_gone(struct sb_rec *r, int pid)
{
	detach_pid(r, pid);
}

void sb_follow_detach(struct sb_rec *r, struct sb_proc *p)
{
	for (size_t i = 0; i < r->fw.nprocs; i++) {
		const struct sb_proc *o = r->fw.procs[i];

		if (o->pid == p->pid && !o->done && !o->end_ns)
			return;   /* exec'd: the pid runs on as another image */
	}
	detach_pid(r, p->pid);
	if (r->bpf)
		sb_bpf_fork_stop(r->bpf, p->pid, false);
}

static void free_bins(struct sb_proc *p)
{
	for (size_t i = 0; p && i < p->nbins; i++)
		free(p->bins[i]);
	if (p)
		free(p->bins);
	free(p);
}

void sb_follow_free_plans(struct sb_rec *r)
{
	while (r->fw.planned) {
		struct sb_image_plan *ip = r->fw.planned;

		r->fw.planned = ip->next;
		free_bins(ip->bins);
		free(ip);
	}
}
