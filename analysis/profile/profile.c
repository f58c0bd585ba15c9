/* SPDX-License-Identifier: MIT */
/*
 * The scalebpf profile: in-memory model and the public entry points.
 * profile.h describes the framing, profile_format.c encodes and decodes
 * the chunks below (the optional ones: profile_vectors.c and
 * profile_addrs.c), util/bytes.c does the bytes and the files.
 *
 * Payloads, format version 1.  Every chunk but END is
 *     u32 count, then count records, each a u32 length + its fields
 * and readers ignore record bytes after the fields they know and payload
 * bytes after the last record, so later versions can append fields.
 * Strings are u32 length + bytes; in the fields marked "?" the empty
 * string stands for NULL (add_* turns "" into NULL there, so a round trip
 * is exact); in the others NULL is stored as "".
 *
 *   META       key str, value str
 *   BINARIES   path str, build_id str?
 *   LOCS       addr u64, offset u64, binary i32, line u32,
 *              function str?, file str?
 *   THREADS    tid u32, parent_tid u32, start_ns u64, end_ns u64,
 *              oncpu_ns u64, comm str
 *   SECTIONS   kind u32, loc u32, ninstances u64, lost_ns u64,
 *              capacity_ns u64, times
 *   INSTANCES  section u32, seq u64, start_ns u64, end_ns u64, times
 *   WAITS      prim u32, loc i32, object u64, count u64, wait_ns u64
 *   EVENTS, VECTORS, CFGS: optional, see profile_vectors.c
 *   ADDRS: optional, see profile_addrs.c
 *   SHARING: optional, see profile_sharing.c
 *   CHIP:    optional, see profile_chip.c
 *   STACK:   optional, see profile_stack.c
 *   times      u32 n, u32 entry size (28 in version 1), n entries of
 *              tid u32, busy_ns u64, wait_ns u64, wall_ns u64
 *   END        u64 number of chunks before it (no count/records)
 *
 * The header flags are written as 0 and ignored on read; the chunk
 * reserved field must be 0.  A known chunk type may appear only once;
 * unknown types are skipped.  Indices between chunks (loc -> binary,
 * section -> loc, instance -> section, wait -> loc) are checked after
 * the END trailer, and by the writer before it writes anything.
 */
#include "profile_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- names ---- */

static const char *const kind_names[SB_SECT_KIND_MAX] = {
	[SB_SECT_BARRIER] = "barrier",
	[SB_SECT_USER_BARRIER] = "user_barrier",
	[SB_SECT_OMP_REGION] = "omp_region",
	[SB_SECT_OMP_BARRIER] = "omp_barrier",
	[SB_SECT_JOIN] = "join",
};

static const char *const prim_names[SB_PRIM_MAX] = {
	[SB_PRIM_OTHER] = "other",
	[SB_PRIM_BARRIER] = "barrier",
	[SB_PRIM_USER_BARRIER] = "user_barrier",
	[SB_PRIM_JOIN] = "join",
	[SB_PRIM_COND] = "cond",
	[SB_PRIM_MUTEX] = "mutex",
	[SB_PRIM_SEM] = "sem",
	[SB_PRIM_SPIN] = "spin",
	[SB_PRIM_RWLOCK] = "rwlock",
	[SB_PRIM_OMP_REGION_END] = "omp_region_end",
	[SB_PRIM_OMP_BARRIER] = "omp_barrier",
	[SB_PRIM_OMP_CRITICAL] = "omp_critical",
	[SB_PRIM_OMP_LOCK] = "omp_lock",
	[SB_PRIM_OMP_IDLE] = "omp_idle",
};

const char *sb_section_kind_name(uint32_t kind)
{
	return kind < SB_SECT_KIND_MAX && kind_names[kind] ? kind_names[kind] : "unknown";
}

const char *sb_prim_name(uint32_t prim)
{
	return prim < SB_PRIM_MAX && prim_names[prim] ? prim_names[prim] : "unknown";
}

const char *sb_chip_mode_name(uint32_t mode)
{
	return mode == SB_CHIP_MODE_EXACT ? "exact" : mode == SB_CHIP_MODE_SAMPLED ? "sampled" :
	       mode == SB_CHIP_MODE_SAMPLED_PMU ? "sampled-pmu" : "?";
}

const char *sb_sharing_mode_name(uint32_t mode)
{
	return mode == SB_SHARING_INTERLEAVED ? "interleaved" :
	       mode == SB_SHARING_PIPED ? "piped" : mode == SB_SHARING_SAMPLED ? "sampled" :
	       "unknown";
}

