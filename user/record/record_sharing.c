// SPDX-License-Identifier: MIT
/*
 * Exact-mode sharing (issue 13): at the end of a recording of a
 * `scalebpf cc --trace-mem` program, ccSIM (analysis/coherence/) runs
 * over the per-thread traces the program wrote ($SCALEBPF_TRACE_DIR, which
 * record sets to <output>.trace unless it is set already), in
 * both interleavings of §II-C, and its counts become the profile's
 * SHARING rows.  The caches are this machine's, from hwloc (the first
 * L1 data and L2 cache), overridable with SCALEBPF_CACHES.  References
 * are symbolized like every other location; lines are named by the
 * variable that holds them (ELF data symbols), a thread's stack (the
 * traces say where each is), else "heap or anonymous 0x...".
 */
#include <errno.h>
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "binary/elfsym.h"
#include "binary/procmaps.h"
#include "binary/symbolize.h"
#include "coherence/coherence.h"
#include "profile/profile.h"
#include "record_sharing.h"
#include "record_session.h"
#include "record_watch.h"

struct namer {
	struct sb_maps *maps;
	struct sb_symbolizer *sym;
	const struct sb_coherence_trace_info *info;   /* threads' stacks */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A reference's pc is the return address of its hook's call: the
 * instruction after it often has no line (a register reload), the call
 * itself is on the access's line, as for a stack's return addresses. */
static long loc_of(void *ctx, uint64_t pc)
{
	struct namer *n = ctx;

	return sb_symbolizer_loc(n->sym, pc ? pc - 1 : 0);
}

/* "sym<TAB>part": the variable and, from its DWARF type, which part of
 * it [vaddr, vaddr + len) is (an element range, a field). */
static void name_var(struct sb_elf *e, const char *sym, uint64_t start, uint64_t size,
		     uint64_t vaddr, uint32_t len, char *buf, size_t buflen)
{
	char part[96];
	uint64_t off = vaddr - start, n = len;

	if (off + n > size)
		n = size - off;
	if (sb_elf_data_part(e, start, off, n, part, sizeof(part)))
		snprintf(buf, buflen, "%s\t%s", sym, part);
	else
		snprintf(buf, buflen, "%s", sym);
}

/* The variable at a runtime address: a thread's stack, a file mapping's,
 * or beyond the file (.bss past its last page is an anonymous mapping) at
 * the load bias of a binary's first mapping. */
static void name_of(void *ctx, uint64_t addr, uint32_t len, char *buf, size_t buflen)
{
	struct namer *n = ctx;
	char sym[200];
	uint64_t vaddr, start, size;
	int bin;

	for (uint32_t t = 0; n->info && n->info->stacks && t < n->info->nthreads; t++)
		if (addr >= n->info->stacks[t].lo && addr < n->info->stacks[t].hi) {
			snprintf(buf, buflen, "the stack of thread %u", n->info->tids[t]);
			return;
		}
	if (!sb_maps_resolve(n->maps, addr, &bin, &vaddr)) {
		struct sb_elf *e = sb_maps_binary_elf(n->maps, bin);

		if (e && sb_elf_data_at(e, vaddr, sym, sizeof(sym), &start, &size)) {
			name_var(e, sym, start, size, vaddr, len, buf, buflen);
			return;
		}
	}
	for (size_t i = 0; i < sb_maps_count(n->maps); i++) {
		const struct sb_mapping *m = sb_maps_get(n->maps, i);
		struct sb_elf *e = sb_maps_binary_elf(n->maps, m->bin);
		uint64_t v0;
		bool seen = false;

		/* a binary's mappings share one load bias: the symbol table
		 * (scanned whole) is searched once per binary */
		for (size_t k = 0; k < i && !seen; k++)
			seen = sb_maps_get(n->maps, k)->bin == m->bin;
		if (seen || !e || sb_elf_offset_to_vaddr(e, m->pgoff, &v0) || addr < m->start)
			continue;
		vaddr = addr - m->start + v0;
		if (sb_elf_data_at(e, vaddr, sym, sizeof(sym), &start, &size)) {
			name_var(e, sym, start, size, vaddr, len, buf, buflen);
			return;
		}
	}
	snprintf(buf, buflen, SB_COHERENCE_ANON "0x%llx", (unsigned long long)addr);
}

/* The first data-or-unified cache of that depth, from hwloc. */
static bool hwloc_level(hwloc_topology_t topo, hwloc_obj_type_t type,
			struct sb_coherence_level *l, uint32_t *line)
{
	for (hwloc_obj_t o = hwloc_get_next_obj_by_type(topo, type, NULL); o;
	     o = hwloc_get_next_obj_by_type(topo, type, o)) {
		if (o->attr->cache.type == HWLOC_OBJ_CACHE_INSTRUCTION)
			continue;
		if (!o->attr->cache.size || o->attr->cache.associativity <= 0)
			return false;   /* fully associative or unknown */
		l->size = (uint32_t)o->attr->cache.size;
		l->ways = (uint32_t)o->attr->cache.associativity;
		if (o->attr->cache.linesize)
			*line = o->attr->cache.linesize;
		return true;
	}
	return false;
}

/* Parses "L1=48K/12,L2=1M/16,line=64" (any subset) into o. */
static int parse_caches(const char *s, struct sb_coherence_opts *o, char *err, size_t len)
{
	char buf[256], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", s);
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		unsigned long v, ways = 0;
		struct sb_coherence_level *l = NULL;

		if (!strncmp(tok, "L1=", 3))
			l = &o->l1;
		else if (!strncmp(tok, "L2=", 3))
			l = &o->l2;
		else if (strncmp(tok, "line=", 5))
			goto bad;
		v = strtoul(tok + (l ? 3 : 5), &end, 10);
		if (*end == 'K' || *end == 'k')
			v <<= 10, end++;
		else if (*end == 'M' || *end == 'm')
			v <<= 20, end++;
		if (l && *end == '/')
			ways = strtoul(end + 1, &end, 10);
		if (*end || !v || v > UINT32_MAX || (l && !ways))
			goto bad;
		if (l)
			*l = (struct sb_coherence_level){ (uint32_t)v, (uint32_t)ways };
		else
			o->line = (uint32_t)v;
	}
	return 0;
bad:
	snprintf(err, len, "SCALEBPF_CACHES=%s: expected L1=SIZE/WAYS,L2=SIZE/WAYS,line=BYTES "
		 "(e.g. L1=32K/8,L2=1M/16,line=64)", s);
	return -EINVAL;
}

