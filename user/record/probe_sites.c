// SPDX-License-Identifier: MIT
/*
 * --barrier naming a place: FILE:LINE, or a call site (0xVADDR,
 * BINARY+0xVADDR).  An inline barrier (SPLASH's BARRIER macro) has no
 * function to name, only the line where the macro is written, which is
 * where the report puts its condvar waits.  The place is turned into
 * call instructions of the executable: the pthread_cond_wait calls there
 * become barrier waits (their sites go to pl->sites, marked in the
 * events by records.c); otherwise one function of the executable called
 * there becomes a barrier function, as --barrier NAME would make it.
 */
#include "probes.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "binary/elfsym.h"
#include "profile/profile.h"
#include "records.h"

bool sb_barrier_is_site(const char *spec)
{
	const char *colon = strrchr(spec, ':'), *plus = strstr(spec, "+0x");
	const char *d;

	if (!strncmp(spec, "0x", 2) || (plus && plus > spec))
		return true;
	/* FILE:LINE, never a C++ scope "ns::f" */
	if (!colon || colon == spec || colon[-1] == ':' || !colon[1])
		return false;
	for (d = colon + 1; *d; d++)
		if (!isdigit((unsigned char)*d))
			return false;
	return true;
}

struct place {
	const char *file;      /* FILE:LINE: the file as given */
	unsigned line;
	uint64_t addr;         /* call site form: a vaddr inside or after the call */
	struct sb_elf *e;
	/* what was found there */
	uint64_t cond_sites[16];
	size_t ncond;
	size_t ncond_over;     /* more there than cond_sites holds: not probed */
	const char *callee;    /* another call there (the first) */
	uint64_t callee_entry;
	unsigned ncallees;
	int err;
};

/* "lu.c" names ".../lu.c"; "src/lu.c" names ".../src/lu.c". */
static bool file_matches(const char *path, const char *want)
{
	size_t lp = strlen(path), lw = strlen(want);

	if (lw > lp || strcmp(path + lp - lw, want))
		return false;
	return lw == lp || path[lp - lw - 1] == '/' || want[0] == '/';
}

static bool at_place(struct place *pl, uint64_t vaddr, uint64_t ret)
{
	const char *file, *func;
	unsigned line;

	if (!pl->file)
		return pl->addr >= vaddr && pl->addr <= ret;
	return !sb_elf_srcline(pl->e, vaddr, &file, &line, &func) && line == pl->line &&
	       file && file_matches(file, pl->file);
}

static void on_call(uint64_t vaddr, uint64_t ret, const char *callee, void *arg)
{
	struct place *pl = arg;
	uint64_t v, s;

	if (!callee || !at_place(pl, vaddr, ret))
		return;
	if (sb_prim_of_function(callee) == SB_PRIM_COND) {
		if (pl->ncond < sizeof(pl->cond_sites) / sizeof(pl->cond_sites[0]))
			pl->cond_sites[pl->ncond++] = ret - 1;   /* as records.c puts sites */
		else
			pl->ncond_over++;
		return;
	}
	if (sb_elf_func_by_name(pl->e, callee, &v, &s) || !v)
		return;   /* imported, or nothing we could probe */
	if (!pl->callee || strcmp(pl->callee, callee)) {
		pl->ncallees++;
		if (!pl->callee) {
			pl->callee = callee;
			pl->callee_entry = v;
		}
	}
}

static void on_func(const char *name, uint64_t vaddr, uint64_t size, void *arg)
{
	struct place *pl = arg;

	(void)name;
	if (!pl->file && (pl->addr < vaddr || pl->addr > vaddr + size))
		return;
	sb_elf_calls_in(pl->e, vaddr, size, on_call, pl);
}

