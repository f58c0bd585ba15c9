// SPDX-License-Identifier: MIT
/*
 * test_elfsym_callees: call targets.  Builds an OpenMP program in four
 * PLT variants (lazy .plt, -fno-plt, IBT .plt.sec, addr32 call) and a
 * static one calling ifuncs, and checks that every call objdump decodes
 * gets the same callee from sb_elf_callee_at().
 */
#include "check.h"
#include "binary/elfsym.h"
#include "elfsym_test.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Call targets.  libgomp's GOMP_critical_start and omp_set_lock tail-jump
 * into their slow paths, so the profiler names the primitive from the
 * user's call site.  g_fp makes pthread_mutex_unlock both GOT-referenced
 * and called, which puts its stub in .plt.got; with -fPIC -fno-plt the
 * linker relaxes calls to crit_fn & co. to "addr32 call". */
static const char omp_src[] =
	"#include <omp.h>\n#include <pthread.h>\n#include <stdio.h>\n"
	"static omp_lock_t lk;\nstatic pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;\n"
	"volatile int g;\nint (*volatile g_fp)(pthread_mutex_t *);\n"
	"__attribute__((noinline, noclone)) static int local_fn(int x)\n"
	"{\n\treturn x * g + 1;\n}\n__attribute__((noinline)) void crit_fn(void)\n"
	"{\n#pragma omp critical\n\tg++;\n}\n"
	"__attribute__((noinline)) void lock_fn(void)\n{\n"
	"\tomp_set_lock(&lk);\n\tg++;\n\tomp_unset_lock(&lk);\n}\n"
	"__attribute__((noinline)) void mutex_fn(void)\n{\n"
	"\tpthread_mutex_lock(&mu);\n\tg++;\n\tpthread_mutex_unlock(&mu);\n"
	"\tg_fp(&mu);\n\tg++;\n}\nint main(int argc, char **argv)\n{\n"
	"\t(void)argv;\n\tg_fp = pthread_mutex_unlock;\n\tomp_init_lock(&lk);\n"
	"\tcrit_fn();\n\tlock_fn();\n\tmutex_fn();\n\tint r = local_fn(argc);\n"
	"\tomp_destroy_lock(&lk);\n\tprintf(\"%d\\n\", r);\n\treturn 0;\n}\n";

static const char static_src[] =
	"#include <pthread.h>\n#include <string.h>\nchar a[64], b[64];\n"
	"static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;\n"
	"int main(int argc, char **argv)\n{\n\t(void)argv;\n\tmemcpy(a, b, argc * 7u);\n"
	"\tpthread_mutex_lock(&mu);\n\treturn (int)strlen(a);\n}\n";

struct call_site {
	uint64_t ret;
	char func[32];
	char want[64];  /* "" when it has no name, "?" when objdump cannot tell */
	bool reg;       /* call *%reg */
};

/* The callee objdump names for a call: "X@plt" -> X; "# slot <X@VER>"
 * after call *slot(%rip) -> X; a direct "<X>" -> X; else none.  It
 * cannot name ifunc PLT stubs ("*ABS*+0x4193d0@plt", or "_init+0x38"
 * in a static binary): "?". */
static void objdump_callee(const char *ins, struct call_site *c)
{
	const char *lt = strchr(ins, '<'), *star = strchr(ins, '*');
	char *w = c->want;

	c->reg = star && !strchr(ins, '(');
	w[0] = '\0';
	if (!lt || sscanf(lt + 1, "%63[^>]", w) != 1)
		return;
	if (strchr(w, '+'))
		strcpy(w, star ? "" : "?");
	else if (star && !strchr(w, '@'))
		w[0] = '\0';    /* a data slot: "<g_fp>" */
	w[strcspn(w, "@")] = '\0';
}

