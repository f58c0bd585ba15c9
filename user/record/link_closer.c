// SPDX-License-Identifier: MIT
/* The link closer process (link_closer.h). */
#include "link_closer.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <unistd.h>

#include "bpf_links.h"

static int sock = -1;   /* ours; -1: no closer */
static bool stuck;      /* a send timed out: the closer takes no more */
static unsigned seq;    /* the number of the next fd given */

/*
 * Messages: an fd with its number (SB_MSG_FD), and the number alone
 * (SB_MSG_CLOSED) once the recorder closed its own copy of that fd.
 * The closer closes a received fd only on its CLOSED message, or when
 * the recorder's end of the socket is closed (always after the
 * recorder's close of every fd it gave): the last close is the one that
 * waits the grace periods, and must be the closer's, not the recorder's.
 */
enum { SB_MSG_FD = 0, SB_MSG_CLOSED = 2 };
struct sb_msg {
	unsigned char tag;
	unsigned seq;
};

/* A message: its fd (*msg its tag and number), or -EBADMSG for a number
 * alone, -EPIPE at the end (the recorder closed its side). */
static int recv_msg(int s, struct sb_msg *msg)
{
	char ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = msg, .iov_len = sizeof(*msg) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	struct cmsghdr *c;
	ssize_t n;
	int fd;

	do {
		n = recvmsg(s, &m, MSG_CMSG_CLOEXEC);
	} while (n < 0 && errno == EINTR);
	if (n <= 0)
		return -EPIPE;
	c = CMSG_FIRSTHDR(&m);
	if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
	    c->cmsg_len != CMSG_LEN(sizeof(int)))
		return -EBADMSG;
	memcpy(&fd, CMSG_DATA(c), sizeof(fd));
	if (n != sizeof(*msg) || msg->tag != SB_MSG_FD) {
		close(fd);   /* not ours to keep (none is sent so) */
		return -EBADMSG;
	}
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

/* The fds received whose CLOSED message has not come, by number. */
static struct {
	struct held { unsigned seq; int fd; } *v;
	unsigned n, cap;
} held;

static void hold(unsigned num, int fd)
{
	if (held.n == held.cap) {
		unsigned ncap = held.cap ? held.cap * 2 : 256;
		struct held *v = realloc(held.v, ncap * sizeof(*v));

		/* No room: kept open, untracked, to our exit, which closes
		 * it (after the recorder's close: we exit at its end). */
		if (!v)
			return;
		held.v = v;
		held.cap = ncap;
	}
	held.v[held.n].seq = num;
	held.v[held.n++].fd = fd;
}

static void release(unsigned num)
{
	for (unsigned i = 0; i < held.n; i++)
		if (held.v[i].seq == num) {
			int fd = held.v[i].fd;

			held.v[i] = held.v[--held.n];
			pool_close(fd);
			return;
		}
}

static void closer_main(int s)
{
	signal(SIGINT, SIG_IGN);    /* a Ctrl-C for the recorder's group */
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	/* Nothing of the recorder's: not its output pipe (a reader waiting
	 * for its end would wait for us), not the terminal. */
	if (s > 0)
		close_range(0, (unsigned)s - 1, 0);
	close_range((unsigned)s + 1, ~0u, 0);
	for (;;) {
		struct sb_msg msg = { 0 };
		int fd = recv_msg(s, &msg);

		if (fd >= 0)
			hold(msg.seq, fd);
		else if (fd == -EPIPE)
			break;
		else if (msg.tag == SB_MSG_CLOSED)
			release(msg.seq);
	}
	/* The recorder closed its end: it closed its copies before. */
	while (held.n)
		pool_close(held.v[--held.n].fd);
	pool_end();
	_exit(0);
}

/* In the fork: the closer as a program of its own (link_closer.h);
 * returns if the exec fails. */
