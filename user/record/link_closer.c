// SPDX-License-Identifier: MIT
/* The link closer process (link_closer.h). */
#include "link_closer.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include "bpf_links.h"

static int sock = -1;   /* ours; -1: no closer */

/* Messages: an fd (tag SB_MSG_FD), and a tag alone (SB_MSG_CLOSED). */
enum { SB_MSG_FD = 0, SB_MSG_CLOSED = 2 };

/* A message: its fd, or -EBADMSG for a tag alone (*tag), -EPIPE at the
 * end (the recorder closed its side). */
static int recv_msg(int s, char *tag)
{
	char ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = tag, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	struct cmsghdr *c;
	ssize_t n;
	int fd;

	do {
		n = recvmsg(s, &m, 0);
	} while (n < 0 && errno == EINTR);
	if (n <= 0)
		return -EPIPE;
	c = CMSG_FIRSTHDR(&m);
	if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
	    c->cmsg_len != CMSG_LEN(sizeof(int)))
		return -EBADMSG;
	memcpy(&fd, CMSG_DATA(c), sizeof(fd));
	return fd;
}

/*
 * The closer's workers: each fd is closed as soon as it comes, by an
 * idle worker or a new one (up to 64; beyond, it waits its turn).  Not
 * in batches one after another: a link of a pid that lives on as a new
 * image (exec by a worker, sb_follow_exec_leader_gone) must stop firing
 * before that image runs far: its uprobes go out at the start of the
 * close, before the grace-period waits.
 */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t work, gone;
	int *q;
	unsigned n, cap, idle, nthreads;
	bool end;
} pool = { .mu = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER,
	   .gone = PTHREAD_COND_INITIALIZER };

static void *worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&pool.mu);
	for (;;) {
		int fd;

		while (!pool.n && !pool.end) {
			pool.idle++;
			pthread_cond_wait(&pool.work, &pool.mu);
			pool.idle--;
		}
		if (!pool.n)
			break;
		fd = pool.q[--pool.n];
		pthread_mutex_unlock(&pool.mu);
		close(fd);   /* the wait is here */
		pthread_mutex_lock(&pool.mu);
	}
	pool.nthreads--;
	pthread_cond_signal(&pool.gone);
	pthread_mutex_unlock(&pool.mu);
	return NULL;
}

static void pool_close(int fd)
{
	pthread_attr_t a;
	pthread_t th;

	pthread_mutex_lock(&pool.mu);
	if (pool.n == pool.cap) {
		unsigned ncap = pool.cap ? pool.cap * 2 : 64;
		int *q = realloc(pool.q, ncap * sizeof(*q));

		if (!q) {
			pthread_mutex_unlock(&pool.mu);
			close(fd);   /* here, then */
			return;
		}
		pool.q = q;
		pool.cap = ncap;
	}
	pool.q[pool.n++] = fd;
	if (!pool.idle && pool.nthreads < 64 && !pthread_attr_init(&a)) {
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		if (!pthread_create(&th, &a, worker, NULL))
			pool.nthreads++;
		pthread_attr_destroy(&a);
	}
	if (!pool.nthreads) {   /* no thread at all: this one closes it */
		pool.n--;
		pthread_mutex_unlock(&pool.mu);
		close(fd);
		return;
	}
	pthread_cond_signal(&pool.work);
	pthread_mutex_unlock(&pool.mu);
}

/* Every fd given is closed: the workers are gone. */
static void pool_end(void)
{
	pthread_mutex_lock(&pool.mu);
	pool.end = true;
	pthread_cond_broadcast(&pool.work);
	while (pool.nthreads)
		pthread_cond_wait(&pool.gone, &pool.mu);
	pthread_mutex_unlock(&pool.mu);
}

/*
 * An fd received is closed only once the recorder said it closed its own
 * copy (SB_MSG_CLOSED): the last close is the one that waits, and must
 * be ours, not the recorder's.
 */
static void closer_main(int s)
{
	int pending[256];
	unsigned n = 0;

	signal(SIGINT, SIG_IGN);    /* a Ctrl-C for the recorder's group */
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	/* Nothing of the recorder's: not its output pipe (a reader waiting
	 * for its end would wait for us), not the terminal. */
	if (s > 0)
		close_range(0, (unsigned)s - 1, 0);
	close_range((unsigned)s + 1, ~0u, 0);
	for (;;) {
		char tag = 0;
		int fd = recv_msg(s, &tag);

		if (fd >= 0 && n < sizeof(pending) / sizeof(pending[0]))
			pending[n++] = fd;
		else if (fd >= 0)   /* cannot happen: one at a time */
			pool_close(fd);
		else if (fd == -EPIPE)
			break;
		else if (tag == SB_MSG_CLOSED)
			while (n)
				pool_close(pending[--n]);
	}
	while (n)   /* the recorder is gone: its copies too */
		pool_close(pending[--n]);
	pool_end();
	_exit(0);
}

int sb_closer_start(void)
{
	const char *e = getenv("SCALEBPF_SYNC_DETACH");
	int sv[2];
	pid_t pid;

	if (sock >= 0 || (e && *e && *e != '0'))
		return 0;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -errno;
	pid = fork();
	if (pid < 0) {
		int ret = -errno;

		close(sv[0]);
		close(sv[1]);
		return ret;
	}
	if (pid == 0)
		closer_main(sv[1]);   /* does not return */
	close(sv[1]);
	sock = sv[0];
	return 0;
}

bool sb_closer_give(int fd)
{
	char tag = SB_MSG_FD, ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &tag, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	struct cmsghdr *c;

	if (sock < 0 || fd < 0)
		return false;
	memset(ctl, 0, sizeof(ctl));
	c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(fd));
	/* Never blocks: a full socket or a gone closer, the caller closes. */
	if (sendmsg(sock, &m, MSG_NOSIGNAL | MSG_DONTWAIT) != 1)
		return false;
	/* Not the last reference (the message's, or the closer's): no wait.
	 * Then the closer may close its own (if this tag cannot go, it
	 * does at the end). */
	close(fd);
	tag = SB_MSG_CLOSED;
	send(sock, &tag, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
	return true;
}

void sb_closer_end(void)
{
	if (sock >= 0)
		close(sock);
	sock = -1;
}
