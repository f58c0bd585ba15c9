// SPDX-License-Identifier: MIT
/*
 * `scalebpf cc --trace-mem`: clang calls __sanitizer_cov_load/storeN
 * before every load and store (-fsanitize-coverage=trace-loads,
 * trace-stores); each thread buffers records and appends them to its own
 * file (include/sbpf_trace.h) in the directory $SCALEBPF_TRACE_DIR
 * (default scalebpf-trace.PID), so threads never contend.  Sync records
 * come from the exact-mode runtime's flushes (sb_trace_sync), lock
 * records from the lock wrappers linked only into trace builds.
 *
 * The wrappers tail-call the real sync and lock functions (exact_rt.h;
 * only the trylocks, which never wait, return to theirs), so nothing
 * here runs when a sync call returns.  What the trace must show after
 * one is owed instead, and written just before the thread's next record,
 * whatever its kind (a load or store, a SYNC, an ACQUIRE or RELEASE):
 *   - RESUME: a thread's start and every SYNC leave one owed.  So a
 *     thread's first record is a RESUME (when its first run began), and
 *     every SYNC the thread goes on
 *     from and records anything after is followed by exactly one RESUME,
 *     the very next record (possibly right before the next SYNC: an
 *     OpenMP task's flush after its fork's); a thread's last SYNC gets
 *     none (what is owed at its end is dropped).  Its time is taken when
 *     it is written: an upper bound of when the thread left the sync
 *     call, the time of the first traced record after it (later than
 *     the return by the untraced work in between: runtime code,
 *     uninstrumented libraries).  A SYNC takes its own time after what
 *     was owed is written: times never go back.
 *   - ACQUIRE of a condvar wait's mutex (sb_trace_reacquire), written
 *     after the RESUME if both are owed.
 *   - STACK: the thread's stack range, owed at its start, after its
 *     first RESUME (the simulator names data on it "the stack of ...").
 * A blocking lock's ACQUIRE is written before the lock call, its RELEASE
 * before the unlock: the thread records nothing inside either, so each
 * lands at its place among the thread's records.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "exact_rt.h"
#include "sbpf_trace.h"

#define BUF_RECS 8192

/* trace_thread.owed: records due before the thread's next one */
#define OWE_RESUME  1u
#define OWE_ACQUIRE 2u     /* of reacquire, at reacquire_pc */
#define OWE_STACK   4u     /* the thread's stack range, after its start */

struct trace_thread {
	int fd;                /* -1: could not open, records are dropped */
	uint32_t n;
	uint32_t owed;         /* OWE_* */
	const void *reacquire;
	uintptr_t reacquire_pc;
	struct sb_trace_rec buf[BUF_RECS];
};

/* A thread's trace once it ended: later accesses (exit handlers) are not
 * recorded, and the file is not opened again. */
#define CLOSED ((struct trace_thread *)1)

static __thread struct trace_thread *tt;
static char dir[4096];
static unsigned long dropped;

static void write_all(int fd, const void *p, size_t len)
{
	const char *c = p;

	while (len) {
		ssize_t w = write(fd, c, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			__atomic_fetch_add(&dropped, len / sizeof(struct sb_trace_rec),
					   __ATOMIC_RELAXED);
			return;
		}
		c += w;
		len -= (size_t)w;
	}
}

static void trace_dir(void)
{
	const char *env = getenv("SCALEBPF_TRACE_DIR");

	if (env && *env)
		snprintf(dir, sizeof(dir), "%s", env);
	else
		snprintf(dir, sizeof(dir), "scalebpf-trace.%d", (int)getpid());
	if (mkdir(dir, 0755) && errno != EEXIST)
		fprintf(stderr, "scalebpf trace: cannot create %s: %s (no traces)\n", dir,
			strerror(errno));
}

static struct trace_thread *thread_open(void)
{
	struct sb_trace_hdr h = { .magic = SB_TRACE_MAGIC };
	struct trace_thread *t;
	char path[4200];

	t = malloc(sizeof(*t));
	if (t) {
		if (!dir[0])
			trace_dir();
		h.pid = (__u32)getpid();
		h.tid = (__u32)syscall(SYS_gettid);
		snprintf(path, sizeof(path), "%s/trace.%u", dir, h.tid);
		t->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		t->n = 0;
		/* its start (the first run's beginning) and its stack */
		t->owed = OWE_RESUME | OWE_STACK;
		t->reacquire = NULL;
		t->reacquire_pc = 0;
		if (t->fd >= 0)
			write_all(t->fd, &h, sizeof(h));
		tt = t;
	}
	return t;
}

