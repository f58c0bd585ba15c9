// SPDX-License-Identifier: MIT
/*
 * test_elfsym: compiles a tiny program at test time and checks symbols,
 * lines, segments, build-id and call detection against what the
 * compiler and binutils say; then probe sites and versioned symbols of
 * the system's libc, libgomp and libomp.  Call targets (PLT, -fno-plt,
 * IBT PLT, static ifuncs) are test_elfsym_callees.c.
 */
#include "check.h"
#include "binary/elfsym.h"
#include "elfsym_test.h"

#include <errno.h>
#include <pthread.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"
#define LIBGOMP "/usr/lib/x86_64-linux-gnu/libgomp.so.1"
#define LIBOMP "/usr/lib/llvm-14/lib/libomp.so.5"

/* Markers (MARK_*) locate lines; the asm functions have known encodings. */
static const char prog_src[] =
	"#include <stdio.h>\n"
	"volatile int g_val = 3;\n"
	"__attribute__((noinline)) int target_fn(int x) { /* MARK_TARGET */\n"
	"\treturn x * g_val + 1;\n"
	"}\n"
	"static inline __attribute__((always_inline)) int inl_fn(int x)\n"
	"{\n"
	"\treturn x * g_val + 7; /* MARK_INL */\n"
	"}\n"
	"__attribute__((noinline)) int caller_fn(int x)\n"
	"{\n"
	"\treturn inl_fn(x) + g_val;\n"
	"}\n"
	"__asm__(\".text\\n.globl sb_calls\\n.type sb_calls,@function\\nsb_calls:\\n\"\n"
	"\t\"call 1f\\n1:\\ncall *%rax\\ncall *%r9\\ncall *(%rax)\\ncall *8(%rax)\\n\"\n"
	"\t\"call *8(%rsp)\\ncall *8(%r12)\\ncall *0x1000(%rax)\\n\"\n"
	"\t\"call *0x1000(%r11)\\ncall *0x1000(%rsp,%rbx,8)\\n\"\n"
	"\t\"call *0x1000(%r12,%r13,8)\\ncall *sb_calls(%rip)\\n\"\n"
	"\t\"movabs $0x1111111111111111,%rax\\nret\\n.size sb_calls,.-sb_calls\\n\"\n"
	/* walks past mov/lea (no rsp, no argument register) to a push */
	"\t\".globl sb_p1\\n.type sb_p1,@function\\nsb_p1:\\nendbr64\\n\"\n"
	"\t\"mov %rdi,%rax\\nlea 8(%rax),%r10\\npush %rbx\\npop %rbx\\nret\\n\"\n"
	"\t\".size sb_p1,.-sb_p1\\n\"\n"
	/* reads rsp first: stays at the start */
	"\t\".globl sb_p2\\n.type sb_p2,@function\\nsb_p2:\\n\"\n"
	"\t\"mov (%rsp),%rax\\npush %rbx\\npop %rbx\\nret\\n.size sb_p2,.-sb_p2\\n\"\n"
	/* a loop branches back to the push: a probe there would re-fire */
	"\t\".globl sb_p3\\n.type sb_p3,@function\\nsb_p3:\\nmov %rdi,%rax\\n\"\n"
	"\t\"2:\\npush %rbx\\npop %rbx\\ndec %rax\\njnz 2b\\nret\\n.size sb_p3,.-sb_p3\\n\");\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"\t(void)argv;\n"
	"\tint r = target_fn(argc); /* MARK_CALL */\n"
	"\tprintf(\"%d %d\\n\", r, caller_fn(argc));\n"
	"\treturn 0;\n"
	"}\n";

/* Encoded lengths of the sb_calls instructions, in order. */
static const unsigned call_lens[] = { 5, 2, 3, 2, 3, 4, 5, 6, 7, 7, 8, 6 };
#define MOVABS_LEN 10

