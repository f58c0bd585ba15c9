// SPDX-License-Identifier: MIT
#include "probes.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sbpf_events.h"
#include "probes_priv.h"
#include "binary/demangle.h"
#include "binary/elfsym.h"
#include "binary/procpath.h"
#include "profile/profile.h"

struct spec {
	const char *func;
	uint16_t role, prim;
	uint8_t arg;
};

static const struct spec libc_specs[] = {
	{ "pthread_barrier_wait", SB_ROLE_SYNC, SB_PRIM_BARRIER, 1 },
	{ "pthread_join", SB_ROLE_JOIN, SB_PRIM_JOIN, 0 },
	{ "pthread_timedjoin_np", SB_ROLE_JOIN, SB_PRIM_JOIN, 0 },
	{ "pthread_clockjoin_np", SB_ROLE_JOIN, SB_PRIM_JOIN, 0 },
	{ "pthread_create", SB_ROLE_CREATE, 0, 3 },
	{ NULL, 0, 0, 0 },
};

/* For inline condvar barriers; only with pl->condvars.  pthread_cond_signal
 * is left alone: in producer/consumer code it is a fast path called per
 * item (a probe there cost 7 us a call, a 2-thread ping-pong ran 2.5x
 * slower), and a barrier never signals.  A broadcast is rare by nature. */
static const struct spec cond_specs[] = {
	{ "pthread_cond_wait", SB_ROLE_COND_WAIT, SB_PRIM_COND, 1 },
	{ "pthread_cond_timedwait", SB_ROLE_COND_WAIT, SB_PRIM_COND, 1 },
	{ "pthread_cond_clockwait", SB_ROLE_COND_WAIT, SB_PRIM_COND, 1 },
	{ "pthread_cond_broadcast", SB_ROLE_COND_BROADCAST, SB_PRIM_COND, 1 },
	{ NULL, 0, 0, 0 },
};

/* libgomp: the combined parallel-loop entry points fork a region too. */
static const struct spec gomp_specs[] = {
	{ "GOMP_parallel", SB_ROLE_REGION, 0, 1 },
	{ "GOMP_parallel_loop_static", SB_ROLE_REGION, 0, 1 },
	{ "GOMP_parallel_loop_dynamic", SB_ROLE_REGION, 0, 1 },
	{ "GOMP_parallel_loop_guided", SB_ROLE_REGION, 0, 1 },
	{ "GOMP_parallel_loop_runtime", SB_ROLE_REGION, 0, 1 },
	{ "GOMP_parallel_loop_nonmonotonic_dynamic", SB_ROLE_REGION, 0, 1 },
	{ "GOMP_parallel_loop_nonmonotonic_guided", SB_ROLE_REGION, 0, 1 },
	{ "GOMP_parallel_sections", SB_ROLE_REGION, 0, 1 },
	{ "GOMP_barrier", SB_ROLE_SYNC, SB_PRIM_OMP_BARRIER, 0 },
	{ "GOMP_loop_end", SB_ROLE_SYNC, SB_PRIM_OMP_BARRIER, 0 },
	{ "GOMP_sections_end", SB_ROLE_SYNC, SB_PRIM_OMP_BARRIER, 0 },
	{ NULL, 0, 0, 0 },
};

static const struct spec kmp_specs[] = {
	{ "__kmpc_fork_call", SB_ROLE_REGION, 0, 3 },
	{ "__kmpc_barrier", SB_ROLE_SYNC, SB_PRIM_OMP_BARRIER, 0 },
	{ NULL, 0, 0, 0 },
};

void sb_plan_init(struct sb_plan *pl)
{
	memset(pl, 0, sizeof(*pl));
}

void sb_plan_free(struct sb_plan *pl)
{
	for (size_t i = 0; i < pl->n; i++) {
		free(pl->probes[i].binary);
		free(pl->probes[i].func);
	}
	for (size_t i = 0; i < pl->nspins; i++)
		free(pl->spins[i].binary);
	for (size_t i = 0; i < pl->nlibs; i++)
		free(pl->libs[i]);
	for (size_t i = 0; i < pl->nsites; i++)
		free(pl->sites[i].binary);
	free(pl->sites);
	free(pl->libs);
	free(pl->probes);
	memset(pl, 0, sizeof(*pl));
}

