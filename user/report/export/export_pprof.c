// SPDX-License-Identifier: MIT
/*
 * A profile as pprof's profile.proto, gzipped (export.h): what Pyroscope,
 * Parca and `go tool pprof` read.  Field numbers from the published
 * perftools.profiles proto.
 *
 * Sample types: wait/nanoseconds, busy/nanoseconds, samples/count; each
 * sample carries one of them, the others 0, so a type's total is the
 * text report's:
 *   - busy: a section's per-thread busy (on-CPU) time summed over all its
 *     instances, at the section's closing call site; labels section,
 *     kind, thread;
 *   - wait: one per waits entry (primitive, call site, object), at the
 *     call site; labels primitive, section (when the site closes one),
 *     and the number of waits as the numeric label calls;
 *   - samples: the cpu-clock samples of each code block per section and
 *     thread, at the block's hottest instruction; labels section, thread.
 * One location per profile location used (no call stacks: the profile
 * keeps none per sample), its function and line; one mapping per binary,
 * marked symbolized so no reader tries again.
 */
#include "export.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "pb.h"
#include "report/report.h"
#include "util/idmap.h"

/* profile.proto field numbers */
enum {
	P_SAMPLE_TYPE = 1, P_SAMPLE = 2, P_MAPPING = 3, P_LOCATION = 4, P_FUNCTION = 5,
	P_STRING_TABLE = 6, P_TIME_NANOS = 9, P_DURATION_NANOS = 10, P_COMMENT = 13,
	VT_TYPE = 1, VT_UNIT = 2,
	S_LOCATION_ID = 1, S_VALUE = 2, S_LABEL = 3,
	L_KEY = 1, L_STR = 2, L_NUM = 3,
	M_ID = 1, M_FILENAME = 5, M_BUILD_ID = 6, M_HAS_FUNCTIONS = 7, M_HAS_FILENAMES = 8,
	M_HAS_LINE_NUMBERS = 9,
	LOC_ID = 1, LOC_MAPPING_ID = 2, LOC_ADDRESS = 3, LOC_LINE = 4,
	LN_FUNCTION_ID = 1, LN_LINE = 2,
	F_ID = 1, F_NAME = 2, F_SYSTEM_NAME = 3, F_FILENAME = 4,
};

enum { V_WAIT, V_BUSY, V_SAMPLES, NVALUES };

struct pprof {
	const struct sb_profile *p;
	struct sb_pb out, msg, sub;
	char **strs;                /* the string table, [0] = "" */
	size_t nstrs, cap;
	struct sb_idmap *str_ids;   /* (hash, length) → index + 1 */
	struct sb_idmap *funcs;     /* (name, file) ids → function id */
	uint64_t nfuncs;
	uint8_t *loc_used, *bin_used;
	char **section_names;       /* per section, formatted once */
};

static uint64_t fnv(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ull;
	return h;
}

/* s's index in the string table, added if new; 0 ("") on ENOMEM.  The
 * table holds s as the text report shows it (sb_text_escape): proto3
 * strings must be UTF-8, and a crafted profile's need not be. */
static uint64_t str_id(struct pprof *x, const char *raw)
{
	char buf[4096];
	const char *s;
	void **slot;
	size_t i;
	char *copy;

	if (!raw || !*raw)
		return 0;
	s = sb_text_escape(raw, buf, sizeof(buf));
	slot = sb_idmap_slot(x->str_ids, fnv(s), strlen(s), true);
	if (!slot) {
		x->out.oom = 1;
		return 0;
	}
	i = (size_t)(uintptr_t)*slot;
	if (i && !strcmp(x->strs[i - 1], s))
		return i - 1;
	if (x->nstrs == x->cap) {
		size_t cap = x->cap ? 2 * x->cap : 256;
		char **n = realloc(x->strs, cap * sizeof(*n));

		if (!n) {
			x->out.oom = 1;
			return 0;
		}
		x->strs = n;
		x->cap = cap;
	}
	if (!(copy = strdup(s))) {
		x->out.oom = 1;
		return 0;
	}
	x->strs[x->nstrs] = copy;
	if (!i)   /* (a hash twin keeps the first: the second is written twice) */
		*slot = (void *)(uintptr_t)(x->nstrs + 1);
	return x->nstrs++;
}

