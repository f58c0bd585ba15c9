// SPDX-License-Identifier: MIT
/* scalebpf report: read a profile, rank where thread-time is lost. */
#include <errno.h>
#include <stdbool.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "builtin.h"
#include "opt_parse.h"
#include "causes/causes.h"
#include "profile/profile.h"
#include "report/export/export.h"
#include "report/report.h"

/* The usage text: the listing views' options go between the two halves. */
static const char report_usage_head[] =
"usage: scalebpf report [-i FILE|DIR] [--format text|json] [--sort KEY] [--top N]\n"
"                       [--source-dir DIR | --no-source] [--times PLAIN]\n"
"       scalebpf report [-i FILE] --format html|pprof|perfetto -o OUT\n"
"       scalebpf report [-i FILE] --addresses\n"
"       scalebpf report --diff A B [--format text|json]\n"
"\n"
"Read a profile written by `scalebpf record` (on this or any other machine:\n"
"locations were symbolized when recording) and show:\n"
"  - parallel sections ranked by lost thread-time: thread-time idle at the\n"
"    sync that closes the section, with imbalance % (LIME: mean over threads\n"
"    of the fraction of the instance a thread idles), per-thread busy/wait\n"
"    bars, and the busiest and idlest threads;\n"
"  - wait time by primitive (barriers, joins, mutexes, condition variables,\n"
"    semaphores, rwlocks, spin locks, OpenMP barriers/critical/locks/idle;\n"
"    `other`: blocking futex waits in none of these, e.g. a program's own\n"
"    futex; README \"JSON contract\" lists every primitive);\n"
"  - the most contended locks and condition variables by call site;\n"
"  - for programs built with `scalebpf cc --trace-mem`: which data moves\n"
"    between the threads' caches (ccSIM, Marathe et al.): variables ranked by\n"
"    coherence misses, true or false sharing, in or across barrier regions,\n"
"    their references, the stores that invalidate them and a fix hint;\n"
"  - the causes of imbalance per section (LIME, Oh et al. ICSE 2011): which\n"
"    code makes threads do different work, ranked by score, with the\n"
"    source lines around each.  From cpu-clock samples (no `scalebpf cc`\n"
"    build), more trips of a loop and more entries into it look alike: a\n"
"    cause is listed with the decisions its samples cannot be told from\n"
"    (the loop around it, the branch entering it) as \"not settled\".\n"
"Busy time is on-CPU time, so runs with more threads than cores still show\n"
"each thread's true work.\n"
"\n"
"  -i, --input FILE     profile to read (default: scalebpf.data); a directory:\n"
"                       its *.sbp merged into one (`record --rotate` writes\n"
"                       them): sections by place, counts added, settings\n"
"                       the newest's (the header says which differ)\n"
"  -f, --format FMT     text (default), json (a stable contract for scripts:\n"
"                       sections, waits, locks, sharing, meta), html (one page\n"
"                       that opens offline: sections to open, bars, causes\n"
"                       with their source, a panel per analysis), or an\n"
"                       export for other tools (below)\n"
"  -o, --output OUT     write there (default: standard output; an export is\n"
"                       written whole or not at all)\n"
"  -s, --sort KEY       order sections by lost (default), imbalance,\n"
"                       instances or wait\n"
"  -n, --top N          sections shown in detail (default 5)\n"
"      --diff A B       compare B with the baseline A (profiles or directories\n"
"                       of them): sections matched by place with instances,\n"
"                       imbalance and lost thread-time per second recorded,\n"
"                       the causes that appeared or vanished, waits per\n"
"                       primitive per second\n";
static const char report_usage_tail[] =
"      --cluster-threshold R  LIME: stop clustering events at correlation R\n"
"                       (default 0.9)\n"
"      --source-dir DIR source lines beside the causes are read from DIR only:\n"
"                       the recorded path, or its trailing components, beneath\n"
"                       DIR (no link or \"..\" may leave it)\n"
"      --no-source      no source lines: no file but the profile is opened\n"
"      --times PLAIN    the Cache view of a `scalebpf cc --chip` profile takes\n"
"                       each section's busy time from PLAIN, a recording of\n"
"                       the plain build (same sections by kind, function,\n"
"                       file and line): the instrumented run's own times are\n"
"                       its hooks'\n"
"  -h, --help           this text\n"
"\n"
"A profile may come from anyone, so what it says is never a path to open:\n"
"by default a cause's source lines come only from the file the recorded\n"
"binary's own debug info names for its address, when the binary still has\n"
"the recorded build-id, the profile names that same file, and the file is\n"
"an absolute path with no symbolic link on the way, owned by the binary's\n"
"owner, a regular file of at most 16 MiB.  Elsewhere (another machine,\n"
"moved sources) give --source-dir.  Lines not shown are said once, with\n"
"why.  Text output escapes control characters, invalid UTF-8 and\n"
"bidirectional overrides in the profile's strings (\\x1b, \\n, \\u202e).\n";