static int add_probe(struct sb_plan *pl, struct sb_elf *e, const char *name,
		     uint64_t vaddr, uint64_t size, uint16_t role, uint16_t prim,
		     uint8_t arg)
{
	struct sb_probe *p;

	for (size_t i = 0; i < pl->n; i++)
		if (pl->probes[i].func_vaddr == vaddr &&
		    !strcmp(pl->probes[i].binary, sb_elf_path(e)))
			return 0;
	if (pl->n == pl->cap) {
		size_t ncap = pl->cap ? pl->cap * 2 : 32;
		struct sb_probe *np = realloc(pl->probes, ncap * sizeof(*np));

		if (!np)
			return -ENOMEM;
		pl->probes = np;
		pl->cap = ncap;
	}
	p = &pl->probes[pl->n];
	memset(p, 0, sizeof(*p));
	p->func_vaddr = vaddr;
	p->func_size = size;
	/* Probes that read no argument may sit past argument set-up. */
	p->site_vaddr = sb_elf_probe_site(e, vaddr, size, arg != 0, &p->emulated);
	if (sb_elf_vaddr_to_offset(e, p->site_vaddr, &p->offset))
		return 0;   /* not file-backed: cannot be probed */
	p->binary = strdup(sb_elf_path(e));
	p->func = strdup(name);
	if (!p->binary || !p->func) {
		free(p->binary);
		free(p->func);
		return -ENOMEM;
	}
	p->role = role;
	p->prim = prim;
	p->arg = arg;
	pl->n++;
	return 1;
}

/*
 * SB_COOKIE_DEPART for glibc's pthread_barrier_wait (include/sbpf_events.h):
 * the futex words it sleeps on and wakes are glibc's, so only where the
 * library is glibc (gnu_get_libc_version), and only where the function's
 * extent fits the cookie.  Otherwise 0: the probe keeps its uretprobe.
 */
static uint64_t depart_flags(const struct sb_elf *e, const struct sb_probe *p)
{
	uint64_t v, s, off = p->site_vaddr - p->func_vaddr;

	if (getenv("SCALEBPF_BARRIER_URETPROBE") ||
	    sb_elf_func_by_name(e, "gnu_get_libc_version", &v, &s) ||
	    !p->func_size || p->func_size > 0xfff || off >= p->func_size)
		return 0;
	return SB_COOKIE_DEPART_MAKE(off, p->func_size);
}

/* A runtime function nobody imports is never called: probing it would
 * only add an attach and a ~100 ms detach (an RCU grace period each). */
static bool imported(struct sb_elf *const *bins, size_t nbins, const struct sb_elf *self,
		     const char *name)
{
	for (size_t i = 0; i < nbins; i++)
		if (bins[i] && bins[i] != self && sb_elf_imports(bins[i], name))
			return true;
	return false;
}

/* bins == NULL: no filter (a static executable defines what it calls). */
static int add_specs(struct sb_plan *pl, struct sb_elf *e, const struct spec *specs,
		     struct sb_elf *const *bins, size_t nbins)
{
	int added = 0;

	for (const struct spec *s = specs; s->func; s++) {
		uint64_t vaddr, size;
		int r;

		if (sb_elf_func_by_name(e, s->func, &vaddr, &size) || !vaddr)
			continue;
		if (bins && !imported(bins, nbins, e, s->func))
			continue;
		r = add_probe(pl, e, s->func, vaddr, size, s->role, s->prim, s->arg);
		if (r < 0)
			return r;
		if (r > 0 && s->prim == SB_PRIM_BARRIER)   /* pthread_barrier_wait */
			pl->probes[pl->n - 1].cookie_flags = depart_flags(e, &pl->probes[pl->n - 1]);
		added += r;
	}
	return added;
}