static void closer_exec(int s)
{
	char num[16];
	char *argv[] = { "scalebpf", "--link-closer", num, NULL };
	extern char **environ;

	/* Ignored signals stay ignored across exec: none is missed. */
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	if (s > 0)
		close_range(0, (unsigned)s - 1, 0);
	close_range((unsigned)s + 1, ~0u, 0);
	if (fcntl(s, F_SETFD, 0))
		return;
	snprintf(num, sizeof(num), "%d", s);
	execve("/proc/self/exe", argv, environ);
}

int sb_closer_exec_main(int argc, char **argv)
{
	int type = 0, dom = 0, fd;
	socklen_t len = sizeof(int);
	struct stat st;
	char *end;
	long v;

	if (argc != 3)
		goto refuse;
	errno = 0;
	v = strtol(argv[2], &end, 10);
	if (errno || end == argv[2] || *end || v < 0 || v > INT_MAX)
		goto refuse;
	fd = (int)v;
	if (fstat(fd, &st) || !S_ISSOCK(st.st_mode) ||
	    getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &len) || dom != AF_UNIX ||
	    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) ||
	    type != SOCK_SEQPACKET)
		goto refuse;
	/* comm: not "exe" (the file exec'd), so that ps and pgrep tell. */
	prctl(PR_SET_NAME, "scalebpf-closer", 0, 0, 0);
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	closer_main(fd);   /* does not return */
refuse:
	fprintf(stderr, "scalebpf: --link-closer is not a command: 'scalebpf "
		"record' starts it itself, with its unix SOCK_SEQPACKET socket "
		"as FD\n");
	return 2;
}

int sb_closer_start(void)
{
	const char *e = getenv("SCALEBPF_SYNC_DETACH");
	/* A send waits this long at most (the closer takes each message at
	 * once; only 10 fit in its queue, net.unix.max_dgram_qlen). */
	struct timeval tmo = { .tv_sec = 0, .tv_usec = 200000 };
	int sv[2];
	pid_t pid;

	if (sock >= 0 || (e && *e && *e != '0'))
		return 0;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -errno;
	setsockopt(sv[0], SOL_SOCKET, SO_SNDTIMEO, &tmo, sizeof(tmo));
	pid = fork();
	if (pid < 0) {
		int ret = -errno;

		close(sv[0]);
		close(sv[1]);
		return ret;
	}
	if (pid == 0) {
		/* No mount kept busy by our cwd, whichever the closer is. */
		if (chdir("/"))
			_exit(1);   /* the recorder closes its links itself */
		closer_exec(sv[1]);
		closer_main(sv[1]);   /* does not return */
	}
	close(sv[1]);
	sock = sv[0];
	return 0;
}

/* Sends a message; false when it could not go (after the time-out:
 * the closer is stuck, no more is given to it). */
static bool send_msg(const struct sb_msg *msg, int fd)
{
	char ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = (void *)msg, .iov_len = sizeof(*msg) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;
	ssize_t n;

	if (fd >= 0) {
		memset(ctl, 0, sizeof(ctl));
		m.msg_control = ctl;
		m.msg_controllen = sizeof(ctl);
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(fd));
	}
	do {
		n = sendmsg(sock, &m, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		__atomic_store_n(&stuck, true, __ATOMIC_RELAXED);
	return n == (ssize_t)sizeof(*msg);
}

bool sb_closer_give(int fd)
{
	struct sb_msg msg = { .tag = SB_MSG_FD };

	if (sock < 0 || fd < 0 || __atomic_load_n(&stuck, __ATOMIC_RELAXED))
		return false;
	/* Gives may come from several threads: each fd its own number. */
	msg.seq = __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED);
	if (!send_msg(&msg, fd))   /* a full queue or a gone closer */
		return false;
	/* Not the last reference (the message's, or the closer's): no wait. */
	close(fd);
	/* Now the closer may close its copy.  If this cannot go, it keeps
	 * it to our end of the socket, which comes after this close. */
	msg.tag = SB_MSG_CLOSED;
	send_msg(&msg, -1);
	return true;
}

void sb_closer_end(void)
{
	if (sock >= 0)
		close(sock);
	sock = -1;
}