/* The simulated caches and where they came from. */
static int caches(struct sb_coherence_opts *o, char *from, size_t fromlen, char *err,
		  size_t len)
{
	const char *env = getenv("SCALEBPF_CACHES");
	hwloc_topology_t topo;
	bool l1 = false, l2 = false;

	sb_coherence_opts_default(o);
	snprintf(from, fromlen, "defaults");
	if (!hwloc_topology_init(&topo)) {
		if (!hwloc_topology_load(topo)) {
			l1 = hwloc_level(topo, HWLOC_OBJ_L1CACHE, &o->l1, &o->line);
			l2 = hwloc_level(topo, HWLOC_OBJ_L2CACHE, &o->l2, &o->line);
		}
		hwloc_topology_destroy(topo);
	}
	if (l1 && l2)
		snprintf(from, fromlen, "hwloc");
	if (env && *env) {
		if (parse_caches(env, o, err, len))
			return -EINVAL;
		snprintf(from, fromlen, "SCALEBPF_CACHES");
	}
	return sb_coherence_opts_check(o, err, len);
}

int sb_rec_sharing(struct sb_rec *r, struct sb_profile *p, struct sb_symbolizer *sym)
{
	static const enum sb_coherence_mode modes[] = { SB_COHERENCE_PIPED,
							SB_COHERENCE_INTERLEAVED };
	static const char *const names[] = { "piped", "interleaved" };
	struct namer n = { .maps = r->maps, .sym = sym };
	struct sb_coherence_opts o;
	char dir[4200], err[512], from[64], desc[256], key[64];
	int ret = 0;

	/* Where the program wrote: record set it to <output>.trace unless
	 * the user had chosen (record_session.c). */
	snprintf(dir, sizeof(dir), "%s", getenv("SCALEBPF_TRACE_DIR") ?
		 getenv("SCALEBPF_TRACE_DIR") : "");
	if (!dir[0])
		snprintf(dir, sizeof(dir), "%s.trace", r->output);
	if (caches(&o, from, sizeof(from), err, sizeof(err))) {
		sb_profile_meta_set(p, "coherence_error", err);
		fprintf(stderr, "scalebpf: sharing not simulated: %s\n", err);
		return 0;
	}
	snprintf(desc, sizeof(desc), "L1 %u KiB %u-way, L2 %u KiB %u-way, %u-byte lines (%s)",
		 o.l1.size >> 10, o.l1.ways, o.l2.size >> 10, o.l2.ways, o.line, from);
	sb_profile_meta_set(p, "coherence_caches", desc);
	sb_profile_meta_set(p, "coherence_traces", dir);
	for (size_t m = 0; m < 2; m++) {
		struct sb_coherence_result res;
		struct sb_coherence_trace_info info;
		double t0 = now_s(), secs;

		o.mode = modes[m];
		if (!r->quiet)
			fprintf(stderr, "scalebpf: simulating cache coherence (ccSIM, %s) over %s\n",
				names[m], dir);
		ret = sb_coherence_trace_run(dir, (uint32_t)r->fw.cur->pid, &o, &res, &info, err,
					     sizeof(err));
		if (ret) {
			/* an optional analysis: the recording is kept */
			sb_profile_meta_set(p, "coherence_error", err);
			fprintf(stderr, "scalebpf: sharing not simulated: %s\n", err);
			return 0;
		}
		secs = now_s() - t0;
		n.info = &info;
		ret = sb_coherence_store(&res, info.tids, loc_of, name_of, &n, p);
		n.info = NULL;
		if (!ret) {
			snprintf(key, sizeof(key), "coherence_%s_seconds", names[m]);
			snprintf(desc, sizeof(desc), "%.3f", secs);
			sb_profile_meta_set(p, key, desc);
			snprintf(key, sizeof(key), "coherence_%s_refs_per_s", names[m]);
			sb_profile_meta_set_u64(p, key, secs > 0 ? (uint64_t)(info.accesses / secs) : 0);
			if (!m) {
				sb_profile_meta_set_u64(p, "coherence_threads", info.nthreads);
				sb_profile_meta_set_u64(p, "coherence_references", info.accesses);
				sb_profile_meta_set_u64(p, "coherence_regions", info.regions);
				sb_profile_meta_set_u64(p, "coherence_lock_records", info.locks);
				sb_profile_meta_set_u64(p, "coherence_trace_bytes", info.bytes);
				sb_profile_meta_set_u64(p, "coherence_partial_traces", info.partial);
				sb_profile_meta_set_u64(p, "coherence_bad_records", info.bad_records);
				sb_profile_meta_set_u64(p, "coherence_files_other_process",
							info.files_other);
				sb_profile_meta_set_u64(p, "coherence_files_not_traces",
							info.files_bad);
				sb_profile_meta_set(p, "coherence_regions_from",
						    info.resumes ? "run times (RESUME..SYNC)" :
						    "arrivals only (traces without RESUME)");
			}
			snprintf(key, sizeof(key), "coherence_%s_locks_forced", names[m]);
			sb_profile_meta_set_u64(p, key, info.locks_forced);
			snprintf(key, sizeof(key), "coherence_%s_tags_dropped", names[m]);
			sb_profile_meta_set_u64(p, key, res.lost_tags_dropped);
		}
		if (!r->quiet && !ret)
			fprintf(stderr, "scalebpf: %s: %llu references of %u threads in %.2f s "
				"(%.1f M/s)\n", names[m], (unsigned long long)info.accesses,
				info.nthreads, secs, secs > 0 ? 1e-6 * (double)info.accesses / secs : 0);
		sb_coherence_result_free(&res);
		sb_coherence_trace_info_free(&info);
		if (ret) {
			sb_profile_meta_set(p, "coherence_error", "out of memory for the sharing rows");
			fprintf(stderr, "scalebpf: sharing not stored: out of memory\n");
			return 0;
		}
	}
	return 0;
}

/* A sampled reference is the accessing instruction itself. */
static long loc_at(void *ctx, uint64_t pc)
{
	struct namer *n = ctx;

	return sb_symbolizer_loc(n->sym, pc);
}

int sb_rec_sharing_sampled(struct sb_rec *r, struct sb_profile *p, struct sb_symbolizer *sym)
{
	struct namer n = { .maps = r->maps, .sym = sym };

	if (!r->watch)
		return 0;
	if (sb_watch_store(r->watch, p, r->fw.cur ? r->fw.cur->pid : r->pid,
			   r->sample_hz ? 1000000000ull / r->sample_hz : 0,
			   r->start_ns, loc_at, name_of, &n)) {
		sb_profile_meta_set(p, "coherence_sampled_error", "out of memory for the rows");
		fprintf(stderr, "scalebpf: sampled sharing not stored: out of memory\n");
	}
	return 0;
}