static void usage(FILE *f)
{
	fputs(report_usage_head, f);
	fputs("Exports (--format NAME -o OUT):\n", f);
	for (size_t i = 0; sb_export_formats[i]; i++)
		fprintf(f, "  %-20s %s\n", sb_export_formats[i]->name, sb_export_formats[i]->what);
	for (size_t i = 0; i < sb_report_nviews; i++)
		if (sb_report_views[i]->list_text)
			fputs(sb_report_views[i]->list_help, f);
	fputs(report_usage_tail, f);
}

/* getopt_long's value for `--<name>` of the listing view at index i. */
#define OPT_VIEW 0x100
/* Long-only options (below OPT_VIEW). */
#define OPT_SOURCE_DIR 0x80
#define OPT_NO_SOURCE 0x81
#define OPT_TIMES 0x82
#define OPT_DIFF 0x83

/* The long options: the fixed ones, then one per listing view (in table
 * order), then --help.  Caller frees; NULL on ENOMEM. */
static struct option *long_options(void)
{
	static const struct option fixed[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "sort", required_argument, NULL, 's' },
		{ "top", required_argument, NULL, 'n' },
		{ "cluster-threshold", required_argument, NULL, 'T' },
		{ "source-dir", required_argument, NULL, OPT_SOURCE_DIR },
		{ "no-source", no_argument, NULL, OPT_NO_SOURCE },
		{ "times", required_argument, NULL, OPT_TIMES },
		{ "diff", required_argument, NULL, OPT_DIFF },
	};
	size_t nfixed = sizeof(fixed) / sizeof(fixed[0]), n = nfixed;
	struct option *opts = calloc(nfixed + sb_report_nviews + 2, sizeof(*opts));

	if (!opts)
		return NULL;
	memcpy(opts, fixed, sizeof(fixed));
	for (size_t i = 0; i < sb_report_nviews; i++)
		if (sb_report_views[i]->list_text)
			opts[n++] = (struct option){ sb_report_views[i]->name, no_argument, NULL,
						     OPT_VIEW + (int)i };
	opts[n] = (struct option){ "help", no_argument, NULL, 'h' };
	return opts;
}

struct report_args {
	struct sb_report_opts o;
	struct sb_lime_opts lo;
	const char *format, *output;
	const char *diff_a, *diff_b;   /* --diff A B */
	bool input_set;
	const struct sb_export_format *export;
	const struct sb_report_view *list;  /* `--<name>`: this listing alone */
	size_t list_index;
};

/* One option; -1 to go on, or the exit code (help, a bad value). */
static int one_option(int c, struct report_args *a)
{
	uint64_t v;
	int ret;

	if (c >= OPT_VIEW) {
		/* the first listing in table order wins */
		if (!a->list || (size_t)(c - OPT_VIEW) < a->list_index) {
			a->list_index = (size_t)(c - OPT_VIEW);
			a->list = sb_report_views[a->list_index];
		}
		return -1;
	}
	switch (c) {
	case 'i':
		a->o.input = optarg;
		a->input_set = true;
		return -1;
	case 'f':
		a->format = optarg;
		return -1;
	case 'o':
		a->output = optarg;
		return -1;
	case 's':
		a->o.sort = optarg;
		if (strcmp(optarg, "lost") && strcmp(optarg, "imbalance") &&
		    strcmp(optarg, "instances") && strcmp(optarg, "wait")) {
			fprintf(stderr, "scalebpf report: unknown sort key '%s' "
				"(lost, imbalance, instances, wait)\n", optarg);
			return 2;
		}
		return -1;
	case 'n':
		if ((ret = sb_opt_u64(optarg, 0, 1000000000, &v))) {
			fprintf(stderr, "scalebpf report: invalid --top '%s': %s (0..1000000000)\n",
				optarg, sb_opt_why(ret));
			return 2;
		}
		a->o.top = (size_t)v;
		return -1;
	case 'T':
		/* (0, 1): 1 itself is excluded, the bound is open. */
		if ((ret = sb_opt_double(optarg, 0, 1, &a->lo.cluster_threshold)) ||
		    a->lo.cluster_threshold >= 1) {
			fprintf(stderr, "scalebpf report: invalid --cluster-threshold '%s': %s "
				"(a correlation in (0, 1))\n", optarg, sb_opt_why(ret ? ret : -ERANGE));
			return 2;
		}
		return -1;
	case OPT_SOURCE_DIR:
		a->o.source_dir = optarg;
		return -1;
	case OPT_NO_SOURCE:
		a->o.no_source = 1;
		return -1;
	case OPT_TIMES:
		a->o.times_input = optarg;
		return -1;
	case OPT_DIFF:
		a->diff_a = optarg;
		return -1;
	case 'h':
		usage(stdout);
		return 0;
	default:
		usage(stderr);
		return 2;
	}
}

