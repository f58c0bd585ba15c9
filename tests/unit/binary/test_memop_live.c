// SPDX-License-Identifier: MIT
/*
 * test_memop_live: memory-access recovery (sb_memop_decode) on a running
 * program, without BPF.  PTRACE_INTERRUPT stops of a pointer chase, a
 * streaming loop and a self-clobbering chase get their memory operand's
 * address from the stopped child's registers, checked against objdump's
 * listing and the arrays the child prints.  Also prints the per-sample
 * cost of the lookup with a warm cache.
 */
#include "check.h"
#include "binary/elfsym.h"
#include "binary/memop.h"
#include "memop_test.h"
#include "binary/procmaps.h"

#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char live_src[] =
	"#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
	"struct node { struct node *next; long val; };\n"
	"__attribute__((noinline)) long chase(const struct node *p, long n)\n"
	"{ long s = 0; while (n--) { s += p->val; p = p->next; } return s; }\n"
	"__attribute__((noinline)) long sum(const long *a, long n)\n"
	"{ long s = 0; for (long i = 0; i < n; i++) s += a[i]; return s; }\n"
	"__attribute__((noinline)) const struct node *next(const struct node *p, long n)\n"
	"{ while (n--) p = p->next; return p; }\n"
	"volatile long sink;\n"
	"int main(int argc, char **argv)\n"
	"{ long n = 1 << 21; (void)argc;\n"
	"  if (strcmp(argv[1], \"stream\")) {\n"
	"    struct node *a = malloc(n * sizeof(*a)); long *perm = malloc(n * sizeof(long));\n"
	"    for (long i = 0; i < n; i++) perm[i] = i;\n"
	"    for (long i = n - 1; i > 0; i--) { long j = random() % (i + 1), t = perm[i];\n"
	"      perm[i] = perm[j]; perm[j] = t; }\n"
	"    for (long i = 0; i < n; i++) { a[perm[i]].next = &a[perm[(i + 1) % n]];\n"
	"      a[perm[i]].val = i; }\n"
	"    printf(\"%p %p\\n\", (void *)a, (void *)(a + n)); fflush(stdout);\n"
	"    if (!strcmp(argv[1], \"next\"))\n"
	"      for (const struct node *p = a;;) sink += (long)(p = next(p, n));\n"
	"    for (;;) sink += chase(a, n);\n"
	"  }\n"
	"  long *b = malloc(4 * n * sizeof(long));\n"
	"  for (long i = 0; i < 4 * n; i++) b[i] = i;\n"
	"  printf(\"%p %p\\n\", (void *)b, (void *)(b + 4 * n)); fflush(stdout);\n"
	"  for (;;) sink += sum(b, 4 * n);\n"
	"}\n";

#define LIVE_STOPS 300
/* Decoded stops needed for the in-array share to mean something: half of
 * the loops' instruction boundaries follow their load, so ~150 come. */
#define LIVE_MIN 30

static void regs_from_user(const struct user_regs_struct *u, uint64_t *r)
{
	r[SB_REG_RAX] = u->rax; r[SB_REG_RCX] = u->rcx; r[SB_REG_RDX] = u->rdx;
	r[SB_REG_RBX] = u->rbx; r[SB_REG_RSP] = u->rsp; r[SB_REG_RBP] = u->rbp;
	r[SB_REG_RSI] = u->rsi; r[SB_REG_RDI] = u->rdi; r[SB_REG_R8] = u->r8;
	r[SB_REG_R9] = u->r9; r[SB_REG_R10] = u->r10; r[SB_REG_R11] = u->r11;
	r[SB_REG_R12] = u->r12; r[SB_REG_R13] = u->r13; r[SB_REG_R14] = u->r14;
	r[SB_REG_R15] = u->r15;
}

/* Waits for the PTRACE_INTERRUPT stop, passing other signals on. */
static bool wait_interrupt_stop(pid_t pid)
{
	int ws;

	for (;;) {
		if (waitpid(pid, &ws, 0) != pid || !WIFSTOPPED(ws))
			return false;
		if ((ws >> 16) == PTRACE_EVENT_STOP)
			return true;
		ptrace(PTRACE_CONT, pid, 0, (void *)(long)WSTOPSIG(ws));
	}
}

/* objdump's listings of the live program's loop functions: the truth a
 * stop's classification is checked against. */
