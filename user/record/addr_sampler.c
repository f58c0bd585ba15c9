// SPDX-License-Identifier: MIT
/*
 * addr_sampler.c - sampled data addresses, decoded while recording.
 *
 * Why decode in the ring-buffer callback rather than at the end: the
 * address needs the sample's own registers (128 bytes), so decoding at
 * the end would keep every raw sample, or a reservoir of raw samples of
 * which only the memory accesses are useful, and its counts would cover
 * the kept subset only.  Decoding now keeps 40 bytes per access, gives
 * exact counts for every sample, and costs the recorder (not the target)
 * little: sb_memop_ctx remembers each sampled IP's decision, so a repeat
 * sample only recomputes base + index * scale + disp, while a first
 * sighting costs a function sweep and two capstone decodes (and may open
 * an ELF file or re-read the maps).  Measured on every run and stored:
 * addr_decode_ns_per_repeat (IPs seen before) was 0.5-0.9 us in the
 * recorder on addr_mix (60 ns in a hot loop), addr_decode_ns_per_sample
 * 4-14 us on a 2-second run where first sightings dominate: 2-7 ms in
 * all, far below 1% of a core at the default 199 Hz.
 */
#include "addr_sampler.h"

#include <stdbool.h>
#include <stdlib.h>

#include "addrs/addrs.h"
#include "binary/memop.h"
#include "binary/procmaps.h"
#include "clock.h"
#include "profile/profile.h"

struct sb_addr_sampler {
	struct sb_maps *maps;
	int pid;
	uint64_t decode_ns;         /* time spent in sb_addr_sampler_add */
	uint64_t repeat_ns, repeats;   /* the part for IPs decoded before */
	struct sb_memop_ctx *memop;
	struct sb_addrs *res;
};

struct sb_addr_sampler *sb_addr_sampler_alloc(struct sb_maps *maps, int pid, size_t cap)
{
	struct sb_addr_sampler *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->maps = maps;
	s->pid = pid;
	s->memop = sb_memop_ctx_new(0);
	/* A fixed seed: the same sample stream keeps the same records. */
	s->res = sb_addrs_alloc(cap, 0x5ca1ab1e);
	if (!s->memop || !s->res) {
		sb_addr_sampler_free(s);
		return NULL;
	}
	return s;
}

void sb_addr_sampler_free(struct sb_addr_sampler *s)
{
	if (!s)
		return;
	sb_memop_ctx_free(s->memop);
	sb_addrs_free(s->res);
	free(s);
}

/* The class a decoder status counts in.  FS: the sample carries no fs
 * base, so thread-local accesses have no address; CLOBBERED: the load
 * overwrote its own address register; UNSUPPORTED: a vector of addresses.
 * All three are memory accesses that are counted, never guessed. */
static enum sb_addrs_class class_of(int status)
{
	switch (status) {
	case SB_MEMOP_OK:
		return SB_ADDRS_DECODED;
	case SB_MEMOP_NONE:
		return SB_ADDRS_NO_ACCESS;
	case SB_MEMOP_NOCODE:
		return SB_ADDRS_NO_CODE;
	default:
		return SB_ADDRS_UNDECODABLE;
	}
}

bool sb_addr_sampler_add(struct sb_addr_sampler *s, const struct sb_rec_sample *rs,
			 struct sb_addr *out, int *out_bin)
{
	uint64_t t0 = sb_now_ns(), vaddr, regs[SB_NREGS], dt;
	struct sb_memop_stats before, after;
	struct sb_memop m;
	struct sb_elf *e;
	int bin = -1, st = SB_MEMOP_NOCODE;

	for (int i = 0; i < SB_NREGS; i++)   /* __u64 is not uint64_t */
		regs[i] = rs->regs[i];
	sb_memop_ctx_stats(s->memop, &before);
	if (!sb_maps_resolve_live(s->maps, s->pid, rs->ip, &bin, &vaddr) &&
	    (e = sb_maps_binary_elf(s->maps, bin)))
		st = sb_memop_decode(s->memop, e, vaddr, rs->ip, regs, 0, &m);
	sb_memop_ctx_stats(s->memop, &after);
	if (st == SB_MEMOP_OK) {
		struct sb_addr a = {
			.ts = rs->hdr.ts, .tid = rs->hdr.tid,
			/* the accessing instruction, at run time */
			.ip = rs->ip - vaddr + m.insn,
			.addr = m.addr, .size = m.size, .loc = -1, .instance = -1,
			.flags = (uint8_t)((m.store ? SB_ADDR_STORE : 0) |
					   (m.previous ? SB_ADDR_SKID : 0)),
		};

		sb_addrs_offer(s->res, &a);
		*out = a;
		*out_bin = bin;
	} else {
		sb_addrs_count(s->res, class_of(st));
	}
	dt = sb_now_ns() - t0;
	s->decode_ns += dt;
	/* The steady state: first sightings open ELF files, sweep functions
	 * and re-read the maps, a cost per code location, not per sample. */
	if (after.memo_hits > before.memo_hits) {
		s->repeat_ns += dt;
		s->repeats++;
	}
	return st == SB_MEMOP_OK;
}

int sb_addr_sampler_store(struct sb_addr_sampler *s, struct sb_profile *p,
			sb_loc_fn loc_fn, void *loc_ctx)
{
	struct sb_addrs_counts c;

	if (sb_addrs_store(s->res, p))
		return -1;
	for (size_t i = 0; i < p->naddrs; i++) {
		long loc = loc_fn(loc_ctx, p->addrs[i].ip);

		if (loc < 0)
			return -1;
		p->addrs[i].loc = (int32_t)loc;
	}
	if (sb_addrs_assign_instances(p))
		return -1;
	sb_addrs_get_counts(s->res, &c);
	if (sb_profile_meta_set_u64(p, "addr_decode_ns", s->decode_ns) < 0 ||
	    sb_profile_meta_set_u64(p, "addr_decode_ns_per_sample",
				    c.samples ? s->decode_ns / c.samples : 0) < 0)
		return -1;
	return sb_profile_meta_set_u64(p, "addr_decode_ns_per_repeat",
				       s->repeats ? s->repeat_ns / s->repeats : 0) < 0 ? -1 : 0;
}
