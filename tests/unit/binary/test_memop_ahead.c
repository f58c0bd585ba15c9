// SPDX-License-Identifier: MIT
/*
 * test_memop_ahead: the look-ahead replay (user/binary/memop_ahead.c) on a
 * function compiled at test time with gcc and clang -O2, whose store's
 * index is loaded and masked after the sample point:
 *     tab[(i + w->idx) % 8] += 1
 * gcc: add (%rdi),%rsi; lea tab(%rip),%rax; and $7,%esi; addq $1,(%rax,%rsi,8)
 * Sampled at its first instruction with rdi = W (a fake struct address)
 * and rsi = 3, and a reader giving w->idx = 2 at W, the accesses are the
 * load of W and the store to tab + 8 * ((3 + 2) % 8) = tab + 40, tab's
 * address from nm.  Without a reader the index is unknown: the store is
 * left out, never guessed.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "binary/elfsym.h"
#include "binary/memop.h"

#define W 0x7f0000001000ull

static const char src[] =
	"struct w { unsigned long idx; unsigned long pad; };\n"
	"unsigned long tab[8];\n"
	"__attribute__((noinline)) void bump(struct w *w, unsigned long i)\n"
	"{ tab[(i + w->idx) % 8] += 1; }\n"
	"int main(void) { return 0; }\n";

static int reads;

static int read_idx(void *ctx, uint64_t addr, void *buf, size_t len)
{
	uint64_t v = 2;

	(void)ctx;
	reads++;
	if (addr != W || len > sizeof(v))
		return -1;
	memcpy(buf, &v, len);
	return 0;
}

/* nm's address of sym in bin, 0 when not found. */
static uint64_t nm_addr(const char *bin, const char *sym)
{
	char cmd[700], line[256], name[128];
	unsigned long long a;
	char type;
	uint64_t found = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm %s", bin);
	if (!(p = popen(cmd, "r")))
		return 0;
	while (fgets(line, sizeof(line), p))
		if (sscanf(line, "%llx %c %127s", &a, &type, name) == 3 && !strcmp(name, sym))
			found = a;
	pclose(p);
	return found;
}

static void check_compiler(const char *dir, const char *cc)
{
	char bin[600], cmd[1400], err[256], path[600];
	struct sb_memop_ahead *a = sb_memop_ahead_new();
	uint64_t regs[SB_NREGS] = { 0 }, fn, tab;
	struct sb_memop m[SB_MEMOP_AHEAD];
	struct sb_elf *e;
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "%s/ahead.c", dir);
	snprintf(bin, sizeof(bin), "%s/ahead_%s", dir, cc);
	f = fopen(path, "w");
	if (f) {
		fputs(src, f);
		fclose(f);
	}
	snprintf(cmd, sizeof(cmd), "%s -O2 -g %s -o %s", cc, path, bin);
	if (!f || system(cmd) != 0 || !a) {
		CHECK(0, "%s: cannot build %s", cc, bin);
		sb_memop_ahead_free(a);
		return;
	}
	fn = nm_addr(bin, "bump");
	tab = nm_addr(bin, "tab");
	e = sb_elf_open(bin, err, sizeof(err));
	CHECK(e && fn && tab, "%s: open %s (%s), bump %" PRIx64 ", tab %" PRIx64, cc, bin, err,
	      fn, tab);
	if (e && fn && tab) {
		regs[SB_REG_RDI] = W;
		regs[SB_REG_RSI] = 3;
		/* load bias 0: runtime addresses are the binary's */
		n = sb_memop_ahead_decode(a, e, fn, fn, regs, read_idx, NULL, m, SB_MEMOP_AHEAD);
		CHECK(n == 2 && m[0].addr == W && !m[0].store && m[0].size == (cc[0] == 'g' ? 8 : 4)
		      && m[1].addr == tab + 40 && m[1].store && m[1].size == 8,
		      "%s: %d accesses: %" PRIx64 " %d, %" PRIx64 " %d (tab %" PRIx64 ")", cc, n,
		      n > 0 ? m[0].addr : 0, n > 0 ? m[0].store : -1, n > 1 ? m[1].addr : 0,
		      n > 1 ? m[1].store : -1, tab);
		CHECK(reads == 1, "%s: one read of the target (%d)", cc, reads);
		regs[SB_REG_RSI] = 9;   /* a repeat sample replays the memo: (9 + 2) % 8 */
		n = sb_memop_ahead_decode(a, e, fn, fn, regs, read_idx, NULL, m, SB_MEMOP_AHEAD);
		CHECK(n == 2 && m[1].addr == tab + 24, "%s: replayed: %" PRIx64, cc,
		      n > 1 ? m[1].addr : 0);
		n = sb_memop_ahead_decode(a, e, fn, fn, regs, NULL, NULL, m, SB_MEMOP_AHEAD);
		CHECK(n == 1 && m[0].addr == W, "%s: no reader: the store is left out (%d)", cc, n);
		reads = 0;
		sb_memop_ahead_forget(a, e);
	}
	sb_elf_close(e);
	sb_memop_ahead_free(a);
}

int main(void)
{
	char dir[] = "/tmp/test_memop_ahead.XXXXXX", cmd[700];

	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp");
		return CHECK_DONE("test_memop_ahead");
	}
	check_compiler(dir, "gcc");
	check_compiler(dir, "clang");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
	return CHECK_DONE("test_memop_ahead");
}
