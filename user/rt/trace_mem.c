// SPDX-License-Identifier: MIT
/*
 * `scalebpf cc --trace-mem`: clang calls __sanitizer_cov_load/storeN
 * before every load and store (-fsanitize-coverage=trace-loads,
 * trace-stores); each thread buffers records and appends them to its own
 * file (include/sbpf_trace.h) in the directory $SCALEBPF_TRACE_DIR
 * (default scalebpf-trace.PID), so threads never contend.  Sync records
 * come from the exact-mode runtime's flushes (sb_trace_sync).
 */
#include <errno.h>
#include <fcntl.h>
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

struct trace_thread {
	int fd;                /* -1: could not open, records are dropped */
	uint32_t n;
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

static inline void put(uint64_t addr, uintptr_t pc, uint32_t kind, uint32_t size)
{
	struct trace_thread *t = tt;
	struct sb_trace_rec *r;

	if (__builtin_expect(!t || t == CLOSED, 0) && (t == CLOSED || !(t = thread_open())))
		return;
	r = &t->buf[t->n];
	r->addr = addr;
	r->pc = pc;
	r->kind = kind;
	r->size = size;
	if (__builtin_expect(++t->n == BUF_RECS, 0))
		drain(t);
}

#define RET ((uintptr_t)__builtin_return_address(0))
#define ACCESS(name, n, kind) \
	void __sanitizer_cov_##name##n(void *addr) { put((uintptr_t)addr, RET, kind, n); }
ACCESS(load, 1, SB_TRACE_LOAD)
ACCESS(load, 2, SB_TRACE_LOAD)
ACCESS(load, 4, SB_TRACE_LOAD)
ACCESS(load, 8, SB_TRACE_LOAD)
ACCESS(load, 16, SB_TRACE_LOAD)
ACCESS(store, 1, SB_TRACE_STORE)
ACCESS(store, 2, SB_TRACE_STORE)
ACCESS(store, 4, SB_TRACE_STORE)
ACCESS(store, 8, SB_TRACE_STORE)
ACCESS(store, 16, SB_TRACE_STORE)

void sb_trace_sync(uint16_t flags)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	put((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec, flags, SB_TRACE_SYNC, 0);
	/* OpenMP workers are the runtime's threads and end unseen at exit():
	 * what a segment recorded is on disk when it ends. */
	if (tt && tt != CLOSED)
		drain(tt);
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
