// SPDX-License-Identifier: MIT
/* scalebpf calibrate: measure this machine's memory once, for the models
 * (user/calibrate/calibrate.h). */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "builtin.h"
#include "opt_parse.h"
#include "calibrate/calibrate.h"

static void usage(FILE *f)
{
	fputs("usage: scalebpf calibrate [--force] [--quick] [--max-mb MB] [--show]\n\n"
	      "Measure what this machine's memory does, for the models that predict\n"
	      "from a profile (the Cache view's bandwidth and verdicts, the speedup\n"
	      "stacks' virtual cache pirate):\n"
	      "  - load latency by working-set size (a random pointer chase, 16 KB up to\n"
	      "    256 MB or 8 x the last-level cache), and from it the DRAM latency and\n"
	      "    the cache capacity that really behaves like cache: on a VM the\n"
	      "    nominal last-level cache (hwloc's) may be the host's;\n"
	      "  - sustainable read bandwidth, one thread and one per CPU.\n"
	      "It takes a few seconds on a quiet machine (other load skews it) and is\n"
	      "kept per machine in $SCALEBPF_CALIBRATION, else\n"
	      "$XDG_CACHE_HOME/scalebpf/calibration, else ~/.cache/scalebpf/calibration;\n"
	      "a kept calibration of this machine is shown, not measured again.\n\n"
	      "  --force        measure again even if one is kept\n"
	      "  --quick        fewer loads per size (seconds less, noisier)\n"
	      "  --max-mb MB    the largest working set (default: 256, or 8 x the LLC)\n"
	      "  --show         only show the kept one (exit 1 when there is none)\n"
	      "  -q, --quiet    no progress lines\n"
	      "  -h, --help     this text\n", f);
}

static void progress(const char *what, void *ctx)
{
	(void)ctx;
	fprintf(stderr, "scalebpf calibrate: %s\n", what);
}

static void print_size(char *buf, size_t len, uint64_t b)
{
	if (b >= (1ull << 20) && !(b & ((1ull << 20) - 1)))
		snprintf(buf, len, "%llu MB", (unsigned long long)(b >> 20));
	else if (b >= (1ull << 20))
		snprintf(buf, len, "%.1f MB", (double)b / (1 << 20));
	else
		snprintf(buf, len, "%llu KB", (unsigned long long)(b >> 10));
}

static void show(const struct sb_calibration *c, const char *path, bool kept)
{
	char a[32], b[32];

	printf("calibration of %s\n  %s %s\n", c->identity, kept ? "kept in" : "written to", path);
	printf("  %-14s %10s\n", "working set", "latency");
	for (size_t i = 0; i < c->n; i++) {
		print_size(a, sizeof(a), c->ws[i]);
		printf("  %-14s %8.1f ns%s\n", a, c->latency_ns[i],
		       c->ws[i] == c->llc_effective ? "   <- the last that behaves like cache" : "");
	}
	print_size(a, sizeof(a), c->llc_nominal);
	print_size(b, sizeof(b), c->llc_effective);
	printf("  last-level cache: %s nominal (hwloc, %u CPUs share it), %s effective "
	       "(latency under half of DRAM's %.0f ns)%s\n", a, c->llc_shared_by, b,
	       c->dram_latency_ns, c->llc_effective < c->llc_nominal / 2 ?
	       ": the models use the effective size" : "");
	if (c->llc_effective_shared_by)
		printf("  shared by two CPUs: %s (each chasing its own %s: %.2fx slower together, "
		       "64 KB: %.2fx; a shared cache would send its hits to DRAM)\n",
		       c->llc_effective_shared_by > 1 ? "yes" : "no, each CPU keeps its own", b,
		       c->shared_slowdown, c->private_slowdown);
	else
		printf("  shared by two CPUs: not measured (one CPU, or too little room)\n");
	printf("  read bandwidth: %.1f GB/s one thread, %.1f GB/s with %u threads\n",
	       c->bw_one / 1e9, c->bw_all / 1e9, c->threads_all);
}

int cmd_calibrate(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "force", no_argument, NULL, 'f' },  { "quick", no_argument, NULL, 'Q' },
		{ "max-mb", required_argument, NULL, 'm' }, { "show", no_argument, NULL, 's' },
		{ "quiet", no_argument, NULL, 'q' },  { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sb_calibrate_opts o = { 0 };
	struct sb_calibration c;
	bool force = false, only_show = false, quiet = false;
	char path[4096], err[512] = "";
	uint64_t mb;
	int opt, ret;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "qh", opts, NULL)) != -1) {
		switch (opt) {
		case 'f': force = true; break;
		case 'Q': o.quick = 1; break;
		case 's': only_show = true; break;
		case 'q': quiet = true; break;
		case 'm':
			if ((ret = sb_opt_u64(optarg, 1, 1 << 20, &mb))) {
				fprintf(stderr, "scalebpf calibrate: --max-mb '%s': %s (1..1048576)\n",
					optarg, sb_opt_why(ret));
				return 2;
			}
			o.max_bytes = mb << 20;
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "scalebpf calibrate: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (sb_calibrate_path(path, sizeof(path))) {
		fprintf(stderr, "scalebpf calibrate: nowhere to keep it: set HOME, "
			"XDG_CACHE_HOME or SCALEBPF_CALIBRATION\n");
		return 1;
	}
	ret = sb_calibrate_cached(&c, err, sizeof(err));
	if (!ret && (!force || only_show)) {
		show(&c, path, true);
		return 0;
	}
	if (only_show) {
		fprintf(stderr, "scalebpf calibrate: %s\n", err);
		return 1;
	}
	if (ret == -EINVAL)   /* a damaged one is replaced, and said so */
		fprintf(stderr, "scalebpf calibrate: replacing it: %s\n", err);
	if ((ret = sb_calibrate_run(&c, &o, quiet ? NULL : progress, NULL, err, sizeof(err))) ||
	    (ret = sb_calibrate_save(&c, path, err, sizeof(err)))) {
		fprintf(stderr, "scalebpf calibrate: %s\n", err);
		return 1;
	}
	show(&c, path, false);
	if (c.llc_nominal && c.ws[c.n - 1] < 2 * c.llc_nominal)
		fprintf(stderr, "scalebpf calibrate: warning: the largest working set measured is "
			"under twice the nominal last-level cache: the 'DRAM' latency and the "
			"effective size may be a cache's (raise --max-mb)\n");
	return 0;
}
