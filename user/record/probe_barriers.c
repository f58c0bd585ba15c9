// SPDX-License-Identifier: MIT
/*
 * User barriers of the probe plan (probes.c): functions named by
 * --barrier, and functions named *barrier* found in a program that builds
 * its barriers from a mutex and a condition variable.
 */
#include "probes.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "probes_priv.h"
#include "binary/demangle.h"
#include "binary/elfsym.h"

static bool barrier_like(const char *name)
{
	static const char *const skip[] = { "init", "destroy", "create", "alloc",
					    "free", "new", "delete", NULL };
	char low[128];
	size_t i;

	for (i = 0; name[i] && i + 1 < sizeof(low); i++)
		low[i] = (char)tolower((unsigned char)name[i]);
	low[i] = 0;
	if (!strstr(low, "barrier"))
		return false;
	for (i = 0; skip[i]; i++)
		if (strstr(low, skip[i]))
			return false;
	return true;
}

struct auto_ctx {
	struct sb_plan *pl;
	struct sb_elf *e;
	sb_plan_msg_fn msg;
	void *mctx;
	int added, err;
};

/*
 * Whether a function symbol is a barrier by its own name.  A C++ symbol
 * is judged by its demangled name, the function and its class or
 * namespace ("threads::Barrier::Wait"), never by the parameter types its
 * mangled name spells: pgain(long, Points*, parsec_barrier*) does the
 * work between barriers, and probing it as one would hide every sample
 * of that work (samples inside a probed waiting call are the call's).
 * Constructors, destructors and f.cold parts (jumped into, not called:
 * a return probe there would corrupt the stack) never are.
 */
static bool barrier_candidate(const char *name, char **shown)
{
	struct sb_cxx_name n;
	char *d;
	bool yes;

	*shown = NULL;
	if (strstr(name, ".cold"))
		return false;
	if (!strncmp(name, "pthread_", 8) || !strncmp(name, "GOMP_", 5))
		return false;
	if (strncmp(name, "_Z", 2) || !(d = sb_demangle(name)))
		return barrier_like(name);
	yes = !sb_cxx_name_parse(d, &n) && !sb_cxx_is_ctor_dtor(n.qual) &&
	      barrier_like(sb_cxx_last_components(n.qual, 2));
	if (yes)
		*shown = d;
	else
		free(d);
	return yes;
}

static void on_barrier_candidate(const char *name, uint64_t vaddr, uint64_t size, void *arg)
{
	struct auto_ctx *c = arg;
	char *shown;
	int r;

	if (!barrier_candidate(name, &shown))
		return;
	r = sb_plan_add_barrier_func(c->pl, c->e, name, vaddr, size);
	if (r < 0) {
		c->err = r;
	} else if (r > 0) {
		c->added++;
		if (c->msg && shown)
			c->msg(c->mctx, "user barrier detected: %s (%s; built from mutex + "
			       "condition variable; --no-auto-barrier to ignore, --barrier to "
			       "choose)", shown, name);
		else if (c->msg)
			c->msg(c->mctx, "user barrier detected: %s (built from mutex + condition "
			       "variable; --no-auto-barrier to ignore, --barrier to choose)", name);
	}
	free(shown);
}

struct named_ctx {
	struct sb_plan *pl;
	struct sb_elf *e;
	const char *want;
	sb_plan_msg_fn msg;
	void *mctx;
	int added, err;
};

static void on_named_cxx(const char *sym, const char *demangled, uint64_t vaddr,
			 uint64_t size, void *arg)
{
	struct named_ctx *c = arg;
	int r = sb_plan_add_barrier_func(c->pl, c->e, sym, vaddr, size);

	if (r < 0)
		c->err = r;
	c->added += r > 0;
	if (c->msg)
		c->msg(c->mctx, "--barrier %s: probing %s (%s)", c->want, sym, demangled);
}

/*
 * A --barrier name: the symbol of that exact name (a C function, or a
 * mangled C++ name as nm prints it), else every C++ function that the
 * name names as written ("f", "ns::f", "Class::method", "f(int)"): all
 * overloads and scopes that match are probed, one line each.
 */
int sb_plan_add_named_barrier(struct sb_plan *pl, struct sb_elf *e, const char *want,
			      size_t idx, sb_plan_msg_fn msg, void *ctx)
{
	struct named_ctx c = { .pl = pl, .e = e, .want = want, .msg = msg, .mctx = ctx };
	uint64_t vaddr, size;
	int n;

	if (!sb_elf_func_by_name(e, want, &vaddr, &size) && vaddr)
	{
		pl->barriers_found |= idx < 32 ? 1u << idx : 0;
		return sb_plan_add_barrier_func(pl, e, want, vaddr, size);
	}
	n = sb_elf_cxx_funcs(e, want, on_named_cxx, &c);
	if (n > 0 && idx < 32)   /* matched in some image (following) */
		pl->barriers_found |= 1u << idx;
	if (c.err < 0)
		return c.err;
	if (n > 1 && msg)
		msg(ctx, "--barrier %s: %d functions match (overloads or scopes): all are "
		    "probed; name one to choose (e.g. ns::f or f(int))", want, n);
	if (!n && pl->lenient) {   /* following: another image may have it */
		if (msg)
			msg(ctx, "--barrier %s: not in %s%s", want, sb_elf_path(e),
			    sb_elf_has_symtab(e) ? "" : " (stripped)");
		return 0;
	}
	if (!n) {
		if (msg)
			msg(ctx, "error: --barrier %s: no such function in %s%s", want,
			    sb_elf_path(e), sb_elf_has_symtab(e) ? "" :
			    " (the binary is stripped)");
		return -ENOENT;
	}
	return c.added;
}

/* Functions named *barrier* in a binary that uses condition variables
 * and no pthread barrier. */
int sb_plan_add_auto_barriers(struct sb_plan *pl, struct sb_elf *e, sb_plan_msg_fn msg,
			      void *ctx)
{
	struct auto_ctx ac = { .pl = pl, .e = e, .msg = msg, .mctx = ctx };
	uint64_t v, s;
	/* Reliable only where condition variables are the sole barrier
	 * mechanism: a wrapper around pthread_barrier_wait would nest. */
	bool has_cond, has_pbar;

	if (!sb_elf_has_symtab(e))
		return 0;
	has_cond = !sb_elf_func_by_name(e, "pthread_cond_wait", &v, &s) ||
		   sb_elf_imports(e, "pthread_cond_wait");
	has_pbar = sb_elf_imports(e, "pthread_barrier_wait");
	if (!has_cond || has_pbar)
		return 0;
	sb_elf_funcs_matching(e, "arrier", on_barrier_candidate, &ac);
	return ac.err < 0 ? ac.err : ac.added;
}