uint32_t sb_prim_from_name(const char *name)
{
	for (uint32_t i = 0; name && i < SB_PRIM_MAX; i++)
		if (prim_names[i] && strcmp(prim_names[i], name) == 0)
			return i;
	return SB_PRIM_MAX;
}

const char *sb_profile_strerror(int status)
{
	switch (status) {
	case SB_OK: return "success";
	case SB_ERR_IO: return "input/output error";
	case SB_ERR_MAGIC: return "not a scalebpf profile";
	case SB_ERR_VERSION: return "profile format is newer than this scalebpf";
	case SB_ERR_TRUNCATED: return "truncated profile";
	case SB_ERR_CORRUPT: return "corrupt profile";
	case SB_ERR_NOMEM: return "out of memory";
	}
	return "unknown error";
}

/* ---- model ---- */

/* Returns an array with room for element n, or NULL (arr untouched).
 * See sb_bytes_cap_for() for why there is no capacity field. */
static void *grow(void *arr, size_t n, size_t size)
{
	if (arr && n < sb_bytes_cap_for(n))
		return arr;
	if (n >= SIZE_MAX / 4 / size) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(arr, sb_bytes_cap_for(n + 1) * size);
}

/* nullable: NULL and "" become NULL; otherwise NULL becomes "". */
static int dup_str(char **out, const char *s, int nullable)
{
	*out = NULL;
	if (!s || !*s) {
		if (nullable)
			return 0;
		s = "";
	}
	*out = strdup(s);
	return *out ? 0 : -1;
}

static int dup_times(struct sb_thread_time **out, const struct sb_thread_time *t,
		     uint32_t n)
{
	*out = NULL;
	if (n == 0)
		return 0;
	if (!t) {
		errno = EINVAL;
		return -1;
	}
	*out = malloc((size_t)n * sizeof(*t));
	if (!*out)
		return -1;
	memcpy(*out, t, (size_t)n * sizeof(*t));
	return 0;
}

struct sb_profile *sb_profile_alloc(void)
{
	return calloc(1, sizeof(struct sb_profile));
}

void sb_profile_free(struct sb_profile *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->nmeta; i++) {
		free(p->meta[i].key);
		free(p->meta[i].value);
	}
	for (i = 0; i < p->nbinaries; i++) {
		free(p->binaries[i].path);
		free(p->binaries[i].build_id);
	}
	for (i = 0; i < p->nlocs; i++) {
		free(p->locs[i].function);
		free(p->locs[i].file);
	}
	for (i = 0; i < p->nthreads; i++)
		free(p->threads[i].comm);
	for (i = 0; i < p->nsections; i++)
		free(p->sections[i].per_thread);
	for (i = 0; i < p->ninstances; i++)
		free(p->instances[i].per_thread);
	free(p->meta);
	free(p->binaries);
	free(p->locs);
	free(p->threads);
	free(p->sections);
	free(p->instances);
	free(p->waits);
	for (i = 0; i < p->nvectors; i++)
		free(p->vectors[i].counts);
	for (i = 0; i < p->ncfgs; i++)
		free(p->cfgs[i].data);
	free(p->events);
	free(p->vectors);
	free(p->cfgs);
	free(p->addrs);
	for (i = 0; i < p->nsharing; i++)
		free(p->sharing[i].name);
	free(p->sharing);
	free(p->chip);
	free(p->stack);
	free(p);
}

int sb_profile_meta_set(struct sb_profile *p, const char *key, const char *value)
{
	struct sb_kv *meta;
	char *k, *v;

	if (!key) {
		errno = EINVAL;
		return -1;
	}
	if (dup_str(&v, value, 0))
		return -1;
	for (size_t i = 0; i < p->nmeta; i++) {
		if (strcmp(p->meta[i].key, key) == 0) {
			free(p->meta[i].value);
			p->meta[i].value = v;
			return (int)i;
		}
	}
	meta = dup_str(&k, key, 0) ? NULL : grow(p->meta, p->nmeta, sizeof(*meta));
	if (!meta) {
		free(k);
		free(v);
		return -1;
	}
	p->meta = meta;
	p->meta[p->nmeta] = (struct sb_kv){ .key = k, .value = v };
	return (int)p->nmeta++;
}

int sb_profile_meta_set_u64(struct sb_profile *p, const char *key, uint64_t value)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRIu64, value);
	return sb_profile_meta_set(p, key, buf);
}

const char *sb_profile_meta_get(const struct sb_profile *p, const char *key)
{
	for (size_t i = 0; key && i < p->nmeta; i++)
		if (strcmp(p->meta[i].key, key) == 0)
			return p->meta[i].value;
	return NULL;
}

