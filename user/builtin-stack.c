// SPDX-License-Identifier: MIT
/*
 * scalebpf stack: speedup stacks (analysis/stack/stack.h).  The program
 * runs once per thread count, each run recorded as `record` does (the
 * one-thread run with --chip: its cache profile feeds the virtual
 * pirate); the phases are matched across the runs by location, and one
 * profile comes out: the run with the most threads, with every run's
 * phase times in its STACK chunk and the runs' own profiles beside it.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "builtin.h"
#include "opt_parse.h"
#include "profile/profile.h"
#include "stack/stack.h"
#include "stack/stack_pirate.h"

#define MAX_RUNS 16
#define MAX_REPEAT 9

enum pirate_mode { PIRATE_AUTO, PIRATE_REAL, PIRATE_VIRTUAL };

struct stack_opts {
	unsigned threads[MAX_RUNS];
	size_t n;
	const char *out, *env;
	char **cmd;
	int ncmd;
	unsigned repeat;
	bool quiet;
	int pirate;              /* enum pirate_mode */
};

static void usage(FILE *f)
{
	fputs("usage: scalebpf stack [-t 1,2,4] [-r N] [-o FILE] [--threads-env VAR] [--pirate MODE]\n"
	      "                      -- CMD [ARGS]\n\n"
	      "Why a program's parallel phases fall short of a linear speedup, as a\n"
	      "speedup stack per phase and thread count (Eklov et al., speedup stacks):\n"
	      "the perfect speedup T split into what was measured and what was lost to\n"
	      "shared-cache capacity, to memory bandwidth and to synchronization (locks,\n"
	      "barriers, imbalance).  CMD runs once per thread count, each run recorded\n"
	      "as `scalebpf record -- CMD` would (root, as record needs):\n"
	      "  - the thread count goes to OMP_NUM_THREADS (OpenMP), to every {T} in\n"
	      "    ARGS (pthread programs: `-- ./prog {T} 1000`), and to VAR with\n"
	      "    --threads-env VAR;\n"
	      "  - phases are the sections `record` finds (fork to join, OpenMP regions,\n"
	      "    barrier to barrier), matched across the runs by location;\n"
	      "  - synchronization: the slowest thread's time less its waits and its\n"
	      "    samples in the thread library's lock code (§6.3), split into lock\n"
	      "    waits, imbalance and the closing synchronization;\n"
	      "  - cache: a virtual Cache Pirate predicts one thread's slowdown with 1/T\n"
	      "    of the shared cache from the one-thread run's cache profile (`record\n"
	      "    --chip`) and this machine's calibrated miss penalty (`scalebpf\n"
	      "    calibrate` first); where the last-level cache is private it is 0;\n"
	      "  - memory: the rest of the lost speedup between the pirate's estimate\n"
	      "    and the synchronization-free one.\n"
	      "  - a real Cache Pirate instead (§3, §6.1), where the calibration found a\n"
	      "    last-level cache shared by CPUs: one more run per count above 1, under\n"
	      "    the profiled-thread framework (preloaded: one thread runs alone\n"
	      "    between pthread barriers while a co-runner on another CPU holds all\n"
	      "    but 1/T of the cache, checking by its own latency or fetch ratio that\n"
	      "    it does); a pirate that did not hold is reported and its measurement\n"
	      "    discarded; a program the framework cannot control (OpenMP, condition\n"
	      "    variables) gets the virtual pirate.\n"
	      "One profile comes out (the run with the most threads, every run's phase\n"
	      "times in it); `scalebpf report` shows the stacks, the runs' own profiles\n"
	      "are kept in FILE.runs/.\n\n"
	      "  -t, --threads LIST   thread counts, ascending (default 1,2,4; 1 is\n"
	      "                       added when missing: speedups are over one thread)\n"
	      "  -o, --output FILE    the profile (default scalebpf.data)\n"
	      "  -r, --repeat N       run each count N times (1-9, default 1), the counts\n"
	      "                       taking turns; each count's run of median time is\n"
	      "                       used (a VM's memory speed can drift by 2x within a\n"
	      "                       minute: 3 or 5 tame it)\n"
	      "      --threads-env VAR  also set VAR to the thread count\n"
	      "      --pirate MODE    auto (default: real where the calibration found a\n"
	      "                       shared last-level cache, else virtual), real (even\n"
	      "                       where the cache is private: its set then sits in its\n"
	      "                       own cache and steals nothing), virtual\n"
	      "  -q, --quiet          no progress lines\n"
	      "  -h, --help           this text\n", f);
}

