// SPDX-License-Identifier: MIT
/* The optional vector chunks: round trip, references, damage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "profile/profile.h"
#include "profile/profile_priv.h"

static char dir[] = "/tmp/sb_test_pvec.XXXXXX";

static struct sb_profile *make(void)
{
	struct sb_profile *p = sb_profile_alloc();
	struct sb_thread_time pt[3] = { { 11, 1, 2, 3 }, { 12, 4, 5, 6 }, { 13, 7, 8, 9 } };
	struct sb_loc l = { .addr = 0x401000, .binary = 0, .line = 7, .file = "a.c" };
	struct sb_section s = { .kind = SB_SECT_BARRIER, .loc = 0, .ninstances = 1,
				.nthreads = 3, .per_thread = pt };
	struct sb_instance in = { .section = 0, .nthreads = 3, .per_thread = pt };
	struct sb_event_def e1 = { SB_EVK_BLOCK_SAMPLES, 0, 0x1100, 0x110c, 0, 0, 0x1104, 0, 0 };
	struct sb_event_def e2 = { SB_EVK_EDGE, 0, 0x1100, 0x1140, -1, -1, 0, -1, 0 };
	uint64_t c1[3] = { 5, 10, 15 }, c2[3] = { 0, 1ull << 40, 2 };
	struct sb_vector v1 = { 0, 0, 3, c1 }, v2 = { 0, 1, 3, c2 };
	unsigned char blob[300];

	for (size_t i = 0; i < sizeof(blob); i++)
		blob[i] = (unsigned char)(i * 7);
	sb_profile_meta_set(p, "tool", "test");
	sb_profile_add_binary(p, "/bin/x", "abcd");
	sb_profile_add_loc(p, &l);
	sb_profile_add_section(p, &s);
	sb_profile_add_instance(p, &in);
	e1.stmt_line = 9;       /* an empty statement row at the block's start */
	CHECK(sb_profile_add_event(p, &e1) == 0 && sb_profile_add_event(p, &e2) == 1, "events");
	CHECK(sb_profile_add_vector(p, &v1) == 0 && sb_profile_add_vector(p, &v2) == 1, "vectors");
	CHECK(sb_profile_add_cfg(p, 0, blob, sizeof(blob)) == 0, "cfg");
	c1[0] = 99;   /* copied, not referenced */
	return p;
}

static int read_back(struct sb_profile *p, struct sb_profile **q, char *err, size_t len)
{
	char path[64];

	snprintf(path, sizeof(path), "%s/p.sbp", dir);
	if (sb_profile_write(p, path, err, len))
		return -100;
	return sb_profile_read(path, q, err, len);
}

int main(void)
{
	struct sb_profile *p, *q = NULL;
	char err[256], path[64];
	int st;

	if (!mkdtemp(dir))
		return 1;
	p = make();
	st = read_back(p, &q, err, sizeof(err));
	CHECK(st == SB_OK, "round trip: %d %s", st, err);
	if (q) {
		CHECK(q->nevents == 2 && q->events[1].kind == SB_EVK_EDGE &&
		      q->events[1].vaddr2 == 0x1140 && q->events[1].loc == -1 &&
		      q->events[0].loc == 0 && q->events[0].loc2 == 0 &&
		      q->events[1].loc2 == -1 && q->events[0].hot == 0x1104 &&
		      q->events[0].loc_hot == 0 && q->events[1].loc_hot == -1 &&
		      q->events[0].stmt_line == 9 && q->events[1].stmt_line == 0, "events back");
		CHECK(q->nvectors == 2 && q->vectors[0].counts[0] == 5 &&
		      q->vectors[0].counts[2] == 15 && q->vectors[1].counts[1] == 1ull << 40,
		      "vectors back");
		CHECK(q->ncfgs == 1 && q->cfgs[0].len == 300 && q->cfgs[0].data[299] ==
		      (unsigned char)(299 * 7), "cfg blob back");
	}
	sb_profile_free(q);
	q = NULL;

	/* An event record as files before stmt_line wrote it (44 bytes) reads
	 * with none; the field is the record's last 4 bytes. */
	{
		struct sb_bytes_buf b = { 0 };
		struct sb_event_def d;

		sb_pfmt_enc_event(&b, p, 0);
		CHECK(!b.err && b.len == 48, "an event record is 48 bytes: %zu", b.len);
		if (!b.err && b.len == 48) {
			struct sb_bytes_cur c = { .p = b.data, .len = 44 };

			memset(&d, 0xff, sizeof(d));
			sb_pfmt_dec_event(&c, &d);
			CHECK(!c.bad && d.stmt_line == 0 && d.loc_hot == 0 && d.hot == 0x1104,
			      "a 44-byte record: no statement line, the rest read");
		}
		sb_bytes_buf_free(&b);
	}

	/* A vector whose thread count differs from its instance's is refused,
	 * by the writer before anything is written. */
	p->vectors[1].nthreads = 2;
	st = read_back(p, &q, err, sizeof(err));
	CHECK(st == -100 && strstr(err, "vector 1"), "bad vector refused: %d %s", st, err);
	p->vectors[1].nthreads = 3;
	p->vectors[0].event = 7;
	st = read_back(p, &q, err, sizeof(err));
	CHECK(st == -100 && strstr(err, "event 7"), "bad event index refused: %s", err);
	p->vectors[0].event = 0;
	p->cfgs[0].binary = 3;
	st = read_back(p, &q, err, sizeof(err));
	CHECK(st == -100 && strstr(err, "cfg 0"), "bad cfg binary refused: %s", err);
	p->cfgs[0].binary = 0;

	/* Truncation anywhere and flips in the new chunks never read as OK. */
	{
		FILE *f;
		unsigned char *img;
		long n;
		int ok = 1;

		st = read_back(p, &q, err, sizeof(err));
		sb_profile_free(q);
		q = NULL;
		snprintf(path, sizeof(path), "%s/p.sbp", dir);
		f = fopen(path, "rb");
		fseek(f, 0, SEEK_END);
		n = ftell(f);
		rewind(f);
		img = malloc((size_t)n);
		CHECK(fread(img, 1, (size_t)n, f) == (size_t)n, "read image");
		fclose(f);
		for (long cut = 0; cut < n; cut += 7) {
			char tp[80];

			snprintf(tp, sizeof(tp), "%s/t.sbp", dir);
			f = fopen(tp, "wb");
			fwrite(img, 1, (size_t)cut, f);
			fclose(f);
			if (sb_profile_read(tp, &q, err, sizeof(err)) == SB_OK)
				ok = 0;
			sb_profile_free(q);
			q = NULL;
		}
		CHECK(ok, "every truncation is an error");
		for (long at = n - 400; at < n - 28; at += 3) {
			char tp[80];

			img[at] ^= 0x5a;
			snprintf(tp, sizeof(tp), "%s/f.sbp", dir);
			f = fopen(tp, "wb");
			fwrite(img, 1, (size_t)n, f);
			fclose(f);
			img[at] ^= 0x5a;
			if (sb_profile_read(tp, &q, err, sizeof(err)) == SB_OK)
				ok = 0;
			sb_profile_free(q);
			q = NULL;
		}
		CHECK(ok, "every flip in the last chunks is an error");
		free(img);
	}
	sb_profile_free(p);
	snprintf(path, sizeof(path), "%s/p.sbp", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/t.sbp", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/f.sbp", dir);
	unlink(path);
	rmdir(dir);
	return CHECK_DONE("test_profile_vectors");
}
