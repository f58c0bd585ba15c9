/* follow_fork NTHREADS ITERS UNITS
 *
 * A process that forks one worker process and waits for it, as a driver
 * script or a pre-fork server does: the parent does no work.  The child
 * runs NTHREADS pthreads; in every iteration thread i (0-based) does
 * sb_work((i + 1) * UNITS) and waits on one pthread barrier.  Known truth
 * (the child's): ITERS barrier instances of NTHREADS threads, busy ratio
 * 1 : 2 : ... : N, imbalance 1 - (N + 1) / (2N).  Exits 0.
 */
#include <sys/wait.h>
#include <unistd.h>

#include "work.h"

static pthread_barrier_t bar;
static unsigned long iters, units;

static void *worker(void *arg)
{
	unsigned long idx = *(unsigned long *)arg;

	for (unsigned long it = 0; it < iters; it++) {
		sb_work((idx + 1) * units);
		pthread_barrier_wait(&bar); /* SITE:fork_barrier */
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long n, *idx;
	int status;
	pid_t pid;

	if (argc != 4 || sb_parse_thread_args(argv + 1, 0, &n, &iters, &units))
		sb_thread_args_usage(argv[0], "ITERS", "UNITS", 0);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		idx = sb_calloc(n, sizeof(*idx));
		for (unsigned long i = 0; i < n; i++)
			idx[i] = i;
		sb_barrier_init(&bar, n);
		sb_run_threads(n, worker, idx, sizeof(*idx));
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 1;
	return WEXITSTATUS(status);
}