static void drain(struct trace_thread *t)
{
	if (t->fd >= 0)
		write_all(t->fd, t->buf, t->n * sizeof(t->buf[0]));
	else
		__atomic_fetch_add(&dropped, t->n, __ATOMIC_RELAXED);
	t->n = 0;
}

static inline void append(struct trace_thread *t, uint64_t addr, uintptr_t pc, uint32_t kind,
			  uint32_t size)
{
	struct sb_trace_rec *r = &t->buf[t->n];

	r->addr = addr;
	r->pc = pc;
	r->kind = kind;
	r->size = size;
	if (__builtin_expect(++t->n == BUF_RECS, 0))
		drain(t);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The records owed (see the top), in their order. */
static __attribute__((noinline)) void pay(struct trace_thread *t)
{
	uint32_t owed = t->owed;

	t->owed = 0;
	if (owed & OWE_RESUME)
		append(t, now_ns(), 0, SB_TRACE_RESUME, 0);
	if (owed & OWE_STACK) {
		pthread_attr_t a;
		void *lo = NULL;
		size_t size = 0;

		if (!pthread_getattr_np(pthread_self(), &a)) {
			if (pthread_attr_getstack(&a, &lo, &size))
				lo = NULL;
			pthread_attr_destroy(&a);
		}
		if (lo)
			append(t, (uintptr_t)lo, (uintptr_t)lo + size, SB_TRACE_STACK, 0);
	}
	if (owed & OWE_ACQUIRE)
		append(t, (uintptr_t)t->reacquire, t->reacquire_pc, SB_TRACE_ACQUIRE, 0);
}

static inline void put(uint64_t addr, uintptr_t pc, uint32_t kind, uint32_t size)
{
	struct trace_thread *t = tt;

	if (__builtin_expect(!t || t == CLOSED, 0) && (t == CLOSED || !(t = thread_open())))
		return;
	if (__builtin_expect(t->owed != 0, 0))
		pay(t);
	append(t, addr, pc, kind, size);
}

/* A load or store, from mem_hooks.c. */
void sb_trace_access(uint64_t addr, uintptr_t pc, uint32_t kind, uint32_t size)
{
	put(addr, pc, kind, size);
}

void sb_trace_sync(uint16_t flags, uint32_t kind, uintptr_t obj)
{
	struct trace_thread *t = tt;

	/* what is owed before the SYNC's time is taken: times never go back
	 * (a thread whose first record is a SYNC opens its file first: its
	 * start's RESUME is owed too) */
	if (!t)
		t = thread_open();
	if (t && t != CLOSED && t->owed)
		pay(t);
	put(now_ns(), obj, SB_TRACE_SYNC, (uint32_t)(flags & 0xff) | (kind & 0xff) << 8);
	/* OpenMP workers are the runtime's threads and end unseen at exit():
	 * what a segment recorded is on disk when it ends. */
	if (tt && tt != CLOSED) {
		tt->owed |= OWE_RESUME;
		drain(tt);
	}
}

void sb_trace_lock(uint32_t kind, const void *lock, uintptr_t pc)
{
	put((uintptr_t)lock, pc, kind, 0);
}

/*
 * A condvar wait about to start (its RELEASE and SYNC written): the
 * mutex it takes again before it returns is owed as an ACQUIRE at pc.
 * Called last before the wait, as nothing may be written between.
 */
void sb_trace_reacquire(const void *lock, uintptr_t pc)
{
	struct trace_thread *t = tt;

	if (!t || t == CLOSED)
		return;
	t->reacquire = lock;
	t->reacquire_pc = pc;
	t->owed |= OWE_ACQUIRE;
}

void sb_trace_thread_done(void)
{
	struct trace_thread *t = tt;

	tt = CLOSED;
	if (!t || t == CLOSED)
		return;
	drain(t);
	if (t->fd >= 0)
		close(t->fd);
	free(t);
	/* the main thread ends last, at exit() */
	if (syscall(SYS_gettid) == getpid() && __atomic_load_n(&dropped, __ATOMIC_RELAXED))
		fprintf(stderr, "scalebpf trace: %lu records could not be written to %s\n",
			dropped, dir);
}
