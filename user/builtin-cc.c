// SPDX-License-Identifier: MIT
/*
 * scalebpf cc: compile and link a program for exact mode.  clang counts
 * every basic block (-fsanitize-coverage=trace-pc-guard); our runtime
 * (user/rt/, libscalebpf-rt.a beside the scalebpf binary) keeps the
 * counts per thread and hands them to `scalebpf record` at each segment's
 * end, through wrappers of the sync calls that close segments.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "builtin.h"

static const char cc_usage[] =
"usage: scalebpf cc [--trace-mem] [--chip] [--no-counts] [compiler arguments...]\n"
"\n"
"Builds a program for exact mode: clang with every basic block counted\n"
"per thread (-fsanitize-coverage=trace-pc-guard), linked with scalebpf's\n"
"runtime.  Use it as the compiler: every argument goes to clang.  Then\n"
"record the program as usual; the profile gets exact per-thread,\n"
"per-section-instance block counts alongside the samples, and the causes\n"
"view names branches, loops and calls instead of 'undetermined'.\n"
"\n"
"  scalebpf cc -O2 -g -pthread solver.c -o solver\n"
"  scalebpf cc -O2 -g -fopenmp omp_app.c -o omp_app\n"
"  make CC='scalebpf cc'\n"
"  scalebpf cc -O2 -x c - -o prog < prog.c    (stdin; -x does not reach the\n"
"                                            runtime archive)\n"
"  sudo scalebpf record -o run.sbp -- ./solver 8 && scalebpf report -i run.sbp\n"
"\n"
"  --trace-mem  also write every load and store, per thread, with sync\n"
"               records at each segment end, resume records where the\n"
"               thread goes on and lock acquire/release records (mutexes,\n"
"               OpenMP critical and locks), to $SCALEBPF_TRACE_DIR/trace.TID\n"
"               (record sets it to PROFILE.trace; default\n"
"               scalebpf-trace.PID): the input of exact cache analyses.\n"
"               Expect 10-50x slower runs and ~24 bytes per access.\n"
"  --chip       also run every load and store through a per-thread cache\n"
"               hit profile (CHiP), streamed to the recorder at each segment\n"
"               end: the Cache view's exact curves, no trace files.  Its\n"
"               size: twice the calibrated effective last-level cache\n"
"               (scalebpf calibrate), or SCALEBPF_CHIP_BYTES; sample lines\n"
"               with SCALEBPF_CHIP_RATE=0.01 (SHARDS) to run faster.\n"
"  --no-counts  with --chip or --trace-mem: leave out the block counts, a\n"
"               call per basic block that costs as much as SHARDS' every\n"
"               load (the causes view then works from samples, as for a\n"
"               plain build).\n"
"\n"
"Segments are cut at pthread_barrier_wait, pthread_join, thread exit,\n"
"condition-variable waits and broadcasts (the recorder decides which\n"
"condvars are barriers), and libomp (clang -fopenmp) regions and barriers.\n"
"gcc's libgomp builds are not supported: gcc has no trace-pc-guard, and\n"
"clang compiles OpenMP for libomp only.  Expect the program to run\n"
"2-10x slower: counts are exact, times are not, so the busy times and\n"
"imbalance of an exact build are its own.\n"
"\n"
"environment:\n"
"  SCALEBPF_CLANG   the compiler (default: clang)\n"
"  SCALEBPF_RT      the runtime archive (default: libscalebpf-rt.a next to\n"
"                   the scalebpf binary)\n";

/* Sync calls whose wrappers flush the calling thread's counts. */
static const char *const wrapped[] = {
	"pthread_create", "pthread_exit", "pthread_join", "pthread_barrier_wait",
	"pthread_cond_wait", "pthread_cond_timedwait", "pthread_cond_broadcast",
	"pthread_cond_signal",
	"__kmpc_fork_call", "__kmpc_barrier",
};

/* Lock calls whose wrappers write lock records: trace builds only (a
 * lock ends no segment, and counting builds need not pay for them). */
static const char *const wrapped_trace[] = {
	"pthread_mutex_lock", "pthread_mutex_trylock", "pthread_mutex_timedlock",
	"pthread_mutex_unlock",
	"__kmpc_critical", "__kmpc_critical_with_hint", "__kmpc_end_critical",
	"omp_set_lock", "omp_unset_lock", "omp_test_lock",
	"omp_set_nest_lock", "omp_unset_nest_lock", "omp_test_nest_lock",
};

/* "-Wl,--wrap=a,--wrap=b...": every name of wrapped[], and of
 * wrapped_trace[] when tracing; -1 if buf is too short. */
static int wrap_args(char *buf, size_t len, bool trace)
{
	size_t n = (size_t)snprintf(buf, len, "-Wl");

	for (size_t i = 0; i < sizeof(wrapped) / sizeof(wrapped[0]) && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, ",--wrap=%s", wrapped[i]);
	for (size_t i = 0; trace && i < sizeof(wrapped_trace) / sizeof(wrapped_trace[0]) &&
	     n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, ",--wrap=%s", wrapped_trace[i]);
	return n < len ? 0 : -1;
}

