// SPDX-License-Identifier: MIT
/* The "meta" view: what was recorded, where and how (the text header),
 * and all profile metadata as strings (JSON "meta"). */
#include <stdlib.h>

#include "merge/merge.h"
#include "report.h"

/* Counted losses, each said with its number where the header shows:
 * ring-buffer drops are said above; these are what following lost
 * (processes the BPF side could not follow, records of no known
 * process, probes that did not go in) and what the recorder knows it
 * could not count right. */
static const struct { const char *key, *what; } loss_keys[] = {
	{ "follow_full", "forked processes not followed (the BPF table of followed "
	  "processes was full): their work is not here" },
	{ "records_unrouted", "records of threads of no known process were dropped" },
	{ "follow_attach_errors", "probes of followed processes could not be attached: "
	  "some sections or waits may be missing" },
	{ "threads_untimed", "threads were not timed (the BPF thread table was full): "
	  "their busy times are missing" },
	{ "events_late", "events reached the recorder after later ones were processed "
	  "(the recorder was starved of CPU): sections around them may be cut wrong" },
	{ "thread_exits_unjoined", "threads that started before recording exited: "
	  "their creators' join instances lack them" },
	{ "threads_unlisted", "ended threads are missing from the thread list "
	  "(out of memory)" },
};

static void loss_warnings(const struct sb_profile *p, FILE *f)
{
	for (size_t i = 0; i < sizeof(loss_keys) / sizeof(loss_keys[0]); i++) {
		unsigned long long n = sb_profile_meta_get_u64(p, loss_keys[i].key);

		if (n)
			fprintf(f, "  WARNING:  %llu %s\n", n, loss_keys[i].what);
	}
}

/* A metadata value for the text (escaped, see sb_text_escape): the
 * profile chose it. */
static const char *mv(const struct sb_profile *p, const char *key, char *buf, size_t len)
{
	return sb_text_escape(sb_profile_meta_get(p, key), buf, len);
}

/* "  label: VALUE\n", the value escaped and never cut. */
static void meta_line(FILE *f, const char *label, const char *value, const char *tail)
{
	fputs(label, f);
	sb_text_str(f, value);
	fputs(tail, f);
}

/* A merged profile (report -i DIR): of what, and what the merge could
 * not keep. */
static void merged_head(const struct sb_profile *p, FILE *f)
{
	const char *diff = sb_profile_meta_get(p, "merge_differing");
	unsigned long long dropped = sb_profile_meta_get_u64(p, "merged_instances_dropped");
	unsigned long long skipped = sb_profile_meta_get_u64(p, "merged_skipped");
	char v1[512], v2[512];

	fprintf(f, "  merged:   %llu profiles, %s .. %s (pid, command: the newest's)\n",
		(unsigned long long)sb_profile_meta_get_u64(p, "merged_profiles"),
		mv(p, "merged_first", v1, sizeof(v1)), mv(p, "merged_last", v2, sizeof(v2)));
	if (diff && *diff)
		meta_line(f, "  differ:   ", diff, " (the newest profile's value is shown)\n");
	if (skipped)
		fprintf(f, "  WARNING:  %llu profiles could not be read and are not in the "
			"merge\n", skipped);
	if (dropped)
		fprintf(f, "  note:     %llu stored instances beyond %d a section were not kept "
			"(counted in the totals; causes use the kept ones)\n", dropped,
			SB_MERGE_MAX_INSTANCES);
}

static void meta_head(const struct sb_report_ctx *r, FILE *f)
{
	const struct sb_profile *p = r->p;
	const char *cmd = sb_profile_meta_get(p, "command");
	const char *dur = sb_profile_meta_get(p, "duration_ns");
	const char *notes = sb_profile_meta_get(p, "notes");
	const char *nf = sb_profile_meta_get(p, "not_followed");
	const char *loads = sb_profile_meta_get(p, "hw_loads_top");
	const char *nproc = sb_profile_meta_get(p, "processes_followed");
	char d[32], v1[1024], v2[64], v3[256], v4[256];
	unsigned long long drops = 0;
	const char *keys[] = { "drops_probe", "drops_wait", "drops_thread", "drops_sample",
			       "drops_lbr", "drops_load", "drops_proc", "drops_exact",
			       "drops_watch" };
	const char *sampling = sb_profile_meta_get(p, "sampling");
	size_t nolines;

	sb_fmt_ns(dur ? strtoull(dur, NULL, 10) : 0, d, sizeof(d));
	meta_line(f, "scalebpf report: ", r->o->input, "\n");
	fprintf(f, "  target:   %s (pid %s), recorded %s, %zu threads, stopped: %s\n",
		sb_text_escape(cmd && *cmd ? cmd : sb_profile_meta_get(p, "executable"),
			       v1, sizeof(v1)),
		mv(p, "pid", v2, sizeof(v2)), d, p->nthreads,
		mv(p, "stop_reason", v3, sizeof(v3)));
	if (sb_profile_meta_get(p, "merged_profiles"))
		merged_head(p, f);
	fprintf(f, "  machine:  %s, ", mv(p, "kernel", v1, sizeof(v1)));
	fprintf(f, "%s CPUs, %s; PMU: %s\n", mv(p, "ncpus", v2, sizeof(v2)),
		mv(p, "cpu", v3, sizeof(v3)), mv(p, "pmu", v4, sizeof(v4)));
	meta_line(f, "  events:   ", sb_profile_meta_get(p, "event_sources"), "\n");
	/* Following: which processes ran, and which one this profile is. */
	if (nproc && strtoull(nproc, NULL, 10) > 1)
		meta_line(f, "  processes: ", sb_profile_meta_get(p, "processes"),
			  " (the sections are those of [profile])\n");
	if (nf && *nf)
		meta_line(f, "  WARNING:  processes not followed (their work is not here): ",
			  nf, "\n");
	meta_line(f, "  sampling: ", sampling ? sampling : "software (cpu-clock)", "\n");
	if (loads && *loads)
		meta_line(f, "  loads:    ", loads, "\n");
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		drops += sb_profile_meta_get_u64(p, keys[i]);
	if (drops)
		fprintf(f, "  WARNING:  %llu records were dropped (ring buffer full): totals are "
			"low; record again with a larger --ringbuf-mb\n", drops);
	loss_warnings(p, f);
	if (notes && *notes)
		meta_line(f, "  notes:    ", notes, "\n");
	nolines = 0;
	for (size_t i = 0; i < p->nsections; i++)
		nolines += !p->locs[p->sections[i].loc].line;
	if (nolines)
		fprintf(f, "  WARNING:  %zu of %zu sections have no source line (no debug info): "
			"they show as addresses; rebuild the program with -g\n",
			nolines, p->nsections);
}

static int meta_json(const struct sb_report_ctx *r, struct sb_json *j)
{
	const struct sb_profile *p = r->p;

	sb_json_member(j, "meta");
	fputc('{', j->f);
	for (size_t i = 0; i < p->nmeta; i++) {
		fputs(i ? ",\n    " : "\n    ", j->f);
		sb_json_str(j->f, p->meta[i].key);
		fputs(": ", j->f);
		sb_json_str(j->f, p->meta[i].value);
	}
	fputs("\n  }", j->f);
	return 0;
}

const struct sb_report_view sb_view_meta = {
	.name = "meta",
	.head = meta_head,
	.json = meta_json,
};