/* The command line into a; -1 to go on, or the exit code. */
static int parse_args(int argc, char **argv, struct report_args *a)
{
	struct option *longopts = long_options();
	int c, ret = -1;

	if (!longopts) {
		fprintf(stderr, "scalebpf report: out of memory\n");
		return 1;
	}
	optind = 1;
	while (ret < 0 && (c = getopt_long(argc, argv, "i:f:o:s:n:h", longopts, NULL)) != -1)
		ret = one_option(c, a);
	free(longopts);
	if (ret >= 0)
		return ret;
	if (a->diff_a) {
		/* --diff A B: B is the one operand */
		if (optind >= argc) {
			fprintf(stderr, "scalebpf report: --diff A B: give B too (the profile or "
				"directory to compare with the baseline A)\n");
			return 2;
		}
		a->diff_b = argv[optind++];
		if (a->input_set || a->list || a->o.times_input ||
		    (strcmp(a->format, "text") && strcmp(a->format, "json"))) {
			fprintf(stderr, "scalebpf report: --diff A B compares two profiles as text "
				"or json: not with -i, --times, a listing or --format %s\n",
				a->format);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "scalebpf report: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	a->export = sb_export_find(a->format);
	if (strcmp(a->format, "text") && strcmp(a->format, "json") && strcmp(a->format, "html") &&
	    !a->export) {
		fprintf(stderr, "scalebpf report: unknown format '%s' (text, json, html, pprof or "
			"perfetto)\n", a->format);
		return 2;
	}
	if (!strcmp(a->format, "html") && a->list) {
		fprintf(stderr, "scalebpf report: --format html is the whole report: not with "
			"--%s\n", a->list->name);
		return 2;
	}
	if (a->export && a->list) {
		fprintf(stderr, "scalebpf report: --format %s exports the whole profile: not with "
			"--%s\n", a->format, a->list->name);
		return 2;
	}
	if (a->export && a->export->binary && !a->output && isatty(STDOUT_FILENO)) {
		fprintf(stderr, "scalebpf report: --format %s is binary: give -o FILE (or "
			"redirect standard output)\n", a->format);
		return 2;
	}
	return -1;
}

/* Where the report goes: standard output, or a temporary beside OUT
 * that done() renames over it (an export is there whole or not at all). */
struct output {
	FILE *f;
	char tmp[4096];
	const char *path;
};

static int output_open(struct output *o, const char *path)
{
	o->path = path;
	o->f = stdout;
	if (!path)
		return 0;
	if ((size_t)snprintf(o->tmp, sizeof(o->tmp), "%s.tmp.%d", path, (int)getpid()) >=
	    sizeof(o->tmp) || !(o->f = fopen(o->tmp, "w"))) {
		fprintf(stderr, "scalebpf report: cannot write %s: %s\n", path,
			strerror(errno ? errno : ENAMETOOLONG));
		return -1;
	}
	return 0;
}

/* 0, or 1 with why said (then nothing is left at OUT's place). */
static int output_done(struct output *o, int failed)
{
	int bad = failed || fflush(o->f) || ferror(o->f);

	if (!o->path) {
		if (bad && !failed)
			fprintf(stderr, "scalebpf report: cannot write the report\n");
		return bad;
	}
	bad |= fclose(o->f) != 0;
	if (!bad && rename(o->tmp, o->path)) {
		fprintf(stderr, "scalebpf report: cannot write %s: %s\n", o->path,
			strerror(errno));
		bad = 1;
	} else if (bad && !failed) {
		fprintf(stderr, "scalebpf report: cannot write %s: %s\n", o->path,
			strerror(errno ? errno : EIO));
	}
	if (bad)
		unlink(o->tmp);
	return bad;
}

/* `report --diff A B`: both read (files or directories), their causes,
 * then the comparison. */
static int report_diff(struct report_args *a)
{
	struct sb_profile *pa = NULL, *pb = NULL;
	struct sb_causes ca = { 0 }, cb = { 0 };
	bool have_a = false, have_b = false;
	struct output out;
	char err[512];
	int ret = 1;

	if (sb_report_load(a->diff_a, &pa, stderr, err, sizeof(err)) ||
	    sb_report_load(a->diff_b, &pb, stderr, err, sizeof(err))) {
		fprintf(stderr, "scalebpf report: --diff: %s\n", err);
		goto out;
	}
	if (sb_causes_compute(pa, &a->lo, &ca, err, sizeof(err)) || !(have_a = true) ||
	    sb_causes_compute(pb, &a->lo, &cb, err, sizeof(err)) || !(have_b = true)) {
		fprintf(stderr, "scalebpf report: --diff: %s\n", err);
		goto out;
	}
	if (output_open(&out, a->output))
		goto out;
	ret = sb_report_diff(a->diff_a, pa, &ca, a->diff_b, pb, &cb, !strcmp(a->format, "json"),
			     out.f);
	if (ret)
		fprintf(stderr, "scalebpf report: cannot write the comparison\n");
	ret = output_done(&out, ret != 0);
out:
	if (have_a)
		sb_causes_free(&ca);
	if (have_b)
		sb_causes_free(&cb);
	sb_profile_free(pa);
	sb_profile_free(pb);
	return ret;
}

int cmd_report(int argc, char **argv)
{
	struct report_args a = {
		.o = { .input = "scalebpf.data", .top = 5 },
		.format = "text",
	};
	struct sb_causes causes;
	struct sb_profile *p, *times = NULL;
	struct output out;
	char err[512];
	int ret, json;

	sb_lime_opts_default(&a.lo);
	if ((ret = parse_args(argc, argv, &a)) >= 0)
		return ret;
	if (a.diff_a)
		return report_diff(&a);
	json = !strcmp(a.format, "json");
	if (sb_report_load(a.o.input, &p, stderr, err, sizeof(err))) {
		fprintf(stderr, "scalebpf report: %s\n", err);
		return 1;
	}
	if (a.o.times_input && sb_profile_read(a.o.times_input, &times, err, sizeof(err))) {
		fprintf(stderr, "scalebpf report: --times: %s\n", err);
		sb_profile_free(p);
		return 1;
	}
	a.o.times = times;
	if (output_open(&out, a.output)) {
		ret = 1;
		goto free;
	}
	if (a.export) {
		if ((ret = a.export->write(p, out.f, err, sizeof(err))))
			fprintf(stderr, "scalebpf report: --format %s: %s\n", a.format, err);
		ret = output_done(&out, ret != 0);
		goto free;
	}
	if (a.list) {
		if ((ret = sb_report_list(a.list, p, &a.o, json, out.f)))
			fprintf(stderr, "scalebpf report: cannot write the report\n");
		ret = output_done(&out, ret != 0);
		goto free;
	}
	if (sb_causes_compute(p, &a.lo, &causes, err, sizeof(err))) {
		fprintf(stderr, "scalebpf report: %s\n", err);
		output_done(&out, 1);
		ret = 1;
		goto free;
	}
	ret = json ? sb_report_json(p, &causes, &a.o, out.f)
	      : !strcmp(a.format, "html") ? sb_report_html(p, &causes, &a.o, out.f)
					   : sb_report_text(p, &causes, &a.o, out.f);
	sb_causes_free(&causes);
	if (ret)
		fprintf(stderr, "scalebpf report: cannot write the report\n");
	ret = output_done(&out, ret != 0);
free:
	sb_profile_free(p);
	sb_profile_free(times);
	return ret;
}