static void value_type(struct pprof *x, const char *type, const char *unit)
{
	sb_pb_reset(&x->msg);
	sb_pb_u64(&x->msg, VT_TYPE, str_id(x, type));
	sb_pb_u64(&x->msg, VT_UNIT, str_id(x, unit));
	sb_pb_msg(&x->out, P_SAMPLE_TYPE, &x->msg);
}

static void label_str(struct pprof *x, const char *k, const char *v)
{
	sb_pb_reset(&x->sub);
	sb_pb_u64(&x->sub, L_KEY, str_id(x, k));
	sb_pb_u64(&x->sub, L_STR, str_id(x, v));
	sb_pb_msg(&x->msg, S_LABEL, &x->sub);
}

static void label_num(struct pprof *x, const char *k, uint64_t v)
{
	sb_pb_reset(&x->sub);
	sb_pb_u64(&x->sub, L_KEY, str_id(x, k));
	sb_pb_u64(&x->sub, L_NUM, v);
	sb_pb_msg(&x->msg, S_LABEL, &x->sub);
}

/* A sample's start: its location (loc index, -1 none) and value. */
static void sample_begin(struct pprof *x, int64_t loc, int which, uint64_t v)
{
	uint64_t values[NVALUES] = { 0 };

	values[which] = v;
	sb_pb_reset(&x->msg);
	if (loc >= 0 && (size_t)loc < x->p->nlocs) {
		uint64_t id = (uint64_t)loc + 1;

		x->loc_used[loc] = 1;
		sb_pb_packed(&x->msg, S_LOCATION_ID, &id, 1);
	}
	sb_pb_packed(&x->msg, S_VALUE, values, NVALUES);
}

static void sample_end(struct pprof *x)
{
	sb_pb_msg(&x->out, P_SAMPLE, &x->msg);
}

static void thread_label(struct pprof *x, uint32_t tid)
{
	char t[16];

	snprintf(t, sizeof(t), "%" PRIu32, tid);
	label_str(x, "thread", t);
}

static void busy_samples(struct pprof *x)
{
	const struct sb_profile *p = x->p;

	for (size_t s = 0; s < p->nsections; s++) {
		const struct sb_section *sec = &p->sections[s];

		for (uint32_t k = 0; k < sec->nthreads; k++) {
			if (!sec->per_thread[k].busy_ns)
				continue;
			sample_begin(x, sec->loc, V_BUSY, sec->per_thread[k].busy_ns);
			label_str(x, "section", x->section_names[s]);
			label_str(x, "kind", sb_section_kind_name(sec->kind));
			thread_label(x, sec->per_thread[k].tid);
			sample_end(x);
		}
	}
}

static void wait_samples(struct pprof *x)
{
	const struct sb_profile *p = x->p;

	for (size_t i = 0; i < p->nwaits; i++) {
		const struct sb_wait *w = &p->waits[i];

		if (!w->wait_ns && !w->count)
			continue;
		sample_begin(x, w->loc, V_WAIT, w->wait_ns);
		label_str(x, "primitive", sb_prim_name(w->prim));
		for (size_t s = 0; w->loc >= 0 && s < p->nsections; s++)
			if (p->sections[s].loc == (uint32_t)w->loc) {
				label_str(x, "section", x->section_names[s]);
				break;
			}
		label_num(x, "calls", w->count);
		sample_end(x);
	}
}

