// SPDX-License-Identifier: MIT
#include "lbr_pebs.h"

#include "coherence/coherence.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>

/* User-space addresses on x86-64 are below 2^47; LBR entries of kernel
 * code have the top bits set and are not the program's. */
#define USER_TOP (1ull << 47)

const struct sb_rec_lbr *sb_hw_lbr_check(const void *data, size_t size)
{
	const struct sb_rec_lbr *r = data;

	if (!data || size < sizeof(*r) || r->hdr.type != SB_REC_LBR ||
	    r->hdr.size != sizeof(*r) || r->nr > SB_LBR_MAX)
		return NULL;
	return r;
}

/* Bit positions of struct perf_branch_entry's flag word (little-endian
 * bit-fields: mispred:1 predicted:1 in_tx:1 abort:1 cycles:16 type:4). */
void sb_hw_branch_unpack(const struct sb_branch *raw, struct sb_hw_branch *out)
{
	out->from = raw->from;
	out->to = raw->to;
	out->mispred = raw->flags & 1;
	out->predicted = (raw->flags >> 1) & 1;
	out->cycles = (uint16_t)((raw->flags >> 4) & 0xffff);
	out->type = (uint8_t)((raw->flags >> 20) & 0xf);
}

int sb_hw_lbr_range(const struct sb_rec_lbr *r, uint32_t i, uint64_t *start, uint64_t *end)
{
	uint64_t s, e;

	if (i + 1 >= r->nr)
		return -1;
	s = r->br[i + 1].to;
	e = r->br[i].from;
	if (!s || s >= USER_TOP || e >= USER_TOP || e < s || e - s > SB_HW_MAX_RANGE)
		return -1;
	*start = s;
	*end = e;
	return 0;
}

const char *sb_mem_level_name(unsigned level)
{
	static const char *const names[SB_MEM_LVL_MAX] = {
		[SB_MEM_UNKNOWN] = "unknown", [SB_MEM_L1] = "L1", [SB_MEM_LFB] = "LFB",
		[SB_MEM_L2] = "L2", [SB_MEM_L3] = "L3", [SB_MEM_L4] = "L4",
		[SB_MEM_DRAM] = "DRAM", [SB_MEM_REMOTE_DRAM] = "remote DRAM",
		[SB_MEM_REMOTE_CACHE] = "remote cache", [SB_MEM_PMEM] = "PMEM",
		[SB_MEM_CXL] = "CXL", [SB_MEM_IO] = "I/O", [SB_MEM_UNCACHED] = "uncached",
	};

	return level < SB_MEM_LVL_MAX ? names[level] : "unknown";
}

/* The newer mem_lvl_num field names the level exactly; kernels fill it
 * on recent Intel and AMD parts, with mem_remote for the other socket. */
static uint8_t level_from_num(unsigned num, bool remote)
{
	switch (num) {
	case PERF_MEM_LVLNUM_L1: return SB_MEM_L1;
	case PERF_MEM_LVLNUM_L2: return remote ? SB_MEM_REMOTE_CACHE : SB_MEM_L2;
	case PERF_MEM_LVLNUM_L3: return remote ? SB_MEM_REMOTE_CACHE : SB_MEM_L3;
	case PERF_MEM_LVLNUM_L4: return remote ? SB_MEM_REMOTE_CACHE : SB_MEM_L4;
	case PERF_MEM_LVLNUM_ANY_CACHE: return remote ? SB_MEM_REMOTE_CACHE : SB_MEM_UNKNOWN;
	case PERF_MEM_LVLNUM_LFB: return SB_MEM_LFB;
	case PERF_MEM_LVLNUM_RAM: return remote ? SB_MEM_REMOTE_DRAM : SB_MEM_DRAM;
	case PERF_MEM_LVLNUM_PMEM: return SB_MEM_PMEM;
	case PERF_MEM_LVLNUM_CXL: return SB_MEM_CXL;
	case PERF_MEM_LVLNUM_IO: return SB_MEM_IO;
	default: return SB_MEM_UNKNOWN;
	}
}

/* The older mem_lvl bit mask: the innermost level set wins. */
static uint8_t level_from_mask(uint64_t lvl)
{
	if (lvl & PERF_MEM_LVL_L1) return SB_MEM_L1;
	if (lvl & PERF_MEM_LVL_LFB) return SB_MEM_LFB;
	if (lvl & PERF_MEM_LVL_L2) return SB_MEM_L2;
	if (lvl & PERF_MEM_LVL_L3) return SB_MEM_L3;
	if (lvl & PERF_MEM_LVL_LOC_RAM) return SB_MEM_DRAM;
	if (lvl & (PERF_MEM_LVL_REM_RAM1 | PERF_MEM_LVL_REM_RAM2)) return SB_MEM_REMOTE_DRAM;
	if (lvl & (PERF_MEM_LVL_REM_CCE1 | PERF_MEM_LVL_REM_CCE2)) return SB_MEM_REMOTE_CACHE;
	if (lvl & PERF_MEM_LVL_IO) return SB_MEM_IO;
	if (lvl & PERF_MEM_LVL_UNC) return SB_MEM_UNCACHED;
	return SB_MEM_UNKNOWN;
}