static unsigned line_of(const char *marker)
{
	const char *at = strstr(prog_src, marker);
	unsigned line = 1;

	for (const char *p = prog_src; p < at; p++)
		line += *p == '\n';
	return line;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = s ? strlen(s) : 0, b = strlen(suffix);

	return s && a >= b && !strcmp(s + a - b, suffix);
}

/* First line of `cmd` output containing key; the token after it. */
static bool popen_token(const char *cmd, const char *key, char *out, size_t len)
{
	FILE *f = popen(cmd, "r");
	char line[512];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *p = strstr(line, key);

		if (p && sscanf(p + strlen(key), "%127s", out) == 1 && strlen(out) < len)
			found = true;
	}
	pclose(f);
	return found;
}

/* Address of a versioned dynamic symbol as readelf prints it. */
static uint64_t readelf_sym(const char *lib, const char *full)
{
	char cmd[512], key[160], out[128];

	snprintf(cmd, sizeof(cmd), "readelf -W --dyn-syms %s", lib);
	snprintf(key, sizeof(key), " %s\n", full);
	FILE *f = popen(cmd, "r");
	char line[512];
	uint64_t v = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (ends_with(line, key) && sscanf(line, "%*s %127s", out) == 1)
			v = strtoull(out, NULL, 16);
	pclose(f);
	return v;
}

/* Return address of the first `call target` (e8 rel32) inside func. */
static uint64_t find_call(struct sb_elf *e, const char *func, uint64_t target)
{
	uint64_t a, sz;
	uint8_t buf[512];
	size_t n;

	if (sb_elf_func_by_name(e, func, &a, &sz))
		return 0;
	n = sb_elf_read(e, a, buf, sz < sizeof(buf) ? sz : sizeof(buf));
	for (size_t i = 0; i + 5 <= n; i++) {
		int32_t rel;

		memcpy(&rel, buf + i + 1, 4);
		if (buf[i] == 0xe8 && a + i + 5 + (int64_t)rel == target)
			return a + i + 5;
	}
	return 0;
}

struct match { int n; uint64_t vaddr; char name[64]; };

static void on_match(const char *name, uint64_t vaddr, uint64_t size, void *arg)
{
	struct match *m = arg;

	(void)size;
	m->n++;
	m->vaddr = vaddr;
	snprintf(m->name, sizeof(m->name), "%s", name);
}

/* Call-site line, function start line, func_by_name: for gcc and clang. */
static void check_lines(struct sb_elf *e, const char *what)
{
	uint64_t tgt = 0, tsz = 0, ret;
	const char *file = NULL, *fn = NULL;
	unsigned line = 0;

	CHECK(sb_elf_func_by_name(e, "target_fn", &tgt, &tsz) == 0 && tsz > 0,
	      "%s: target_fn found", what);
	ret = find_call(e, "main", tgt);
	CHECK(ret != 0, "%s: call target_fn in main", what);
	CHECK(sb_elf_srcline(e, ret - 1, &file, &line, &fn) == 0,
	      "%s: srcline of call", what);
	CHECK(ends_with(file, "/prog.c") && line == line_of("MARK_CALL") &&
	      fn && !strcmp(fn, "main"), "%s: call at %s:%u in %s, want line %u",
	      what, file, line, fn, line_of("MARK_CALL"));
	CHECK(sb_elf_srcline(e, tgt, &file, &line, &fn) == 0 &&
	      line == line_of("MARK_TARGET") && fn && !strcmp(fn, "target_fn"),
	      "%s: target_fn at line %u (%s), want %u", what, line, fn,
	      line_of("MARK_TARGET"));
	CHECK(sb_elf_is_return_address(e, ret), "%s: after call", what);
	CHECK(sb_elf_callee_at(e, ret) && !strcmp(sb_elf_callee_at(e, ret), "target_fn"),
	      "%s: callee target_fn, got %s", what, sb_elf_callee_at(e, ret));
}

