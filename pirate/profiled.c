// SPDX-License-Identifier: MIT
/*
 * The profiled-thread framework as a preloaded library (profiled.h has
 * the rule).  Built into build/libscalebpf-profiled.so with pirate.c and
 * profiled_stats.c; `scalebpf stack --pirate real` preloads it through
 * `env LD_PRELOAD=...` under `record`, so only the program loads it.
 */
#include "profiled.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define WATCH_MS 10        /* a held thread looks at the profiled one this often */
#define BLOCKED_CHECKS 5   /* blocked this many looks in a row: give up */
#define AHEAD_CHECKS 50    /* held while it waits in a barrier: give up */

enum role { ROLE_MAIN = 0, ROLE_PROFILED, ROLE_OTHER };

typedef int (*barrier_wait_fn)(pthread_barrier_t *);
typedef int (*join_fn)(pthread_t, void **);

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int active;                 /* SCALEBPF_PROFILED_OUT set */
	int abandoned;
	int alive;                  /* a profiled thread runs */
	pid_t tid;                  /* it */
	int alone;                  /* it runs alone now */
	int in_barrier;             /* it waits in the real barrier */
	uint64_t phase;             /* profiled threads made */
	uint64_t arrivals;          /* its barrier arrivals */
	double since;               /* its turn began */
	int pirate_cpu, profiled_cpu;
	struct sb_pirate *pirate;
	struct sb_profiled_stats st;
	const char *out;
	pthread_key_t exit_key;
	uint64_t site_addr[SB_PROFILED_MAX_SITES];   /* runtime, of st.sites[] */
	/* the last profiled thread's final turn, for the site of the join
	 * that reaps it (a fork-join phase's) */
	pthread_t exit_th;
	uint64_t exit_busy;
	int exit_pending;
} g = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static __thread int role;
static __thread uint64_t my_phase, passed;
static __thread uint64_t turn_cpu;   /* the profiled thread's CPU time at its turn's start */

static sb_pirate_create_fn real_create;
static barrier_wait_fn real_barrier_wait;
static join_fn real_join;

struct start {
	void *(*fn)(void *);
	void *arg;
	int role;
	uint64_t phase;
};

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* Adds the profiled thread's busy time of a turn to the barrier call at
 * `call` (g.mu held): the site as the recorder keys it, an ELF virtual
 * address in its binary. */
static void site_add(uint64_t call, uint64_t busy)
{
	struct sb_profiled_site *x;
	struct link_map *lm = NULL;
	Dl_info info;
	uint32_t i;

	for (i = 0; i < g.st.nsites && g.site_addr[i] != call; i++)
		;
	if (i == g.st.nsites) {
		if (i == SB_PROFILED_MAX_SITES) {
			g.st.sites_dropped++;
			return;
		}
		x = &g.st.sites[i];
		memset(x, 0, sizeof(*x));
		if (!dladdr1((void *)call, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm) {
			g.st.sites_dropped++;
			return;
		}
		x->vaddr = call - (uint64_t)lm->l_addr;
		/* the main program's name may come back empty */
		if (info.dli_fname && *info.dli_fname)
			snprintf(x->binary, sizeof(x->binary), "%s", info.dli_fname);
		else if (readlink("/proc/self/exe", x->binary, sizeof(x->binary) - 1) < 0)
			snprintf(x->binary, sizeof(x->binary), "?");
		g.site_addr[i] = call;
		g.st.nsites++;
	}
	g.st.sites[i].busy_ns += busy;
	g.st.sites[i].count++;
}

static void resolve(void)
{
	if (!real_create)
		real_create = (sb_pirate_create_fn)dlsym(RTLD_NEXT, "pthread_create");
	if (!real_barrier_wait)
		real_barrier_wait = (barrier_wait_fn)dlsym(RTLD_NEXT, "pthread_barrier_wait");
	if (!real_join)
		real_join = (join_fn)dlsym(RTLD_NEXT, "pthread_join");
}

static double env_num(const char *name, double dflt)
{
	const char *v = getenv(name);
	char *end;
	double x;

	if (!v || !*v)
		return dflt;
	x = strtod(v, &end);
	return *end || x < 0 ? dflt : x;
}

static void pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* Gives up for the rest of the run (g.mu held): everyone runs free. */
static void abandon(const char *why)
{
	if (!g.abandoned) {
		g.abandoned = 1;
		snprintf(g.st.why, sizeof(g.st.why), "%s", why);
	}
	if (g.alone) {
		g.st.alone_ns += (uint64_t)(now_ns() - g.since);
		g.alone = 0;
	}
	if (g.pirate)   /* its thread never takes g.mu */
		sb_pirate_pause(g.pirate);
	pthread_cond_broadcast(&g.cv);
}

/* The profiled thread's state letter and CPU time (ns), from /proc. */
static int peek(pid_t tid, char *state, unsigned long long *cpu_ns)
{
	char path[96], buf[512], *p;
	FILE *f;
	int ok = 0;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	if ((f = fopen(path, "r"))) {
		if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) && p[1] == ' ')
			*state = p[2], ok = 1;
		fclose(f);
	}
	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", (int)tid);
	if (ok && (f = fopen(path, "r"))) {
		ok = fscanf(f, "%llu", cpu_ns) == 1;
		fclose(f);
	}
	return ok;
}

