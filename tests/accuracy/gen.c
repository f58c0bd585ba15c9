/* gen — writes one planted-cause program of scalebpf's accuracy suite.
 *
 *   gen SEED INDEX DIR [VAR=VALUE...]
 *
 * From (SEED, INDEX) alone it chooses, each independently: the cause, where
 * its work sits, the compiler and flags, the threading runtime, the
 * thread count, the launch and the run length; VAR=VALUE fixes one (cause,
 * place, cc, opt, pie, rt, sched, threads, launch, secs).  It writes
 * DIR/pINDEX.c and DIR/pINDEX.meta: shell assignments with every choice,
 * the planted lines (accept="f.c:N ..."), the closing sync lines of the
 * planted section (sync="f.c:N ...") and the program's arguments.
 * Nothing about the tool is consulted: programs are written as people
 * write them, and the lines are known because they are counted as written.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

static const char *const cause_names[C_N] = { "owner", "root", "trip", "tri", "search", "cache", "lock" };
static const char *const place_names[P_N] = { "inline", "helper", "deep", "tail", "shared", "fptr", "lib" };
static const char *const rt_names[R_N] = { "pbar", "cvfunc", "cvmacro", "gomp", "omp" };
static const char *const launch_names[] = { "direct", "env", "sh", "pid" };
static const char *const opt_names[] = { "-O1", "-O2", "-O3" };

unsigned long long rnd(struct prog *p)
{
	unsigned long long z = (p->rng += 0x9e3779b97f4a7c15ULL);   /* splitmix64 */

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

int pick(struct prog *p, int n)
{
	return n > 0 ? (int)(rnd(p) % (unsigned long long)n) : 0;
}

const char *pickname(struct prog *p, const char *const *names, int n)
{
	return names[pick(p, n)];
}

void L(struct prog *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(p->f, fmt, ap);
	va_end(ap);
	fputc('\n', p->f);
	p->line++;
}

void accept_here(struct prog *p)
{
	if (p->naccept < 4)
		p->accept[p->naccept++] = p->line + 1;
}

void sync_here(struct prog *p)
{
	if (p->nsync < 4)
		p->sync[p->nsync++] = p->line + 1;
}

static int lookup(const char *const *names, int n, const char *v)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(names[i], v))
			return i;
	fprintf(stderr, "gen: unknown value '%s'\n", v);
	exit(2);
}

static int is_omp(const struct prog *p)
{
	return p->rt == R_GOMP || p->rt == R_OMP;
}

/* --- the runtime: its declarations and its sync call ------------------ */

static void emit_runtime_decls(struct prog *p)
{
	if (p->rt == R_PBAR) {
		L(p, "static pthread_barrier_t bar;");
	} else if (p->rt == R_CVFUNC || p->rt == R_CVMACRO) {
		L(p, "struct team {");
		L(p, "\tpthread_mutex_t m;");
		L(p, "\tpthread_cond_t c;");
		L(p, "\tint count, n;");
		L(p, "\tunsigned gen;");
		L(p, "};");
		L(p, "static struct team team = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0 };");
	}
	if (p->rt == R_CVFUNC) {
		L(p, "static void %s(struct team *b)", p->cvname);
		L(p, "{");
		L(p, "\tpthread_mutex_lock(&b->m);");
		L(p, "\tunsigned g = b->gen;");
		L(p, "\tif (++b->count == b->n) {");
		L(p, "\t\tb->count = 0;");
		L(p, "\t\tb->gen++;");
		L(p, "\t\tpthread_cond_broadcast(&b->c);");
		L(p, "\t} else {");
		L(p, "\t\twhile (g == b->gen)");
		sync_here(p);  /* inlined, its wait is where the section shows */
		L(p, "\t\t\tpthread_cond_wait(&b->c, &b->m);");
		L(p, "\t}");
		L(p, "\tpthread_mutex_unlock(&b->m);");
		L(p, "}");
	} else if (p->rt == R_CVMACRO) {
		L(p, "#define ALL_WAIT(b) do { \\");
		L(p, "\tpthread_mutex_lock(&(b)->m); \\");
		L(p, "\tunsigned g_ = (b)->gen; \\");
		L(p, "\tif (++(b)->count == (b)->n) { \\");
		L(p, "\t\t(b)->count = 0; (b)->gen++; \\");
		L(p, "\t\tpthread_cond_broadcast(&(b)->c); \\");
		L(p, "\t} else { \\");
		L(p, "\t\twhile (g_ == (b)->gen) pthread_cond_wait(&(b)->c, &(b)->m); \\");
		L(p, "\t} \\");
		L(p, "\tpthread_mutex_unlock(&(b)->m); \\");
		L(p, "} while (0)");
	}
	L(p, "%s", "");
}

