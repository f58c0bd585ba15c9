/* SPDX-License-Identifier: MIT */
/*
 * Chunk payloads and framing of the profile file: the layouts are
 * documented at the top of profile.c, the byte helpers are util/bytes.c.
 */
#include "profile_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIME_SIZE 28 /* encoded struct sb_thread_time */

/*
 * Cross-chunk references.  The writer runs this too, so it never writes
 * a file the reader would refuse.  Returns the chunk type holding the
 * first bad reference (described in why), or 0.
 */
static uint32_t check_refs(const struct sb_profile *p, char *why, size_t len)
{
	size_t i;

	for (i = 0; i < p->nlocs; i++) {
		int32_t b = p->locs[i].binary;

		if (b < -1 || (b >= 0 && (uint64_t)b >= p->nbinaries)) {
			snprintf(why, len, "loc %zu refers to binary %" PRId32 " of %zu",
				 i, b, p->nbinaries);
			return SB_CHUNK_LOCS;
		}
	}
	for (i = 0; i < p->nsections; i++) {
		if (p->sections[i].loc >= p->nlocs) {
			snprintf(why, len, "section %zu refers to loc %" PRIu32 " of %zu",
				 i, p->sections[i].loc, p->nlocs);
			return SB_CHUNK_SECTIONS;
		}
	}
	for (i = 0; i < p->ninstances; i++) {
		if (p->instances[i].section >= p->nsections) {
			snprintf(why, len, "instance %zu refers to section %" PRIu32 " of %zu",
				 i, p->instances[i].section, p->nsections);
			return SB_CHUNK_INSTANCES;
		}
	}
	for (i = 0; i < p->nwaits; i++) {
		int32_t l = p->waits[i].loc;

		if (l < -1 || (l >= 0 && (uint64_t)l >= p->nlocs)) {
			snprintf(why, len, "wait %zu refers to loc %" PRId32 " of %zu",
				 i, l, p->nlocs);
			return SB_CHUNK_WAITS;
		}
	}
	{
		uint32_t bad = sb_pfmt_check_vector_refs(p, why, len);

		if (!bad)
			bad = sb_pfmt_check_addr_refs(p, why, len);
		if (!bad)
			bad = sb_pfmt_check_sharing(p, why, len);
		if (!bad)
			bad = sb_pfmt_check_chip(p, why, len);
		return bad ? bad : sb_pfmt_check_stack(p, why, len);
	}
}

/* What the reader cannot produce but a caller filling arrays by hand can. */
int sb_pfmt_check(const struct sb_profile *p, char *why, size_t len)
{
	size_t counts[] = { p->nmeta, p->nbinaries, p->nlocs, p->nthreads,
			    p->nsections, p->ninstances, p->nwaits };
	size_t i;

	for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		if (counts[i] > UINT32_MAX) {
			snprintf(why, len, "more than %" PRIu32 " records in one chunk",
				 UINT32_MAX);
			return -1;
		}
	}
	for (i = 0; i < p->nsections; i++) {
		if (p->sections[i].nthreads && !p->sections[i].per_thread) {
			snprintf(why, len, "section %zu has no per_thread array", i);
			return -1;
		}
	}
	for (i = 0; i < p->ninstances; i++) {
		if (p->instances[i].nthreads && !p->instances[i].per_thread) {
			snprintf(why, len, "instance %zu has no per_thread array", i);
			return -1;
		}
	}
	return check_refs(p, why, len) ? -1 : 0;
}

/* ---- encoding ---- */

static void enc_times(struct sb_bytes_buf *b, const struct sb_thread_time *t, uint32_t n)
{
	sb_bytes_put_u32(b, n);
	sb_bytes_put_u32(b, TIME_SIZE);
	for (uint32_t i = 0; i < n; i++) {
		sb_bytes_put_u32(b, t[i].tid);
		sb_bytes_put_u64(b, t[i].busy_ns);
		sb_bytes_put_u64(b, t[i].wait_ns);
		sb_bytes_put_u64(b, t[i].wall_ns);
	}
}

