// SPDX-License-Identifier: MIT
/* scalebpf report: read a profile, rank where thread-time is lost. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "causes/causes.h"
#include "profile/profile.h"
#include "report/report.h"

static const char report_usage[] =
"usage: scalebpf report [-i FILE] [--format text|json] [--sort KEY] [--top N]\n"
"       scalebpf report [-i FILE] --addresses\n"
"\n"
"Read a profile written by `scalebpf record` (on this or any other machine:\n"
"locations were symbolized when recording) and show:\n"
"  - parallel sections ranked by lost thread-time: thread-time idle at the\n"
"    sync that closes the section, with imbalance % (LIME: mean over threads\n"
"    of the fraction of the instance a thread idles), per-thread busy/wait\n"
"    bars, and the busiest and idlest threads;\n"
"  - wait time by primitive (barriers, joins, mutexes, condition variables,\n"
"    semaphores, spin locks, OpenMP barriers/critical/locks);\n"
"  - the most contended locks and condition variables by call site;\n"
"  - the causes of imbalance per section (LIME, Oh et al. ICSE 2011): which\n"
"    code makes threads do different work, ranked by score, with the\n"
"    source lines around each.\n"
"Busy time is on-CPU time, so runs with more threads than cores still show\n"
"each thread's true work.\n"
"\n"
"  -i, --input FILE     profile to read (default: scalebpf.data)\n"
"  -f, --format FMT     text (default) or json (a stable contract for scripts:\n"
"                       sections, waits, locks, meta)\n"
"  -s, --sort KEY       order sections by lost (default), imbalance,\n"
"                       instances or wait\n"
"  -n, --top N          sections shown in detail (default 5)\n"
"      --counts         instead of a report, each section's per-thread\n"
"                       event counts (exact block counts of a `scalebpf cc`\n"
"                       build, or samples per block), the vectors LIME uses\n"
"      --addresses      instead of a report, the sampled data addresses kept\n"
"                       in the profile, one per line (tab-separated)\n"
"      --cluster-threshold R  LIME: stop clustering events at correlation R\n"
"                       (default 0.9)\n"
"  -h, --help           this text\n";

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "format", required_argument, NULL, 'f' },
		{ "sort", required_argument, NULL, 's' },
		{ "top", required_argument, NULL, 'n' },
		{ "cluster-threshold", required_argument, NULL, 'T' },
		{ "counts", no_argument, NULL, 'C' },
		{ "addresses", no_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sb_report_opts o = { .input = "scalebpf.data", .top = 5 };
	struct sb_causes causes;
	struct sb_lime_opts lo;
	const char *format = "text";
	struct sb_profile *p;
	char err[512], *end;
	int c, ret, counts = 0, addresses = 0;

	sb_lime_opts_default(&lo);
	optind = 1;
	while ((c = getopt_long(argc, argv, "i:f:s:n:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			o.input = optarg;
			break;
		case 'f':
			format = optarg;
			break;
		case 's':
			o.sort = optarg;
			if (strcmp(optarg, "lost") && strcmp(optarg, "imbalance") &&
			    strcmp(optarg, "instances") && strcmp(optarg, "wait")) {
				fprintf(stderr, "scalebpf report: unknown sort key '%s' "
					"(lost, imbalance, instances, wait)\n", optarg);
				return 2;
			}
			break;
		case 'n':
			o.top = strtoul(optarg, &end, 10);
			if (*end) {
				fprintf(stderr, "scalebpf report: invalid --top '%s'\n", optarg);
				return 2;
			}
			break;
		case 'T':
			lo.cluster_threshold = strtod(optarg, &end);
			if (*end || lo.cluster_threshold <= 0 || lo.cluster_threshold >= 1) {
				fprintf(stderr, "scalebpf report: --cluster-threshold must be "
					"a correlation in (0, 1)\n");
				return 2;
			}
			break;
		case 'C':
			counts = 1;
			break;
		case 'A':
			addresses = 1;
			break;
		case 'h':
			fputs(report_usage, stdout);
			return 0;
		default:
			fputs(report_usage, stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "scalebpf report: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (strcmp(format, "text") && strcmp(format, "json")) {
		fprintf(stderr, "scalebpf report: unknown format '%s' (text or json)\n", format);
		return 2;
	}
	if (sb_profile_read(o.input, &p, err, sizeof(err))) {
		fprintf(stderr, "scalebpf report: %s\n", err);
		return 1;
	}
	if (counts || addresses) {
		ret = counts ? sb_report_counts(p, !strcmp(format, "json"), stdout)
			     : sb_report_addrs_table(p, stdout);
		if (fflush(stdout) || ret) {
			fprintf(stderr, "scalebpf report: cannot write the report\n");
			ret = 1;
		}
		sb_profile_free(p);
		return ret;
	}
	if (sb_causes_compute(p, &lo, &causes, err, sizeof(err))) {
		fprintf(stderr, "scalebpf report: %s\n", err);
		sb_profile_free(p);
		return 1;
	}
	ret = !strcmp(format, "json") ? sb_report_json(p, &causes, stdout)
				      : sb_report_text(p, &causes, &o, stdout);
	sb_causes_free(&causes);
	if (fflush(stdout) || ret) {
		fprintf(stderr, "scalebpf report: cannot write the report\n");
		ret = 1;
	}
	sb_profile_free(p);
	return ret;
}