/* A thread of phase ph past `k` barriers waits (g.mu held) until the
 * profiled thread has arrived at barrier k + 1, ended, or a new phase
 * began; watching that it is not blocked elsewhere meanwhile. */
static void hold(uint64_t ph, uint64_t k)
{
	unsigned long long last = 0, cpu;
	unsigned still = 0, ahead = 0;

	while (!g.abandoned && g.alive && g.phase == ph && g.arrivals <= k) {
		struct timespec t;
		pid_t tid = g.tid;
		char st;

		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_nsec += WATCH_MS * 1000000L;
		if (t.tv_nsec >= 1000000000L)
			t.tv_sec++, t.tv_nsec -= 1000000000L;
		if (pthread_cond_timedwait(&g.cv, &g.mu, &t) != ETIMEDOUT)
			continue;
		/* held past more barriers than it reached, while it waits at
		 * one: barriers of thread subsets; it may be waiting for us */
		ahead = g.in_barrier ? ahead + 1 : 0;
		if (ahead >= AHEAD_CHECKS) {
			abandon("a thread passed more barriers than the profiled thread reached "
				"(barriers of thread subsets) while it waited at one");
			break;
		}
		if (!g.alone)
			continue;
		if (!peek(tid, &st, &cpu) || (st != 'S' && st != 'D') || cpu != last) {
			last = cpu;
			still = 0;
			continue;
		}
		if (++still >= BLOCKED_CHECKS) {
			char why[160];

			snprintf(why, sizeof(why), "the profiled thread %d blocked for %d ms "
				 "outside a pthread barrier while the others were held", (int)tid,
				 WATCH_MS * BLOCKED_CHECKS);
			abandon(why);
		}
	}
}

/* The profiled thread's turn: the pirate warms its set, then it runs
 * alone (g.mu not held). */
static void turn_begin(void)
{
	int off;

	pthread_mutex_lock(&g.mu);
	off = g.abandoned;
	pthread_mutex_unlock(&g.mu);
	if (off)
		return;
	if (g.pirate)
		sb_pirate_resume(g.pirate);
	pthread_mutex_lock(&g.mu);
	if (!g.abandoned) {
		g.alone = 1;
		g.since = now_ns();
		g.st.turns++;
	}
	pthread_mutex_unlock(&g.mu);
	turn_cpu = thread_cpu_ns();
}

/* Its turn ends (g.mu held); the pirate is paused by the caller. */
static void turn_end(void)
{
	if (g.alone) {
		g.st.alone_ns += (uint64_t)(now_ns() - g.since);
		g.alone = 0;
	}
	pthread_cond_broadcast(&g.cv);
}

