// SPDX-License-Identifier: MIT
/*
 * Sampled data addresses in the reports: one summary line (text), an
 * "addresses" object (JSON), and the kept records themselves as a table
 * (`report --addresses`) for scripts and later analyses.
 */
#include <inttypes.h>

#include "addrs/addrs.h"
#include "report.h"

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

void sb_report_addrs_text(const struct sb_profile *p, FILE *f)
{
	struct sb_addrs_counts c;
	uint64_t mem;

	if (sb_addrs_counts_read(p, &c))
		return;     /* recorded before address sampling existed */
	mem = c.decoded + c.undecodable;
	fprintf(f, "  addresses: %" PRIu64 " of %" PRIu64 " samples were memory accesses: %"
		PRIu64 " decoded (%.1f%%, %.1f%% skid-corrected), %" PRIu64
		" undecodable (%.1f%%); %" PRIu64 " kept (capacity %" PRIu64 ")\n",
		mem, c.samples, c.decoded, pct(c.decoded, mem), pct(c.skid, c.decoded),
		c.undecodable, pct(c.undecodable, mem), c.kept, c.capacity);
}

void sb_report_addrs_json(const struct sb_profile *p, FILE *f)
{
	struct sb_addrs_counts c;

	if (sb_addrs_counts_read(p, &c))
		return;
	fprintf(f, "  \"addresses\": {\"samples\": %" PRIu64 ", \"memory_samples\": %" PRIu64
		", \"decoded\": %" PRIu64 ", \"undecodable\": %" PRIu64
		", \"undecodable_pct\": %.3f, \"no_memory_access\": %" PRIu64
		", \"no_code\": %" PRIu64 ", \"skid_corrected\": %" PRIu64
		", \"kept\": %" PRIu64 ", \"capacity\": %" PRIu64 "},\n",
		c.samples, c.decoded + c.undecodable, c.decoded, c.undecodable,
		pct(c.undecodable, c.decoded + c.undecodable), c.no_access, c.no_code,
		c.skid, c.kept, c.capacity);
}

int sb_report_addrs_table(const struct sb_profile *p, FILE *f)
{
	char where[512];

	fputs("# ts_ns\ttid\tip\taddr\tsize\taccess\tskid\tinstance\tfunction\tlocation\n", f);
	for (size_t i = 0; i < p->naddrs; i++) {
		const struct sb_addr *a = &p->addrs[i];
		const struct sb_loc *l = a->loc >= 0 ? &p->locs[a->loc] : NULL;

		sb_loc_short(p, a->loc, where, sizeof(where));
		fprintf(f, "%" PRIu64 "\t%" PRIu32 "\t0x%" PRIx64 "\t0x%" PRIx64 "\t%u\t%s\t%d\t%"
			PRId32 "\t%s\t%s\n", a->ts, a->tid, a->ip, a->addr, a->size,
			a->flags & SB_ADDR_STORE ? "store" : "load", !!(a->flags & SB_ADDR_SKID),
			a->instance, l && l->function ? l->function : "?", where);
	}
	return ferror(f) ? -1 : 0;
}
