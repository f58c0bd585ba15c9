// SPDX-License-Identifier: MIT
/*
 * test_unwind: the CFI unwinder (binary/unwind.h) on a real program built
 * as users build them (gcc and clang -O2, no frame-pointer flags), whose
 * call chain is known: main -> drive -> via_a or via_b -> leaf, every
 * function frameless and noinline, leaf a loop.  The program stores which
 * of via_a/via_b is calling into a global before the call; PTRACE_INTERRUPT
 * stops give the registers and a copy of the stack (/proc/PID/mem), as a
 * sample record does, and every stop in leaf must unwind to that caller,
 * then drive, then main, and end at the outermost frame.  via_b keeps a
 * 3 KiB local array, so a short copy must stop as truncated.
 */
#include "check.h"
#include "binary/elfsym.h"
#include "binary/procmaps.h"
#include "binary/unwind.h"

#include <fcntl.h>
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

static const char src[] =
	"#include <stdio.h>\n#include <string.h>\n"
	"volatile int who; volatile unsigned long sink;\n"
	"__attribute__((noinline)) unsigned long leaf(unsigned long n)\n"
	"{ unsigned long x = n; for (unsigned long i = 0; i < n; i++) x = x * 6364136223846793005ul + i;\n"
	"  return x; }\n"
	"__attribute__((noinline)) unsigned long via_a(unsigned long n)\n"
	"{ who = 1; unsigned long r = leaf(n); who = 0; return r + 1; }\n"
	"__attribute__((noinline)) unsigned long via_b(unsigned long n)\n"
	"{ char buf[3000]; memset(buf, (int)n, sizeof(buf)); __asm__ volatile(\"\" :: \"r\"(buf) : \"memory\");\n"
	"  who = 2; unsigned long r = leaf(n + (unsigned char)buf[n % 3000]); who = 0; return r + 2; }\n"
	"__attribute__((noinline)) unsigned long drive(unsigned long k)\n"
	"{ return (k & 1 ? via_a(200000 + k % 7) : via_b(300000 + k % 5)) + k; }\n"
	"int main(void)\n"
	"{ printf(\"%p\\n\", (void *)&who); fflush(stdout);\n"
	"  for (unsigned long k = 0;; k++) sink += drive(k); }\n";

#define STOPS 300

struct bin {
	struct sb_maps *maps;
	pid_t pid;
};

static int resolve(void *ctx, uint64_t addr, struct sb_elf **e, uint64_t *vaddr)
{
	struct bin *b = ctx;
	int bi;

	if (sb_maps_resolve(b->maps, addr, &bi, vaddr))
		return -1;
	*e = sb_maps_binary_elf(b->maps, bi);
	return *e ? 0 : -1;
}

static void regs_from_user(const struct user_regs_struct *u, uint64_t *r)
{
	r[SB_REG_RAX] = u->rax; r[SB_REG_RCX] = u->rcx; r[SB_REG_RDX] = u->rdx;
	r[SB_REG_RBX] = u->rbx; r[SB_REG_RSP] = u->rsp; r[SB_REG_RBP] = u->rbp;
	r[SB_REG_RSI] = u->rsi; r[SB_REG_RDI] = u->rdi; r[SB_REG_R8] = u->r8;
	r[SB_REG_R9] = u->r9; r[SB_REG_R10] = u->r10; r[SB_REG_R11] = u->r11;
	r[SB_REG_R12] = u->r12; r[SB_REG_R13] = u->r13; r[SB_REG_R14] = u->r14;
	r[SB_REG_R15] = u->r15;
}

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