/* The calls inside funcs ("main,crit_fn,") as objdump -d decodes them. */
static size_t objdump_calls(const char *prog, const char *funcs,
			    struct call_site *out, size_t max)
{
	char cmd[600], line[512], func[32] = "", key[40];
	size_t n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "objdump -d -w %s", prog);
	if (!(f = popen(cmd, "r")))
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *t1, *t2, *p;
		unsigned nb = 0;
		uint64_t addr;

		if (sscanf(line, "%*x <%31[^>]>:", func) == 1)
			continue;
		snprintf(key, sizeof(key), "%s,", func);
		if (!strstr(funcs, key) || n == max ||
		    sscanf(line, " %" SCNx64 ":", &addr) != 1 ||
		    !(t1 = strchr(line, '\t')) || !(t2 = strchr(t1 + 1, '\t')) ||
		    !(p = strstr(t2 + 1, "call")) || p - t2 > 16)
			continue;
		for (p = t1 + 1; p + 1 < t2; p++)       /* raw bytes: "e8 77 fe" */
			if (isxdigit((unsigned char)*p) && isxdigit((unsigned char)p[1]))
				nb++, p++;
		out[n].ret = addr + nb;
		snprintf(out[n].func, sizeof(out[n].func), "%s", func);
		objdump_callee(t2 + 1, &out[n++]);
	}
	pclose(f);
	return n;
}

/* Same function: equal names, or aliases ("___pthread_mutex_lock"). */
static bool same_func(struct sb_elf *e, const char *a, const char *b)
{
	uint64_t x, y;

	return a && b && (!strcmp(a, b) || (!sb_elf_func_by_name(e, a, &x, NULL) &&
					     !sb_elf_func_by_name(e, b, &y, NULL) &&
					     x == y));
}

/* Every call objdump sees in funcs gets the same callee from us; each
 * wanted (func, callee) pair occurs; nothing is named mid-call. */
static void check_calls(const char *prog, const char *what, const char *funcs,
			const char *const *pairs, unsigned npairs, bool want_reg)
{
	struct call_site cs[64];
	size_t n = objdump_calls(prog, funcs, cs, 64), inside = 0;
	unsigned seen = 0;
	bool reg = false;
	char err[256];
	struct sb_elf *e = sb_elf_open(prog, err, sizeof(err));

	CHECK(e && n > 0, "%s: open %s, %zu calls", what, err, n);
	for (size_t i = 0; e && i < n; i++) {
		const char *got = sb_elf_callee_at(e, cs[i].ret);

		CHECK(!strcmp(cs[i].want, "?") ||
		      (cs[i].want[0] ? same_func(e, got, cs[i].want) : !got),
		      "%s: call in %s returning to %#" PRIx64 ": want %s, got %s",
		      what, cs[i].func, cs[i].ret, cs[i].want[0] ? cs[i].want : "NULL",
		      got ? got : "NULL");
		for (unsigned k = 0; got && k < npairs; k++)
			seen |= (unsigned)(!strcmp(cs[i].func, pairs[2 * k]) &&
					   !strcmp(got, pairs[2 * k + 1])) << k;
		reg |= cs[i].reg && !got;
		inside += sb_elf_callee_at(e, cs[i].ret - 1) != NULL;
	}
	for (unsigned k = 0; e && k < npairs; k++)
		CHECK(seen & (1u << k), "%s: %s calls %s", what, pairs[2 * k],
		      pairs[2 * k + 1]);
	CHECK(reg == want_reg && inside == 0,
	      "%s: call *%%reg gives NULL %d, %zu callees at ret-1", what, reg, inside);
	sb_elf_close(e);
}

/* crit_fn and lock_fn end in tail calls (jmp GOMP_critical_end, jmp
 * omp_unset_lock): each has one jump to it, and none to what it calls;
 * main's call of crit_fn enters it directly, its PLT calls do not. */
