// SPDX-License-Identifier: MIT
/* Control-flow graphs to and from bytes; the layout is in cfg_io.h. */
#include "cfg_io.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/bytes.h"

static const unsigned char magic[8] = { 's', 'b', 'p', 'f', 'c', 'f', 'g', '\n' };

#define HDR_LEN 24      /* magic, version, three counts */
#define CRC_LEN 4
/* Fewest bytes a record can take: counts claiming more records than
 * the input could hold are refused before anything is allocated. */
#define MIN_FUNC 4      /* name len, start, size, nblocks */
#define MIN_BLOCK 3
#define MIN_EDGE 2
#define KIND_BITS 3

/* ---- writing ---- */

struct wbuf {
	unsigned char *p;
	size_t len, cap;
	int err;         /* sticky: checked once at the end */
};

static unsigned char *wb_room(struct wbuf *w, size_t n)
{
	if (w->err)
		return NULL;
	if (w->cap - w->len < n) {
		size_t cap = w->cap ? w->cap : 4096;
		unsigned char *p;

		while (cap - w->len < n)
			cap *= 2;
		if (!(p = realloc(w->p, cap))) {
			w->err = ENOMEM;
			return NULL;
		}
		w->p = p;
		w->cap = cap;
	}
	return w->p + w->len;
}

static void wb_bytes(struct wbuf *w, const void *src, size_t n)
{
	unsigned char *d = wb_room(w, n);

	if (d && n) {
		memcpy(d, src, n);
		w->len += n;
	}
}

static void wb_u32(struct wbuf *w, uint32_t v)
{
	unsigned char *d = wb_room(w, 4);

	if (!d)
		return;
	for (int i = 0; i < 4; i++)
		d[i] = (unsigned char)(v >> (8 * i));
	w->len += 4;
}

static void wb_uleb(struct wbuf *w, uint64_t v)
{
	unsigned char *d = wb_room(w, 10);

	if (!d)
		return;
	do {
		*d++ = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		w->len++;
		v >>= 7;
	} while (v);
}

/* Zigzag keeps small negative deltas small.  Deltas are computed in
 * unsigned arithmetic (wrapping), so any two u64 values round-trip. */
static uint64_t zigzag(uint64_t d)
{
	return (d << 1) ^ (uint64_t)-(int64_t)(d >> 63);
}

static uint64_t unzigzag(uint64_t z)
{
	return (z >> 1) ^ (uint64_t)-(int64_t)(z & 1);
}

static void wb_str(struct wbuf *w, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	wb_uleb(w, n);
	wb_bytes(w, s, n);
}

/* What an edge of kind between blocks src and dst (< g->nblocks, blocks
 * and functions already checked) must be, as the builder makes it: only a
 * CALL leaves its function, for a function's entry; the not-taken side of
 * a branch, straight-line code and a call's return go to the next block. */
static bool edge_ok(const struct sb_cfg *g, uint64_t src, uint64_t dst, uint64_t kind)
{
	uint32_t fs = g->blocks[src].func, fd = g->blocks[dst].func;

	switch (kind) {
	case SB_EDGE_CALL:
		return g->funcs[fd].first_block == dst;
	case SB_EDGE_TAKEN:
	case SB_EDGE_JUMP:
		return fs == fd;
	case SB_EDGE_FALLTHROUGH:
	case SB_EDGE_SEQUENTIAL:
	case SB_EDGE_CALL_RETURN:
		return fs == fd && dst == src + 1;
	default:
		return false;
	}
}

/* The block flags a graph of this version may carry. */
static uint32_t flags_of(unsigned version)
{
	return version >= SB_CFG_IO_VERSION ? SB_BLOCK_FLAGS
	       : version >= SB_CFG_IO_VERSION_NOINDIRECT ? SB_BLOCK_CONST_BOUND | SB_BLOCK_TAIL_CALL
	       : version >= SB_CFG_IO_VERSION_NOTAIL ? SB_BLOCK_CONST_BOUND : 0;
}

/* The version g is written as: the newest whose flags it computed (a
 * graph read from version 2 has none: writing 3 would claim its blocks
 * were looked at). */