/* The function of the binary a runtime address is in ("" when none). */
static const char *func_of(struct bin *b, uint64_t addr)
{
	struct sb_elf *e;
	uint64_t vaddr;
	const char *f;

	if (resolve(b, addr, &e, &vaddr))
		return "";
	f = sb_elf_func_at(e, vaddr, NULL);
	return f ? f : "";
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* What a frame-pointer walk (bpf_get_stack's) names as leaf's caller:
 * the word above the saved rbp, which frameless code never set. */
static bool fp_caller_is(struct bin *b, const struct sb_unwind_input *in, const char *want)
{
	uint64_t rbp = in->regs[SB_REG_RBP], sp = in->regs[SB_REG_RSP], ra;
	char path[64];
	int fd;
	bool ok;

	if (rbp < sp || rbp - sp + 16 > in->len) {
		/* outside the copy: read the child */
		snprintf(path, sizeof(path), "/proc/%d/mem", b->pid);
		fd = open(path, O_RDONLY);
		ok = fd >= 0 && pread(fd, &ra, 8, (off_t)(rbp + 8)) == 8;
		if (fd >= 0)
			close(fd);
		if (!ok)
			return false;
	} else {
		memcpy(&ra, in->stack + (rbp - sp) + 8, 8);
	}
	return !strcmp(func_of(b, ra), want);
}

static void live(const char *bin, const char *cc)
{
	static uint8_t stack[SB_SAMPLE_STACK_BYTES];
	struct bin b = { .maps = sb_maps_alloc() };
	struct sb_unwind *u = sb_unwind_new(resolve, &b);
	int fd[2], memfd = -1, in_leaf = 0, right = 0, fp_right = 0, outermost = 0, trunc = 0, ntrunc = 0;
	size_t used_max = 0, depth = 0;
	uint64_t who_addr = 0, ns = 0;
	FILE *rd;

	if (!u || !b.maps || pipe(fd) || (b.pid = fork()) < 0) {
		CHECK(0, "%s: setup", cc);
		return;
	}
	if (!b.pid) {
		dup2(fd[1], 1);
		close(fd[0]);
		execl(bin, bin, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	rd = fdopen(fd[0], "r");
	CHECK(rd && fscanf(rd, "%" SCNx64, &who_addr) == 1, "%s: no address from the child", cc);
	CHECK(ptrace(PTRACE_SEIZE, b.pid, 0, 0) == 0, "%s: seize", cc);
	CHECK(sb_maps_refresh(b.maps, b.pid) == 0, "%s: maps", cc);
	{
		char path[64];

		snprintf(path, sizeof(path), "/proc/%d/mem", b.pid);
		memfd = open(path, O_RDONLY);
	}
	srand(7);
	for (int k = 0; memfd >= 0 && k < STOPS; k++) {
		struct user_regs_struct ur;
		struct sb_unwind_input in = { 0 };
		struct sb_unwind_result res;
		uint64_t regs[SB_NREGS], frames[16], t0;
		int who = 0;
		ssize_t got;

		usleep(200 + (unsigned)(rand() % 500));
		if (ptrace(PTRACE_INTERRUPT, b.pid, 0, 0) || !wait_interrupt_stop(b.pid))
			break;
		if (ptrace(PTRACE_GETREGS, b.pid, 0, &ur))
			break;
		regs_from_user(&ur, regs);
		got = pread(memfd, stack, sizeof(stack), (off_t)ur.rsp);
		if (got < 0)   /* near the top of the stack mapping */
			got = pread(memfd, stack, 4096 - (ur.rsp & 4095), (off_t)ur.rsp);
		if (pread(memfd, &who, sizeof(who), (off_t)who_addr) != sizeof(who))
			who = -1;
		in.ip = ur.rip;
		in.regs = regs;
		in.stack = stack;
		in.len = got > 0 ? (size_t)got : 0;
		t0 = now_ns();
		sb_unwind_run(u, &in, frames, 16, &res);
		if (k)   /* the first one opens the binaries' CFI */
			ns += now_ns() - t0;
		if (!strcmp(func_of(&b, ur.rip), "leaf") && (who == 1 || who == 2)) {
			in_leaf++;
			depth += res.n;
			used_max = res.bytes_used > used_max ? res.bytes_used : used_max;
			if (res.n >= 4 && !strcmp(func_of(&b, frames[1]), who == 1 ? "via_a" : "via_b") &&
			    !strcmp(func_of(&b, frames[2]), "drive") &&
			    !strcmp(func_of(&b, frames[3]), "main"))
				right++;
			else
				fprintf(stderr, "%s: stop in leaf (who %d): %zu frames: %s %s %s, %s\n",
					cc, who, res.n, res.n > 1 ? func_of(&b, frames[1]) : "-",
					res.n > 2 ? func_of(&b, frames[2]) : "-",
					res.n > 3 ? func_of(&b, frames[3]) : "-",
					sb_unwind_stop_name(res.stop));
			outermost += res.stop == SB_UNWIND_OUTERMOST;
			fp_right += fp_caller_is(&b, &in, who == 1 ? "via_a" : "via_b");
			/* A copy that ends inside via_b's array: truncated, and
			 * the frames recovered before are the right ones. */
			if (who == 2) {
				in.len = 256;
				sb_unwind_run(u, &in, frames, 16, &res);
				ntrunc++;
				trunc += res.stop == SB_UNWIND_TRUNCATED && res.n == 2 &&
					 !strcmp(func_of(&b, frames[1]), "via_b");
			}
		}
		if (ptrace(PTRACE_CONT, b.pid, 0, 0))
			break;
	}
	kill(b.pid, SIGKILL);
	waitpid(b.pid, NULL, 0);
	if (rd)
		fclose(rd);
	if (memfd >= 0)
		close(memfd);
	printf("unwind %s: %d stops in leaf, %d with the right chain, %d complete to the "
	       "outermost frame; mean depth %.1f, copy used <= %zu bytes; %.0f ns per unwind; "
	       "%zu pcs cached; the frame-pointer walk names the right caller in %d\n",
	       cc, in_leaf, right, outermost,
	       in_leaf ? (double)depth / in_leaf : 0.0, used_max, (double)ns / (STOPS - 1),
	       sb_unwind_cached(u), fp_right);
	CHECK(in_leaf >= STOPS / 3, "%s: only %d stops in leaf", cc, in_leaf);
	CHECK(right == in_leaf, "%s: %d of %d leaf stops unwound to their caller", cc, right,
	      in_leaf);
	CHECK(outermost == in_leaf, "%s: %d of %d complete", cc, outermost, in_leaf);
	/* The defect the unwinder is for: frame pointers do not tell. */
	CHECK(fp_right < in_leaf / 2, "%s: the frame-pointer walk found %d of %d callers: "
	      "is the program built without frame pointers?", cc, fp_right, in_leaf);
	CHECK(ntrunc > 0 && trunc == ntrunc, "%s: %d of %d short copies truncated", cc, trunc,
	      ntrunc);
	CHECK(used_max > 3000 && used_max < SB_SAMPLE_STACK_BYTES, "%s: %zu bytes used", cc,
	      used_max);
	sb_unwind_free(u);
	sb_maps_free(b.maps);
}

int main(void)
{
	char dir[] = "/tmp/test_unwind.XXXXXX", path[600], cmd[1400];
	static const char *const ccs[] = { "gcc", "clang" };
	FILE *f;

	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp");
		return CHECK_DONE("test_unwind");
	}
	snprintf(path, sizeof(path), "%s/chain.c", dir);
	f = fopen(path, "w");
	CHECK(f && fputs(src, f) >= 0, "write %s", path);
	if (f)
		fclose(f);
	for (size_t i = 0; i < 2; i++) {
		snprintf(cmd, sizeof(cmd), "%s -O2 -g %s -o %s/chain_%s", ccs[i], path, dir, ccs[i]);
		if (system(cmd)) {
			CHECK(i == 1, "cannot build with %s", ccs[i]);   /* clang is optional */
			continue;
		}
		snprintf(cmd, sizeof(cmd), "%s/chain_%s", dir, ccs[i]);
		live(cmd, ccs[i]);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
	return CHECK_DONE("test_unwind");
}