static void add_spin(struct sb_plan *pl, struct sb_elf *e, const char *name, uint16_t prim)
{
	uint64_t vaddr, size;

	if (pl->nspins >= sizeof(pl->spins) / sizeof(pl->spins[0]) ||
	    sb_elf_func_by_name(e, name, &vaddr, &size) || !vaddr || !size)
		return;
	for (size_t i = 0; i < pl->nspins; i++)   /* planned again: a later image */
		if (pl->spins[i].vaddr == vaddr && !strcmp(pl->spins[i].binary, sb_elf_path(e)))
			return;
	pl->spins[pl->nspins].binary = strdup(sb_elf_path(e));
	if (!pl->spins[pl->nspins].binary)
		return;
	pl->spins[pl->nspins].vaddr = vaddr;
	pl->spins[pl->nspins].size = size;
	pl->spins[pl->nspins].prim = prim;
	pl->nspins++;
}

static bool name_has(const char *path, const char *prefix)
{
	char buf[PATH_MAX];

	/* A deleted library is probed through /proc/PID/map_files/...:
	 * by the name the process knows it by. */
	return !strncmp(sb_path_base(path, buf, sizeof(buf)), prefix, strlen(prefix));
}

static const struct spec *specs_for(const char *path)
{
	if (name_has(path, "libc.so") || name_has(path, "libpthread.so"))
		return libc_specs;
	if (name_has(path, "libgomp.so"))
		return gomp_specs;
	if (name_has(path, "libomp.so") || name_has(path, "libiomp5.so"))
		return kmp_specs;
	return NULL;
}

int sb_plan_add_library(struct sb_plan *pl, const char *path)
{
	char real[PATH_MAX], **libs;

	/* The canonical path, as /proc/PID/maps shows it (merged /usr); a
	 * /proc/PID path is as maps lead to it (binary/procpath.h). */
	if (!sb_path_is_proc_bound(path) && realpath(path, real))
		path = real;
	for (size_t i = 0; i < pl->nlibs; i++)
		if (!strcmp(pl->libs[i], path))
			return 0;
	libs = realloc(pl->libs, (pl->nlibs + 1) * sizeof(*libs));
	if (!libs)
		return -ENOMEM;
	pl->libs = libs;
	if (!(libs[pl->nlibs] = strdup(path)))
		return -ENOMEM;
	pl->nlibs++;
	return 0;
}

/* Probes in the runtime libraries, for the functions some other loaded
 * binary (the executable or a library) imports. */
static int add_runtime_libraries(struct sb_plan *pl, struct sb_elf *exe)
{
	struct sb_elf **bins = calloc(pl->nlibs + 1, sizeof(*bins));
	char err[256];
	int r = 0, added = 0;

	if (!bins)
		return -ENOMEM;
	bins[0] = exe;
	for (size_t i = 0; i < pl->nlibs; i++)
		bins[i + 1] = sb_elf_open(pl->libs[i], err, sizeof(err));
	for (size_t i = 0; i < pl->nlibs && r >= 0; i++) {
		const struct spec *specs = specs_for(pl->libs[i]);
		struct sb_elf *e = bins[i + 1];

		if (!specs || !e)
			continue;
		r = add_specs(pl, e, specs, (struct sb_elf *const *)bins, pl->nlibs + 1);
		added += r > 0 ? r : 0;
		if (specs == libc_specs)
			add_spin(pl, e, "pthread_spin_lock", SB_PRIM_SPIN);
		if (specs == libc_specs && pl->condvars && r >= 0) {
			r = add_specs(pl, e, cond_specs, (struct sb_elf *const *)bins,
				      pl->nlibs + 1);
			added += r > 0 ? r : 0;
		}
	}
	for (size_t i = 1; i <= pl->nlibs; i++)
		sb_elf_close(bins[i]);
	free(bins);
	return r < 0 ? r : added;
}

struct outlined_ctx {
	struct sb_plan *pl;
	struct sb_elf *e;
	int added, err;
};

static void on_outlined(const char *name, uint64_t vaddr, uint64_t size, void *arg)
{
	struct outlined_ctx *c = arg;
	int r;

	/* clang -g emits the body as .omp_outlined._debug__ behind a wrapper:
	 * probing both would nest every task. */
	if (strstr(name, "_debug__"))
		return;
	r = add_probe(c->pl, c->e, name, vaddr, size, SB_ROLE_TASK, 0, 0);
	if (r < 0)
		c->err = r;
	else
		c->added += r;
}