/* Each encoder appends one record; enc_chunk() adds count and lengths. */
static void enc_meta(struct sb_bytes_buf *b, const struct sb_profile *p, size_t i)
{
	sb_bytes_put_str(b, p->meta[i].key);
	sb_bytes_put_str(b, p->meta[i].value);
}

static void enc_binary(struct sb_bytes_buf *b, const struct sb_profile *p, size_t i)
{
	sb_bytes_put_str(b, p->binaries[i].path);
	sb_bytes_put_str(b, p->binaries[i].build_id);
}

static void enc_loc(struct sb_bytes_buf *b, const struct sb_profile *p, size_t i)
{
	const struct sb_loc *l = &p->locs[i];

	sb_bytes_put_u64(b, l->addr);
	sb_bytes_put_u64(b, l->offset);
	sb_bytes_put_u32(b, (uint32_t)l->binary);
	sb_bytes_put_u32(b, l->line);
	sb_bytes_put_str(b, l->function);
	sb_bytes_put_str(b, l->file);
}

static void enc_thread(struct sb_bytes_buf *b, const struct sb_profile *p, size_t i)
{
	const struct sb_thread *t = &p->threads[i];

	sb_bytes_put_u32(b, t->tid);
	sb_bytes_put_u32(b, t->parent_tid);
	sb_bytes_put_u64(b, t->start_ns);
	sb_bytes_put_u64(b, t->end_ns);
	sb_bytes_put_u64(b, t->oncpu_ns);
	sb_bytes_put_str(b, t->comm);
}

static void enc_section(struct sb_bytes_buf *b, const struct sb_profile *p, size_t i)
{
	const struct sb_section *s = &p->sections[i];

	sb_bytes_put_u32(b, s->kind);
	sb_bytes_put_u32(b, s->loc);
	sb_bytes_put_u64(b, s->ninstances);
	sb_bytes_put_u64(b, s->lost_ns);
	sb_bytes_put_u64(b, s->capacity_ns);
	enc_times(b, s->per_thread, s->nthreads);
}

static void enc_instance(struct sb_bytes_buf *b, const struct sb_profile *p, size_t i)
{
	const struct sb_instance *in = &p->instances[i];

	sb_bytes_put_u32(b, in->section);
	sb_bytes_put_u64(b, in->seq);
	sb_bytes_put_u64(b, in->start_ns);
	sb_bytes_put_u64(b, in->end_ns);
	enc_times(b, in->per_thread, in->nthreads);
}

static void enc_wait(struct sb_bytes_buf *b, const struct sb_profile *p, size_t i)
{
	const struct sb_wait *w = &p->waits[i];

	sb_bytes_put_u32(b, w->prim);
	sb_bytes_put_u32(b, (uint32_t)w->loc);
	sb_bytes_put_u64(b, w->object);
	sb_bytes_put_u64(b, w->count);
	sb_bytes_put_u64(b, w->wait_ns);
}

/* ---- decoding ---- */

struct rd {
	const char *path;
	char *err;
	size_t errlen;
	char chunk[48];     /* "LOCS chunk" or "chunk type 0x..." */
	uint64_t off;       /* file offset of the chunk */
	uint64_t payload;   /* file offset of its payload */
};

