// SPDX-License-Identifier: MIT
/*
 * symcache.c - symbolized addresses of binaries with separate debug
 * files, kept across recordings (symcache.h).
 *
 * An entry, all numbers decimal but the addresses:
 *   "scalebpf-symcache 1\n" BUILD-ID "\n"
 *   SIZE " " MTIME_NS " " DEVICE " " INODE " " PATHLEN "\n" PATH "\n"
 *   COUNT "\n"
 *   COUNT times: VADDR(hex) " " LINE " " FILELEN " " FUNCLEN "\n" FILE FUNC "\n"
 *   CRC(8 hex digits) "\n"
 * a length of -1 standing for "none", the CRC-32 (sb_bytes_crc32) that
 * of every byte before it: a damaged entry is a miss, never wrong names.
 */
#include "symcache.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cachefile.h"
#include "util/bytes.h"
#include "util/idmap.h"

/* 2: the debug file's device joined its identity */
#define MAGIC "scalebpf-symcache 2\n"
#define MAX_BYTES (64u << 20)
#define MAX_ENTRIES (1u << 20)
#define MAX_STR (1u << 16)
/* Bounds on what save() writes, header and each entry past its strings:
 * the writer stops adding where a reader would refuse. */
#define HEAD_BYTES (sizeof(MAGIC) + 4096 + 5 * 21 + 4096 + 16)
#define ENT_BYTES (16 + 10 + 2 * 6 + 5)

struct ent {
	uint64_t vaddr;
	unsigned line;
	char *file, *func;
};

struct sb_symcache {
	char *dir, *path;     /* the cache directory and the entry in it */
	char *bid, *dbg;
	struct sb_symcache_fid id;   /* the debug file's */
	struct sb_idmap *idx;        /* vaddr -> index in ents + 1 */
	struct ent *ents;
	size_t n, cap;
	size_t bytes;                /* at most what save() would write */
	bool dirty;
	bool usable;                 /* new, or read and checked current */
};

static bool plain_hex(const char *s)
{
	return s && s[0] && strspn(s, "0123456789abcdef") == strlen(s);
}

/* st, or stat(path) when st is NULL, of a regular file. */
static bool file_id(const char *path, const struct stat *st, struct sb_symcache_fid *id)
{
	struct stat own;

	if (!st && stat(path, &own))
		return false;
	if (!st)
		st = &own;
	if (!S_ISREG(st->st_mode))
		return false;
	id->size = (uint64_t)st->st_size;
	id->mtime_ns = (uint64_t)st->st_mtim.tv_sec * 1000000000ull + (uint64_t)st->st_mtim.tv_nsec;
	id->dev = (uint64_t)st->st_dev;
	id->ino = (uint64_t)st->st_ino;
	return true;
}

static void free_cache(struct sb_symcache *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->ents[i].file);
		free(c->ents[i].func);
	}
	free(c->ents);
	sb_idmap_free(c->idx);
	free(c->dir);
	free(c->path);
	free(c->bid);
	free(c->dbg);
	free(c);
}

static struct sb_symcache *alloc(const char *cache_dir, const char *bid)
{
	struct sb_symcache *c;
	char *path;

	if (!plain_hex(bid) || !(c = calloc(1, sizeof(*c))))
		return NULL;
	if ((c->dir = sb_cache_dir(cache_dir, "sym")) &&
	    asprintf(&path, "%s/%s.sym", c->dir, bid) >= 0)
		c->path = path;
	if (!c->path || !(c->bid = strdup(bid)) || !(c->idx = sb_idmap_alloc())) {
		free_cache(c);
		return NULL;
	}
	return c;
}

/* Adds an entry (strings taken over); false on ENOMEM, nothing kept. */
static bool add(struct sb_symcache *c, uint64_t vaddr, unsigned line, char *file, char *func)
{
	void **slot = sb_idmap_slot(c->idx, vaddr, 0, true);

	if (slot && *slot) {   /* a duplicate: the first stays */
		free(file);
		free(func);
		return true;
	}
	if (slot && c->n == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 16;
		struct ent *p = realloc(c->ents, ncap * sizeof(*p));

		if (p) {
			c->ents = p;
			c->cap = ncap;
		}
	}
	if (!slot || c->n == c->cap) {
		if (slot)
			sb_idmap_remove(c->idx, vaddr, 0);
		free(file);
		free(func);
		return false;
	}
	c->bytes += ENT_BYTES + (file ? strlen(file) : 0) + (func ? strlen(func) : 0);
	c->ents[c->n] = (struct ent){ .vaddr = vaddr, .line = line, .file = file, .func = func };
	*slot = (void *)(uintptr_t)++c->n;
	return true;
}