static unsigned version_of(const struct sb_cfg *g)
{
	return !g->has_flags ? SB_CFG_IO_VERSION_NOFLAGS
	       : !g->has_tail_calls ? SB_CFG_IO_VERSION_NOTAIL
	       : !g->has_indirect_tails ? SB_CFG_IO_VERSION_NOINDIRECT : SB_CFG_IO_VERSION;
}

/* The rules of cfg_io.h, so that whatever is written reads back. */
static bool serializable(const struct sb_cfg *g)
{
	uint64_t nb = 0, prev_end = 0, prev_fend = 0;

	if (g->nfuncs >= UINT32_MAX || g->nblocks >= UINT32_MAX || g->nedges >= UINT32_MAX)
		return false;
	for (size_t f = 0; f < g->nfuncs; f++) {
		const struct sb_cfg_func *fn = &g->funcs[f];

		if (fn->end < fn->start || fn->start < prev_fend ||
		    (fn->nblocks && fn->first_block != nb) || fn->nblocks > g->nblocks - nb)
			return false;
		for (uint32_t k = 0; k < fn->nblocks; k++) {
			const struct sb_cfg_block *b = &g->blocks[nb + k];

			if (b->func != f || b->start < prev_end || b->end <= b->start ||
			    b->start < fn->start || b->end > fn->end ||
			    b->last_insn < b->start || b->last_insn >= b->end ||
			    (b->flags & ~flags_of(version_of(g))))
				return false;
			prev_end = b->end;
		}
		nb += fn->nblocks;
		prev_fend = fn->end;
	}
	if (nb != g->nblocks)
		return false;
	for (size_t i = 0; i < g->nedges; i++)
		if (g->edges[i].src >= g->nblocks || g->edges[i].dst >= g->nblocks ||
		    !edge_ok(g, g->edges[i].src, g->edges[i].dst, g->edges[i].kind))
			return false;
	return true;
}

int sb_cfg_serialize(const struct sb_cfg *g, unsigned char **buf, size_t *len)
{
	struct wbuf w = { 0 };
	uint64_t prev_start = 0, prev_end = 0, prev_src = 0;
	size_t b = 0;

	if (!serializable(g)) {
		errno = EINVAL;
		return -1;
	}
	wb_bytes(&w, magic, sizeof(magic));
	wb_u32(&w, version_of(g));
	wb_u32(&w, (uint32_t)g->nfuncs);
	wb_u32(&w, (uint32_t)g->nblocks);
	wb_u32(&w, (uint32_t)g->nedges);
	wb_str(&w, g->build_id);
	for (size_t f = 0; f < g->nfuncs; f++) {
		const struct sb_cfg_func *fn = &g->funcs[f];

		wb_str(&w, fn->name);
		wb_uleb(&w, zigzag(fn->start - prev_start));
		wb_uleb(&w, fn->end - fn->start);
		wb_uleb(&w, fn->nblocks);
		prev_start = fn->start;
		for (uint32_t k = 0; k < fn->nblocks; k++, b++) {
			const struct sb_cfg_block *bl = &g->blocks[b];

			wb_uleb(&w, bl->start - prev_end);
			wb_uleb(&w, bl->end - bl->start);
			wb_uleb(&w, bl->last_insn - bl->start);
			if (g->has_flags)
				wb_uleb(&w, bl->flags);
			prev_end = bl->end;
		}
	}
	for (size_t i = 0; i < g->nedges; i++) {
		const struct sb_cfg_edge *e = &g->edges[i];

		wb_uleb(&w, zigzag((uint64_t)e->src - prev_src));
		wb_uleb(&w, zigzag((uint64_t)e->dst - e->src) << KIND_BITS | e->kind);
		prev_src = e->src;
	}
	wb_u32(&w, w.err ? 0 : sb_bytes_crc32(0, w.p, w.len));
	if (w.err) {
		free(w.p);
		errno = w.err;
		return -1;
	}
	*buf = w.p;
	*len = w.len;
	return 0;
}

/* ---- reading ---- */