static int rd_corrupt(struct rd *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int rd_corrupt(struct rd *r, const char *fmt, ...)
{
	char why[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	sb_bytes_seterr(r->err, r->errlen, "corrupt profile %s: %s at offset %" PRIu64
		      ": %s", r->path, r->chunk, r->off, why);
	return SB_ERR_CORRUPT;
}

static int rd_nomem(struct rd *r)
{
	sb_bytes_seterr(r->err, r->errlen, "cannot read profile %s: out of memory",
		      r->path);
	errno = ENOMEM;
	return SB_ERR_NOMEM;
}

static struct sb_thread_time *dec_times(struct sb_bytes_cur *c, uint32_t *n)
{
	uint32_t cnt = sb_bytes_get_u32(c), esz = sb_bytes_get_u32(c);
	struct sb_thread_time *t;
	struct sb_bytes_cur e;

	*n = 0;
	if (c->bad || cnt == 0)
		return NULL;
	/* Checked before allocating: garbage cannot ask for a huge block. */
	if (esz < TIME_SIZE || (uint64_t)cnt * esz > sb_bytes_left(c)) {
		c->bad = 1;
		return NULL;
	}
	t = calloc(cnt, sizeof(*t));
	if (!t) {
		c->nomem = 1;
		return NULL;
	}
	for (uint32_t i = 0; i < cnt; i++) {
		sb_bytes_take(c, esz, &e);
		t[i].tid = sb_bytes_get_u32(&e);
		t[i].busy_ns = sb_bytes_get_u64(&e);
		t[i].wait_ns = sb_bytes_get_u64(&e);
		t[i].wall_ns = sb_bytes_get_u64(&e);
	}
	*n = cnt;
	return t;
}

/* Each decoder fills one zeroed element from one record. */
static void dec_meta(struct sb_bytes_cur *c, void *elem)
{
	struct sb_kv *kv = elem;

	kv->key = sb_bytes_get_str(c, 0);
	kv->value = sb_bytes_get_str(c, 0);
}

static void dec_binary(struct sb_bytes_cur *c, void *elem)
{
	struct sb_binary *b = elem;

	b->path = sb_bytes_get_str(c, 0);
	b->build_id = sb_bytes_get_str(c, 1);
}

static void dec_loc(struct sb_bytes_cur *c, void *elem)
{
	struct sb_loc *l = elem;

	l->addr = sb_bytes_get_u64(c);
	l->offset = sb_bytes_get_u64(c);
	l->binary = (int32_t)sb_bytes_get_u32(c);
	l->line = sb_bytes_get_u32(c);
	l->function = sb_bytes_get_str(c, 1);
	l->file = sb_bytes_get_str(c, 1);
}

static void dec_thread(struct sb_bytes_cur *c, void *elem)
{
	struct sb_thread *t = elem;

	t->tid = sb_bytes_get_u32(c);
	t->parent_tid = sb_bytes_get_u32(c);
	t->start_ns = sb_bytes_get_u64(c);
	t->end_ns = sb_bytes_get_u64(c);
	t->oncpu_ns = sb_bytes_get_u64(c);
	t->comm = sb_bytes_get_str(c, 0);
}

static void dec_section(struct sb_bytes_cur *c, void *elem)
{
	struct sb_section *s = elem;

	s->kind = sb_bytes_get_u32(c);
	s->loc = sb_bytes_get_u32(c);
	s->ninstances = sb_bytes_get_u64(c);
	s->lost_ns = sb_bytes_get_u64(c);
	s->capacity_ns = sb_bytes_get_u64(c);
	s->per_thread = dec_times(c, &s->nthreads);
}

static void dec_instance(struct sb_bytes_cur *c, void *elem)
{
	struct sb_instance *in = elem;

	in->section = sb_bytes_get_u32(c);
	in->seq = sb_bytes_get_u64(c);
	in->start_ns = sb_bytes_get_u64(c);
	in->end_ns = sb_bytes_get_u64(c);
	in->per_thread = dec_times(c, &in->nthreads);
}

static void dec_wait(struct sb_bytes_cur *c, void *elem)
{
	struct sb_wait *w = elem;

	w->prim = sb_bytes_get_u32(c);
	w->loc = (int32_t)sb_bytes_get_u32(c);
	w->object = sb_bytes_get_u64(c);
	w->count = sb_bytes_get_u64(c);
	w->wait_ns = sb_bytes_get_u64(c);
}

/* ---- chunks ---- */

/* Where a chunk's array lives in struct sb_profile, as offsets so one
 * table drives both directions. */
#define ARRAY(field, nfield) \
	offsetof(struct sb_profile, field), offsetof(struct sb_profile, nfield), \
	sizeof(*((struct sb_profile *)0)->field)

static const struct chunk_ops {
	uint32_t type;
	const char *name;
	size_t arr_off, n_off, size;
	size_t minrec;  /* smallest valid record in this version */
	void (*enc)(struct sb_bytes_buf *, const struct sb_profile *, size_t);
	void (*dec)(struct sb_bytes_cur *, void *);
	int optional;   /* a version-1 file may lack it */
} chunk_ops[] = {
	{ SB_CHUNK_META, "META", ARRAY(meta, nmeta), 8, enc_meta, dec_meta, 0 },
	{ SB_CHUNK_BINARIES, "BINARIES", ARRAY(binaries, nbinaries), 8,
	  enc_binary, dec_binary, 0 },
	{ SB_CHUNK_LOCS, "LOCS", ARRAY(locs, nlocs), 32, enc_loc, dec_loc, 0 },
	{ SB_CHUNK_THREADS, "THREADS", ARRAY(threads, nthreads), 36,
	  enc_thread, dec_thread, 0 },
	{ SB_CHUNK_SECTIONS, "SECTIONS", ARRAY(sections, nsections), 40,
	  enc_section, dec_section, 0 },
	{ SB_CHUNK_INSTANCES, "INSTANCES", ARRAY(instances, ninstances), 36,
	  enc_instance, dec_instance, 0 },
	{ SB_CHUNK_WAITS, "WAITS", ARRAY(waits, nwaits), 32, enc_wait, dec_wait, 0 },
	/* optional: absent in profiles without event vectors */
	{ SB_CHUNK_EVENTS, "EVENTS", ARRAY(events, nevents), 44,
	  sb_pfmt_enc_event, sb_pfmt_dec_event, 1 },
	{ SB_CHUNK_VECTORS, "VECTORS", ARRAY(vectors, nvectors), 12,
	  sb_pfmt_enc_vector, sb_pfmt_dec_vector, 1 },
	{ SB_CHUNK_CFGS, "CFGS", ARRAY(cfgs, ncfgs), 12, sb_pfmt_enc_cfg, sb_pfmt_dec_cfg, 1 },
	{ SB_CHUNK_ADDRS, "ADDRS", ARRAY(addrs, naddrs), SB_ADDR_REC_SIZE,
	  sb_pfmt_enc_addr, sb_pfmt_dec_addr, 1 },
	{ SB_CHUNK_SHARING, "SHARING", ARRAY(sharing, nsharing), 52,
	  sb_pfmt_enc_sharing, sb_pfmt_dec_sharing, 1 },
	{ SB_CHUNK_CHIP, "CHIP", ARRAY(chip, nchip), 40, sb_pfmt_enc_chip, sb_pfmt_dec_chip, 1 },
	{ SB_CHUNK_STACK, "STACK", ARRAY(stack, nstack), 72, sb_pfmt_enc_stack, sb_pfmt_dec_stack,
	  1 },
};
#define NCHUNK_OPS (sizeof(chunk_ops) / sizeof(chunk_ops[0]))

static const struct chunk_ops *find_ops(uint32_t type)
{
	for (size_t i = 0; i < NCHUNK_OPS; i++)
		if (chunk_ops[i].type == type)
			return &chunk_ops[i];
	return NULL;
}

static size_t *array_len(struct sb_profile *p, const struct chunk_ops *op)
{
	return (size_t *)((char *)p + op->n_off);
}

static void enc_chunk(struct sb_bytes_buf *b, const struct sb_profile *p,
		      const struct chunk_ops *op)
{
	size_t n = *array_len((struct sb_profile *)p, op);

	sb_bytes_put_u32(b, (uint32_t)n);
	for (size_t i = 0; i < n && !b->err; i++) {
		size_t rec = sb_bytes_rec_begin(b);

		op->enc(b, p, i);
		sb_bytes_rec_end(b, rec);
	}
}

static int dec_chunk(struct rd *r, struct sb_bytes_cur *c, struct sb_profile *p,
		     const struct chunk_ops *op)
{
	uint32_t count = sb_bytes_get_u32(c);
	struct sb_bytes_cur rec;
	char *arr;

	if (c->bad)
		return rd_corrupt(r, "no record count");
	/* Checked before allocating: garbage cannot ask for a huge block. */
	if (count > sb_bytes_left(c) / (4 + op->minrec))
		return rd_corrupt(r, "%" PRIu32 " records cannot fit in %zu bytes",
				  count, sb_bytes_left(c));
	if (count == 0)
		return SB_OK;
	arr = calloc(sb_bytes_cap_for(count), op->size);
	if (!arr)
		return rd_nomem(r);
	/* Owned by p from here, so sb_profile_free() cleans up any failure.
	 * memcpy: the field is a typed pointer, not a void *. */
	memcpy((char *)p + op->arr_off, &arr, sizeof(arr));
	*array_len(p, op) = count;
	for (uint32_t i = 0; i < count; i++) {
		uint64_t at = r->payload + c->pos;

		sb_bytes_take(c, sb_bytes_get_u32(c), &rec);
		if (c->bad)
			return rd_corrupt(r, "record %" PRIu32 " at offset %" PRIu64
					  " runs past the payload", i, at);
		op->dec(&rec, arr + (size_t)i * op->size);
		if (rec.nomem)
			return rd_nomem(r);
		if (rec.bad)
			return rd_corrupt(r, "record %" PRIu32 " at offset %" PRIu64
					  " is malformed", i, at);
	}
	return SB_OK;
}

static void set_chunk_name(struct rd *r, uint32_t type, uint64_t off)
{
	const struct chunk_ops *op = find_ops(type);

	if (op)
		snprintf(r->chunk, sizeof(r->chunk), "%s chunk", op->name);
	else if (type == SB_CHUNK_END)
		snprintf(r->chunk, sizeof(r->chunk), "END chunk");
	else
		snprintf(r->chunk, sizeof(r->chunk), "chunk type %#" PRIx32, type);
	r->off = off;
	r->payload = off + 16;
}

int sb_pfmt_parse(const unsigned char *data, size_t len, struct sb_profile *p,
		  const char *path, char *err, size_t errlen)
{
	struct rd rd = { .path = path, .err = err, .errlen = errlen }, *r = &rd;
	struct sb_bytes_cur f = { .p = data, .len = len }, pay;
	uint64_t seen[NCHUNK_OPS] = { 0 }, nchunks = 0;
	uint32_t version, type, bad;
	char why[160];

	/* A short prefix of the magic is a truncated profile, not another
	 * kind of file. */
	if (len && memcmp(data, SB_PROFILE_MAGIC, len < 8 ? len : 8) != 0) {
		sb_bytes_seterr(err, errlen, "%s is not a scalebpf profile (bad magic)", path);
		return SB_ERR_MAGIC;
	}
	if (len < 16) {
		sb_bytes_seterr(err, errlen, "truncated profile %s: %zu bytes, "
			      "the header alone is 16", path, len);
		return SB_ERR_TRUNCATED;
	}
	f.pos = 8;
	version = sb_bytes_get_u32(&f);
	sb_bytes_get_u32(&f); /* flags: none defined yet */
	if (version == 0 || version > SB_PROFILE_VERSION) {
		sb_bytes_seterr(err, errlen, "profile %s has format version %" PRIu32
			      ", this scalebpf reads 1 to %d", path, version,
			      SB_PROFILE_VERSION);
		return SB_ERR_VERSION;
	}
	for (;;) {
		uint64_t off = f.pos, plen;
		uint32_t reserved, crc;
		const struct chunk_ops *op;
		int st;

		if (sb_bytes_left(&f) < 16) {
			sb_bytes_seterr(err, errlen, "truncated profile %s: no END trailer "
				      "(file ends at offset %zu after %" PRIu64 " chunks)",
				      path, len, nchunks);
			return SB_ERR_TRUNCATED;
		}
		type = sb_bytes_get_u32(&f);
		reserved = sb_bytes_get_u32(&f);
		plen = sb_bytes_get_u64(&f);
		set_chunk_name(r, type, off);
		if (reserved)
			return rd_corrupt(r, "reserved field is %#" PRIx32, reserved);
		if (plen > sb_bytes_left(&f) || sb_bytes_left(&f) - plen < 4) {
			sb_bytes_seterr(err, errlen, "truncated profile %s: %s at offset %"
				      PRIu64 ": %" PRIu64 "-byte payload runs past the end "
				      "of the file (%zu bytes)", path, r->chunk, off, plen, len);
			return SB_ERR_TRUNCATED;
		}
		sb_bytes_take(&f, plen, &pay);
		crc = sb_bytes_get_u32(&f);
		if (crc != sb_bytes_crc32(sb_bytes_crc32(0, data + off, 16), pay.p + pay.pos, pay.len))
			return rd_corrupt(r, "CRC mismatch");
		if (type == SB_CHUNK_END) {
			uint64_t count = sb_bytes_get_u64(&pay);

			if (pay.len != 8)
				return rd_corrupt(r, "payload is %zu bytes, not 8", pay.len);
			if (count != nchunks)
				return rd_corrupt(r, "counts %" PRIu64 " chunks before it, "
						  "the file has %" PRIu64, count, nchunks);
			if (sb_bytes_left(&f))
				return rd_corrupt(r, "followed by %zu stray bytes",
						  sb_bytes_left(&f));
			break;
		}
		nchunks++;
		op = find_ops(type);
		if (!op)
			continue; /* a later version's chunk */
		if (seen[op - chunk_ops])
			return rd_corrupt(r, "second %s chunk (first at offset %" PRIu64 ")",
					  op->name, seen[op - chunk_ops]);
		seen[op - chunk_ops] = off;
		st = dec_chunk(r, &pay, p, op);
		if (st)
			return st;
	}
	/* Chunk headers are outside the CRC: a damaged type would turn a core
	 * chunk into an "unknown" one and lose it silently.  Every writer of
	 * a version-1 profile writes all core chunks, so demand them. */
	for (size_t i = 0; i < NCHUNK_OPS; i++) {
		if (seen[i] || chunk_ops[i].optional)
			continue;
		sb_bytes_seterr(err, errlen, "corrupt profile %s: no %s chunk (a chunk "
			      "header is damaged)", path, chunk_ops[i].name);
		return SB_ERR_CORRUPT;
	}
	bad = check_refs(p, why, sizeof(why));
	if (bad) {
		set_chunk_name(r, bad, seen[find_ops(bad) - chunk_ops]);
		return rd_corrupt(r, "%s", why);
	}
	return SB_OK;
}

/* ---- writing ---- */

static void write_chunk(struct sb_bytes_out *o, struct sb_bytes_buf *hdr, uint32_t type,
			const struct sb_bytes_buf *pay)
{
	if (pay->err)
		return;
	hdr->len = 0;
	sb_bytes_put_u32(hdr, type);
	sb_bytes_put_u32(hdr, 0);
	sb_bytes_put_u64(hdr, pay->len);
	if (hdr->err)
		return;
	/* The CRC covers the header too: a damaged type must not turn a
	 * chunk into an "unknown" one that readers skip. */
	sb_bytes_put_u32(hdr, sb_bytes_crc32(sb_bytes_crc32(0, hdr->data, 16), pay->data, pay->len));
	if (hdr->err)
		return;
	/* hdr holds the 16-byte chunk header, then the 4-byte CRC. */
	sb_bytes_out_write(o, hdr->data, 16);
	sb_bytes_out_write(o, pay->data, pay->len);
	sb_bytes_out_write(o, hdr->data + 16, 4);
}

int sb_pfmt_write(const struct sb_profile *p, struct sb_bytes_out *o)
{
	struct sb_bytes_buf hdr = { 0 }, pay = { 0 };
	int e;

	sb_bytes_put_u32(&hdr, SB_PROFILE_VERSION);
	sb_bytes_put_u32(&hdr, 0); /* flags */
	sb_bytes_out_write(o, SB_PROFILE_MAGIC, 8);
	if (!hdr.err)
		sb_bytes_out_write(o, hdr.data, hdr.len);
	for (size_t i = 0; i < NCHUNK_OPS; i++) {
		pay.len = 0;
		enc_chunk(&pay, p, &chunk_ops[i]);
		write_chunk(o, &hdr, chunk_ops[i].type, &pay);
	}
	pay.len = 0;
	sb_bytes_put_u64(&pay, NCHUNK_OPS);
	write_chunk(o, &hdr, SB_CHUNK_END, &pay);
	e = pay.err ? pay.err : hdr.err;
	sb_bytes_buf_free(&hdr);
	sb_bytes_buf_free(&pay);
	return e;
}