/* ---- reading: a cursor over the NUL-terminated entry ---- */

struct cur {
	const char *p, *end;
	bool bad;
};

/* A number ending in `stop`: decimal (base 10, -1 allowed with neg) or hex. */
static int64_t num(struct cur *r, int base, bool neg, char stop, uint64_t max)
{
	size_t digits;
	char *e;
	uint64_t v;

	if (r->bad || r->p >= r->end)
		goto bad;
	if (neg && r->p[0] == '-' && r->p[1] == '1' && r->p[2] == stop) {
		r->p += 3;
		return -1;
	}
	/* only the digits save() writes: strtoull would also take "0x", a
	 * sign, spaces and capitals */
	digits = strspn(r->p, base == 16 ? "0123456789abcdef" : "0123456789");
	if (!digits)
		goto bad;
	errno = 0;
	v = strtoull(r->p, &e, base);
	if (errno || e != r->p + digits || e >= r->end || *e != stop || v > max)
		goto bad;
	r->p = e + 1;
	return (int64_t)v;
bad:
	r->bad = true;
	return 0;
}

/* len bytes as a string (none for -1); strings with a NUL are refused. */
static char *str(struct cur *r, int64_t len, bool *ok)
{
	char *s;

	*ok = false;
	if (r->bad)
		return NULL;
	if (len < 0) {
		*ok = true;
		return NULL;
	}
	if ((uint64_t)len > (uint64_t)(r->end - r->p) || memchr(r->p, 0, (size_t)len)) {
		r->bad = true;
		return NULL;
	}
	s = strndup(r->p, (size_t)len);
	r->p += len;
	*ok = s != NULL;
	return s;
}

static bool lit(struct cur *r, const char *s)
{
	size_t n = strlen(s);

	if (r->bad || (size_t)(r->end - r->p) < n || memcmp(r->p, s, n)) {
		r->bad = true;
		return false;
	}
	r->p += n;
	return true;
}

static bool parse(struct sb_symcache *c, const char *data, size_t len)
{
	struct cur r, t;
	int64_t plen, count;
	bool ok;

	/* the CRC line is the last 9 bytes: no pointer before the check */
	if (len < sizeof(MAGIC) + 9)
		return false;
	r = (struct cur){ .p = data, .end = data + len - 9 };
	t = (struct cur){ .p = r.end, .end = data + len };
	if ((uint32_t)num(&t, 16, false, '\n', UINT32_MAX) != sb_bytes_crc32(0, data, len - 9) ||
	    t.bad || t.p != t.end)
		return false;

	if (!lit(&r, MAGIC) || !lit(&r, c->bid) || !lit(&r, "\n"))
		return false;
	c->id.size = (uint64_t)num(&r, 10, false, ' ', UINT64_MAX);
	c->id.mtime_ns = (uint64_t)num(&r, 10, false, ' ', UINT64_MAX);
	c->id.dev = (uint64_t)num(&r, 10, false, ' ', UINT64_MAX);
	c->id.ino = (uint64_t)num(&r, 10, false, ' ', UINT64_MAX);
	plen = num(&r, 10, false, '\n', 4096);
	c->dbg = str(&r, plen, &ok);
	if (!ok || !c->dbg || !c->dbg[0] || !lit(&r, "\n"))
		return false;
	count = num(&r, 10, false, '\n', MAX_ENTRIES);
	for (int64_t i = 0; i < count && !r.bad; i++) {
		uint64_t vaddr = (uint64_t)num(&r, 16, false, ' ', UINT64_MAX);
		unsigned line = (unsigned)num(&r, 10, false, ' ', UINT32_MAX);
		int64_t flen = num(&r, 10, true, ' ', MAX_STR);
		int64_t fnlen = num(&r, 10, true, '\n', MAX_STR);
		bool ok1, ok2;
		/* str() hands out nothing when it fails */
		char *file = str(&r, flen, &ok1), *func = str(&r, fnlen, &ok2);

		if (!ok1 || !ok2 || !lit(&r, "\n")) {
			free(file);
			free(func);
			return false;
		}
		if (!add(c, vaddr, line, file, func))   /* it frees them */
			return false;
	}
	return !r.bad && r.p == r.end;
}

struct sb_symcache *sb_symcache_read(const char *cache_dir, const char *bid)
{
	struct sb_symcache *c = alloc(cache_dir, bid);
	unsigned char *data, *z;
	const char *why;
	size_t len;

