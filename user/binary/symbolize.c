// SPDX-License-Identifier: MIT
#include "symbolize.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "elfsym.h"
#include "symcache.h"
#include "util/idmap.h"
#include "procmaps.h"
#include "profile/profile.h"

struct sb_symbolizer {
	struct sb_maps *maps;
	struct sb_profile *p;
	struct sb_idmap *locs;      /* addr -> loc index + 1 */
	struct sb_idmap *bins;      /* maps binary -> struct bin */
	char *nodebug;
	char *dbgfiles;             /* "binary (debug file)", comma separated */
};

/* A maps binary in the profile. */
struct bin {
	long idx;                   /* its index in the profile's binaries */
	struct sb_symcache *cache;  /* lines from a separate debug file: kept */
};

static void bin_free(void *v)
{
	struct bin *b = v;

	sb_symcache_close(b->cache);   /* writes what was added */
	free(b);
}

struct sb_symbolizer *sb_symbolizer_alloc(struct sb_maps *maps, struct sb_profile *p)
{
	struct sb_symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->maps = maps;
	s->p = p;
	s->locs = sb_idmap_alloc();
	s->bins = sb_idmap_alloc();
	s->nodebug = strdup("");
	s->dbgfiles = strdup("");
	if (!s->locs || !s->bins || !s->nodebug || !s->dbgfiles) {
		sb_symbolizer_free(s);
		return NULL;
	}
	return s;
}

void sb_symbolizer_free(struct sb_symbolizer *s)
{
	if (!s)
		return;
	sb_idmap_free(s->locs);
	sb_idmap_free_with(s->bins, bin_free);
	free(s->nodebug);
	free(s->dbgfiles);
	free(s);
}

const char *sb_symbolizer_nodebug(const struct sb_symbolizer *s)
{
	return s->nodebug;
}

const char *sb_symbolizer_debug_files(const struct sb_symbolizer *s)
{
	return s->dbgfiles;
}

/* Appends "path" or "path (dbg)" to a comma-separated list. */
static void note_binary(char **list, const char *path, const char *dbg)
{
	size_t len = strlen(*list) + strlen(path) + (dbg ? strlen(dbg) + 3 : 0) + 3;
	char *n = malloc(len);

	if (!n)
		return;
	snprintf(n, len, "%s%s%s%s%s%s", *list, **list ? ", " : "", path, dbg ? " (" : "",
		 dbg ? dbg : "", dbg ? ")" : "");
	free(*list);
	*list = n;
}

/* The symcache entry of a binary without debug info of its own, made
 * from the debug file elfsym.c would read its lines from now.  That file
 * is looked for once (elfsym.h: kept open for the DWARF on a miss), and
 * the entry's own file, unchanged, is taken without reading it whole for
 * its .gnu_debuglink CRC: a hit then reads neither the debug file's
 * DWARF nor its bytes. */
static struct sb_symcache *load_cache(struct sb_elf *e, const char *bid)
{
	struct sb_symcache *c = bid && bid[0] ? sb_symcache_read(NULL, bid) : NULL;
	struct sb_elf_debug_hint hint = { 0 };
	const char *dbg;
	struct stat st;

	if (!c)
		return NULL;
	hint.path = sb_symcache_debug_file(c);
	hint.size = sb_symcache_debug_id(c)->size;
	hint.mtime_ns = sb_symcache_debug_id(c)->mtime_ns;
	hint.dev = sb_symcache_debug_id(c)->dev;
	hint.ino = sb_symcache_debug_id(c)->ino;
	dbg = sb_elf_debug_find(e, &hint, &st);
	if (!dbg || !sb_symcache_check(c, dbg, &st)) {
		sb_symcache_close(c);   /* nothing added: not written */
		return NULL;
	}
	return c;
}

/* An empty entry for a binary whose lines come from its debug file (the
 * open one: its identity is that of the file read). */
static struct sb_symcache *new_cache(struct sb_elf *e, const char *bid)
{
	struct stat st;
	const char *dbg = bid && bid[0] ? sb_elf_debug_find(e, NULL, &st) : NULL;

