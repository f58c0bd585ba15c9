/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the memop tests (test_memop.c, test_memop_live.c): build a
 * small C program at test time and read objdump's AT&T listing of one
 * of its functions, the independent truth sb_memop_decode() is checked against.
 */
#ifndef SB_MEMOP_TEST_H
#define SB_MEMOP_TEST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXI 64

struct insn {
	uint64_t va;
	char text[160];
};

/* objdump's listing of one function (AT&T, no raw bytes). */
static __attribute__((unused)) int disasm(const char *bin, const char *fn, struct insn *out)
{
	char cmd[1024], line[512];
	FILE *p;
	int n = 0;

	snprintf(cmd, sizeof(cmd), "objdump -d --no-show-raw-insn --disassemble=%s %s",
		 fn, bin);
	if (!(p = popen(cmd, "r")))
		return 0;
	while (fgets(line, sizeof(line), p)) {
		char *tab = strchr(line, '\t'), *end;
		uint64_t va = strtoull(line, &end, 16);

		if (!tab || *end != ':' || n == MAXI)
			continue;
		out[n].va = va;
		snprintf(out[n].text, sizeof(out[n].text), "%s", tab + 1);
		out[n].text[strcspn(out[n].text, "\n")] = 0;
		n++;
	}
	pclose(p);
	return n;
}

/* Index of the first instruction whose text contains all of a and b. */
static __attribute__((unused)) int find(const struct insn *in, int n, const char *a, const char *b)
{
	for (int i = 0; i < n; i++)
		if (strstr(in[i].text, a) && (!b || strstr(in[i].text, b)))
			return i;
	return -1;
}

static __attribute__((unused)) bool build(const char *dir, const char *name, const char *src, const char *flags)
{
	char path[512], cmd[1536];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.c", dir, name);
	if (!(f = fopen(path, "w")))
		return false;
	fputs(src, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "gcc -O2 -g %s %s -o %s/%s", flags, path, dir, name);
	return system(cmd) == 0;
}

#endif
