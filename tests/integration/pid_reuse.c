/* pid_reuse TARGET [ARGS...] -- SUCCESSOR [ARGS...]
 *
 * A test harness, not a workload: makes a process that gets the PID of
 * one that just exited, as a busy machine does by chance.  Starts TARGET
 * and prints "target PID" (flushed).  When a line (or EOF) comes on stdin,
 * kills TARGET (SIGTERM), reaps it and at once forks until a child gets
 * its PID: /proc/sys/kernel/ns_last_pid is set to PID - 1 before each
 * fork (a process elsewhere may take the PID first: then try again once
 * it is free).  That child execs SUCCESSOR; prints "reused PID" or
 * "not-reused", then waits for SUCCESSOR and exits 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int set_last_pid(pid_t pid)
{
	FILE *f = fopen("/proc/sys/kernel/ns_last_pid", "w");
	int ret;

	if (!f)
		return -1;
	ret = fprintf(f, "%d", (int)pid) < 0;
	return fclose(f) || ret ? -1 : 0;
}

int main(int argc, char **argv)
{
	char **succ = NULL, line[16];
	pid_t target, child;
	int i;

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			argv[i] = NULL;
			succ = argv + i + 1;
		}
	if (argc < 4 || !succ || !*succ || succ == argv + 2) {
		fprintf(stderr, "usage: %s TARGET [ARGS...] -- SUCCESSOR [ARGS...]\n", argv[0]);
		return 2;
	}
	target = fork();
	if (target < 0)
		return 1;
	if (target == 0) {
		execv(argv[1], argv + 1);
		_exit(127);
	}
	printf("target %d\n", (int)target);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		line[0] = 0;
	kill(target, SIGTERM);
	waitpid(target, NULL, 0);
	for (i = 0; i < 2000; i++) {
		if (set_last_pid(target - 1))
			break;
		child = fork();
		if (child == 0) {
			if (getpid() == target)
				execv(succ[0], succ);
			_exit(127);
		}
		if (child == target) {
			printf("reused %d\n", (int)child);
			fflush(stdout);
			waitpid(child, NULL, 0);
			return 0;
		}
		if (child > 0)
			waitpid(child, NULL, 0);
		/* Taken by another process: wait until it is free again. */
		nanosleep(&(struct timespec){ 0, 5000000 }, NULL);
	}
	printf("not-reused\n");
	return 0;
}
