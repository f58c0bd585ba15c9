// SPDX-License-Identifier: MIT
/*
 * --region FUNC (probes.h): a function of the program whose every
 * outermost call, in any thread, is a region of its own, as the CHiP
 * paper's annotated serial regions are.  Its entry and its return are
 * probed (record_region.h): a function called millions of times a second
 * pays a uprobe (~1-8 us here) twice per call; a loop nest's function
 * is the kind meant.  Looked up as --barrier names are: the symbol, else
 * every C++ function the name names.  An inlined function has no call to
 * probe: its caller is the region to name.
 */
#include <errno.h>

#include "binary/demangle.h"
#include "binary/elfsym.h"
#include "probes_priv.h"

struct region_ctx {
	struct sb_plan *pl;
	struct sb_elf *e;
	const char *want;
	size_t idx;
	int added, err;
	sb_plan_msg_fn msg;
	void *mctx;
};

static void on_cxx(const char *sym, const char *demangled, uint64_t vaddr, uint64_t size,
		   void *arg)
{
	struct region_ctx *c = arg;
	int r = sb_plan_add_region_func(c->pl, c->e, sym, vaddr, size, c->idx);

	if (r < 0 && !c->err)
		c->err = r;
	c->added += r > 0;
	if (c->msg && r >= 0)
		c->msg(c->mctx, "--region %s: probing %s (%s)", c->want, sym, demangled);
}

static int said(struct region_ctx *c, int r)
{
	if (r == -EEXIST && c->msg)
		c->msg(c->mctx, "error: --region %s: the function is probed already as a barrier "
		       "or runtime function; a region must be a function of its own", c->want);
	return r;
}

int sb_plan_add_region(struct sb_plan *pl, struct sb_elf *e, const char *want, size_t idx,
		       sb_plan_msg_fn msg, void *ctx)
{
	struct region_ctx c = { .pl = pl, .e = e, .want = want, .idx = idx, .msg = msg,
				.mctx = ctx };
	uint64_t vaddr, size;
	int n, r;

	if (!sb_elf_func_by_name(e, want, &vaddr, &size) && vaddr) {
		if ((r = sb_plan_add_region_func(pl, e, want, vaddr, size, idx)) < 0)
			return said(&c, r);
		pl->regions_found |= idx < 32 ? 1u << idx : 0;
		return r;
	}
	n = sb_elf_cxx_funcs(e, want, on_cxx, &c);
	if (c.err < 0)
		return said(&c, c.err);
	if (n > 0 && idx < 32)
		pl->regions_found |= 1u << idx;
	if (!n && pl->lenient) {   /* following: another image may have it */
		if (msg)
			msg(ctx, "--region %s: not in %s%s", want, sb_elf_path(e),
			    sb_elf_has_symtab(e) ? "" : " (stripped)");
		return 0;
	}
	if (!n) {
		if (msg)
			msg(ctx, "error: --region %s: no such function in %s%s", want,
			    sb_elf_path(e), sb_elf_has_symtab(e) ? " (an inlined or static "
			    "function without a symbol has no call to probe: name its caller)" :
			    " (the binary is stripped)");
		return -ENOENT;
	}
	return c.added;
}
