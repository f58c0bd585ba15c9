// SPDX-License-Identifier: MIT
/*
 * cfg_cache.c - the per-build-id cache of built CFGs (cfg_build.h), so a
 * second recording of the same binary does not redo its CFG.
 *
 * An entry is input like any file: it may be a link to /dev/zero, a FIFO,
 * huge, or crafted with a valid CRC.  It is opened without following a
 * link and without blocking, read only when it is a regular file no larger
 * than its binary could need, and used only when it decodes under
 * cfg_io's structural rules and matches the binary: its build-id, and
 * every function the range of a function symbol of that name.  Anything
 * else is discarded and rebuilt (and the entry replaced), said once per
 * process on stderr.
 */
#include "cfg_build.h"
#include "cachefile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cfg/cfg_io.h"
#include "elfsym.h"
#include "util/bytes.h"

/*
 * The graph belongs to this binary and is what the builder makes: its
 * build-id; each function swept from its start into blocks without gaps,
 * and the exact range of the function symbol of its name where elfsym.h
 * knows one at its start, else (symbols only the separate debug file has,
 * libc's .cold parts) a range of the binary's loaded bytes.  NULL, or why
 * not.
 */
static const char *matches_binary(const struct sb_cfg *g, struct sb_elf *e, const char *bid)
{
	if (!g->build_id || strcmp(g->build_id, bid))
		return "another binary's graph (build-id)";
	for (size_t f = 0; f < g->nfuncs; f++) {
		const struct sb_cfg_func *fn = &g->funcs[f];
		uint64_t start = 0, last = 0, next = 0, off;
		const char *name = sb_elf_func_at(e, fn->start, &start);

		if (fn->end <= fn->start || !fn->nblocks)
			return "an empty function";
		/* the builder sweeps a function from its start: its blocks
		 * follow each other with no gap */
		if (g->blocks[fn->first_block].start != fn->start)
			return "a function whose first block is not at its start";
		for (uint32_t k = 1; k < fn->nblocks; k++)
			if (g->blocks[fn->first_block + k].start !=
			    g->blocks[fn->first_block + k - 1].end)
				return "a gap between blocks";
		if (!name) {
			if (sb_elf_vaddr_to_offset(e, fn->start, &off) ||
			    sb_elf_vaddr_to_offset(e, fn->end - 1, &off))
				return "a function outside the binary";
		} else if (start != fn->start || strcmp(name, fn->name) ||
			   !sb_elf_func_at(e, fn->end - 1, &last) || last != fn->start ||
			   (sb_elf_func_at(e, fn->end, &next) && next == fn->start)) {
			return "a function that is not the binary's symbol";
		}
	}
	return NULL;
}

/* The largest entry a binary of size bin_size can have: a graph takes
 * about a third of its binary's size (libc: 0.6 MB for 2 MB), so 8 times
 * plus room for small binaries is never reached by a real one. */
static uint64_t entry_max(struct sb_elf *e)
{
	struct stat st;

	if (stat(sb_elf_path(e), &st) || st.st_size <= 0)
		return 64u << 20;
	return (uint64_t)st.st_size * 8 + (4u << 20);
}

/* Once per process: a bad entry is worth a line, not one per binary. */
static void warn_once(const char *path, const char *why)
{
	static bool warned;

	if (warned)
		return;
	warned = true;
	fprintf(stderr, "scalebpf: CFG cache entry %s discarded (%s): rebuilt\n", path, why);
}

static struct sb_cfg *load_cached(const char *path, struct sb_elf *e, const char *bid)
{
	struct sb_cfg *g = NULL;
	unsigned char *data;
	const char *why;
	char err[128];
	size_t len;

	if (!(data = sb_cache_read(path, entry_max(e), &len, &why))) {
		if (why)
			warn_once(path, why);
		return NULL;
	}
	if (sb_cfg_deserialize(data, len, &g, err, sizeof(err))) {
		why = err;
	} else if (!g->has_flags || !g->has_tail_calls || !g->has_indirect_tails ||
		   (why = matches_binary(g, e, bid))) {
		/* an entry from before block flags or tail calls: built again */
		why = why ? why : !g->has_flags ? "no block flags (older format)"
				: !g->has_tail_calls ? "no tail calls (older format)"
				: "no indirect tail calls (older format)";
		sb_cfg_free(g);
		g = NULL;
	}
	if (why)
		warn_once(path, why);
	free(data);
	return g;
}

static void store(const char *dir, const char *path, const struct sb_cfg *g)
{
	struct sb_bytes_out o;
	unsigned char *buf;
	size_t len;

	if (sb_cache_mkdirs(dir) || sb_cfg_serialize(g, &buf, &len))
		return;
	if (sb_bytes_out_open(&o, path) == 0) {
		sb_bytes_out_write(&o, buf, len);
		sb_bytes_out_commit(&o);  /* on failure it removes its temporary */
	}
	free(buf);
}

struct sb_cfg *sb_cfg_cached(struct sb_elf *e, const char *cache_dir, bool *hit,
			     char *err, size_t errlen)
{
	const char *bid = sb_elf_build_id(e);
	char *dir = NULL, *path = NULL;
	struct sb_cfg *g = NULL;

	*hit = false;
	/* The build-id names the file: only plain hex is trusted there. */
	if (bid && bid[0] && strspn(bid, "0123456789abcdef") == strlen(bid) &&
	    (dir = sb_cache_dir(cache_dir, "cfg")) && asprintf(&path, "%s/%s" SB_CFG_CACHE_EXT, dir, bid) < 0)
		path = NULL;
	if (path && (g = load_cached(path, e, bid)))
		*hit = true;
	if (!g && (g = sb_cfg_build(e, err, errlen)) && path)
		store(dir, path, g);
	free(path);
	free(dir);
	return g;
}