static void check_program(const char *dir)
{
	char prog[512], stripped[600], nodebug[600], cprog[600], err[256], bid[128];
	const char *fn = NULL, *file = NULL;
	uint64_t tgt = 0, tsz = 0, start = 0, off = 0, back = 0, a, sz;
	struct match mt = { 0 };
	bool found_inl = false, found_caller = false;
	unsigned line = 0;
	uint8_t b1[16], b2[16];
	struct sb_elf *e;
	FILE *f;

	snprintf(prog, sizeof(prog), "%s/prog", dir);
	snprintf(cprog, sizeof(cprog), "%s/prog.c", dir);
	CHECK(write_file(cprog, prog_src), "write %s", cprog);
	CHECK(!sb_elf_open(cprog, err, sizeof(err)) && strstr(err, "not an ELF"),
	      "open C source: %s", err);
	CHECK(run("cc -g -O0 -o %s %s%s", prog, cprog, "") == 0, "cc %s", cprog);
	e = sb_elf_open(prog, err, sizeof(err));
	CHECK(e != NULL, "open: %s", err);
	if (!e)
		return;
	CHECK(sb_elf_has_symtab(e) && sb_elf_has_debuginfo(e), "symtab+dwarf");
	CHECK(!strcmp(sb_elf_path(e), prog), "path");
	check_lines(e, "gcc");
	sb_elf_func_by_name(e, "target_fn", &tgt, &tsz);
	fn = sb_elf_func_at(e, tgt + tsz - 1, &start);
	CHECK(fn && !strcmp(fn, "target_fn") && start == tgt, "func_at end");
	CHECK(!sb_elf_func_at(e, 0, NULL), "nothing at 0");
	CHECK(sb_elf_funcs_matching(e, "target_f", on_match, &mt) == 1 &&
	      mt.n == 1 && mt.vaddr == tgt && !strcmp(mt.name, "target_fn"),
	      "funcs_matching");
	CHECK(sb_elf_func_by_name(e, "no_such_fn", NULL, NULL) == -1, "absent");
	CHECK(sb_elf_imports(e, "printf") && !sb_elf_imports(e, "target_fn") &&
	      !sb_elf_imports(e, "pthread_barrier_wait"), "imports");

	/* offset <-> vaddr, and sb_elf_read returns the file's bytes */
	CHECK(sb_elf_vaddr_to_offset(e, tgt, &off) == 0 &&
	      sb_elf_offset_to_vaddr(e, off, &back) == 0 && back == tgt,
	      "round trip %#" PRIx64 " -> %#" PRIx64 " -> %#" PRIx64, tgt, off, back);
	f = fopen(prog, "rb");
	CHECK(f && fseek(f, (long)off, SEEK_SET) == 0 &&
	      fread(b1, 1, sizeof(b1), f) == sizeof(b1), "pread");
	if (f)
		fclose(f);
	CHECK(sb_elf_read(e, tgt, b2, sizeof(b2)) == sizeof(b2) &&
	      !memcmp(b1, b2, sizeof(b1)), "read matches file");
	CHECK(sb_elf_vaddr_to_offset(e, UINT64_MAX - 8, &off) == -1, "no segment");
	CHECK(sb_elf_read(e, UINT64_MAX - 8, b2, 4) == 0, "unbacked read");

	/* build-id as readelf -n prints it */
	snprintf(cprog, sizeof(cprog), "readelf -n %s", prog);
	CHECK(popen_token(cprog, "Build ID:", bid, sizeof(bid)) &&
	      sb_elf_build_id(e) && !strcmp(bid, sb_elf_build_id(e)),
	      "build-id %s vs %s", sb_elf_build_id(e), bid);

	/* the inlined body maps to inl_fn's line and name */
	sb_elf_func_by_name(e, "caller_fn", &a, &sz);
	for (uint64_t v = a; v < a + sz; v++) {
		if (sb_elf_srcline(e, v, &file, &line, &fn) || !fn)
			continue;
		found_inl |= !strcmp(fn, "inl_fn") && line == line_of("MARK_INL");
		found_caller |= !strcmp(fn, "caller_fn");
	}
	CHECK(found_inl && found_caller, "inline frame inl_fn:%u", line_of("MARK_INL"));

	/* return addresses after every call form; not inside the movabs */
	CHECK(sb_elf_func_by_name(e, "sb_calls", &a, &sz) == 0, "sb_calls");
	uint64_t ra = a;
	for (size_t i = 0; i < sizeof(call_lens) / sizeof(call_lens[0]); i++) {
		ra += call_lens[i];
		CHECK(sb_elf_is_return_address(e, ra), "call #%zu ends at +%" PRIu64,
		      i, ra - a);
		/* into its own body, through registers, through code bytes */
		CHECK(!sb_elf_callee_at(e, ra), "call #%zu: no callee, got %s", i,
		      sb_elf_callee_at(e, ra));
	}
	CHECK(sz == ra - a + MOVABS_LEN + 1, "sb_calls size %" PRIu64, sz);
	CHECK(!sb_elf_is_return_address(e, a + 1), "inside first call");
	CHECK(!sb_elf_is_return_address(e, ra + 5), "inside movabs +5");
	CHECK(!sb_elf_is_return_address(e, ra + 9), "inside movabs +9");
	CHECK(!sb_elf_is_return_address(e, ra + MOVABS_LEN), "after movabs");
	CHECK(!sb_elf_is_return_address(e, ra + MOVABS_LEN + 1), "after ret");
	CHECK(!sb_elf_callee_at(e, ra + 5) && !sb_elf_callee_at(e, a + 1),
	      "no callee off calls");

	/* probe-site walk on known code */
	bool em = true;
	sb_elf_func_by_name(e, "sb_p1", &a, &sz);
	CHECK(sb_elf_probe_site(e, a, sz, true, &em) == a + 4 + 3 + 4 && em, "sb_p1");
	sb_elf_func_by_name(e, "sb_p2", &a, &sz);
	CHECK(sb_elf_probe_site(e, a, sz, true, &em) == a && !em, "sb_p2");
	sb_elf_func_by_name(e, "sb_p3", &a, &sz);
	CHECK(sb_elf_probe_site(e, a, sz, true, &em) == a && !em, "sb_p3 loop");
	sb_elf_func_by_name(e, "sb_p1", &a, &sz);
	CHECK(sb_elf_probe_site(e, a, 4 + 3 + 4, true, &em) == a + 4 && !em,
	      "sb_p1 cut short by size");
	sb_elf_close(e);

	/* no DWARF but a symtab: no line, function from the symbols */
	snprintf(nodebug, sizeof(nodebug), "%s.nodebug", prog);
	CHECK(run("strip --strip-debug -o %s %s%s", nodebug, prog, "") == 0, "strip -g");
	e = sb_elf_open(nodebug, err, sizeof(err));
	CHECK(e && sb_elf_has_symtab(e) && !sb_elf_has_debuginfo(e), "nodebug: %s", err);
	if (e) {
		sb_elf_func_by_name(e, "target_fn", &tgt, NULL);
		CHECK(sb_elf_srcline(e, tgt + 1, &file, &line, &fn) == -1 &&
		      fn && !strcmp(fn, "target_fn") && !file && !line, "nodebug srcline");
		sb_elf_close(e);
	}
	/* fully stripped: neither, same build-id */
	snprintf(stripped, sizeof(stripped), "%s.stripped", prog);
	CHECK(run("strip --strip-all -o %s %s%s", stripped, prog, "") == 0, "strip");
	e = sb_elf_open(stripped, err, sizeof(err));
	CHECK(e && !sb_elf_has_symtab(e) && !sb_elf_has_debuginfo(e), "stripped: %s", err);
	if (e) {
		CHECK(sb_elf_func_by_name(e, "target_fn", NULL, NULL) == -1, "no target_fn");
		CHECK(sb_elf_srcline(e, tgt, &file, &line, &fn) == -1 && !file,
		      "stripped srcline");
		CHECK(sb_elf_build_id(e) && !strcmp(sb_elf_build_id(e), bid), "same id");
		CHECK(sb_elf_is_dyn(e), "PIE is ET_DYN");
		sb_elf_close(e);
	}

	/* clang emits no .debug_aranges: lines must still be found */
	snprintf(cprog, sizeof(cprog), "%s/prog.c", dir);
	snprintf(prog, sizeof(prog), "%s/prog.clang", dir);
	if (system("command -v clang >/dev/null 2>&1") != 0) {
		printf("test_elfsym: clang absent, skipping clang line checks\n");
		return;
	}
	CHECK(run("clang -g -O0 -o %s %s%s", prog, cprog, "") == 0, "clang");
	e = sb_elf_open(prog, err, sizeof(err));
	CHECK(e != NULL, "open clang build: %s", err);
	if (e)
		check_lines(e, "clang");
	sb_elf_close(e);
}

