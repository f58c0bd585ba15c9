/* SPDX-License-Identifier: MIT */
/* Test helpers shared by test_elfsym.c and test_elfsym_callees.c: both
 * write C sources and build them with the system's compilers. */
#ifndef SB_TEST_ELFSYM_TEST_H
#define SB_TEST_ELFSYM_TEST_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

static inline int run(const char *fmt, const char *a, const char *b, const char *c)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), fmt, a, b, c);
	return system(cmd);
}

static inline bool write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	bool ok = f && fputs(text, f) >= 0;

	return (f && fclose(f) == 0) && ok;
}

#endif