uint64_t sb_profile_meta_get_u64(const struct sb_profile *p, const char *key)
{
	const char *v = sb_profile_meta_get(p, key);

	return v ? strtoull(v, NULL, 10) : 0;
}

/* Binary bin is a library: not the profile's executable (when the
 * profile names none, or none of its binaries is the one named, a shared
 * object by its name, lib*.so[.N]). */
bool sb_profile_library(const struct sb_profile *p, int32_t bin)
{
	const char *exe = sb_profile_meta_get(p, "executable"), *path, *base, *so;
	bool known = false;

	if (bin < 0 || (size_t)bin >= p->nbinaries || !(path = p->binaries[bin].path))
		return false;
	for (size_t b = 0; exe && *exe && b < p->nbinaries && !known; b++)
		known = p->binaries[b].path && !strcmp(exe, p->binaries[b].path);
	if (known)
		return strcmp(exe, path) != 0;
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	so = strstr(base, ".so");
	return so && (so[3] == '\0' || so[3] == '.');
}

long sb_profile_add_binary(struct sb_profile *p, const char *path, const char *build_id)
{
	struct sb_binary b = { 0 }, *arr;

	if (dup_str(&b.path, path, 0) || dup_str(&b.build_id, build_id, 1) ||
	    !(arr = grow(p->binaries, p->nbinaries, sizeof(*arr)))) {
		free(b.path);
		free(b.build_id);
		return -1;
	}
	p->binaries = arr;
	arr[p->nbinaries] = b;
	return (long)p->nbinaries++;
}

long sb_profile_add_loc(struct sb_profile *p, const struct sb_loc *loc)
{
	struct sb_loc l = *loc, *arr;

	/* Nothing of the caller's may reach the free() below. */
	l.function = l.file = NULL;
	if (dup_str(&l.function, loc->function, 1) || dup_str(&l.file, loc->file, 1) ||
	    !(arr = grow(p->locs, p->nlocs, sizeof(*arr)))) {
		free(l.function);
		free(l.file);
		return -1;
	}
	p->locs = arr;
	arr[p->nlocs] = l;
	return (long)p->nlocs++;
}

long sb_profile_add_thread(struct sb_profile *p, const struct sb_thread *t)
{
	struct sb_thread th = *t, *arr;

	if (dup_str(&th.comm, t->comm, 0) ||
	    !(arr = grow(p->threads, p->nthreads, sizeof(*arr)))) {
		free(th.comm);
		return -1;
	}
	p->threads = arr;
	arr[p->nthreads] = th;
	return (long)p->nthreads++;
}

long sb_profile_add_section(struct sb_profile *p, const struct sb_section *s)
{
	struct sb_section sec = *s, *arr;

	if (dup_times(&sec.per_thread, s->per_thread, s->nthreads) ||
	    !(arr = grow(p->sections, p->nsections, sizeof(*arr)))) {
		free(sec.per_thread);
		return -1;
	}
	p->sections = arr;
	arr[p->nsections] = sec;
	return (long)p->nsections++;
}

long sb_profile_add_instance(struct sb_profile *p, const struct sb_instance *in)
{
	struct sb_instance inst = *in, *arr;

	if (dup_times(&inst.per_thread, in->per_thread, in->nthreads) ||
	    !(arr = grow(p->instances, p->ninstances, sizeof(*arr)))) {
		free(inst.per_thread);
		return -1;
	}
	p->instances = arr;
	arr[p->ninstances] = inst;
	return (long)p->ninstances++;
}

long sb_profile_add_wait(struct sb_profile *p, const struct sb_wait *w)
{
	struct sb_wait *arr = grow(p->waits, p->nwaits, sizeof(*arr));

	if (!arr)
		return -1;
	p->waits = arr;
	arr[p->nwaits] = *w;
	return (long)p->nwaits++;
}

long sb_profile_add_event(struct sb_profile *p, const struct sb_event_def *e)
{
	struct sb_event_def *arr = grow(p->events, p->nevents, sizeof(*arr));

	if (!arr)
		return -1;
	p->events = arr;
	arr[p->nevents] = *e;
	return (long)p->nevents++;
}

