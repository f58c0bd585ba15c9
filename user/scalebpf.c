// SPDX-License-Identifier: MIT
/* scalebpf: why does my multi-threaded program not scale? */
#include <stdio.h>
#include <string.h>

#include "builtin.h"
#include "record/link_closer.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct command commands[] = {
	{ "record", cmd_record, "attach to a process (-p PID) or run one (-- CMD) and record" },
	{ "report", cmd_report, "show where thread-time is lost, from a recorded profile" },
	{ "cc", cmd_cc, "build a program for exact mode (clang, every block counted)" },
	{ "calibrate", cmd_calibrate, "measure this machine's cache and memory once, for the models" },
	{ "stack", cmd_stack, "run a program at 1, 2, 4.. threads: what each phase's speedup loses" },
};

static void usage(FILE *f)
{
	fputs("usage: scalebpf [--version] [--help] COMMAND [ARGS]\n\n"
	      "Find out why a pthreads/OpenMP program does not scale: which parallel\n"
	      "sections lose thread-time to imbalance and waiting, on which primitive,\n"
	      "at which line.  Recording uses eBPF at production overhead.\n\ncommands:\n", f);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
	fputs("\nquick start:\n"
	      "  sudo scalebpf record -o run.sbp -- ./my_program args\n"
	      "  scalebpf report -i run.sbp\n\n"
	      "'scalebpf COMMAND --help' tells more about each command.\n", f);
}

int main(int argc, char **argv)
{
	/* Not a command (not in the usage): the link closer process that
	 * record starts, with a command line of its own. */
	if (argc >= 2 && !strcmp(argv[1], "--link-closer"))
		return sb_closer_exec_main(argc, argv);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("scalebpf %s\n", SB_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "scalebpf: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return 2;
}