static const char *const live_fns[] = { "chase", "sum", "next" };
#define NLIVE (sizeof(live_fns) / sizeof(live_fns[0]))
static struct insn listing[NLIVE][MAXI];
static int nlisting[NLIVE];

/* Does the AT&T text access data memory (sb_memop_decode's definition:
 * address arithmetic, nops, prefetches and branches do not)? */
static bool has_mem(const char *text)
{
	return strchr(text, '(') && strncmp(text, "lea", 3) && strncmp(text, "nop", 3) &&
	       strncmp(text, "prefetch", 8) && text[0] != 'j' && strncmp(text, "call", 4);
}

/* The listing function and index of vaddr, or false. */
static bool locate(uint64_t vaddr, size_t *fn, int *idx)
{
	for (size_t f = 0; f < NLIVE; f++)
		for (int i = 0; i < nlisting[f]; i++)
			if (listing[f][i].va == vaddr) {
				*fn = f;
				*idx = i;
				return true;
			}
	return false;
}

struct tally {
	int counts[8], stops, inside, prev, elsewhere;
	int none_wrong;     /* NONE, but objdump shows an access at or before */
	int ok_wrong;       /* OK, but the instruction claimed has no access,
			     * or is next()'s self-clobbering load, already run */
	uint64_t ns, ndec;  /* lookup time, warm cache */
};