/* A program built by `scalebpf cc` hands its exact block counts to this
 * function at the end of every segment of work (user/rt/exact_rt.c). */
static int add_exact(struct sb_plan *pl, struct sb_elf *e)
{
	uint64_t vaddr, size;
	int r;

	if (sb_elf_func_by_name(e, "scalebpf_exact_batch", &vaddr, &size) || !vaddr)
		return 0;
	r = add_probe(pl, e, "scalebpf_exact_batch", vaddr, size, SB_ROLE_EXACT, SB_PRIM_OTHER, 1);
	pl->exact = r > 0;
	pl->trace_mem = pl->exact && !sb_elf_func_by_name(e, "sb_trace_sync", &vaddr, &size);
	/* --chip: its counters come through their own function */
	if (pl->exact && !sb_elf_func_by_name(e, "scalebpf_chip_batch", &vaddr, &size) && vaddr &&
	    add_probe(pl, e, "scalebpf_chip_batch", vaddr, size, SB_ROLE_CHIP, SB_PRIM_OTHER,
		      1) > 0)
		pl->chip = true;
	/* ... and says where each thread's counters are, for --region */
	if (pl->chip && !sb_elf_func_by_name(e, "scalebpf_chip_thread", &vaddr, &size) &&
	    vaddr && add_probe(pl, e, "scalebpf_chip_thread", vaddr, size, SB_ROLE_CHIP_THREAD,
			       SB_PRIM_OTHER, 1) < 0)
		return -ENOMEM;
	/*
	 * Its libomp fork wrapper hands libomp a trampoline as the outlined
	 * function, from inside the runtime: the region is the wrapper's
	 * call, whose 3rd argument is the outlined function and whose caller
	 * is the program.
	 */
	if (r > 0 && !sb_elf_func_by_name(e, "__wrap___kmpc_fork_call", &vaddr, &size) &&
	    vaddr) {
		for (size_t i = 0; i < pl->n; i++) {
			struct sb_probe *p = &pl->probes[i];

			if (p->role != SB_ROLE_REGION || strcmp(p->func, "__kmpc_fork_call"))
				continue;
			free(p->binary);
			free(p->func);
			*p = pl->probes[--pl->n];
			break;
		}
		if (add_probe(pl, e, "__wrap___kmpc_fork_call", vaddr, size, SB_ROLE_REGION,
			      SB_PRIM_OTHER, 3) < 0)
			return -ENOMEM;
	}
	return r;
}

int sb_plan_add_barrier_func(struct sb_plan *pl, struct sb_elf *e, const char *sym,
			     uint64_t vaddr, uint64_t size)
{
	int r = add_probe(pl, e, sym, vaddr, size, SB_ROLE_SYNC, SB_PRIM_USER_BARRIER, 0);

	if (r > 0)   /* 0: probed already, or not file-backed */
		pl->probes[pl->n - 1].fixed_obj = true;
	return r;
}

int sb_plan_add_region_func(struct sb_plan *pl, struct sb_elf *e, const char *sym,
			    uint64_t vaddr, uint64_t size, size_t idx)
{
	int r;

	for (size_t i = 0; i < pl->n; i++)
		if (pl->probes[i].func_vaddr == vaddr &&
		    !strcmp(pl->probes[i].binary, sb_elf_path(e)))
			return pl->probes[i].role == SB_ROLE_USER_REGION ? 0 : -EEXIST;
	r = add_probe(pl, e, sym, vaddr, size, SB_ROLE_USER_REGION, SB_PRIM_OTHER, 0);
	if (r > 0)
		pl->probes[pl->n - 1].region = (uint8_t)idx;
	return r;
}

int sb_plan_add_runtime(struct sb_plan *pl, const char *exe)
{
	char err[256];
	struct sb_elf *e = sb_elf_open(exe, err, sizeof(err));
	int r = e ? add_runtime_libraries(pl, e) : -ENOENT;

	sb_elf_close(e);
	return r;
}