static void profiled_exit(void *unused)
{
	uint64_t busy = thread_cpu_ns() - turn_cpu;

	(void)unused;
	pthread_mutex_lock(&g.mu);
	if (g.alone) {
		g.exit_th = pthread_self();
		g.exit_busy = busy;
		g.exit_pending = 1;
	}
	turn_end();
	g.alive = 0;
	pthread_cond_broadcast(&g.cv);
	pthread_mutex_unlock(&g.mu);
	if (g.pirate)
		sb_pirate_pause(g.pirate);
}

/* Its tid, recorded by the profiled thread itself before any other
 * thread of the phase runs (they are held until it arrives or ends). */
static void note_tid(void)
{
	pid_t tid = (pid_t)syscall(SYS_gettid);

	if (g.tid == tid)
		return;
	g.tid = tid;
	if (g.st.ntids < SB_PROFILED_MAX_TIDS)
		g.st.tids[g.st.ntids++] = tid;
	else
		g.st.tids_dropped++;
}

static void *trampoline(void *v)
{
	struct start s = *(struct start *)v;

	free(v);
	role = s.role;
	my_phase = s.phase;
	passed = 0;
	if (role == ROLE_PROFILED) {
		pin(g.profiled_cpu);
		pthread_setspecific(g.exit_key, (void *)1);   /* profiled_exit at its end */
		pthread_mutex_lock(&g.mu);
		note_tid();
		pthread_mutex_unlock(&g.mu);
		turn_begin();
	} else {
		pthread_mutex_lock(&g.mu);
		hold(my_phase, 0);
		pthread_mutex_unlock(&g.mu);
	}
	return s.fn(s.arg);
}

/* The pirate, at the first profiled thread (g.mu held). */
static void pirate_start(void)
{
	struct sb_pirate_opts o = {
		.bytes = (uint64_t)env_num("SCALEBPF_PIRATE_BYTES", 0),
		.hit_ns = env_num("SCALEBPF_PIRATE_HIT_NS", 0),
		.miss_ns = env_num("SCALEBPF_PIRATE_MISS_NS", 0),
		.cpu = g.pirate_cpu,
		.create = real_create,
	};
	char err[160], why[200];

	if (!o.bytes || g.pirate || g.st.pirate)
		return;
	g.st.pirate = 1;   /* tried */
	if (g.pirate_cpu < 0) {
		abandon("one CPU: no room for a pirate beside the profiled thread");
		return;
	}
	if (sb_pirate_alloc(&g.pirate, &o, err, sizeof(err))) {
		snprintf(why, sizeof(why), "pirate: %s", err);
		abandon(why);
	}
}

int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	struct start *s;
	int r;

	resolve();
	if (!g.active || !(s = malloc(sizeof(*s))))
		return real_create(th, attr, fn, arg);
	s->fn = fn;
	s->arg = arg;
	pthread_mutex_lock(&g.mu);
	if (!g.alive && !g.abandoned) {
		pirate_start();
		s->role = g.abandoned ? ROLE_OTHER : ROLE_PROFILED;
		if (s->role == ROLE_PROFILED) {
			g.alive = 1;
			g.tid = 0;
			g.phase++;
			g.arrivals = 0;
		}
	} else {
		s->role = ROLE_OTHER;
	}
	s->phase = g.phase;
	pthread_mutex_unlock(&g.mu);
	r = real_create(th, attr, trampoline, s);
	if (r) {
		pthread_mutex_lock(&g.mu);
		if (s->role == ROLE_PROFILED)
			g.alive = 0;
		pthread_cond_broadcast(&g.cv);
		pthread_mutex_unlock(&g.mu);
		free(s);
	}
	return r;
}