/* "1,2,4": counts 1..4096, strictly ascending; 1 added first if absent. */
static int parse_threads(const char *s, struct stack_opts *o)
{
	char buf[256], *tok, *save = NULL;

	o->n = 0;
	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;

		if (sb_opt_u64(tok, 1, 4096, &v) || o->n == MAX_RUNS - 1 ||
		    (o->n && v <= o->threads[o->n - 1]))
			return -EINVAL;
		o->threads[o->n++] = (unsigned)v;
	}
	if (!o->n)
		return -EINVAL;
	if (o->threads[0] != 1) {
		memmove(o->threads + 1, o->threads, o->n * sizeof(o->threads[0]));
		o->threads[0] = 1;
		o->n++;
	}
	return 0;
}

/* CMD's arguments with every {T} replaced by t; NULL: no memory. */
static char **argv_for(const struct stack_opts *o, unsigned t)
{
	char **v = calloc((size_t)o->ncmd + 1, sizeof(*v)), num[16];

	if (!v)
		return NULL;
	snprintf(num, sizeof(num), "%u", t);
	for (int i = 0; i < o->ncmd; i++) {
		const char *a = o->cmd[i], *p;
		size_t len = strlen(a) + 1, k = 0;
		char *w;

		for (p = a; (p = strstr(p, "{T}")); p += 3)
			len += strlen(num);
		if (!(w = v[i] = malloc(len)))
			goto nomem;
		while (*a) {
			if (!strncmp(a, "{T}", 3)) {
				k += (size_t)sprintf(w + k, "%s", num);
				a += 3;
			} else {
				w[k++] = *a++;
			}
		}
		w[k] = 0;
	}
	return v;
nomem:
	for (int i = 0; i < o->ncmd; i++)
		free(v[i]);
	free(v);
	return NULL;
}