#define FIELD(raw, shift, bits) (((raw) >> (shift)) & ((1ull << (bits)) - 1))

void sb_hw_data_src(uint64_t raw, struct sb_mem_src *o)
{
	uint64_t op = FIELD(raw, PERF_MEM_OP_SHIFT, 5);
	uint64_t lvl = FIELD(raw, PERF_MEM_LVL_SHIFT, 14);
	uint64_t snoop = FIELD(raw, PERF_MEM_SNOOP_SHIFT, 5);
	uint64_t lock = FIELD(raw, PERF_MEM_LOCK_SHIFT, 2);
	uint64_t tlb = FIELD(raw, PERF_MEM_TLB_SHIFT, 7);
	unsigned num = (unsigned)FIELD(raw, PERF_MEM_LVLNUM_SHIFT, 4);

	memset(o, 0, sizeof(*o));
	o->load = op & PERF_MEM_OP_LOAD;
	o->store = op & PERF_MEM_OP_STORE;
	o->remote = FIELD(raw, PERF_MEM_REMOTE_SHIFT, 1);
	o->hit = lvl & PERF_MEM_LVL_HIT;
	o->miss = lvl & PERF_MEM_LVL_MISS;
	o->snoop_hit = snoop & PERF_MEM_SNOOP_HIT;
	o->snoop_hitm = snoop & PERF_MEM_SNOOP_HITM;
	o->tlb_hit = tlb & PERF_MEM_TLB_HIT;
	o->tlb_miss = tlb & PERF_MEM_TLB_MISS;
	o->locked = lock & PERF_MEM_LOCK_LOCKED;
	/* A raw value of 0 is "not filled in", and lvl_num 0 is not a level:
	 * only then does the old mask decide. */
	o->level = num && num != PERF_MEM_LVLNUM_NA ? level_from_num(num, o->remote)
						       : level_from_mask(lvl);
}

int sb_hw_load_decode(const void *data, size_t size, struct sb_hw_load *out)
{
	const struct sb_rec_load *r = data;

	memset(out, 0, sizeof(*out));
	if (!data || size < sizeof(*r) || r->hdr.type != SB_REC_LOAD ||
	    r->hdr.size != sizeof(*r) ||
	    (r->flags & ~(uint32_t)(SB_LOAD_HAVE_ADDR | SB_LOAD_HAVE_WEIGHT | SB_LOAD_HAVE_SRC |
				    SB_LOAD_STORE)))
		return -1;
	out->tid = r->hdr.tid;
	out->ts = r->hdr.ts;
	out->ip = r->ip;
	out->flags = r->flags;
	out->addr = r->flags & SB_LOAD_HAVE_ADDR ? r->addr : 0;
	out->weight = r->flags & SB_LOAD_HAVE_WEIGHT ? r->weight : 0;
	if (r->flags & SB_LOAD_HAVE_SRC)
		sb_hw_data_src(r->data_src, &out->src);
	/* The store sampler says so; so does a data source whose op is a
	 * store (a raw sample of a store event, tests' fixtures). */
	out->store = (r->flags & SB_LOAD_STORE) || (out->src.store && !out->src.load);
	return 0;
}

/* A bounds-checked reader over a raw sample. */
struct cursor {
	const unsigned char *p;
	size_t left;
};

static int take(struct cursor *c, void *dst, size_t n)
{
	if (c->left < n)
		return -1;
	if (dst)
		memcpy(dst, c->p, n);   /* samples are 8-byte aligned; fixtures may not be */
	c->p += n;
	c->left -= n;
	return 0;
}

#define SUPPORTED_SAMPLE (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |        \
			  PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |     \
			  PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_WEIGHT |              \
			  PERF_SAMPLE_WEIGHT_STRUCT | PERF_SAMPLE_DATA_SRC)

/* The fields in the kernel's order (include/uapi/linux/perf_event.h,
 * PERF_RECORD_SAMPLE): ip, pid/tid, time, addr, cpu/res, period,
 * branch stack {nr, [hw_idx], entries}, weight, data_src. */
