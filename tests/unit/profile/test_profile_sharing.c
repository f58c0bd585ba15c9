// SPDX-License-Identifier: MIT
/*
 * test_profile_sharing: the SHARING chunk (profile_sharing.c) round trip
 * with every field at an edge value; a writer that knows more values than
 * this reader (skipped) or fewer (read as 0); rows with a bad kind, mode
 * or location refused on write and, crafted, on read.
 */
#include "profile_builder.h"

static struct sb_sharing row(uint32_t kind, uint32_t mode, int32_t loc, const char *name)
{
	struct sb_sharing s = { .kind = kind, .mode = mode, .addr = 0x7fffffffffc0ull,
				.loc = loc, .loc2 = -1, .tid = UINT32_MAX,
				.name = name ? strdup(name) : NULL, .refs = { 0, 2, -1, -1 } };

	for (size_t k = 0; k < SB_SHV_MAX; k++)
		s.v[k] = k % 2 ? UINT64_MAX - k : k * 1000;
	return s;
}

static void add_rows(struct sb_profile *p)
{
	p->sharing = calloc(3, sizeof(*p->sharing));
	if (!p->sharing)
		abort();
	p->sharing[0] = row(SB_SHARING_LINE, SB_SHARING_PIPED, -1, "partial");
	p->sharing[1] = row(SB_SHARING_REF, SB_SHARING_INTERLEAVED, 2, NULL);
	p->sharing[2] = row(SB_SHARING_RACE, SB_SHARING_PIPED, 0, "");
	p->nsharing = 3;
}

static void round_trip(void)
{
	struct sb_profile *p = make_full(), *q = NULL;
	char path[256], err[256] = "";
	int st;

	add_rows(p);
	tpath(path, sizeof(path), "sharing.sbp");
	CHECK(sb_profile_write(p, path, err, sizeof(err)) == SB_OK, "write: %s", err);
	st = sb_profile_read(path, &q, err, sizeof(err));
	CHECK(st == SB_OK && q, "read: %s", err);
	if (q) {
		check_same(p, q);
		CHECK(q->nsharing == 3, "%zu rows", q->nsharing);
		for (size_t i = 0; i < 3 && i < q->nsharing; i++) {
			const struct sb_sharing *a = &p->sharing[i], *b = &q->sharing[i];

			CHECK(a->kind == b->kind && a->mode == b->mode && a->addr == b->addr &&
			      a->loc == b->loc && a->loc2 == b->loc2 && a->tid == b->tid &&
			      !memcmp(a->refs, b->refs, sizeof(a->refs)) &&
			      !memcmp(a->v, b->v, sizeof(a->v)), "row %zu", i);
			/* "" and NULL are one on disk: read back as NULL */
			CHECK(i ? !b->name : b->name && !strcmp(b->name, "partial"), "row %zu name", i);
		}
		sb_profile_free(q);
	}
	unlink(path);
	sb_profile_free(p);
}

static void bad_rows_refused(void)
{
	struct sb_profile *p = make_full();
	char path[256], err[256] = "";

	add_rows(p);
	p->sharing[1].loc = 3;   /* 3 locs: 0..2 */
	tpath(path, sizeof(path), "bad.sbp");
	CHECK(sb_profile_write(p, path, err, sizeof(err)) != SB_OK && strstr(err, "sharing row 1"),
	      "a loc out of range is refused: %s", err);
	p->sharing[1].loc = 2;
	p->sharing[2].mode = SB_SHARING_MODE_MAX;
	CHECK(sb_profile_write(p, path, err, sizeof(err)) != SB_OK && strstr(err, "mode"),
	      "an unknown mode is refused: %s", err);
	unlink(path);
	sb_profile_free(p);
}

/* A SHARING payload of one row with nv values, crafted. */
static void crafted(uint32_t kind, uint32_t nv, int want_ok, const char *what)
{
	struct sb_profile *p = make_full(), *q = NULL;
	unsigned char *img;
	size_t n, sh, shlen;
	struct bytes f = { 0 }, pay = { 0 };
	char err[256] = "";
	size_t r;
	int st;

	img = image_of(p, &n);
	/* the writer's (empty) SHARING chunk replaced by the crafted one */
	sh = find_chunk(img, n, SB_CHUNK_SHARING);
	shlen = 16 + (size_t)le64(img + sh + 8) + 4;
	b_put(&f, img, sh);
	b_u32(&pay, 1);
	r = rec_begin(&pay);
	b_u32(&pay, kind);
	b_u32(&pay, SB_SHARING_PIPED);
	b_u64(&pay, 0x1000);
	b_u32(&pay, 0);
	b_u32(&pay, (uint32_t)-1);
	b_u32(&pay, 7);
	b_str(&pay, "v");
	for (int k = 0; k < 4; k++)
		b_u32(&pay, (uint32_t)-1);
	b_u32(&pay, nv);
	for (uint32_t k = 0; k < nv; k++)
		b_u64(&pay, 100 + k);
	rec_end(&pay, r);
	f_chunk(&f, SB_CHUNK_SHARING, &pay);
	b_put(&f, img + sh + shlen, n - sh - shlen);
	st = read_image(f.d, f.len, &q, err, sizeof(err));
	if (want_ok) {
		CHECK(st == SB_OK && q && q->nsharing == 1, "%s: %d %s", what, st, err);
		if (st == SB_OK && q && q->nsharing == 1) {
			uint64_t want_last = nv > SB_SHV_MAX - 1 ? 100 + SB_SHV_MAX - 1 : 0;

			CHECK(q->sharing[0].v[0] == 100 && q->sharing[0].v[SB_SHV_MAX - 1] == want_last,
			      "%s: values %llu .. %llu", what, (unsigned long long)q->sharing[0].v[0],
			      (unsigned long long)q->sharing[0].v[SB_SHV_MAX - 1]);
		}
	} else {
		CHECK(st != SB_OK, "%s: refused (%s)", what, err);
	}
	if (q)
		sb_profile_free(q);
	free(img);
	b_free(&f);
	b_free(&pay);
	sb_profile_free(p);
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/sb_test_sharing.XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	round_trip();
	bad_rows_refused();
	crafted(SB_SHARING_LINE, SB_SHV_MAX + 3, 1, "a later writer's extra values");
	crafted(SB_SHARING_LINE, 1, 1, "an earlier writer's fewer values");
	crafted(99, SB_SHV_MAX, 0, "an unknown kind");
	nftw(tmpdir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	return CHECK_DONE("test_profile_sharing");
}