static void check_probe(struct sb_elf *e, const char *fn, bool keep_args,
			uint64_t want_off, bool want_em)
{
	uint64_t a = 0, sz = 0, site;
	bool em = !want_em;

	CHECK(sb_elf_func_by_name(e, fn, &a, &sz) == 0 && sz > 0, "%s found", fn);
	site = sb_elf_probe_site(e, a, sz, keep_args, &em);
	CHECK(site == a + want_off && em == want_em, "%s: site +%" PRIu64
	      " emulated %d, want +%" PRIu64 " %d", fn, site - a, em, want_off, want_em);
}

static struct sb_elf *open_lib(const char *path)
{
	char err[256];
	struct sb_elf *e;

	if (access(path, R_OK)) {
		printf("test_elfsym: %s absent, skipping its checks\n", path);
		return NULL;
	}
	e = sb_elf_open(path, err, sizeof(err));
	CHECK(e != NULL, "open %s: %s", path, err);
	return e;
}

static void check_libs(void)
{
	struct sb_elf *e = open_lib(LIBC);
	uint64_t a = 0, b = 0, want, start = 0;
	const char *fn, *file = NULL;
	unsigned line = 0;
	char dbg[256];

	if (e) {
		check_probe(e, "pthread_barrier_wait", true, 0, true);
		check_probe(e, "pthread_join", true, 0, false);
		/* Without arguments to keep: past the set-up to the jmp. */
		check_probe(e, "pthread_join", false, 10, true);
		/* the @@GLIBC_2.3.2 default, not the old @GLIBC_2.2.5 one */
		want = readelf_sym(LIBC, "pthread_cond_timedwait@@GLIBC_2.3.2");
		CHECK(sb_elf_func_by_name(e, "pthread_cond_timedwait", &a, NULL) == 0 &&
		      want && a == want, "timedwait %#" PRIx64 " want %#" PRIx64, a, want);
		want = readelf_sym(LIBC, "pthread_cond_timedwait@GLIBC_2.2.5");
		CHECK(sb_elf_func_by_name(e, "pthread_cond_timedwait@GLIBC_2.2.5", &b,
					  NULL) == 0 && want && b == want && a != b,
		      "old timedwait %#" PRIx64 " want %#" PRIx64, b, want);
		sb_elf_func_by_name(e, "pthread_barrier_wait", &a, NULL);
		fn = sb_elf_func_at(e, a + 10, &start);
		CHECK(fn && !strcmp(fn, "pthread_barrier_wait") && start == a,
		      "libc func_at %s", fn);
		CHECK(!sb_elf_has_symtab(e) && sb_elf_build_id(e), "libc: dynsym only");
		/* with libc6-dbg the separate debug file supplies lines */
		snprintf(dbg, sizeof(dbg), "/usr/lib/debug/.build-id/%.2s/%s.debug",
			 sb_elf_build_id(e), sb_elf_build_id(e) + 2);
		if (access(dbg, R_OK) == 0)
			CHECK(sb_elf_srcline(e, a, &file, &line, &fn) == 0 &&
			      ends_with(file, "pthread_barrier_wait.c") && line > 0,
			      "libc debug file line %s:%u", file, line);
		else
			printf("test_elfsym: no %s, skipping libc line check\n", dbg);
		sb_elf_close(e);
	}
	if ((e = open_lib(LIBGOMP))) {
		check_probe(e, "GOMP_barrier", true, 4, false);
		/* GOMP_barrier takes no argument: the je at +0x13 is reachable. */
		check_probe(e, "GOMP_barrier", false, 0x13, true);
		check_probe(e, "GOMP_parallel", true, 4, true);
		check_probe(e, "GOMP_loop_end", true, 4, true);
		CHECK(sb_elf_imports(e, "pthread_create") &&
		      !sb_elf_imports(e, "GOMP_barrier"), "libgomp imports");
		want = readelf_sym(LIBGOMP, "omp_set_lock@@OMP_3.0");
		CHECK(sb_elf_func_by_name(e, "omp_set_lock", &a, NULL) == 0 && a == want,
		      "omp_set_lock %#" PRIx64 " want %#" PRIx64, a, want);
		sb_elf_close(e);
	}
	if ((e = open_lib(LIBOMP))) {
		check_probe(e, "__kmpc_fork_call", true, 0, true);
		check_probe(e, "__kmpc_barrier", true, 0, true);
		sb_elf_close(e);
	}
}