	return dbg ? sb_symcache_new(NULL, bid, dbg, &st) : NULL;
}

static struct bin *profile_binary(struct sb_symbolizer *s, int bin, struct sb_elf *e)
{
	void **slot = sb_idmap_slot(s->bins, (uint64_t)bin, 0, true);
	const char *bid = e ? sb_elf_build_id(e) : NULL;
	struct bin *b;

	if (!slot)
		return NULL;
	if (*slot)
		return *slot;
	if (!(b = calloc(1, sizeof(*b))))
		return NULL;
	b->idx = sb_profile_add_binary(s->p, sb_maps_binary_name(s->maps, bin), bid);
	if (b->idx < 0) {
		free(b);
		return NULL;
	}
	*slot = b;
	/* Lines from a separate debug file (the binary has none of its
	 * own, elfsym.c looks there second) may all be in the symcache:
	 * then that file's DWARF is not opened (symcache.h). */
	if (e && !sb_elf_has_debuginfo(e))
		b->cache = load_cache(e, bid);
	/* Lines from a separate debug file are named with it: "no debug
	 * info" only where no line can be read. */
	if (b->cache) {
		note_binary(&s->dbgfiles, sb_maps_binary_name(s->maps, bin),
			    sb_symcache_debug_file(b->cache));
	} else if (e && !sb_elf_has_lines(e)) {
		note_binary(&s->nodebug, sb_maps_binary_name(s->maps, bin), NULL);
	} else if (e && sb_elf_debug_file(e)) {
		note_binary(&s->dbgfiles, sb_maps_binary_name(s->maps, bin),
			    sb_elf_debug_file(e));
		if (!sb_elf_has_debuginfo(e))
			b->cache = new_cache(e, bid);
	}
	return b;
}

unsigned sb_symbolizer_ghost_line(struct sb_symbolizer *s, uint64_t addr)
{
	struct sb_elf *e;
	struct bin *b;
	uint64_t vaddr;
	int bin;

	if (!addr || sb_maps_resolve(s->maps, addr, &bin, &vaddr) ||
	    !(e = sb_maps_binary_elf(s->maps, bin)) || !(b = profile_binary(s, bin, e)))
		return 0;
	/* the program's own code only: a library's is no place a cause is
	 * shown, and one served by the line cache (libc6-dbg) would reopen
	 * its debug file (symcache.h) */
	if (b->cache || sb_profile_library(s->p, (int32_t)b->idx))
		return 0;
	return sb_elf_ghost_line(e, vaddr);
}

long sb_symbolizer_loc(void *ctx, uint64_t addr)
{
	struct sb_symbolizer *s = ctx;
	void **slot = sb_idmap_slot(s->locs, addr, 0, true);
	struct sb_loc loc = { .addr = addr, .binary = -1 };
	struct sb_elf *e = NULL;
	uint64_t vaddr;
	long idx;
	int bin;

	if (!slot)
		return -1;
	if (*slot)
		return (long)(uintptr_t)*slot - 1;
	if (addr && !sb_maps_resolve(s->maps, addr, &bin, &vaddr)) {
		const char *file = NULL, *func = NULL;
		unsigned line = 0;
		struct bin *b;

		e = sb_maps_binary_elf(s->maps, bin);
		loc.offset = vaddr;
		if (!(b = profile_binary(s, bin, e)))
			return -1;
		loc.binary = (int32_t)b->idx;
		if (b->cache && sb_symcache_get(b->cache, vaddr, &file, &line, &func)) {
			loc.file = (char *)file;
			loc.line = line;
		} else if (e) {
			if (!sb_elf_srcline(e, vaddr, &file, &line, &func)) {
				loc.file = (char *)file;
				loc.line = line;
			}
			if (!func)
				func = sb_elf_func_at(e, vaddr, NULL);
			if (b->cache)
				sb_symcache_put(b->cache, vaddr, loc.file, loc.line, func);
		}
		loc.function = (char *)func;
	}
	idx = sb_profile_add_loc(s->p, &loc);
	if (idx < 0)
		return -1;
	*slot = (void *)(uintptr_t)(idx + 1);
	return idx;
}
