// SPDX-License-Identifier: MIT
#include "target.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gelf.h>

/* The stat line's fields after "(comm) ": state first.  0 on failure. */
static int read_stat(const char *path, char *state, unsigned long long *start)
{
	char buf[1024], *p;
	FILE *f = fopen(path, "r");
	int n;

	if (!f)
		return -1;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	/* comm may hold ") ": the last one ends it. */
	if (!p || !(p = strrchr(buf, ')')) || p[1] != ' ')
		return -1;
	*state = p[2];
	if (!start)
		return 0;
	/* state ppid pgrp session tty tpgid flags minflt cminflt majflt
	 * cmajflt utime stime cutime cstime priority nice threads
	 * itrealvalue starttime: starttime is the 20th after comm. */
	n = sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
		   "%*d %*d %llu", start);
	return n == 1 ? 0 : -1;
}

static char proc_state(int pid)
{
	char path[64], st;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	return read_stat(path, &st, NULL) ? 0 : st;
}

/* The first thread of pid that has not exited (its leader may have, by
 * pthread_exit, while the others run on), or 0. */
static int live_thread(int pid)
{
	char path[96], st;
	struct dirent *de;
	int tid = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	if (!(d = opendir(path)))
		return 0;
	while (!tid && (de = readdir(d))) {
		long t = strtol(de->d_name, NULL, 10);

		if (t <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%ld/stat", pid, t);
		if (!read_stat(path, &st, NULL) && st != 'Z' && st != 'X')
			tid = (int)t;
	}
	closedir(d);
	return tid;
}

int sb_target_check_pid(int pid, char *err, size_t errlen)
{
	char exe[4096];
	char st;
	int e;

	if (pid <= 0) {
		snprintf(err, errlen, "invalid PID %d", pid);
		return -EINVAL;
	}
	if (kill(pid, 0) && errno == ESRCH) {
		snprintf(err, errlen, "no process with PID %d", pid);
		return -ESRCH;
	}
	st = proc_state(pid);
	/* A leader that called pthread_exit is a zombie while its other
	 * threads work on: those are recorded. */
	if ((st == 'Z' || st == 'X') && !live_thread(pid)) {
		snprintf(err, errlen, "process %d has exited (it is a zombie): nothing to record", pid);
		return -ESRCH;
	}
	if ((e = -sb_target_exe(pid, exe, sizeof(exe)))) {
		if (e == ENOENT && !sb_target_alive(pid))
			snprintf(err, errlen, "process %d exited", pid);
		else if (e == ENOENT)
			snprintf(err, errlen, "process %d is a kernel thread: nothing to probe", pid);
		else
			snprintf(err, errlen, "cannot inspect process %d: %s", pid, strerror(e));
		return -e;
	}
	return 0;
}

char sb_target_state(int pid)
{
	return proc_state(pid);
}

bool sb_target_alive(int pid)
{
	char st;

	if (kill(pid, 0) && errno == ESRCH)
		return false;
	st = proc_state(pid);
	if (st == 'Z' || st == 'X')
		return live_thread(pid) != 0;   /* the leader exited alone */
	return st != 0;
}

bool sb_target_thread_live(int pid, uint32_t tid)
{
	char path[96], st;

	snprintf(path, sizeof(path), "/proc/%d/task/%u/stat", pid, tid);
	return !read_stat(path, &st, NULL) && st != 'Z' && st != 'X';
}

int sb_target_leader_exited(int pid)
{
	char st = proc_state(pid);

	return (st == 'Z' || st == 'X') ? live_thread(pid) : 0;
}

static int start_time(int pid, unsigned long long *start)
{
	char path[64], st;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	return read_stat(path, &st, start);
}

int sb_target_pin(int pid, struct sb_pin *pin)
{
	unsigned long long before, after;

	pin->pid = pid;
	pin->fd = -1;
	pin->start = 0;
	if (start_time(pid, &before))
		return -ESRCH;
	pin->fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pin->fd < 0 && errno != ENOSYS && errno != EPERM) {
		/* EMFILE, ENFILE, ENOMEM are not "the process exited". */
		int e = errno;

		pin->fd = -1;
		return -e;
	}
	/* The pid named a process when we looked: the pidfd must be that
	 * one, not one that got the pid since. */
	if (start_time(pid, &after) || after != before) {
		sb_pin_close(pin);
		return -ESRCH;
	}
	pin->start = before;
	return 0;
}

