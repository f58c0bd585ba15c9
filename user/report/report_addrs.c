// SPDX-License-Identifier: MIT
/*
 * The "addresses" view: sampled data addresses in the reports, as one
 * summary line in the text header, an "addresses" object (JSON), and the
 * kept records themselves as a table (`report --addresses`) for scripts
 * and later analyses.  Profiles recorded before address sampling existed
 * have no counts: no line, no member.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "addrs/addrs.h"
#include "report.h"
#include "util/idmap.h"

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void addrs_head(const struct sb_report_ctx *r, FILE *f)
{
	struct sb_addrs_counts c;
	uint64_t mem;

	if (sb_addrs_counts_read(r->p, &c))
		return;     /* recorded before address sampling existed */
	mem = c.decoded + c.undecodable;
	fprintf(f, "  addresses: %" PRIu64 " of %" PRIu64 " samples were memory accesses: %"
		PRIu64 " decoded (%.1f%%, %.1f%% skid-corrected), %" PRIu64
		" undecodable (%.1f%%); %" PRIu64 " kept (capacity %" PRIu64 ")\n",
		mem, c.samples, c.decoded, pct(c.decoded, mem), pct(c.skid, c.decoded),
		c.undecodable, pct(c.undecodable, mem), c.kept, c.capacity);
}

static int addrs_json(const struct sb_report_ctx *r, struct sb_json *j)
{
	struct sb_addrs_counts c;

	if (sb_addrs_counts_read(r->p, &c))
		return 0;
	sb_json_member(j, "addresses");
	fprintf(j->f, "{\"samples\": %" PRIu64 ", \"memory_samples\": %" PRIu64
		", \"decoded\": %" PRIu64 ", \"undecodable\": %" PRIu64
		", \"undecodable_pct\": %.3f, \"no_memory_access\": %" PRIu64
		", \"no_code\": %" PRIu64 ", \"skid_corrected\": %" PRIu64
		", \"kept\": %" PRIu64 ", \"capacity\": %" PRIu64 "}",
		c.samples, c.decoded + c.undecodable, c.decoded, c.undecodable,
		pct(c.undecodable, c.decoded + c.undecodable), c.no_access, c.no_code,
		c.skid, c.kept, c.capacity);
	return 0;
}

/* The table is for scripts in either --format. */
static int addrs_table(const struct sb_report_ctx *r, FILE *f)
{
	const struct sb_profile *p = r->p;
	char where[512], wtext[512], ftext[512];

	fputs("# ts_ns\ttid\tip\taddr\tsize\taccess\tskid\tinstance\tfunction\tlocation\n", f);
	for (size_t i = 0; i < p->naddrs; i++) {
		const struct sb_addr *a = &p->addrs[i];
		const struct sb_loc *l = a->loc >= 0 ? &p->locs[a->loc] : NULL;

		sb_loc_short(p, a->loc, where, sizeof(where));
		fprintf(f, "%" PRIu64 "\t%" PRIu32 "\t0x%" PRIx64 "\t0x%" PRIx64 "\t%u\t%s\t%d\t%"
			PRId32 "\t%s\t%s\n", a->ts, a->tid, a->ip, a->addr, a->size,
			a->flags & SB_ADDR_STORE ? "store" : "load", !!(a->flags & SB_ADDR_SKID),
			a->instance,
			sb_text_escape(l && l->function ? l->function : "?", ftext, sizeof(ftext)),
			sb_text_escape(where, wtext, sizeof(wtext)));
	}
	return ferror(f) ? -1 : 0;
}

#define TOP_SITES 15

struct site_count {
	int32_t loc;
	uint64_t loads, stores;
};

static int by_count(const void *a, const void *b)
{
	const struct site_count *x = a, *y = b;
	uint64_t m = x->loads + x->stores, n = y->loads + y->stores;

	return m < n ? 1 : m > n ? -1 : (x->loc > y->loc) - (x->loc < y->loc);
}

/* The kept samples' counts and the code that made most of them (kept
 * samples are a uniform reservoir: their sites in proportion). */
static int addrs_html(const struct sb_report_ctx *r, FILE *f)
{
	const struct sb_profile *p = r->p;
	struct sb_addrs_counts c;
	struct site_count *sites = calloc(p->naddrs + 1, sizeof(*sites));
	struct sb_idmap *index = sb_idmap_alloc();
	size_t n = 0;
	char where[512];
	int ret = 0;

	if (!sites || !index) {
		ret = -1;
		goto out;
	}
	if (sb_addrs_counts_read(p, &c)) {
		ret = 1;
		goto out;
	}
	fprintf(f, "<p>%" PRIu64 " of %" PRIu64 " samples were memory accesses; %" PRIu64
		" decoded (%.1f%%), %" PRIu64 " kept.</p>\n", c.decoded + c.undecodable,
		c.samples, c.decoded, pct(c.decoded, c.decoded + c.undecodable), c.kept);
	for (size_t i = 0; i < p->naddrs; i++) {
		const struct sb_addr *a = &p->addrs[i];
		void **slot = sb_idmap_slot(index, (uint64_t)(int64_t)a->loc, 0, true);

		if (!slot) {
			ret = -1;
			goto out;
		}
		if (!*slot) {
			sites[n] = (struct site_count){ a->loc, 0, 0 };
			*slot = (void *)(uintptr_t)++n;
		}
		if (a->flags & SB_ADDR_STORE)
			sites[(uintptr_t)*slot - 1].stores++;
		else
			sites[(uintptr_t)*slot - 1].loads++;
	}
	if (!n)
		goto out;
	qsort(sites, n, sizeof(*sites), by_count);
	fputs("<div class=\"scroll\"><table><tr><th>code</th><th class=\"n\">loads</th>"
	      "<th class=\"n\">stores</th></tr>\n", f);
	for (size_t k = 0; k < n && k < TOP_SITES; k++) {
		sb_loc_format(p, sites[k].loc, where, sizeof(where));
		fputs("<tr><td>", f);
		sb_html_str(f, where);
		fprintf(f, "</td><td class=\"n\">%" PRIu64 "</td><td class=\"n\">%" PRIu64
			"</td></tr>\n", sites[k].loads, sites[k].stores);
	}
	fputs("</table></div>\n<p class=\"none\">scalebpf report --addresses lists every kept "
	      "sample.</p>\n", f);
out:
	free(sites);
	sb_idmap_free(index);
	return ret;
}

const struct sb_report_view sb_view_addresses = {
	.title = "Sampled data addresses",
	.html = addrs_html,
	.name = "addresses",
	.head = addrs_head,
	.json = addrs_json,
	.list_text = addrs_table,
	.list_help = "      --addresses      instead of a report, the sampled data addresses kept\n"
		     "                       in the profile, one per line (tab-separated)\n",
};