long sb_profile_add_vector(struct sb_profile *p, const struct sb_vector *v)
{
	struct sb_vector vec = *v, *arr;

	vec.counts = NULL;
	if (v->nthreads) {
		if (!v->counts) {
			errno = EINVAL;
			return -1;
		}
		vec.counts = malloc((size_t)v->nthreads * sizeof(*vec.counts));
		if (!vec.counts)
			return -1;
		memcpy(vec.counts, v->counts, (size_t)v->nthreads * sizeof(*vec.counts));
	}
	arr = grow(p->vectors, p->nvectors, sizeof(*arr));
	if (!arr) {
		free(vec.counts);
		return -1;
	}
	p->vectors = arr;
	arr[p->nvectors] = vec;
	return (long)p->nvectors++;
}

long sb_profile_add_cfg(struct sb_profile *p, int32_t binary, const void *data, uint64_t len)
{
	struct sb_cfg_blob g = { .binary = binary, .len = len }, *arr;

	if (len) {
		g.data = malloc(len);
		if (!g.data)
			return -1;
		memcpy(g.data, data, len);
	}
	arr = grow(p->cfgs, p->ncfgs, sizeof(*arr));
	if (!arr) {
		free(g.data);
		return -1;
	}
	p->cfgs = arr;
	arr[p->ncfgs] = g;
	return (long)p->ncfgs++;
}

/* ---- files ---- */

int sb_profile_read_mem(const void *data, size_t len, const char *name,
			struct sb_profile **out, char *err, size_t errlen)
{
	struct sb_profile *p;
	int st;

	*out = NULL;
	sb_bytes_seterr(err, errlen, "%s", "");
	p = sb_profile_alloc();
	if (!p) {
		sb_bytes_seterr(err, errlen, "cannot read profile %s: out of memory", name);
		errno = ENOMEM;
		return SB_ERR_NOMEM;
	}
	st = sb_pfmt_parse(data, len, p, name, err, errlen);
	if (st) {
		sb_profile_free(p);
		return st;
	}
	*out = p;
	return SB_OK;
}

int sb_profile_read(const char *path, struct sb_profile **out, char *err, size_t errlen)
{
	unsigned char *data;
	char why[160];
	size_t len;
	int st, e;

	*out = NULL;
	sb_bytes_seterr(err, errlen, "%s", "");
	/* Regular files only, read no further than their size: /dev/zero or a
	 * FIFO given as -i is refused at once instead of costing gigabytes
	 * or hanging. */
	if (sb_bytes_read_file(path, 0, &data, &len, why, sizeof(why)) < 0) {
		e = errno;
		sb_bytes_seterr(err, errlen, "cannot read profile %s: %s", path, why);
		errno = e;
		return e == ENOMEM ? SB_ERR_NOMEM : SB_ERR_IO;
	}
	st = sb_profile_read_mem(data, len, path, out, err, errlen);
	free(data);
	return st;
}

int sb_profile_write(const struct sb_profile *p, const char *path, char *err, size_t errlen)
{
	struct sb_bytes_out o;
	char why[160];
	int e;

	sb_bytes_seterr(err, errlen, "%s", "");
	if (sb_pfmt_check(p, why, sizeof(why))) {
		sb_bytes_seterr(err, errlen, "cannot write profile %s: %s", path, why);
		errno = EINVAL;
		return SB_ERR_CORRUPT;
	}
	if (sb_bytes_out_open(&o, path) < 0)
		goto fail;
	e = sb_pfmt_write(p, &o);
	if (e) {
		sb_bytes_out_abort(&o);
		errno = e;
		goto fail;
	}
	if (sb_bytes_out_commit(&o) == 0)
		return SB_OK;
fail:
	e = errno;
	sb_bytes_seterr(err, errlen, "cannot write profile %s: %s", path, strerror(e));
	errno = e;
	return e == ENOMEM ? SB_ERR_NOMEM : SB_ERR_IO;
}

int sb_profile_check_path(const char *path, char *err, size_t errlen)
{
	struct sb_bytes_out o;
	struct stat st;
	int e;

	sb_bytes_seterr(err, errlen, "%s", "");
	if (!path || !*path) {
		sb_bytes_seterr(err, errlen, "cannot write profile: the output path is empty");
		errno = EINVAL;
		return SB_ERR_IO;
	}
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		sb_bytes_seterr(err, errlen, "cannot write profile %s: it is a directory", path);
		errno = EISDIR;
		return SB_ERR_IO;
	}
	if (sb_bytes_out_open(&o, path) < 0) {
		e = errno;
		sb_bytes_seterr(err, errlen, "cannot write profile %s: %s", path, strerror(e));
		errno = e;
		return e == ENOMEM ? SB_ERR_NOMEM : SB_ERR_IO;
	}
	sb_bytes_out_abort(&o);
	return SB_OK;
}