static void cpu_samples(struct pprof *x)
{
	const struct sb_profile *p = x->p;

	for (size_t v = 0; v < p->nvectors; v++) {
		const struct sb_vector *vec = &p->vectors[v];
		const struct sb_instance *in;
		const struct sb_event_def *e;
		int32_t loc;

		if (vec->instance >= p->ninstances || vec->event >= p->nevents ||
		    (e = &p->events[vec->event])->kind != SB_EVK_BLOCK_SAMPLES)
			continue;
		in = &p->instances[vec->instance];
		loc = e->loc_hot >= 0 ? e->loc_hot : e->loc;
		for (uint32_t j = 0; j < vec->nthreads && j < in->nthreads; j++) {
			if (!vec->counts[j])
				continue;
			sample_begin(x, loc, V_SAMPLES, vec->counts[j]);
			if (in->section < p->nsections)
				label_str(x, "section", x->section_names[in->section]);
			thread_label(x, in->per_thread[j].tid);
			sample_end(x);
		}
	}
}

/* Function id of (name, file); 0 without a name. */
static uint64_t function_id(struct pprof *x, const struct sb_loc *l)
{
	uint64_t name, file;
	void **slot;

	if (!l->function)
		return 0;
	name = str_id(x, l->function);
	file = str_id(x, l->file);
	if (!(slot = sb_idmap_slot(x->funcs, name, file, true))) {
		x->out.oom = 1;
		return 0;
	}
	if (!*slot) {
		*slot = (void *)(uintptr_t)++x->nfuncs;
		sb_pb_reset(&x->msg);
		sb_pb_u64(&x->msg, F_ID, x->nfuncs);
		sb_pb_u64(&x->msg, F_NAME, name);
		sb_pb_u64(&x->msg, F_SYSTEM_NAME, name);
		sb_pb_u64(&x->msg, F_FILENAME, file);
		sb_pb_msg(&x->out, P_FUNCTION, &x->msg);
	}
	return (uint64_t)(uintptr_t)*slot;
}

static void locations(struct pprof *x)
{
	const struct sb_profile *p = x->p;

	for (size_t i = 0; i < p->nlocs; i++) {
		const struct sb_loc *l = &p->locs[i];
		uint64_t fn;

		if (!x->loc_used[i])
			continue;
		fn = function_id(x, l);   /* (its Function written first) */
		sb_pb_reset(&x->msg);
		sb_pb_u64(&x->msg, LOC_ID, (uint64_t)i + 1);
		if (l->binary >= 0 && (size_t)l->binary < p->nbinaries) {
			sb_pb_u64(&x->msg, LOC_MAPPING_ID, (uint64_t)l->binary + 1);
			x->bin_used[l->binary] = 1;
		}
		sb_pb_u64(&x->msg, LOC_ADDRESS, l->addr);
		if (fn) {
			sb_pb_reset(&x->sub);
			sb_pb_u64(&x->sub, LN_FUNCTION_ID, fn);
			sb_pb_u64(&x->sub, LN_LINE, l->line);
			sb_pb_msg(&x->msg, LOC_LINE, &x->sub);
		}
		sb_pb_msg(&x->out, P_LOCATION, &x->msg);
	}
	for (size_t b = 0; b < p->nbinaries; b++) {
		if (!x->bin_used[b])
			continue;
		sb_pb_reset(&x->msg);
		sb_pb_u64(&x->msg, M_ID, (uint64_t)b + 1);
		sb_pb_u64(&x->msg, M_FILENAME, str_id(x, p->binaries[b].path));
		sb_pb_u64(&x->msg, M_BUILD_ID, str_id(x, p->binaries[b].build_id));
		sb_pb_u64(&x->msg, M_HAS_FUNCTIONS, 1);
		sb_pb_u64(&x->msg, M_HAS_FILENAMES, 1);
		sb_pb_u64(&x->msg, M_HAS_LINE_NUMBERS, 1);
		sb_pb_msg(&x->out, P_MAPPING, &x->msg);
	}
}

