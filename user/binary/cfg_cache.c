// SPDX-License-Identifier: MIT
/*
 * cfg_cache.c - the per-build-id cache of built CFGs (cfg_build.h), so a
 * second recording of the same binary does not redo its CFG.
 */
#include "cfg_build.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfg/cfg_io.h"
#include "elfsym.h"
#include "util/bytes.h"

/* mkdir -p, new components 0700: the cache reveals which binaries ran. */
static int mkdirs(const char *dir)
{
	char *p = strdup(dir);
	int ret = 0;

	if (!p)
		return -1;
	for (char *s = p + (p[0] == '/'); ret == 0; s++) {
		char c = *s;

		if (c && c != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0700) < 0 && errno != EEXIST)
			ret = -1;
		*s = c;
		if (!c)
			break;
	}
	free(p);
	return ret;
}

/* The cache directory (malloc'ed), or NULL when there is none. */
static char *cache_dir_of(const char *dir)
{
	const char *base = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char *out = NULL;

	if (dir)
		return dir[0] ? strdup(dir) : NULL;
	/* XDG: a relative value is invalid and must be ignored */
	if (base && base[0] == '/') {
		if (asprintf(&out, "%s/scalebpf/cfg", base) < 0)
			out = NULL;
	} else if (home && home[0] == '/') {
		if (asprintf(&out, "%s/.cache/scalebpf/cfg", home) < 0)
			out = NULL;
	}
	return out;
}

static struct sb_cfg *load_cached(const char *path, const char *bid)
{
	struct sb_cfg *g = NULL;
	unsigned char *data;
	size_t len;

	if (sb_bytes_slurp(path, &data, &len))
		return NULL;
	/* a file of another build-id (renamed, hash clash) counts as corrupt */
	if (sb_cfg_deserialize(data, len, &g, NULL, 0) == 0 &&
	    (!g->build_id || strcmp(g->build_id, bid))) {
		sb_cfg_free(g);
		g = NULL;
	}
	free(data);
	return g;
}

static void store(const char *dir, const char *path, const struct sb_cfg *g)
{
	struct sb_bytes_out o;
	unsigned char *buf;
	size_t len;

	if (mkdirs(dir) || sb_cfg_serialize(g, &buf, &len))
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
	    (dir = cache_dir_of(cache_dir)) && asprintf(&path, "%s/%s.cfg", dir, bid) < 0)
		path = NULL;
	if (path && (g = load_cached(path, bid)))
		*hit = true;
	if (!g && (g = sb_cfg_build(e, err, errlen)) && path)
		store(dir, path, g);
	free(path);
	free(dir);
	return g;
}