int sb_plan_add_user_binary(struct sb_plan *pl, const char *path, bool auto_barrier,
			    sb_plan_msg_fn msg, void *ctx)
{
	struct outlined_ctx oc = { .pl = pl };
	char err[256];
	int r = 0;

	if (specs_for(path) || !(oc.e = sb_elf_open(path, err, sizeof(err))))
		return 0;
	sb_elf_funcs_matching(oc.e, "._omp_fn.", on_outlined, &oc);
	sb_elf_funcs_matching(oc.e, ".omp_outlined.", on_outlined, &oc);
	if (oc.err < 0)
		r = oc.err;
	else if (auto_barrier && (r = sb_plan_add_auto_barriers(pl, oc.e, msg, ctx)) >= 0)
		r += oc.added;
	sb_elf_close(oc.e);
	return r;
}

int sb_plan_build(struct sb_plan *pl, const char *path,
			   char *const *barriers, size_t nbarriers, bool auto_barrier,
			   char *const *regions, size_t nregions,
			   sb_plan_msg_fn msg, void *ctx)
{
	struct outlined_ctx oc = { .pl = pl };
	char err[256];
	struct sb_elf *e;
	int r, added = 0;

	e = sb_elf_open(path, err, sizeof(err));
	if (!e)
		return -ENOENT;
	oc.e = e;
	/* Places first: they decide whether condvars are probed. */
	for (size_t i = 0; i < nbarriers; i++) {
		if (!sb_barrier_is_site(barriers[i]))
			continue;
		if ((r = sb_plan_add_site_barrier(pl, e, barriers[i], i, msg, ctx)) < 0)
			goto out;
		added += r;
	}
	{
		uint64_t v, s;
		bool has_cond = !sb_elf_func_by_name(e, "pthread_cond_wait", &v, &s) ||
				sb_elf_imports(e, "pthread_cond_wait");

		/* Inline barriers have no name: looked for wherever
		 * functions named *barrier* would be, unless the user named
		 * the sites (then only those). */
		pl->condvars_named = pl->nsites > 0;
		pl->condvars = has_cond && (pl->nsites > 0 || (!nbarriers && auto_barrier));
	}
	if ((r = add_runtime_libraries(pl, e)) < 0)
		goto out;
	added += r;
	/* A static executable carries its own libc and runtime. */
	if ((r = add_specs(pl, e, libc_specs, NULL, 0)) < 0)
		goto out;
	added += r;
	if ((r = add_specs(pl, e, gomp_specs, NULL, 0)) < 0)
		goto out;
	added += r;
	if (pl->condvars) {
		if ((r = add_specs(pl, e, cond_specs, NULL, 0)) < 0)
			goto out;
		added += r;
	}
	add_spin(pl, e, "pthread_spin_lock", SB_PRIM_SPIN);
	sb_elf_funcs_matching(e, "._omp_fn.", on_outlined, &oc);
	sb_elf_funcs_matching(e, ".omp_outlined.", on_outlined, &oc);
	if ((r = oc.err) < 0)
		goto out;
	added += oc.added;
	for (size_t i = 0; i < nbarriers; i++) {
		if (sb_barrier_is_site(barriers[i]))   /* FILE:LINE: above */
			continue;
		if ((r = sb_plan_add_named_barrier(pl, e, barriers[i], i, msg, ctx)) < 0)
			goto out;
		added += r;
	}
	if (!nbarriers && auto_barrier) {
		if ((r = sb_plan_add_auto_barriers(pl, e, msg, ctx)) < 0)
			goto out;
		added += r;
	}
	if ((r = add_exact(pl, e)) < 0)
		goto out;
	added += r;
	for (size_t i = 0; i < nregions; i++) {
		if ((r = sb_plan_add_region(pl, e, regions[i], i, msg, ctx)) < 0)
			goto out;
		added += r;
	}
	if (!sb_elf_has_symtab(e) && msg)
		msg(ctx, "warning: %s is stripped (no symbol table): locations show as "
		    "addresses, and OpenMP outlined functions cannot be probed", path);
	r = added;
out:
	sb_elf_close(e);
	return r;
}