/* One stop's classification against the listing. */
static void judge(struct tally *t, const char *mode, uint64_t vaddr, int st,
		  const struct sb_memop *m)
{
	size_t f, g;
	int i, j;

	if (!locate(vaddr, &f, &i)) {
		t->elsewhere++;
		return;
	}
	if (st == SB_MEMOP_NONE && (has_mem(listing[f][i].text) ||
				    (i > 0 && has_mem(listing[f][i - 1].text)))) {
		t->none_wrong++;
		fprintf(stderr, "live %s: 'none' at %s / %s\n", mode,
			i > 0 ? listing[f][i - 1].text : "-", listing[f][i].text);
	}
	/* In next() the load is the loop head: a stop there has not run it
	 * yet and decodes; one after it must never claim its address. */
	if (st == SB_MEMOP_OK && (!locate(m->insn, &g, &j) || !has_mem(listing[g][j].text) ||
				  (!strcmp(live_fns[g], "next") && m->previous))) {
		t->ok_wrong++;
		fprintf(stderr, "live %s: address claimed at %#" PRIx64 "\n", mode, m->insn);
	}
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static double share(int part, int whole)
{
	return 100.0 * part / (whole ? whole : 1);
}

static void report(const char *mode, const struct tally *t)
{
	int ok = t->counts[SB_MEMOP_OK];

	printf("live %-6s: %d stops: decoded %.0f%% (in the array %.0f%%, previous insn "
	       "%.0f%% of them), clobbered %.0f%%, none %.0f%%, other %.0f%%, outside "
	       "the loops %d; decode %.0f ns per stop (warm cache)\n", mode, t->stops,
	       share(ok, t->stops), share(t->inside, ok), share(t->prev, ok),
	       share(t->counts[SB_MEMOP_CLOBBERED], t->stops),
	       share(t->counts[SB_MEMOP_NONE], t->stops),
	       share(t->stops - ok - t->counts[SB_MEMOP_CLOBBERED] - t->counts[SB_MEMOP_NONE],
		     t->stops), t->elsewhere,
	       t->ndec ? (double)t->ns / (double)t->ndec : 0.0);
}

/* mode: "chase" (s += p->val; p = p->next), "stream" (s += a[i]) or
 * "next" (p = p->next alone: the load clobbers its address register).
 *
 * What is measured: a ptrace stop lands on any instruction boundary of
 * the loop, so how many stops follow a memory access depends on the
 * loop's shape (sum's `add $8; cmp; jne` tail gives ~50% 'none', which
 * is the right answer there), not on memop.  So each stop's class
 * is checked against objdump's listing instead: no 'none' where an access
 * is at or before the stop, no address for an instruction without one or
 * for the self-clobbering load once it ran, and >= 80% of the decoded
 * addresses in the array the loop walks. */
static void live(const char *bin, const char *mode)
{
	struct tally t = { 0 };
	int fd[2];
	uint64_t lo = 0, hi = 0;
	struct sb_memop_ctx *c = sb_memop_ctx_new(0);
	struct sb_maps *maps = sb_maps_alloc();
	FILE *rd;
	pid_t pid;

	if (pipe(fd) || (pid = fork()) < 0) {
		CHECK(0, "live %s: pipe/fork", mode);
		return;
	}
	if (!pid) {
		dup2(fd[1], 1);
		close(fd[0]);
		execl(bin, bin, mode, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	rd = fdopen(fd[0], "r");
	CHECK(rd && fscanf(rd, "%" SCNx64 " %" SCNx64, &lo, &hi) == 2 && hi > lo,
	      "live %s: no bounds from the child", mode);
	CHECK(ptrace(PTRACE_SEIZE, pid, 0, 0) == 0, "live %s: seize", mode);
	CHECK(sb_maps_refresh(maps, pid) == 0, "live %s: maps", mode);
	srand(42);
	for (int k = 0; hi > lo && k < LIVE_STOPS; k++) {
		struct user_regs_struct u;
		uint64_t regs[SB_NREGS], vaddr, t0, t1;
		struct sb_memop m;
		struct sb_elf *e;
		int bin_i, st = 7;

		usleep(300 + (unsigned)(rand() % 700));
		if (ptrace(PTRACE_INTERRUPT, pid, 0, 0) || !wait_interrupt_stop(pid))
			break;
		t.stops++;
		if (!ptrace(PTRACE_GETREGS, pid, 0, &u)) {
			regs_from_user(&u, regs);
			if (!sb_maps_resolve(maps, u.rip, &bin_i, &vaddr) &&
			    (e = sb_maps_binary_elf(maps, bin_i))) {
				t0 = now_ns();
				st = sb_memop_decode(c, e, vaddr, u.rip, regs, u.fs_base, &m);
				t1 = now_ns();
				if (k) {        /* the first one sweeps the function */
					t.ns += t1 - t0;
					t.ndec++;
				}
				t.inside += st == SB_MEMOP_OK && m.addr >= lo && m.addr < hi;
				t.prev += st == SB_MEMOP_OK && m.previous;
				judge(&t, mode, vaddr, st, &m);
				if (getenv("MEMOP_VERBOSE"))
					printf("%s %#" PRIx64 " %s prev=%d\n", mode, vaddr,
					       sb_memop_status_name(st), m.previous);
			}
		}
		t.counts[st]++;
		if (ptrace(PTRACE_CONT, pid, 0, 0))
			break;
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	if (rd)
		fclose(rd);
	report(mode, &t);
	CHECK(t.stops == LIVE_STOPS, "live %s: %d stops", mode, t.stops);
	CHECK(t.none_wrong == 0, "live %s: %d stops called 'none' next to an access",
	      mode, t.none_wrong);
	CHECK(t.ok_wrong == 0, "live %s: %d addresses claimed where none is known",
	      mode, t.ok_wrong);
	if (!strcmp(mode, "next"))      /* the known blind spot, measured */
		CHECK(t.counts[SB_MEMOP_CLOBBERED] >= LIVE_MIN, "live next: only %d "
		      "clobbered", t.counts[SB_MEMOP_CLOBBERED]);
	else
		CHECK(t.counts[SB_MEMOP_OK] >= LIVE_MIN, "live %s: only %d decoded",
		      mode, t.counts[SB_MEMOP_OK]);
	CHECK(t.inside >= 0.8 * t.counts[SB_MEMOP_OK], "live %s: %d of %d in the array",
	      mode, t.inside, t.counts[SB_MEMOP_OK]);
	sb_maps_free(maps);
	sb_memop_ctx_free(c);
}

int main(void)
{
	char dir[] = "/tmp/test_memop_live.XXXXXX", bin[600], cmd[700];

	if (!mkdtemp(dir) || !build(dir, "live", live_src, "")) {
		CHECK(0, "cannot build the test program in %s", dir);
		return CHECK_DONE("test_memop_live");
	}
	snprintf(bin, sizeof(bin), "%s/live", dir);
	for (size_t f = 0; f < NLIVE; f++) {
		nlisting[f] = disasm(bin, live_fns[f], listing[f]);
		CHECK(nlisting[f] >= 3, "no objdump listing of %s", live_fns[f]);
	}
	live(bin, "chase");
	live(bin, "stream");
	live(bin, "next");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
	return CHECK_DONE("test_memop_live");
}