static void check_tail_jumps(const char *prog, const char *what)
{
	static const char *const jumps[] = {
		"crit_fn", "GOMP_critical_end", "lock_fn", "omp_unset_lock",
	};
	struct call_site cs[64];
	size_t n = objdump_calls(prog, "main,", cs, 64);
	uint64_t fn, crit = 0, j;
	unsigned direct = 0, plt = 0;
	char err[256];
	struct sb_elf *e = sb_elf_open(prog, err, sizeof(err));
	uint8_t b[2];

	CHECK(e != NULL, "%s: open %s", what, err);
	if (!e)
		return;
	for (size_t i = 0; i < sizeof(jumps) / sizeof(jumps[0]); i += 2) {
		CHECK(!sb_elf_func_by_name(e, jumps[i], &fn, NULL), "%s: %s", what, jumps[i]);
		j = sb_elf_tail_jump_to(e, fn, jumps[i + 1]);
		/* jmp rel32 (e9), or jmp *slot(%rip) (ff /4, maybe after a prefix) */
		CHECK(j > fn && sb_elf_read(e, j, b, 2) == 2 &&
		      (b[0] == 0xe9 || b[0] == 0xff || b[1] == 0xff),
		      "%s: %s jumps to %s at %#" PRIx64, what, jumps[i], jumps[i + 1], j);
	}
	CHECK(!sb_elf_func_by_name(e, "crit_fn", &crit, NULL) &&
	      !sb_elf_tail_jump_to(e, crit, "GOMP_critical_start") &&
	      !sb_elf_tail_jump_to(e, crit, "no_such_fn"),
	      "%s: crit_fn calls GOMP_critical_start, jumps to nothing else", what);
	for (size_t i = 0; i < n; i++) {
		fn = sb_elf_direct_callee_at(e, cs[i].ret);
		if (!strcmp(cs[i].want, "crit_fn"))
			direct += fn == crit;
		else if (!strcmp(cs[i].want, "omp_init_lock"))
			plt += fn == 0;
	}
	CHECK(direct == 1 && plt == 1, "%s: main enters crit_fn directly (%u), "
	      "omp_init_lock through the PLT (%u)", what, direct, plt);
	sb_elf_close(e);
}

static void check_callees(const char *dir)
{
	static const char *const omp_pairs[] = {
		/* GOMP_critical_end and omp_unset_lock are tail calls */
		"crit_fn", "GOMP_critical_start", "lock_fn", "omp_set_lock",
		"mutex_fn", "pthread_mutex_lock", "mutex_fn", "pthread_mutex_unlock",
		"main", "local_fn", "main", "crit_fn", "main", "omp_init_lock",
	};
	static const char *const static_pairs[] = {
		"main", "memcpy", "main", "pthread_mutex_lock", "main", "strlen",
	};
	/* lazy .plt (+ .plt.got), call *GOT, IBT .plt.sec, addr32 call */
	static const char *const variants[] = {
		"", "-fno-plt", "-fcf-protection -Wl,-z,ibtplt", "-fno-plt -fPIC",
	};
	char src[256], prog[320];

	snprintf(src, sizeof(src), "%s/omp.c", dir);
	CHECK(write_file(src, omp_src), "write %s", src);
	for (size_t i = 0; i < sizeof(variants) / sizeof(variants[0]); i++) {
		snprintf(prog, sizeof(prog), "%s/omp%zu", dir, i);
		CHECK(run("gcc -O2 -g -fopenmp %s -o %s %s", variants[i], prog, src) == 0,
		      "gcc -fopenmp %s", variants[i]);
		check_calls(prog, variants[i][0] ? variants[i] : "plt",
			    "main,crit_fn,lock_fn,mutex_fn,", omp_pairs,
			    sizeof(omp_pairs) / sizeof(omp_pairs[0]) / 2, true);
		check_tail_jumps(prog, variants[i][0] ? variants[i] : "plt");
	}
	/* a static binary calls ifuncs through IRELATIVE PLT slots */
	snprintf(src, sizeof(src), "%s/static.c", dir);
	snprintf(prog, sizeof(prog), "%s/static", dir);
	CHECK(write_file(src, static_src), "write %s", src);
	if (run("gcc -O2 -static -o %s %s%s 2>/dev/null", prog, src, "") != 0) {
		printf("test_elfsym_callees: no static libc, skipping ifunc callee checks\n");
		return;
	}
	check_calls(prog, "static", "main,", static_pairs,
		    sizeof(static_pairs) / sizeof(static_pairs[0]) / 2, false);
}

int main(void)
{
	char dir[] = "/tmp/sb_elfsym_callees_XXXXXX";

	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp");
	} else {
		check_callees(dir);
		run("rm -rf %s%s%s", dir, "", "");
	}
	return CHECK_DONE("test_elfsym_callees");
}