bool sb_pin_alive(const struct sb_pin *pin)
{
	unsigned long long start;

	if (pin->pid <= 0)
		return false;
	if (pin->fd >= 0) {
		struct pollfd pfd = { .fd = pin->fd, .events = POLLIN };

		/* Readable once the whole process exited (a leader gone by
		 * pthread_exit alone is not: its threads run on). */
		int n = poll(&pfd, 1, 0);

		/* poll failing (EINTR, ENOMEM) says nothing of the process:
		 * alive, unless the descriptor itself is bad. */
		return n == 0 || (n < 0 && errno != EBADF);
	}
	/* No pidfd (Linux < 5.3): the same start time, so not a new
	 * process with the pid. */
	return !start_time(pin->pid, &start) && start == pin->start && sb_target_alive(pin->pid);
}

int sb_pin_signal(const struct sb_pin *pin, int sig)
{
	if (!sb_pin_alive(pin))
		return -ESRCH;
	if (pin->fd >= 0)
		return syscall(SYS_pidfd_send_signal, pin->fd, sig, NULL, 0) ? -errno : 0;
	/* No pidfd (Linux < 5.3): the start time matched just now; the
	 * window to kill() is as small as we can make it there. */
	return kill(pin->pid, sig) ? -errno : 0;
}

void sb_pin_close(struct sb_pin *pin)
{
	if (pin->fd >= 0)
		close(pin->fd);
	pin->fd = -1;
}

int sb_target_exe(int pid, char *buf, size_t len)
{
	char path[96];
	ssize_t n;
	int tid, e;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	n = readlink(path, buf, len - 1);
	e = errno;
	if (n < 0 && e == ENOENT && (tid = sb_target_leader_exited(pid))) {
		/* The leader exited alone: its exe link is gone, a live
		 * thread's is the same image. */
		snprintf(path, sizeof(path), "/proc/%d/task/%d/exe", pid, tid);
		n = readlink(path, buf, len - 1);
		e = errno;
	}
	if (n < 0)
		return -e;
	buf[n] = 0;
	/* A replaced binary still runs: attach through the magic link. */
	if (strstr(buf, " (deleted)"))
		snprintf(buf, len, "%s", path);
	return 0;
}

int sb_target_threads(int pid, uint32_t **tids, size_t *n)
{
	char path[64];
	struct dirent *de;
	size_t cap = 16;
	DIR *d;

	*n = 0;
	*tids = malloc(cap * sizeof(**tids));
	if (!*tids)
		return -ENOMEM;
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		long tid = strtol(de->d_name, NULL, 10);

		if (tid <= 0)
			continue;
		if (*n == cap) {
			uint32_t *nt = realloc(*tids, 2 * cap * sizeof(*nt));

			if (!nt) {
				closedir(d);
				return -ENOMEM;
			}
			*tids = nt;
			cap *= 2;
		}
		(*tids)[(*n)++] = (uint32_t)tid;
	}
	closedir(d);
	return 0;
}

void sb_target_comm(int pid, uint32_t tid, char *buf, size_t len)
{
	char path[96];
	FILE *f;

	snprintf(buf, len, "?");
	snprintf(path, sizeof(path), "/proc/%d/task/%u/comm", pid, tid);
	f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

uint64_t sb_target_runtime(int pid, uint32_t tid)
{
	unsigned long long ns = 0;
	char path[96];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%u/schedstat", pid, tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &ns) != 1)
		ns = 0;
	fclose(f);
	return ns;
}

static int resolve_exe(const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH");
	char buf[4096];

	if (strchr(name, '/')) {
		if (!realpath(name, out) || access(out, X_OK))
			return -errno;
		(void)len;
		return 0;
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, n ? path : ".", name);
		if (!access(buf, X_OK) && realpath(buf, out)) {
			struct stat sb;

			if (!stat(out, &sb) && S_ISREG(sb.st_mode))
				return 0;
		}
		path += n + (path[n] == ':');
	}
	return -ENOENT;
}