/* x->out gzipped to f. */
static int gzip_to(const struct sb_pb *b, FILE *f, char *err, size_t len)
{
	unsigned char buf[1 << 16];
	z_stream z;
	int r;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		snprintf(err, len, "zlib: cannot start compressing");
		return -ENOMEM;
	}
	z.next_in = b->b;
	z.avail_in = (uInt)b->n;
	do {
		z.next_out = buf;
		z.avail_out = sizeof(buf);
		r = deflate(&z, Z_FINISH);
		if (fwrite(buf, 1, sizeof(buf) - z.avail_out, f) != sizeof(buf) - z.avail_out) {
			deflateEnd(&z);
			snprintf(err, len, "write: %s", strerror(errno));
			return -EIO;
		}
	} while (r == Z_OK);
	deflateEnd(&z);
	if (r != Z_STREAM_END) {
		snprintf(err, len, "zlib: compression failed (%d)", r);
		return -EIO;
	}
	return 0;
}

static int pprof_write(const struct sb_profile *p, FILE *f, char *err, size_t len)
{
	struct pprof x = { .p = p };
	uint64_t start = sb_profile_meta_get_u64(p, "start_realtime");
	char name[256];
	int ret = -ENOMEM;

	sb_pb_init(&x.out);
	sb_pb_init(&x.msg);
	sb_pb_init(&x.sub);
	x.str_ids = sb_idmap_alloc();
	x.funcs = sb_idmap_alloc();
	x.loc_used = calloc(p->nlocs + 1, 1);
	x.bin_used = calloc(p->nbinaries + 1, 1);
	x.section_names = calloc(p->nsections + 1, sizeof(*x.section_names));
	if (!x.str_ids || !x.funcs || !x.loc_used || !x.bin_used || !x.section_names)
		goto out;
	/* the table's [0] is "" by the format's rule (str_id maps "" there) */
	if (!(x.strs = calloc(256, sizeof(*x.strs))) || !(x.strs[0] = strdup("")))
		goto out;
	x.nstrs = 1;
	x.cap = 256;
	for (size_t s = 0; s < p->nsections; s++) {
		sb_loc_format_section(p, s, name, sizeof(name));
		if (!(x.section_names[s] = strdup(name)))
			goto out;
	}
	value_type(&x, "wait", "nanoseconds");
	value_type(&x, "busy", "nanoseconds");
	value_type(&x, "samples", "count");
	busy_samples(&x);
	wait_samples(&x);
	cpu_samples(&x);
	locations(&x);
	sb_pb_u64(&x.out, P_TIME_NANOS, start * 1000000000ull);
	sb_pb_u64(&x.out, P_DURATION_NANOS, sb_profile_meta_get_u64(p, "duration_ns"));
	sb_pb_u64(&x.out, P_COMMENT, str_id(&x, "scalebpf " SB_VERSION));
	/* the string table last: every string is known by now */
	for (size_t i = 0; i < x.nstrs; i++)
		sb_pb_str(&x.out, P_STRING_TABLE, x.strs[i]);
	if (!sb_pb_ok(&x.out) || !sb_pb_ok(&x.msg) || !sb_pb_ok(&x.sub))
		goto out;
	ret = gzip_to(&x.out, f, err, len);
out:
	if (ret == -ENOMEM)
		snprintf(err, len, "out of memory");
	for (size_t i = 0; i < x.nstrs; i++)
		free(x.strs[i]);
	free(x.strs);
	for (size_t s = 0; x.section_names && s < p->nsections; s++)
		free(x.section_names[s]);
	free(x.section_names);
	free(x.loc_used);
	free(x.bin_used);
	sb_idmap_free(x.str_ids);
	sb_idmap_free(x.funcs);
	sb_pb_free(&x.out);
	sb_pb_free(&x.msg);
	sb_pb_free(&x.sub);
	return ret;
}

const struct sb_export_format sb_export_pprof = {
	.name = "pprof",
	.what = "gzipped pprof profile.proto (go tool pprof, Pyroscope, Parca):\n"
		"                       busy and wait ns and cpu samples by call site,\n"
		"                       labels section, thread, primitive",
	.binary = 1,
	.write = pprof_write,
};