static void emit_sync(struct prog *p, const char *ind, int planted)
{
	if (planted)
		sync_here(p);
	switch (p->rt) {
	case R_PBAR: L(p, "%spthread_barrier_wait(&bar);", ind); break;
	case R_CVFUNC: L(p, "%s%s(&team);", ind, p->cvname); break;
	case R_CVMACRO: L(p, "%sALL_WAIT(&team);", ind); break;
	default: L(p, "#pragma omp barrier"); break;
	}
}

/* --- the program ------------------------------------------------------ */

static void emit_program(struct prog *p)
{
	L(p, "/* %s: a generated planted-cause program (tests/accuracy/gen.c) */", p->name);
	L(p, "#define _GNU_SOURCE");
	L(p, "#include <pthread.h>");
	L(p, "#include <stdio.h>");
	L(p, "#include <stdlib.h>");
	L(p, "#include <string.h>");
	L(p, "#include <unistd.h>");
	if (is_omp(p))
		L(p, "#include <omp.h>");
	L(p, "%s", "");
	L(p, "static volatile unsigned long sink;");
	L(p, "static unsigned long iters;");
	L(p, "static int nthreads;");
	L(p, "%s", "");
	emit_runtime_decls(p);
	emit_helpers(p);
	emit_cause_globals(p);
	if (!is_omp(p)) {
		L(p, "static void *worker(void *arg)");
		L(p, "{");
		L(p, "\tint %s = (int)(long)arg;", p->me);
		L(p, "%s", "");
		emit_sync(p, "\t", 0);    /* everyone set up: the timed part starts */
		L(p, "\tfor (unsigned long it = 0; it < iters; it++) {");
		emit_cause(p, "\t\t");
		emit_sync(p, "\t\t", 1);
		L(p, "\t}");
		L(p, "\treturn NULL;");
		L(p, "}");
		L(p, "%s", "");
	}
	L(p, "int main(int argc, char **argv)");
	L(p, "{");
	L(p, "\tconst char *nt = argc > 1 ? argv[1] : \"env\";");
	L(p, "%s", "");
	L(p, "\tif (argc < 3) {");
	L(p, "\t\tfprintf(stderr, \"usage: %%s THREADS|env ITERS [DELAY_MS]\\n\", argv[0]);");
	L(p, "\t\treturn 2;");
	L(p, "\t}");
	L(p, "\titers = strtoul(argv[2], NULL, 10);");
	L(p, "\tif (argc > 3)");
	L(p, "\t\tusleep((useconds_t)atoi(argv[3]) * 1000);");
	if (is_omp(p)) {
		L(p, "\tif (strcmp(nt, \"env\"))");
		L(p, "\t\tomp_set_num_threads(atoi(nt));");
		L(p, "\tnthreads = omp_get_max_threads();");
	} else {
		L(p, "\tif (!strcmp(nt, \"env\"))");
		L(p, "\t\tnt = getenv(\"ACC_THREADS\") ? getenv(\"ACC_THREADS\") : \"4\";");
		L(p, "\tnthreads = atoi(nt);");
		L(p, "\tif (nthreads < 1 || nthreads > 64)");
		L(p, "\t\treturn 2;");
	}
	emit_cause_setup(p, "\t");
	if (p->rt == R_PBAR)
		L(p, "\tpthread_barrier_init(&bar, NULL, (unsigned)nthreads);");
	else if (!is_omp(p))
		L(p, "\tteam.n = nthreads;");
	if (!is_omp(p)) {
		L(p, "\tpthread_t *th = calloc((size_t)nthreads, sizeof(*th));");
		L(p, "\tfor (long t = 0; t < nthreads; t++)");
		L(p, "\t\tpthread_create(&th[t], NULL, worker, (void *)t);");
		L(p, "\tfor (long t = 0; t < nthreads; t++)");
		L(p, "\t\tpthread_join(th[t], NULL);");
	} else if (p->region_per_iter) {
		sync_here(p);  /* gcc places the region's call at the loop */
		L(p, "\tfor (unsigned long it = 0; it < iters; it++) {");
		if (p->cause == C_TRI) {
			emit_cause(p, "\t\t");   /* its `parallel for` is the region */
		} else {
			sync_here(p);
			L(p, "#pragma omp parallel");
			L(p, "\t\t{");
			L(p, "\t\t\tint %s = omp_get_thread_num();", p->me);
			L(p, "%s", "");
			emit_cause(p, "\t\t\t");
			sync_here(p);
			L(p, "\t\t}");
		}
		L(p, "\t}");
	} else {
		L(p, "#pragma omp parallel");
		L(p, "\t{");
		L(p, "\t\tint %s = omp_get_thread_num();", p->me);
		L(p, "%s", "");
		L(p, "\t\tfor (unsigned long it = 0; it < iters; it++) {");
		emit_cause(p, "\t\t\t");
		emit_sync(p, "\t\t\t", 1);
		L(p, "\t\t}");
		L(p, "\t}");
	}
	L(p, "\tprintf(\"%%lu\\n\", (unsigned long)sink & 1);");
	L(p, "\treturn 0;");
	L(p, "}");
}