	if (!c)
		return NULL;
	data = sb_cache_read(c->path, MAX_BYTES, &len, &why);
	z = data ? realloc(data, len + 1) : NULL;   /* NUL-terminated for strtoull */
	if (!z) {
		free(data);
		free_cache(c);
		return NULL;
	}
	z[len] = 0;
	if (!parse(c, (const char *)z, len)) {
		free(z);
		free_cache(c);
		return NULL;
	}
	free(z);
	return c;
}

bool sb_symcache_check(struct sb_symcache *c, const char *dbg, const struct stat *st)
{
	struct sb_symcache_fid id;

	c->usable = dbg && !strcmp(dbg, c->dbg) && file_id(dbg, st, &id) &&
		    id.size == c->id.size && id.mtime_ns == c->id.mtime_ns &&
		    id.dev == c->id.dev && id.ino == c->id.ino;
	return c->usable;
}

struct sb_symcache *sb_symcache_load(const char *cache_dir, const char *bid, const char *dbg)
{
	struct sb_symcache *c = sb_symcache_read(cache_dir, bid);

	if (c && !sb_symcache_check(c, dbg, NULL)) {
		free_cache(c);
		return NULL;
	}
	return c;
}

struct sb_symcache *sb_symcache_new(const char *cache_dir, const char *bid, const char *dbg,
				    const struct stat *st)
{
	struct sb_symcache *c = alloc(cache_dir, bid);

	if (!c)
		return NULL;
	if (!dbg || !dbg[0] || strlen(dbg) > 4096 || !(c->dbg = strdup(dbg)) ||
	    !file_id(dbg, st, &c->id)) {
		free_cache(c);
		return NULL;
	}
	c->usable = true;
	return c;
}

const char *sb_symcache_debug_file(const struct sb_symcache *c)
{
	return c->dbg;
}

const struct sb_symcache_fid *sb_symcache_debug_id(const struct sb_symcache *c)
{
	return &c->id;
}

bool sb_symcache_get(const struct sb_symcache *c, uint64_t vaddr, const char **file,
		     unsigned *line, const char **func)
{
	void **slot = c->usable ? sb_idmap_slot(c->idx, vaddr, 0, false) : NULL;
	const struct ent *e;

	if (!slot || !*slot)
		return false;
	e = &c->ents[(uintptr_t)*slot - 1];
	*file = e->file;
	*line = e->file ? e->line : 0;
	*func = e->func;
	return true;
}

void sb_symcache_put(struct sb_symcache *c, uint64_t vaddr, const char *file, unsigned line,
		     const char *func)
{
	size_t flen = file ? strlen(file) : 0, fnlen = func ? strlen(func) : 0;
	char *f, *fn;

	/* Too long for an entry, or the entry is full (a load would refuse
	 * it whole, and every recording would rewrite it): not kept, which
	 * loses nothing, a later recording reads that address's DWARF. */
	if (!c->usable || flen > MAX_STR || fnlen > MAX_STR || c->n >= MAX_ENTRIES ||
	    c->bytes + ENT_BYTES + flen + fnlen > MAX_BYTES)
		return;
	f = file ? strdup(file) : NULL;
	fn = func ? strdup(func) : NULL;
	if ((file && !f) || (func && !fn)) {   /* no memory: only not kept */
		free(f);
		free(fn);
		return;
	}
	if (add(c, vaddr, file ? line : 0, f, fn))
		c->dirty = true;
}

static void save(struct sb_symcache *c)
{
	struct sb_bytes_out o;
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		return;
	fprintf(m, MAGIC "%s\n%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %zu\n%s\n%zu\n",
		c->bid, c->id.size, c->id.mtime_ns, c->id.dev, c->id.ino, strlen(c->dbg), c->dbg, c->n);
	for (size_t i = 0; i < c->n; i++) {
		const struct ent *e = &c->ents[i];

		fprintf(m, "%" PRIx64 " %u %ld %ld\n%s%s\n", e->vaddr, e->line,
			e->file ? (long)strlen(e->file) : -1L, e->func ? (long)strlen(e->func) : -1L,
			e->file ? e->file : "", e->func ? e->func : "");
	}
	fflush(m);
	fprintf(m, "%08x\n", buf ? sb_bytes_crc32(0, buf, len) : 0);
	if (fclose(m) == 0 && len <= MAX_BYTES && sb_cache_mkdirs(c->dir) == 0 &&
	    sb_bytes_out_open(&o, c->path) == 0) {
		sb_bytes_out_write(&o, buf, len);
		sb_bytes_out_commit(&o);   /* on failure it removes its temporary */
	}
	free(buf);
}

void sb_symcache_close(struct sb_symcache *c)
{
	if (!c)
		return;
	if (c->dirty)
		save(c);
	free_cache(c);
}