/* A thread-local variable of this executable, found from a thread's
 * thread pointer where sb_elf_tls_offset says, in two threads. */
__thread uint64_t tls_probe_var[3];

static void *tls_distance(void *out)
{
	uintptr_t tp;

	__asm__("mov %%fs:0, %0" : "=r"(tp));   /* the TCB holds its own address */
	*(int64_t *)out = (int64_t)((uintptr_t)&tls_probe_var[0] - tp);
	return NULL;
}

static void check_tls(void)
{
	char err[256];
	struct sb_elf *e = sb_elf_open("/proc/self/exe", err, sizeof(err));
	int64_t off = 0, main_off = 0, thread_off = 0;
	pthread_t th;

	CHECK(e != NULL, "open self: %s", err);
	if (!e)
		return;
	tls_distance(&main_off);
	if (!pthread_create(&th, NULL, tls_distance, &thread_off))
		pthread_join(th, NULL);
	CHECK(sb_elf_tls_offset(e, "tls_probe_var", &off) == 0 && off == main_off &&
	      off == thread_off, "tls offset %" PRId64 ", main thread %" PRId64
	      ", another %" PRId64, off, main_off, thread_off);
	CHECK(sb_elf_tls_offset(e, "no_such_tls_var", &off) == -ENOENT, "missing: ENOENT");
	CHECK(sb_elf_tls_offset(e, "main", &off) == -ENOENT, "a function: ENOENT");
	sb_elf_close(e);
	if ((e = open_lib(LIBC))) {
		int ret = sb_elf_tls_offset(e, "errno", &off);

		CHECK(ret == -EINVAL, "a shared object's TLS: EINVAL (placed at load), got %d", ret);
		sb_elf_close(e);
	}
}

int main(void)
{
	char dir[] = "/tmp/sb_elfsym_XXXXXX", err[256];

	check_tls();

	CHECK(!sb_elf_open("/nonexistent/x", err, sizeof(err)) &&
	      strstr(err, "cannot open"), "open missing: %s", err);
	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp");
	} else {
		check_program(dir);
		run("rm -rf %s%s%s", dir, "", "");
	}
	check_libs();
	return CHECK_DONE("test_elfsym");
}
