/* SPDX-License-Identifier: MIT */
/* Test program shared by test_cfg_build.c and test_cfg_build_cache.c:
 * functions of known shape, built at test time into prog (build-id,
 * endbr64, tail calls), prog.o and nobid (no build-id). */
#ifndef SB_TEST_CFG_BUILD_TEST_H
#define SB_TEST_CFG_BUILD_TEST_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

static const char prog_src[] =
	"volatile int sink;\n"
	"__attribute__((noipa)) int helper(int x) { sink = x; return x * 3; }\n"
	"__attribute__((noipa)) static int hidden_fn(int x) { sink = x; return x + 1; }\n"
	"__attribute__((noipa)) int counted_loop(const int *a, int n)\n"
	"{ int s = 0; for (int i = 0; i < n; i++) s += a[i] * 3; return s; }\n"
	"__attribute__((noipa)) void fixed_loop(void)\n"
	"{ for (int i = 0; i < 1549; i++) helper(i); }\n"
	"__attribute__((noipa)) void chosen_loop(int x)\n"
	"{ for (int i = 0; i < (x % 2 == 1 ? 8 : 2); i++) helper(i); }\n"
	"__attribute__((noipa)) void skip_loop(const int *a)\n"
	"{ for (int i = 0; i < 1549; i++) { if (a[i & 15]) i++; helper(i); } }\n"
	"__attribute__((noipa)) void jump_loop(const int *a)\n"
	"{ for (int i = 0; i < 1549; i++) { helper(i); i = a[i & 15] ? a[(i + 1) & 15] : i; } }\n"
	"__attribute__((noipa)) void set_start_loop(int x)\n"
	"{ for (int i = (x != 0); i < 1000; i++) helper(i); }\n"
	"__attribute__((noipa)) void nested_loop(int *a, int n, int m)\n"
	"{ for (int i = 0; i < n; i++) for (int j = 0; j < m; j++) a[i * m + j] += i ^ j; }\n"
	"__attribute__((noipa)) int diamond(int x)\n"
	"{ int r; if (x > 10) r = helper(x); else r = hidden_fn(x) - 5; return r + 1; }\n"
	"__attribute__((noipa)) int switcher(int x)\n"
	"{ int r; switch (x) {\n"
	"  case 0: r = helper(1); break;     case 1: r = helper(7) + 2; break;\n"
	"  case 2: r = hidden_fn(3); break;  case 3: r = helper(x * 5); break;\n"
	"  case 4: r = hidden_fn(x) * 9; break; case 5: r = helper(11) - 1; break;\n"
	"  case 6: r = 42; break;            default: r = -1; break; }\n"
	"  return r + 3; }\n"
	"__attribute__((noipa)) int tailer(int x)\n"
	"{ if (x < 0) return -x; return helper(x * 2); }\n"
	/* a tail call through a pointer: `mov tail_fp(%rip),%rax; jmp *%rax` */
	"int (*volatile tail_fp)(int) = helper;\n"
	"__attribute__((noipa)) int ptr_tailer(int x)\n"
	"{ if (x < 0) return -x; return tail_fp(x * 2); }\n"
	/* a counter set before calls that precede its loop: kept in %rbx,
	 * which calls preserve (saved_loop, stepped before the body's call,
	 * compared after it), or in %rcx, which they do not (clobbered_loop:
	 * no constant start); stepped behind a branch (branch_step_loop:
	 * not every trip, no constant trip count) */
	"__asm__(\".text\\n.globl saved_loop\\n.type saved_loop,@function\\nsaved_loop:\\n"
	"  push %rbx\\n  xor %ebx,%ebx\\n  mov $1,%edi\\n  call helper\\n"
	"1: mov %ebx,%edi\\n  add $1,%rbx\\n  call helper\\n  cmp $0x309,%rbx\\n  jne 1b\\n"
	"  pop %rbx\\n  ret\\n.size saved_loop,.-saved_loop\\n"
	".globl clobbered_loop\\n.type clobbered_loop,@function\\nclobbered_loop:\\n"
	"  push %rbx\\n  xor %ecx,%ecx\\n  mov $1,%edi\\n  call helper\\n"
	"1: mov %ecx,%edi\\n  add $1,%rcx\\n  cmp $0x309,%rcx\\n  jne 1b\\n"
	"  pop %rbx\\n  ret\\n.size clobbered_loop,.-clobbered_loop\\n"
	".globl branch_step_loop\\n.type branch_step_loop,@function\\nbranch_step_loop:\\n"
	"  push %rbx\\n  xor %ebx,%ebx\\n"
	"1: test $1,%edi\\n  je 2f\\n  add $1,%rbx\\n2: mov %ebx,%edi\\n  call helper\\n"
	"  cmp $0x309,%rbx\\n  jne 1b\\n  pop %rbx\\n  ret\\n"
	".size branch_step_loop,.-branch_step_loop\\n"
	/* gcc -O3's rotated loop entered by a jump past its top (jump_entry_loop):
	 * the counter's constant start is before the jump */
	".globl jump_entry_loop\\n.type jump_entry_loop,@function\\njump_entry_loop:\\n"
	"  push %rbx\\n  mov $0x309,%ebx\\n  xor %eax,%eax\\n  jmp 2f\\n  nop\\n"
	"1: mov %ebx,%edi\\n2: call helper\\n  sub $1,%rbx\\n  jne 1b\\n  pop %rbx\\n  ret\\n"
	".size jump_entry_loop,.-jump_entry_loop\\n\");\n"
	"void saved_loop(void); void clobbered_loop(void); void branch_step_loop(void);\n"
	"void jump_entry_loop(void);\n"
	"int main(int argc, char **argv)\n"
	"{ int a[16] = { 0 }; (void)argv; nested_loop(a, 4, 4); fixed_loop(); chosen_loop(argc);\n"
	"  skip_loop(a); jump_loop(a); set_start_loop(argc); saved_loop(); clobbered_loop();\n"
	"  branch_step_loop(); jump_entry_loop();\n"
	"  return counted_loop(a, 16) + diamond(argc) + switcher(argc) + tailer(argc) +\n"
	"    ptr_tailer(argc); }\n";

static inline int run(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

/* dir/prog.c from prog_src. */
static inline bool write_prog_source(const char *dir)
{
	char src[256];
	FILE *o;

	snprintf(src, sizeof(src), "%s/prog.c", dir);
	o = fopen(src, "w");
	return o && fputs(prog_src, o) >= 0 && fclose(o) == 0;
}

/* dir/prog, dir/prog.o and dir/nobid; the exit status of the shell. */
static inline int compile_prog(const char *dir)
{
	/* -foptimize-sibling-calls: -O1 does not make tail calls by itself */
	return run("cd %s && gcc -O1 -g -fcf-protection=full -foptimize-sibling-calls -rdynamic "
		   "-Wl,--build-id -o prog prog.c && gcc -O1 -c -o prog.o prog.c && "
		   "gcc -O1 -Wl,--build-id=none -o nobid prog.c", dir);
}

#endif