int pthread_barrier_wait(pthread_barrier_t *b)
{
	int r;

	resolve();
	if (!g.active)
		return real_barrier_wait(b);
	if (role == ROLE_PROFILED) {
		/* the call's address, as the recorder keys a site: return − 1 */
		uint64_t call = (uint64_t)__builtin_return_address(0) - 1;
		uint64_t busy = thread_cpu_ns() - turn_cpu;

		pthread_mutex_lock(&g.mu);
		if (g.alone)
			site_add(call, busy);
		g.arrivals++;
		turn_end();
		pthread_mutex_unlock(&g.mu);
		if (g.pirate)
			sb_pirate_pause(g.pirate);
		pthread_mutex_lock(&g.mu);
		g.in_barrier = 1;
		pthread_mutex_unlock(&g.mu);
		r = real_barrier_wait(b);
		pthread_mutex_lock(&g.mu);
		g.in_barrier = 0;
		pthread_mutex_unlock(&g.mu);
		turn_begin();
		return r;
	}
	if (role == ROLE_MAIN) {
		pthread_mutex_lock(&g.mu);
		g.st.main_overlap += (uint64_t)g.alone;
		pthread_mutex_unlock(&g.mu);
	}
	r = real_barrier_wait(b);
	passed++;
	if (role == ROLE_OTHER) {
		pthread_mutex_lock(&g.mu);
		hold(my_phase, passed);
		pthread_mutex_unlock(&g.mu);
	}
	return r;
}

/* The join that reaps the profiled thread closes its fork-join phase:
 * its final turn's time goes to the join's site. */
int pthread_join(pthread_t th, void **ret)
{
	uint64_t call = (uint64_t)__builtin_return_address(0) - 1;
	int r;

	resolve();
	r = real_join(th, ret);
	if (!r && g.active) {
		pthread_mutex_lock(&g.mu);
		if (g.exit_pending && pthread_equal(th, g.exit_th)) {
			site_add(call, g.exit_busy);
			g.exit_pending = 0;
		}
		pthread_mutex_unlock(&g.mu);
	}
	return r;
}

/* Two CPUs the program may use: the pirate's (the last) and the
 * profiled thread's (the first other); -1 when there is one. */
static void pick_cpus(void)
{
	cpu_set_t set;
	int first = -1, last = -1;

	g.pirate_cpu = g.profiled_cpu = -1;
	if (sched_getaffinity(0, sizeof(set), &set))
		return;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set)) {
			if (first < 0)
				first = c;
			last = c;
		}
	if (first == last)
		return;
	g.pirate_cpu = (int)env_num("SCALEBPF_PIRATE_CPU", last);
	g.profiled_cpu = (int)env_num("SCALEBPF_PROFILED_CPU",
				      g.pirate_cpu == first ? last : first);
}

__attribute__((constructor)) static void profiled_init(void)
{
	resolve();
	g.out = getenv("SCALEBPF_PROFILED_OUT");
	if (!g.out || !*g.out || !real_create || !real_barrier_wait || !real_join)
		return;
	if (pthread_key_create(&g.exit_key, profiled_exit))
		return;
	pick_cpus();
	g.active = 1;
}

/* At exit: the stats, for `scalebpf stack`. */
__attribute__((destructor)) static void profiled_fini(void)
{
	struct sb_pirate *p;
	int r;

	/* only a process that made a profiled thread says anything: a shell
	 * or launcher on the way to the program loads the library too */
	if (!g.active || (!g.phase && !g.abandoned))
		return;
	pthread_mutex_lock(&g.mu);
	turn_end();
	p = g.pirate;
	pthread_mutex_unlock(&g.mu);
	if (p) {
		sb_pirate_pause(p);
		sb_pirate_stats(p, &g.st.ps);
	}
	g.st.abandoned = g.abandoned;
	if ((r = sb_profiled_stats_write(&g.st, g.out)))
		fprintf(stderr, "scalebpf profiled-thread framework: cannot write %s: %s\n", g.out,
			strerror(-r));
}
