/* zombie_parent SECONDS
 *
 * Forks a child that exits at once and never reaps it: the child stays a
 * zombie, i.e. a PID that exists but whose process has exited.  The child
 * has exited (but is not reaped, thanks to WNOWAIT) before its pid is
 * printed on stdout (flushed).  Then sleeps SECONDS and exits 0; init
 * reaps the zombie afterwards.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "work.h"

int main(int argc, char **argv)
{
	unsigned long seconds;
	siginfo_t info;
	pid_t pid;

	if (argc != 2 || sb_parse_ul(argv[1], 0, 86400UL, &seconds)) {
		fprintf(stderr, "usage: %s SECONDS\n  SECONDS 0..86400\n",
			argv[0]);
		return 2;
	}
	/* SIG_IGN inherited from a caller would make the kernel auto-reap. */
	signal(SIGCHLD, SIG_DFL);
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0)
		_exit(0);
	/* Wait for the child to exit, leaving it in the zombie state. */
	memset(&info, 0, sizeof(info));
	while (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT) != 0) {
		if (errno != EINTR) {
			perror("waitid");
			return 1;
		}
	}
	printf("%ld\n", (long)pid);
	if (fflush(stdout) != 0)
		return 1;
	sb_sleep_ms(seconds * 1000UL);
	return 0;
}
