// SPDX-License-Identifier: MIT
/*
 * The memory-trace runtime's owed records (user/rt/trace_mem.c, included
 * here for its statics).  One thread's calls as the wrappers make them,
 * and the records its file must hold, in this order:
 *   load                          RESUME STACK LOAD  (its start and
 *                                                    stack, owed)
 *   sync                          SYNC
 *   sync (nothing in between)     RESUME SYNC      owed, paid before it
 *   condvar wait: release, sync,  RESUME RELEASE SYNC
 *     reacquire owed
 *   store                         RESUME ACQUIRE STORE  (the wait's
 *                                 mutex and call site)
 *   lock                          ACQUIRE
 *   sync, thread done             SYNC             (the last: no RESUME)
 * Every RESUME's time lies between its SYNC's and the next SYNC's: the
 * owed records are written before a SYNC takes its time.  Nothing is
 * recorded after the thread's end.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "rt/trace_mem.c"
#include "rt/mem_hooks.c"   /* the callbacks, which feed trace_mem.c */
#include "sbpf_events.h"

#define NREC 64

/* A thread whose first record is a SYNC (an OpenMP worker's task start,
 * a main that first creates): its start's RESUME comes first, timed no
 * later than the SYNC. */
static pid_t first_sync_tid;

static void *first_sync(void *arg)
{
	(void)arg;
	first_sync_tid = (pid_t)syscall(SYS_gettid);
	sb_trace_sync(0, SB_TSYNC_OMP_TASK, 1);
	sb_trace_thread_done();
	return NULL;
}

static void check_first_sync(const char *dir)
{
	struct sb_trace_rec r[4];
	char path[4200];
	pthread_t th;
	ssize_t got;
	int fd;

	if (pthread_create(&th, NULL, first_sync, NULL))
		return;
	pthread_join(th, NULL);
	snprintf(path, sizeof(path), "%s/trace.%ld", dir, (long)first_sync_tid);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0, "%s", path);
	if (fd < 0)
		return;
	got = pread(fd, r, sizeof(r), sizeof(struct sb_trace_hdr));
	close(fd);
	unlink(path);
	CHECK(got == 3 * (ssize_t)sizeof(r[0]) && r[0].kind == SB_TRACE_RESUME &&
	      r[1].kind == SB_TRACE_STACK && r[2].kind == SB_TRACE_SYNC && r[0].addr <= r[2].addr,
	      "a first SYNC: RESUME at %llu, then STACK, SYNC at %llu (%zd bytes)",
	      (unsigned long long)r[0].addr, (unsigned long long)r[2].addr, got);
}

int main(void)
{
	char tmpl[] = "/tmp/sbpf_trace_mem.XXXXXX", path[4200];
	static const uint32_t want[] = {
		SB_TRACE_RESUME, SB_TRACE_STACK, SB_TRACE_LOAD, SB_TRACE_SYNC, SB_TRACE_RESUME,
		SB_TRACE_SYNC,
		SB_TRACE_RESUME, SB_TRACE_RELEASE, SB_TRACE_SYNC,
		SB_TRACE_RESUME, SB_TRACE_ACQUIRE, SB_TRACE_STORE,
		SB_TRACE_ACQUIRE, SB_TRACE_SYNC,
	};
	size_t nwant = sizeof(want) / sizeof(want[0]);
	struct sb_trace_rec r[NREC];
	struct sb_trace_hdr h;
	long x = 0, y = 0;
	int m = 0, other = 0, fd;
	ssize_t got;
	size_t n;

	if (!mkdtemp(tmpl)) {
		perror("mkdtemp");
		return 1;
	}
	setenv("SCALEBPF_TRACE_DIR", tmpl, 1);

	__sanitizer_cov_load8(&x);
	sb_trace_sync(0, SB_TSYNC_BARRIER, 0xba7);
	sb_trace_sync(0, SB_TSYNC_OTHER, 0);
	sb_trace_lock(SB_TRACE_RELEASE, &m, 0x10);   /* pthread_cond_wait's wrapper */
	sb_trace_sync(0, SB_TSYNC_COND_WAIT, 0xc0);
	sb_trace_reacquire(&m, 0x10);
	__sanitizer_cov_store8(&y);                  /* after the wait returned */
	sb_trace_lock(SB_TRACE_ACQUIRE, &other, 0x30);
	sb_trace_sync(SB_EXACT_LAST, SB_TSYNC_THREAD_END, 0x7);
	sb_trace_thread_done();
	/* after the end: neither recorded nor reopened */
	__sanitizer_cov_load8(&x);
	sb_trace_reacquire(&m, 0x10);
	sb_trace_sync(0, SB_TSYNC_OTHER, 0);

	snprintf(path, sizeof(path), "%s/trace.%ld", tmpl, (long)syscall(SYS_gettid));
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0, "%s: %s", path, strerror(errno));
	if (fd < 0)
		return 1;
	CHECK(read(fd, &h, sizeof(h)) == (ssize_t)sizeof(h) &&
	      !memcmp(h.magic, SB_TRACE_MAGIC, 8), "header");
	got = read(fd, r, sizeof(r));
	close(fd);
	n = got > 0 ? (size_t)got / sizeof(r[0]) : 0;
	CHECK(n == nwant, "%zu records, want %zu", n, nwant);
	for (size_t i = 0; i < n && i < nwant; i++)
		CHECK(r[i].kind == want[i], "record %zu: kind %u, want %u", i, r[i].kind, want[i]);
	if (n == nwant) {
		CHECK(r[1].addr <= (uintptr_t)&fd && (uintptr_t)&fd < r[1].pc,
		      "the stack [%llx, %llx) holds a local", (unsigned long long)r[1].addr,
		      (unsigned long long)r[1].pc);
		CHECK(r[2].addr == (uintptr_t)&x && r[2].size == 8, "the load");
		CHECK(r[3].pc == 0xba7 && r[3].size == SB_TSYNC_BARRIER << 8,
		      "the barrier's SYNC: object %llx, size %#x", (unsigned long long)r[3].pc,
		      r[3].size);
		CHECK(r[7].addr == (uintptr_t)&m && r[7].pc == 0x10, "the wait's release");
		CHECK(r[8].pc == 0xc0 && r[8].size == SB_TSYNC_COND_WAIT << 8, "the wait's SYNC");
		CHECK(r[10].addr == (uintptr_t)&m && r[10].pc == 0x10,
		      "the wait's owed acquire: %llx at %llx", (unsigned long long)r[10].addr,
		      (unsigned long long)r[10].pc);
		CHECK(r[11].addr == (uintptr_t)&y, "the store");
		CHECK(r[12].addr == (uintptr_t)&other && r[12].pc == 0x30, "the lock");
		CHECK(r[13].pc == 0x7 && r[13].size == (SB_EXACT_LAST | SB_TSYNC_THREAD_END << 8),
		      "the last SYNC: flags and kind %#x", r[13].size);
		/* SYNC and RESUME times never go back */
		for (size_t i = 1, last = 0; i < n; i++) {
			if (r[i].kind != SB_TRACE_SYNC && r[i].kind != SB_TRACE_RESUME)
				continue;
			CHECK(r[i].addr >= r[last].addr, "record %zu at %llu before record %zu at %llu",
			      i, (unsigned long long)r[i].addr, last, (unsigned long long)r[last].addr);
			last = i;
		}
	}
	unlink(path);
	check_first_sync(tmpl);
	rmdir(tmpl);
	return CHECK_DONE("test_trace_mem");
}