int sb_hw_perf_sample_to_rec(const void *rec, size_t size, uint64_t st, uint64_t bst,
			     struct sb_rec_lbr *lbr, struct sb_rec_load *load)
{
	struct perf_event_header h;
	struct cursor c = { rec, size };
	uint64_t ip = 0, time = 0, addr = 0, weight = 0, src = 0, nr = 0;
	uint32_t pidtid[2] = { 0, 0 };

	if ((st & ~(uint64_t)SUPPORTED_SAMPLE) ||
	    (st & PERF_SAMPLE_WEIGHT && st & PERF_SAMPLE_WEIGHT_STRUCT))
		return -EINVAL;
	if (!rec || take(&c, &h, sizeof(h)) || h.type != PERF_RECORD_SAMPLE ||
	    h.size > size || h.size < sizeof(h))
		return -1;
	c.left = h.size - sizeof(h);   /* never read past the record itself */
	if ((st & PERF_SAMPLE_IP && take(&c, &ip, 8)) ||
	    (st & PERF_SAMPLE_TID && take(&c, pidtid, 8)) ||
	    (st & PERF_SAMPLE_TIME && take(&c, &time, 8)) ||
	    (st & PERF_SAMPLE_ADDR && take(&c, &addr, 8)) ||
	    (st & PERF_SAMPLE_CPU && take(&c, NULL, 8)) ||
	    (st & PERF_SAMPLE_PERIOD && take(&c, NULL, 8)))
		return -1;
	if (st & PERF_SAMPLE_BRANCH_STACK) {
		if (take(&c, &nr, 8) || nr > SB_LBR_MAX ||
		    (bst & PERF_SAMPLE_BRANCH_HW_INDEX && take(&c, NULL, 8)))
			return -1;
		memset(lbr, 0, sizeof(*lbr));
		if (take(&c, lbr->br, (size_t)nr * sizeof(struct sb_branch)))
			return -1;
	}
	if ((st & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT) && take(&c, &weight, 8)) ||
	    (st & PERF_SAMPLE_DATA_SRC && take(&c, &src, 8)))
		return -1;
	if (c.left)   /* fields we did not ask for: the sample_type is wrong */
		return -1;
	if (st & PERF_SAMPLE_BRANCH_STACK) {
		lbr->hdr.type = SB_REC_LBR;
		lbr->hdr.size = sizeof(*lbr);
		lbr->hdr.tid = pidtid[1];
		lbr->hdr.ts = time;
		lbr->ip = ip;
		lbr->nr = (uint32_t)nr;
		return SB_REC_LBR;
	}
	memset(load, 0, sizeof(*load));
	load->hdr.type = SB_REC_LOAD;
	load->hdr.size = sizeof(*load);
	load->hdr.tid = pidtid[1];
	load->hdr.ts = time;
	load->ip = ip;
	load->addr = addr;
	/* WEIGHT_STRUCT: the load latency is the low 32 bits (var1_dw). */
	load->weight = st & PERF_SAMPLE_WEIGHT_STRUCT ? (weight & 0xffffffffull) : weight;
	load->data_src = src;
	load->flags = (st & PERF_SAMPLE_ADDR ? SB_LOAD_HAVE_ADDR : 0) |
		      (st & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT) ?
		       SB_LOAD_HAVE_WEIGHT : 0) |
		      (st & PERF_SAMPLE_DATA_SRC ? SB_LOAD_HAVE_SRC : 0);
	return SB_REC_LOAD;
}

int sb_hw_load_private(const struct sb_hw_load *l)
{
	uint8_t lvl = l->src.level;

	if (l->store || !(l->flags & SB_LOAD_HAVE_SRC) || lvl == SB_MEM_UNKNOWN)
		return -1;
	/* a level alone (AMD, newer Intel: LVLNUM) says who served it */
	return (lvl == SB_MEM_L1 || lvl == SB_MEM_LFB || lvl == SB_MEM_L2) && !l->src.miss;
}

bool sb_hw_load_access(const struct sb_hw_load *l, struct sb_cosample_access *a)
{
	memset(a, 0, sizeof(*a));
	if (!(l->flags & SB_LOAD_HAVE_ADDR) || !l->addr)
		return false;
	a->ts = l->ts;
	a->pc = l->ip;           /* precise: the access itself */
	a->addr = l->addr;
	a->tid = l->tid;
	a->store = l->store;
	/* Served by another core's modified copy (HITM), or by another
	 * socket's cache: the line moved between caches. */
	a->hitm = !l->store && (l->src.snoop_hitm ||
				(l->src.level == SB_MEM_REMOTE_CACHE && !l->src.miss));
	a->ahead = true;         /* evidence, not cpu-clock time */
	a->pmu = true;
	return true;
}