/* -c, -S, -E and -M/-MM alone compile or preprocess: no link step. */
static bool links(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "-c") || !strcmp(argv[i], "-S") || !strcmp(argv[i], "-E") ||
		    !strcmp(argv[i], "-M") || !strcmp(argv[i], "-MM"))
			return false;
	return true;
}

static int runtime_path(char *buf, size_t len)
{
	const char *env = getenv("SCALEBPF_RT");
	char self[PATH_MAX];
	ssize_t n;
	char *slash;

	if (env && *env) {
		snprintf(buf, len, "%s", env);
		return access(buf, R_OK) ? -errno : 0;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return -errno;
	self[n] = 0;
	slash = strrchr(self, '/');
	if (slash)
		*slash = 0;
	if ((size_t)snprintf(buf, len, "%s/libscalebpf-rt.a", self) >= len)
		return -ENAMETOOLONG;
	return access(buf, R_OK) ? -errno : 0;
}

int cmd_cc(int argc, char **argv)
{
	const char *clang = getenv("SCALEBPF_CLANG");
	char rt[PATH_MAX], wrap[1024];
	char **av;
	int n = 0, ret;
	bool link, trace = false, chip = false, counts = true;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(cc_usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	/* our options, in any order, before clang's arguments */
	while (argc >= 2 && (!strcmp(argv[1], "--trace-mem") || !strcmp(argv[1], "--chip") ||
			     !strcmp(argv[1], "--no-counts"))) {
		if (!strcmp(argv[1], "--trace-mem"))
			trace = true;
		else if (!strcmp(argv[1], "--chip"))
			chip = true;
		else
			counts = false;
		argv++;
		argc--;
	}
	if (argc < 2) {
		fputs(cc_usage, stderr);
		return 2;
	}
	if (!counts && !trace && !chip) {
		fputs("scalebpf cc: --no-counts leaves nothing to instrument without --chip or "
		      "--trace-mem (for neither, build with your compiler)\n", stderr);
		return 2;
	}
	/* clang compiles OpenMP for libomp only: with -fopenmp=libgomp it
	 * ignores every pragma and builds a serial program, silently.  (gcc,
	 * libgomp's compiler, has no trace-pc-guard coverage to count with.) */
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "-fopenmp=libgomp")) {
			fputs("scalebpf cc: -fopenmp=libgomp: clang would ignore the OpenMP pragmas "
			      "(it compiles OpenMP for libomp only); use -fopenmp\n", stderr);
			return 2;
		}
	if (!clang || !*clang)
		clang = "clang";
	link = links(argc, argv);
	if (link && (ret = runtime_path(rt, sizeof(rt)))) {
		fprintf(stderr, "scalebpf cc: cannot find the exact-mode runtime %s: %s "
			"(build it with 'make', or set SCALEBPF_RT)\n", rt, strerror(-ret));
		return 1;
	}
	av = calloc((size_t)argc + 16, sizeof(*av));
	if (!av) {
		fputs("scalebpf cc: out of memory\n", stderr);
		return 1;
	}
	av[n++] = (char *)clang;
	av[n++] = !counts ? "-fsanitize-coverage=func,trace-loads,trace-stores"
		  : trace || chip ? "-fsanitize-coverage=trace-pc-guard,trace-loads,trace-stores"
				  : "-fsanitize-coverage=trace-pc-guard";
	/* -g gives the lines.  No frame-pointer flag: the program is built
	 * as its user builds it, and samples' callers come from CFI. */
	av[n++] = "-g";
	for (int i = 1; i < argc; i++)
		av[n++] = argv[i];
	if (link) {
		if (wrap_args(wrap, sizeof(wrap), trace)) {   /* the tables outgrew it */
			fputs("scalebpf cc: internal error: wrapper list too long\n", stderr);
			free(av);
			return 1;
		}
		av[n++] = wrap;
		/* A -x LANG of the user's applies to every input after it, as
		 * in gcc: `cc -x c -` (a program on stdin) would compile our
		 * archive as C.  -x none: it is known by its suffix again. */
		av[n++] = "-x";
		av[n++] = "none";
		av[n++] = rt;
		/* Our counters' object, always: clang links its UBSan runtime
		 * (whole, before the program) for -fsanitize-coverage, and its
		 * weak trace-pc-guard callbacks would satisfy the program's
		 * calls, so a program calling nothing we wrap got no counts.
		 * -u of a name only exact_rt.o defines pulls it in, and its
		 * strong callbacks win.  (-u of the callback itself would not:
		 * the weak one already defines it when the archive is read.) */
		av[n++] = "-Wl,-u,sb_exact_flush";
		/* the load/store callbacks, and what they feed (weak there) */
		if (trace || chip)
			av[n++] = "-Wl,-u,sb_mem_hooks";
		if (trace)
			av[n++] = "-Wl,-u,sb_trace_access";
		if (chip)
			av[n++] = "-Wl,-u,sb_chip_access_rt";
		av[n++] = "-pthread";
	}
	av[n] = NULL;
	execvp(clang, av);
	ret = errno;
	fprintf(stderr, "scalebpf cc: cannot run %s: %s%s\n", clang, strerror(ret),
		ret == ENOENT ? " (install clang, or set SCALEBPF_CLANG)" : "");
	free(av);
	return 127;
}