static void lines(FILE *m, const char *key, const char *file, const int *v, int n)
{
	fprintf(m, "%s=\"", key);
	for (int i = 0; i < n; i++)
		fprintf(m, "%s%s:%d", i ? " " : "", file, v[i]);
	fprintf(m, "\"\n");
}

/* VAR=VALUE given on the command line, else the drawn value */
static const char *over_get(const char *(*over)[2], int n, const char *name, const char *dflt)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(over[i][0], name))
			return over[i][1];
	return dflt;
}

int main(int argc, char **argv)
{
	static const char *const mes[] = { "me", "tid", "id", "rank", "self", "who" };
	static const char *const kerns[] = { "crunch", "relax_block", "update_cell", "smooth",
					     "do_block", "process_item", "kernel_step", "compute_tile" };
	static const char *const bals[] = { "prepare", "local_pass", "halo_update", "common_work" };
	static const char *const cvs[] = { "team_barrier", "sync_all", "rendezvous", "wait_for_all",
					   "my_barrier", "phase_sync" };
	struct prog p = { 0 };
	const char *over[16][2];
	int nover = 0, launch, opt, pie, cc, hz;
	char path[4096], file[64];
	FILE *m;

	if (argc < 4) {
		fprintf(stderr, "usage: gen SEED INDEX DIR [VAR=VALUE...]\n");
		return 2;
	}
	p.rng = strtoull(argv[1], NULL, 0) * 0x2545f4914f6cdd1dULL + strtoull(argv[2], NULL, 0) * 0x9e3779b97f4a7c15ULL;
	rnd(&p);
	for (int i = 4; i < argc && nover < 16; i++) {
		char *eq = strchr(argv[i], '=');

		if (!eq) {
			fprintf(stderr, "gen: '%s' is not VAR=VALUE\n", argv[i]);
			return 2;
		}
		*eq = 0;
		over[nover][0] = argv[i];
		over[nover++][1] = eq + 1;
	}
#define OVER(name, dflt) over_get(over, nover, name, dflt)
	/* every choice is drawn, overridden or not, so one override leaves
	 * the program's other variables as the seed made them */
	p.cause = pick(&p, C_N);
	p.place = pick(&p, P_N);
	p.rt = pick(&p, R_N);
	cc = pick(&p, 2);
	opt = pick(&p, 3);
	pie = pick(&p, 2);
	p.omp_dyn = pick(&p, 2);
	p.region_per_iter = pick(&p, 2);
	launch = pick(&p, 4);
	{
		int r = pick(&p, 10);

		p.nt = r < 5 ? 3 + pick(&p, 6) : r < 8 ? 9 + pick(&p, 8) : 17 + pick(&p, 16);
		r = pick(&p, 100);
		p.secs = r < 55 ? 1 + pick(&p, 10) / 10.0 : r < 80 ? 2 + pick(&p, 3)
			: r < 92 ? 5 + pick(&p, 5) : 10 + pick(&p, 21);
	}
	p.lib = pick(&p, 3);
	hz = pick(&p, 3);
	p.cause = lookup(cause_names, C_N, OVER("cause", cause_names[p.cause]));
	p.place = lookup(place_names, P_N, OVER("place", place_names[p.place]));
	p.rt = lookup(rt_names, R_N, OVER("rt", rt_names[p.rt]));
	cc = !strcmp(OVER("cc", cc ? "clang" : "gcc"), "clang");
	opt = lookup(opt_names, 3, OVER("opt", opt_names[opt]));
	pie = !strcmp(OVER("pie", pie ? "pie" : "nopie"), "pie");
	p.omp_dyn = !strcmp(OVER("sched", p.omp_dyn ? "dynamic" : "static"), "dynamic");
	launch = lookup(launch_names, 4, OVER("launch", launch_names[launch]));
	p.nt = atoi(OVER("threads", "0")) ? atoi(OVER("threads", "0")) : p.nt;
	p.secs = atof(OVER("secs", "0")) > 0 ? atof(OVER("secs", "0")) : p.secs;
	if (p.rt == R_GOMP)       /* the runtime decides the compiler */
		cc = 0;
	else if (p.rt == R_OMP)
		cc = 1;
	if (!is_omp(&p))
		p.omp_dyn = p.region_per_iter = 0;
	p.me = pickname(&p, mes, 6);
	p.kern = pickname(&p, kerns, 8);
	p.bal = pickname(&p, bals, 4);
	p.outer = "run_part";
	p.wrap = "dispatch";
	p.chase = "chase";
	p.cvname = pickname(&p, cvs, 6);
	snprintf(p.name, sizeof(p.name), "p%03d", atoi(argv[2]));
	snprintf(file, sizeof(file), "%s.c", p.name);

	plan_cause(&p);
	{
		double target = 2000 + pick(&p, 28000);   /* one instance, us */
		double s = target / (p.inst_us > 1 ? p.inst_us : 1);

		p.bu = s < 1 ? 1 : (unsigned long)(s + 0.5);
		p.inst_us = p.inst_us * (double)p.bu + 20.0 * p.nt;
		p.iters = (unsigned long)(p.secs * 1e6 / p.inst_us);
		p.iters = p.iters < 4 ? 4 : p.iters > 5000 ? 5000 : p.iters;
		p.iters_exact = p.iters / 4 < 4 ? 4 : p.iters / 4;
	}
	snprintf(path, sizeof(path), "%s/%s", argv[3], file);
	p.f = fopen(path, "w");
	if (!p.f) {
		perror(path);
		return 1;
	}
	emit_program(&p);
	if (fclose(p.f)) {
		perror(path);
		return 1;
	}
	snprintf(path, sizeof(path), "%s/%s.meta", argv[3], p.name);
	m = fopen(path, "w");
	if (!m) {
		perror(path);
		return 1;
	}
	fprintf(m, "name=%s\nseed=%s\nindex=%s\nsrc=%s\n", p.name, argv[1], argv[2], file);
	fprintf(m, "cause=%s\nplace=%s\nrt=%s\ncc=%s\nopt=%s\npie=%s\n", cause_names[p.cause],
		place_names[p.place], rt_names[p.rt], cc ? "clang" : "gcc", opt_names[opt], pie ? "pie" : "nopie");
	fprintf(m, "sched=%s\nregion=%s\nlaunch=%s\nthreads=%d\nsecs=%g\n",
		!is_omp(&p) ? "-" : p.omp_dyn ? "dynamic" : "static",
		!is_omp(&p) ? "-" : p.region_per_iter ? "per_iter" : "barrier",
		launch_names[launch], p.nt, p.secs);
	fprintf(m, "lib=%s\n", p.place == P_LIB ? (p.cause == C_SEARCH ? "strlen" : p.cause == C_CACHE ? "memcpy"
			: p.lib == 0 ? "qsort" : p.lib == 1 ? "memcpy" : "strtod") : "-");
	fprintf(m, "iters=%lu\niters_exact=%lu\nunits=%lu\ninst_us=%.0f\n", p.iters, p.iters_exact, p.bu, p.inst_us);
	fprintf(m, "params=\"%s\"\n", p.params);
	fprintf(m, "hz=%s\n", OVER("hz", hz == 0 ? "default" : hz == 1 ? "499" : "999"));
	fprintf(m, "barrier_fn=%s\n", p.rt == R_CVFUNC ? p.cvname : "-");
	fprintf(m, "expect_kind=%s\n", p.cause == C_CACHE ? "hardware" : "any");
	lines(m, "accept", file, p.accept, p.naccept);
	lines(m, "sync", file, p.sync, p.nsync);
	return fclose(m) ? 1 : 0;
}