static int parse(const char *spec, struct sb_elf *e, struct place *pl, char **file)
{
	const char *plus = strstr(spec, "+0x"), *base = strrchr(sb_elf_path(e), '/');
	char *end;

	base = base ? base + 1 : sb_elf_path(e);
	if (!strncmp(spec, "0x", 2) || (plus && plus > spec)) {
		if (plus && plus > spec &&
		    ((size_t)(plus - spec) != strlen(base) || strncmp(spec, base, strlen(base))))
			return -EXDEV;   /* another binary */
		pl->addr = strtoull(plus && plus > spec ? plus + 1 : spec, &end, 16);
		return *end || !pl->addr ? -EINVAL : 0;
	}
	*file = strdup(spec);
	if (!*file)
		return -ENOMEM;
	end = strrchr(*file, ':');
	*end = 0;
	pl->file = *file;
	pl->line = (unsigned)strtoul(end + 1, NULL, 10);
	return 0;
}

static int add_site(struct sb_plan *p, struct sb_elf *e, uint64_t vaddr)
{
	struct sb_site *ns;

	if (sb_plan_site_named(p, sb_elf_path(e), vaddr))
		return 0;
	ns = realloc(p->sites, (p->nsites + 1) * sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	p->sites = ns;
	ns[p->nsites].vaddr = vaddr;
	if (!(ns[p->nsites].binary = strdup(sb_elf_path(e))))
		return -ENOMEM;
	p->nsites++;
	return 0;
}

int sb_plan_add_site_barrier(struct sb_plan *p, struct sb_elf *e, const char *spec,
			     size_t idx, sb_plan_msg_fn msg, void *ctx)
{
	struct place pl = { .e = e };
	char *file = NULL;
	int r = parse(spec, e, &pl, &file);
	uint64_t v, s;

	if (r == -ENOMEM)
		return r;
	if (r == -EXDEV && p->lenient) {   /* following: that binary may come */
		if (msg)
			msg(ctx, "--barrier %s: names another binary than %s", spec,
			    sb_elf_path(e));
		return 0;
	}
	if (r) {
		if (msg)
			msg(ctx, "error: --barrier %s: %s", spec, r == -EXDEV ?
			    "names another binary than the executable" : "not an address");
		return -ENOENT;
	}
	sb_elf_funcs_matching(e, "", on_func, &pl);
	free(file);
	for (size_t i = 0; i < pl.ncond; i++)
		if ((r = add_site(p, e, pl.cond_sites[i])) < 0)
			return r;
	/* Found here: sb_rec_write reports the places no image had. */
	if (pl.ncond) {
		p->barriers_found |= idx < 32 ? 1u << idx : 0;
		if (msg)
			msg(ctx, "--barrier %s: %zu condition variable wait%s there: barrier "
			    "wait%s", spec, pl.ncond, pl.ncond > 1 ? "s" : "",
			    pl.ncond > 1 ? "s" : "");
		if (msg && pl.ncond_over)
			msg(ctx, "warning: --barrier %s: %zu more condition variable wait%s "
			    "there not probed (at most %zu a place): name call sites",
			    spec, pl.ncond_over, pl.ncond_over > 1 ? "s" : "", pl.ncond);
		return 0;
	}
	if (pl.ncallees == 1 && !sb_elf_func_by_name(e, pl.callee, &v, &s) && v) {
		p->barriers_found |= idx < 32 ? 1u << idx : 0;
		if (msg)
			msg(ctx, "--barrier %s: probing %s, called there", spec, pl.callee);
		return sb_plan_add_barrier_func(p, e, pl.callee, v, s);
	}
	if (p->lenient && pl.ncallees <= 1) {   /* following: another image may have it */
		if (msg)
			msg(ctx, "--barrier %s: no pthread_cond_wait call and no call of a "
			    "function of the program there in %s", spec, sb_elf_path(e));
		return 0;
	}
	if (msg)
		msg(ctx, "error: --barrier %s: %s in %s", spec, pl.ncallees > 1 ?
		    "several functions are called there: name one" :
		    "no pthread_cond_wait call and no call of a function of the program there",
		    sb_elf_path(e));
	return -ENOENT;
}

bool sb_plan_site_named(const struct sb_plan *p, const char *binary, uint64_t vaddr)
{
	for (size_t i = 0; i < p->nsites; i++)
		if (p->sites[i].vaddr == vaddr && !strcmp(p->sites[i].binary, binary))
			return true;
	return false;
}