struct rbuf {
	const unsigned char *p;
	size_t len, pos;
	bool bad;        /* sticky, like wbuf.err */
};

static uint32_t rb_u32(struct rbuf *r)
{
	uint32_t v = 0;

	if (r->bad || r->len - r->pos < 4) {
		r->bad = true;
		return 0;
	}
	for (int i = 0; i < 4; i++)
		v |= (uint32_t)r->p[r->pos + i] << (8 * i);
	r->pos += 4;
	return v;
}

/* At most 10 bytes, and the tenth may only carry bit 63: longer or
 * overflowing encodings are corrupt, not silently truncated. */
static uint64_t rb_uleb(struct rbuf *r)
{
	uint64_t v = 0;

	for (int shift = 0; !r->bad; shift += 7) {
		unsigned char c;

		if (r->pos >= r->len || shift > 63 || (shift == 63 && r->p[r->pos] > 1)) {
			r->bad = true;
			break;
		}
		c = r->p[r->pos++];
		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return v;
	}
	return 0;
}

/* A malloc'ed NUL-terminated copy of a length-prefixed string; names
 * with a NUL inside are refused since they could not round-trip. */
static char *rb_str(struct rbuf *r, bool *nomem)
{
	uint64_t n = rb_uleb(r);
	char *s;

	if (r->bad || n > r->len - r->pos || memchr(r->p + r->pos, 0, n)) {
		r->bad = true;
		return NULL;
	}
	if (!(s = malloc(n + 1))) {
		*nomem = true;
		return NULL;
	}
	memcpy(s, r->p + r->pos, n);
	s[n] = '\0';
	r->pos += n;
	return s;
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* Functions with their blocks; fills g->funcs and g->blocks, whose
 * arrays hold the header's counts. */
static const char *read_funcs(struct rbuf *r, struct sb_cfg *g, size_t nfuncs,
			      size_t nblocks, unsigned version, bool *nomem)
{
	uint64_t prev_start = 0, prev_end = 0, prev_fend = 0;

	for (size_t f = 0; f < nfuncs; f++) {
		struct sb_cfg_func *fn = &g->funcs[f];
		uint64_t size, nb;

		fn->name = rb_str(r, nomem);
		if (!fn->name)
			return *nomem ? "out of memory" : "bad function name";
		g->nfuncs++;    /* from here sb_cfg_free() frees the name */
		fn->start = prev_start + unzigzag(rb_uleb(r));
		size = rb_uleb(r);
		nb = rb_uleb(r);
		/* functions ascend without overlapping, as symbols do */
		if (r->bad || size > UINT64_MAX - fn->start || nb > nblocks - g->nblocks ||
		    fn->start < prev_fend)
			return "bad function record";
		fn->end = fn->start + size;
		fn->first_block = (uint32_t)g->nblocks;
		fn->nblocks = (uint32_t)nb;
		prev_start = fn->start;
		for (uint64_t k = 0; k < nb; k++) {
			struct sb_cfg_block *b = &g->blocks[g->nblocks];
			uint64_t gap = rb_uleb(r), len = rb_uleb(r), last = rb_uleb(r);
			uint64_t fl = version >= SB_CFG_IO_VERSION_NOTAIL ? rb_uleb(r) : 0;

			/* what sb_cfg_add_block() demands, plus last_insn inside */
			if (r->bad || gap > UINT64_MAX - prev_end || len == 0 ||
			    len > UINT64_MAX - (prev_end + gap) || last >= len ||
			    (fl & ~(uint64_t)flags_of(version)))
				return "bad block record";
			b->start = prev_end + gap;
			b->end = b->start + len;
			b->last_insn = b->start + last;
			b->func = (uint32_t)f;
			b->flags = (uint32_t)fl;
			/* a block lies in its function's range */
			if (b->start < fn->start || b->end > fn->end)
				return "block outside its function";
			prev_end = b->end;
			g->nblocks++;
		}
		prev_fend = fn->end;
	}
	return g->nblocks == nblocks ? NULL : "block count mismatch";
}

static const char *read_edges(struct rbuf *r, struct sb_cfg *g, size_t nedges)
{
	uint64_t src = 0;

	for (size_t i = 0; i < nedges; i++) {
		uint64_t dst, v;

		src += unzigzag(rb_uleb(r));
		v = rb_uleb(r);
		dst = src + unzigzag(v >> KIND_BITS);
		if (r->bad || src >= g->nblocks || dst >= g->nblocks)
			return "bad edge record";
		if (!edge_ok(g, src, dst, v & 7))
			return "edge the builder cannot make (kind, or between functions)";
		g->edges[i] = (struct sb_cfg_edge){ (uint32_t)src, (uint32_t)dst,
						    (uint16_t)(v & 7), 0 };
		g->nedges++;
	}
	return NULL;
}

int sb_cfg_deserialize(const unsigned char *buf, size_t len, struct sb_cfg **out,
		       char *err, size_t errlen)
{
	struct rbuf r = { buf, 0, HDR_LEN, false };
	uint32_t crc, version, nfuncs, nblocks, nedges;
	const char *why = NULL;
	struct sb_cfg *g;
	bool nomem = false;

	if (!buf || len < HDR_LEN + 1 + CRC_LEN)
		return fail(err, errlen, "cfg: truncated (%zu bytes)", len);
	if (memcmp(buf, magic, sizeof(magic)))
		return fail(err, errlen, "cfg: bad magic");
	r.len = len - CRC_LEN;
	crc = (uint32_t)buf[r.len] | (uint32_t)buf[r.len + 1] << 8 |
	      (uint32_t)buf[r.len + 2] << 16 | (uint32_t)buf[r.len + 3] << 24;
	/* The CRC first: nothing below then sees a damaged byte by chance,
	 * only input crafted with a valid CRC. */
	if (crc != sb_bytes_crc32(0, buf, r.len))
		return fail(err, errlen, "cfg: CRC mismatch (corrupt or truncated)");
	r.pos = sizeof(magic);
	version = rb_u32(&r);
	nfuncs = rb_u32(&r);
	nblocks = rb_u32(&r);
	nedges = rb_u32(&r);
	if (version > SB_CFG_IO_VERSION)
		return fail(err, errlen, "cfg: format version %u is newer than this scalebpf "
			    "reads (%u): report it with a newer scalebpf", version,
			    SB_CFG_IO_VERSION);
	if (version < SB_CFG_IO_VERSION_NOFLAGS)
		return fail(err, errlen, "cfg: unsupported version %u", version);
	if (nfuncs == UINT32_MAX || nblocks == UINT32_MAX || nedges == UINT32_MAX ||
	    (uint64_t)nfuncs * MIN_FUNC + (uint64_t)nblocks * MIN_BLOCK +
	    (uint64_t)nedges * MIN_EDGE + 1 > r.len - r.pos)
		return fail(err, errlen, "cfg: counts (%u functions, %u blocks, %u edges) "
			    "exceed the data", nfuncs, nblocks, nedges);
	if (!(g = sb_cfg_alloc()))
		return fail(err, errlen, "cfg: out of memory");
	if (sb_cfg_reserve(g, nfuncs, nblocks, nedges)) {
		why = "out of memory";
		goto out;
	}
	g->build_id = rb_str(&r, &nomem);
	if (!g->build_id) {
		why = nomem ? "out of memory" : "bad build-id";
		goto out;
	}
	if (!g->build_id[0]) {
		free(g->build_id);
		g->build_id = NULL;
	}
	g->has_flags = version >= 3;
	g->has_tail_calls = version >= 4;
	g->has_indirect_tails = version >= 5;
	if ((why = read_funcs(&r, g, nfuncs, nblocks, version, &nomem)) ||
	    (why = read_edges(&r, g, nedges)))
		goto out;
	if (r.pos != r.len) {
		why = "trailing bytes";
		goto out;
	}
	if (sb_cfg_finalize(g))
		why = "out of memory";
out:
	if (why) {
		sb_cfg_free(g);
		return fail(err, errlen, "cfg: %s", why);
	}
	*out = g;
	return 0;
}