static void free_argv(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One run: `scalebpf record -q -o file [--chip] -- CMD` at t threads;
 * with sp, `-- env LD_PRELOAD=framework CMD` beside the real pirate of
 * sp's run k.
 * 0; 1 when the program exited non-zero (its profile written); -1 with
 * the reason printed when there is no profile. */
static int run_one(const struct stack_opts *o, const char *self, const char *file, unsigned t,
		   const struct sb_stack_pirate_runs *sp, size_t k)
{
	char **args = argv_for(o, t), num[16], preload[2 * PATH_MAX + 16];
	const char *av[12 + 1024], *old = getenv("LD_PRELOAD");
	int n = 0, status;
	pid_t pid;

	if (!args || o->ncmd > 1024) {
		fprintf(stderr, "scalebpf stack: %s\n", args ? "too many arguments" : "out of memory");
		free_argv(args);
		return -1;
	}
	av[n++] = "scalebpf";
	av[n++] = "record";
	av[n++] = "-q";
	av[n++] = "-o";
	av[n++] = file;
	av[n++] = "--single-joins";   /* a fork-join phase at one thread */
	if (t == 1 && !sp)
		av[n++] = "--chip";   /* the virtual pirate's cache profile */
	av[n++] = "--";
	if (sp) {   /* the program alone loads it: `record` follows env's exec */
		snprintf(preload, sizeof(preload), "LD_PRELOAD=%s%s%s", sp->lib,
			 old && *old ? ":" : "", old && *old ? old : "");
		av[n++] = "env";
		av[n++] = preload;
	}
	for (int i = 0; i < o->ncmd; i++)
		av[n++] = args[i];
	av[n] = NULL;
	snprintf(num, sizeof(num), "%u", t);
	fflush(NULL);
	unlink(file);   /* a profile after the run is this run's */
	if ((pid = fork()) < 0) {
		fprintf(stderr, "scalebpf stack: fork: %s\n", strerror(errno));
		free_argv(args);
		return -1;
	}
	if (!pid) {
		setenv("OMP_NUM_THREADS", num, 1);
		if (o->env)
			setenv(o->env, num, 1);
		if (sp) {
			char v[64];

			setenv("SCALEBPF_PROFILED_OUT", sp->stats[k], 1);
			snprintf(v, sizeof(v), "%llu",
				 (unsigned long long)sb_stack_pirate_bytes(sp, t));
			setenv("SCALEBPF_PIRATE_BYTES", v, 1);
			snprintf(v, sizeof(v), "%.3f", sp->hit_ns);
			setenv("SCALEBPF_PIRATE_HIT_NS", v, 1);
			snprintf(v, sizeof(v), "%.3f", sp->miss_ns);
			setenv("SCALEBPF_PIRATE_MISS_NS", v, 1);
		}
		execv(self, (char *const *)av);
		fprintf(stderr, "scalebpf stack: cannot run %s: %s\n", self, strerror(errno));
		_exit(127);
	}
	free_argv(args);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			fprintf(stderr, "scalebpf stack: waitpid: %s\n", strerror(errno));
			return -1;
		}
	if (WIFEXITED(status) && !WEXITSTATUS(status))
		return 0;
	/* record passes the program's exit status on: a profile written is a
	 * run that ended, maybe not as meant */
	if (WIFEXITED(status) && !access(file, R_OK)) {
		fprintf(stderr, "scalebpf stack: the run at %u thread%s failed: exit status %d "
			"(its profile is used; the stack exits 1)\n", t, t == 1 ? "" : "s",
			WEXITSTATUS(status));
		return 1;
	}
	fprintf(stderr, "scalebpf stack: the run at %u thread%s failed (record %s %d, no "
		"profile): no stack without every run\n", t, t == 1 ? "" : "s",
		WIFEXITED(status) ? "exit" : "signal",
		WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	return -1;
}

static int parse(int argc, char **argv, struct stack_opts *o)
{
	static const struct option lo[] = {
		{ "threads", required_argument, NULL, 't' },
		{ "output", required_argument, NULL, 'o' },
		{ "threads-env", required_argument, NULL, 'E' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "pirate", required_argument, NULL, 'P' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->out = "scalebpf.data";
	o->repeat = 1;
	parse_threads("1,2,4", o);
	optind = 1;
	while ((c = getopt_long(argc, argv, "+t:o:r:qh", lo, NULL)) != -1) {
		uint64_t v;

		switch (c) {
		case 'r':
			if (sb_opt_u64(optarg, 1, MAX_REPEAT, &v)) {
				fprintf(stderr, "scalebpf stack: -r %s: %s (1 to %d)\n", optarg,
					sb_opt_why(sb_opt_u64(optarg, 1, MAX_REPEAT, &v)), MAX_REPEAT);
				return 2;
			}
			o->repeat = (unsigned)v;
			break;
		case 't':
			if (parse_threads(optarg, o)) {
				fprintf(stderr, "scalebpf stack: -t %s: thread counts 1 to 4096, "
					"ascending, comma-separated, at most %d\n", optarg,
					MAX_RUNS - 1);
				return 2;
			}
			break;
		case 'o':
			o->out = optarg;
			break;
		case 'E':
			if (!*optarg || strchr(optarg, '=')) {
				fprintf(stderr, "scalebpf stack: --threads-env %s: not a variable "
					"name\n", optarg);
				return 2;
			}
			o->env = optarg;
			break;
		case 'P':
			if (!strcmp(optarg, "auto"))
				o->pirate = PIRATE_AUTO;
			else if (!strcmp(optarg, "real"))
				o->pirate = PIRATE_REAL;
			else if (!strcmp(optarg, "virtual"))
				o->pirate = PIRATE_VIRTUAL;
			else {
				fprintf(stderr, "scalebpf stack: --pirate %s: auto, real or "
					"virtual\n", optarg);
				return 2;
			}
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "scalebpf stack: no program: scalebpf stack [options] -- CMD "
			"[ARGS] (see --help)\n");
		return 2;
	}
	if (o->n < 2) {
		fprintf(stderr, "scalebpf stack: -t needs a count above 1 (a speedup over one "
			"thread)\n");
		return 2;
	}
	o->cmd = argv + optind;
	o->ncmd = argc - optind;
	return 0;
}

/* The runs' phase times (and the real pirate's, with sp) into the
 * largest run's profile, written to o->out; 0 or 1. */
static int assemble(const struct stack_opts *o, char files[][PATH_MAX], const double *secs,
		    struct sb_stack_pirate_runs *sp)
{
	struct sb_profile *runs[MAX_RUNS] = { NULL };
	struct sb_stack_real real[MAX_RUNS];
	char err[512], key[64], list[256] = "";
	size_t phases = 0, len = 0;
	int ret = 1;

	for (size_t k = 0; k < o->n; k++)
		if (sb_profile_read(files[k], &runs[k], err, sizeof(err)) != SB_OK) {
			fprintf(stderr, "scalebpf stack: cannot read %s: %s\n", files[k], err);
			goto out;
		}
	if (sp && sb_stack_pirate_real(sp, o->threads, o->n, real, runs[o->n - 1]))
		goto out;
	sb_profile_meta_set(runs[o->n - 1], "stack_pirate", sp ? "real" : "virtual");
	if (sb_stack_rows(runs[o->n - 1], (const struct sb_profile *const *)runs, o->threads,
			  o->n, sp ? real : NULL, &phases)) {
		fprintf(stderr, "scalebpf stack: out of memory\n");
		goto out;
	}
	for (size_t k = 0; k < o->n; k++) {
		uint64_t total, par;

		/* the program's time and its part in phases: Amdahl beside */
		if (!sb_stack_program(runs[k], &total, &par)) {
			snprintf(key, sizeof(key), "stack_program_%u_ns", o->threads[k]);
			sb_profile_meta_set_u64(runs[o->n - 1], key, total);
			snprintf(key, sizeof(key), "stack_parallel_%u_ns", o->threads[k]);
			sb_profile_meta_set_u64(runs[o->n - 1], key, par);
		}
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%u", k ? "," : "",
					o->threads[k]);
		snprintf(key, sizeof(key), "stack_run_%u", o->threads[k]);
		sb_profile_meta_set(runs[o->n - 1], key, files[k]);
		snprintf(key, sizeof(key), "stack_run_%u_wall_ms", o->threads[k]);
		sb_profile_meta_set_u64(runs[o->n - 1], key, (uint64_t)(secs[k] * 1e3));
	}
	sb_profile_meta_set(runs[o->n - 1], "stack_threads", list);
	sb_profile_meta_set(runs[o->n - 1], "stack_threads_env", o->env ? o->env : "");
	sb_profile_meta_set_u64(runs[o->n - 1], "stack_repeat", o->repeat);
	sb_profile_meta_set_u64(runs[o->n - 1], "stack_phases", phases);
	if (sb_profile_write(runs[o->n - 1], o->out, err, sizeof(err)) != SB_OK) {
		fprintf(stderr, "scalebpf stack: cannot write %s: %s\n", o->out, err);
		goto out;
	}
	if (!phases)
		fprintf(stderr, "scalebpf stack: no phase was found in both the one-thread run "
			"and the others (no parallel section, or the phases differ by run)\n");
	else if (!o->quiet)
		fprintf(stderr, "scalebpf stack: %zu phase%s, stacks in %s (scalebpf report -i "
			"%s)\n", phases, phases == 1 ? "" : "s", o->out, o->out);
	ret = 0;
out:
	for (size_t k = 0; k < o->n; k++)
		sb_profile_free(runs[k]);
	if (sp)
		sb_stack_pirate_release(sp);
	return ret;
}

/* Of a count's n runs, the one of median time (the lower of two): the
 * one with as many runs before it in time order as half the others. */
static unsigned median_run(const double *secs, unsigned n)
{
	for (unsigned a = 0; a < n; a++) {
		unsigned before = 0;

		for (unsigned b = 0; b < n; b++)
			before += secs[b] < secs[a] || (secs[b] == secs[a] && b < a);
		if (before == (n - 1) / 2)
			return a;
	}
	return 0;
}

int cmd_stack(int argc, char **argv)
{
	struct stack_opts o;
	static char files[MAX_RUNS][MAX_REPEAT][PATH_MAX], use[MAX_RUNS][PATH_MAX];
	char self[PATH_MAX], dir[PATH_MAX];
	double secs[MAX_RUNS][MAX_REPEAT], med[MAX_RUNS];
	static struct sb_stack_pirate_runs sp;
	ssize_t n;
	int ret, failed = 0, real = 0;
	size_t runs;

	if ((ret = parse(argc, argv, &o)))
		return ret == 1 ? 0 : ret;
	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) < 0) {
		fprintf(stderr, "scalebpf stack: cannot find its own binary: %s\n",
			strerror(errno));
		return 1;
	}
	self[n] = 0;
	if (strlen(o.out) > PATH_MAX - 64) {
		fprintf(stderr, "scalebpf stack: -o %s: too long a path\n", o.out);
		return 2;
	}
	snprintf(dir, sizeof(dir), "%s.runs", o.out);
	if (mkdir(dir, 0755) && errno != EEXIST) {
		fprintf(stderr, "scalebpf stack: cannot make %s: %s\n", dir, strerror(errno));
		return 1;
	}
	/* the real pirate's plan before any run: a forced one may be
	 * impossible */
	if (o.pirate != PIRATE_VIRTUAL &&
	    (real = sb_stack_pirate_plan(&sp, o.pirate == PIRATE_REAL, self, o.quiet)) < 0)
		return 1;
	runs = o.n * o.repeat + (real ? o.n - 1 : 0);
	/* the counts take turns: a drift over the runs hits each alike */
	for (unsigned r = 0; r < o.repeat; r++)
		for (size_t k = 0; k < o.n; k++) {
			double t0 = now_s();
			char *f = files[k][r];

			snprintf(f, PATH_MAX, "%.*s/run-%u%s%.0u.sbp", PATH_MAX - 40, dir,
				 o.threads[k], o.repeat > 1 ? "-" : "", o.repeat > 1 ? r + 1 : 0);
			if (!o.quiet)
				fprintf(stderr, "scalebpf stack: run %zu of %zu: %u thread%s%s\n",
					r * o.n + k + 1, runs, o.threads[k],
					o.threads[k] == 1 ? "" : "s",
					o.threads[k] == 1 ? " (with --chip: the cache profile)" : "");
			if ((ret = run_one(&o, self, f, o.threads[k], NULL, 0)) < 0)
				return 1;
			failed += ret;
			secs[k][r] = now_s() - t0;
			if (!o.quiet)
				fprintf(stderr, "scalebpf stack: ... %.2f s\n", secs[k][r]);
		}
	for (size_t k = 0; k < o.n; k++) {
		unsigned m = median_run(secs[k], o.repeat);

		snprintf(use[k], sizeof(use[k]), "%s", files[k][m]);
		med[k] = secs[k][m];
	}
	/* then each count above one under the profiled-thread framework,
	 * beside the pirate */
	for (size_t k = 1; real && k < o.n; k++) {
		unsigned t = o.threads[k];

		snprintf(sp.file[k], PATH_MAX, "%.*s/pirate-%u.sbp", PATH_MAX - 40, dir, t);
		snprintf(sp.stats[k], PATH_MAX, "%.*s/pirate-%u.stats", PATH_MAX - 40, dir, t);
		unlink(sp.stats[k]);
		if (!o.quiet)
			fprintf(stderr, "scalebpf stack: run %zu of %zu: %u threads, one at a time "
				"between barriers, the pirate holding %.1f MB of %.1f\n",
				o.n * o.repeat + k, runs, t,
				(double)sb_stack_pirate_bytes(&sp, t) / (1 << 20),
				(double)sp.llc / (1 << 20));
		if ((ret = run_one(&o, self, sp.file[k], t, &sp, k)) < 0) {
			fprintf(stderr, "scalebpf stack: the virtual pirate is used at %u threads\n",
				t);
			continue;
		}
		failed += ret;
		sb_stack_pirate_judge(&sp, k, t, o.quiet);
	}
	ret = assemble(&o, use, med, real ? &sp : NULL);
	if (failed && !ret)
		fprintf(stderr, "scalebpf stack: %d run%s failed (above): its stack may not be "
			"what the program does\n", failed, failed == 1 ? "" : "s");
	return ret ? ret : failed ? 1 : 0;
}
