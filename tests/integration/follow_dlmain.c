/* follow_dlmain LIB NTHREADS ITERS UNITS
 *
 * Loads LIB with dlopen once running (a plugin) and calls its
 * run_phases(NTHREADS, ITERS, UNITS), which does all the threaded work
 * (follow_lib.c).  The executable itself imports no thread or barrier
 * function.  Exits 0.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int (*run)(unsigned long, unsigned long, unsigned long);
	void *h;

	if (argc != 5) {
		fprintf(stderr, "usage: %s LIB NTHREADS ITERS UNITS\n", argv[0]);
		return 2;
	}
	h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	*(void **)&run = dlsym(h, "run_phases");
	if (!run) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	if (run(strtoul(argv[2], NULL, 10), strtoul(argv[3], NULL, 10),
		strtoul(argv[4], NULL, 10)))
		return 1;
	dlclose(h);
	return 0;
}