int sb_target_spawn(char *const argv[], struct sb_child *c, char *exe, size_t exelen,
		    char *err, size_t errlen)
{
	int gate[2], ep[2], r;

	r = resolve_exe(argv[0], exe, exelen);
	if (r) {
		snprintf(err, errlen, "cannot run '%s': %s", argv[0],
			 r == -ENOENT ? "command not found" : strerror(-r));
		return r;
	}
	if (pipe2(gate, O_CLOEXEC) || pipe2(ep, O_CLOEXEC)) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -errno;
	}
	c->pid = fork();
	if (c->pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		return -errno;
	}
	if (c->pid == 0) {
		char b;
		int e;

		close(gate[1]);
		close(ep[0]);
		/* Wait until the probes are in; EOF without a byte means abort. */
		if (read(gate[0], &b, 1) != 1)
			_exit(127);
		execv(exe, argv);
		e = errno;
		if (write(ep[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(gate[0]);
	close(ep[1]);
	c->gate_fd = gate[1];
	c->err_fd = ep[0];
	return 0;
}

int sb_target_release(struct sb_child *c, char *err, size_t errlen)
{
	char go = 1;
	int e = 0;
	ssize_t n;

	if (write(c->gate_fd, &go, 1) != 1) {
		snprintf(err, errlen, "cannot start the command: %s", strerror(errno));
		return -EIO;
	}
	close(c->gate_fd);
	c->gate_fd = -1;
	n = read(c->err_fd, &e, sizeof(e));
	close(c->err_fd);
	c->err_fd = -1;
	if (n == sizeof(e)) {
		snprintf(err, errlen, "cannot execute the command: %s", strerror(e));
		waitpid(c->pid, NULL, 0);
		return -e;
	}
	return 0;
}

void sb_target_abort(struct sb_child *c)
{
	if (c->gate_fd >= 0)
		close(c->gate_fd);   /* EOF: the child exits without exec */
	if (c->err_fd >= 0)
		close(c->err_fd);
	c->gate_fd = c->err_fd = -1;
	if (c->pid > 0)
		waitpid(c->pid, NULL, 0);
}

static int interpreter(const char *exe, char *buf, size_t len)
{
	int fd = open(exe, O_RDONLY | O_CLOEXEC), ret = -1;
	Elf *e;
	size_t n;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (e && !elf_getphdrnum(e, &n)) {
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_INTERP ||
			    ph.p_filesz >= len)
				continue;
			if (pread(fd, buf, ph.p_filesz, (off_t)ph.p_offset) == (ssize_t)ph.p_filesz) {
				buf[ph.p_filesz] = 0;
				ret = 0;
			}
		}
	}
	elf_end(e);
	close(fd);
	return ret;
}

int sb_target_script(const char *path, char *interp, size_t len)
{
	char line[512], real[PATH_MAX], *p, *end;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	p = fgets(line, sizeof(line), f);
	fclose(f);
	if (!p || strncmp(line, "#!", 2))
		return -1;
	p = line + 2 + strspn(line + 2, " \t");
	end = p + strcspn(p, " \t\n");
	*end = 0;
	/* realpath writes up to PATH_MAX bytes: never into the caller's. */
	if (*p != '/' || !realpath(p, real) || strlen(real) >= len)
		return -1;
	memcpy(interp, real, strlen(real) + 1);
	return 0;
}

int sb_target_interp(const char *exe, char *buf, size_t len)
{
	return interpreter(exe, buf, len);
}

int sb_target_libraries(const char *exe, void (*cb)(const char *path, void *ctx), void *ctx)
{
	char interp[512], line[4096];
	int p[2], status;
	pid_t pid;
	FILE *f;

	if (interpreter(exe, interp, sizeof(interp)))
		return 0;   /* static: everything is in the executable */
	if (pipe2(p, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDWR);

		dup2(p[1], 1);
		if (devnull >= 0)
			dup2(devnull, 2);
		execl(interp, interp, "--list", exe, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	f = fdopen(p[0], "r");
	if (!f) {
		close(p[0]);
		waitpid(pid, &status, 0);
		return -errno;
	}
	/* Lines look like "\tlibgomp.so.1 => /lib/x86_64-linux-gnu/libgomp.so.1 (0x...)". */
	while (fgets(line, sizeof(line), f)) {
		char *arrow = strstr(line, "=> "), *path, *end;

		path = arrow ? arrow + 3 : line + strspn(line, " \t");
		if (*path != '/')
			continue;
		end = strstr(path, " (");
		if (end)
			*end = 0;
		path[strcspn(path, "\n")] = 0;
		cb(path, ctx);
	}
	fclose(f);
	waitpid(pid, &status, 0);
	return 0;
}
