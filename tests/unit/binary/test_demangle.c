// SPDX-License-Identifier: MIT
/*
 * test_demangle: C++ function names as users write them.  The name parts
 * of demangled names (templates, return types, operators, anonymous
 * namespaces, clones), which typed names match which, constructors, and
 * on a g++ build of a small program (overloads, classes, namespaces,
 * templates) which symbols sb_elf_cxx_funcs() finds, checked against the
 * symbols nm lists.
 */
#include "check.h"
#include "binary/demangle.h"
#include "elfsym_test.h"

#include <string.h>
#include <unistd.h>

static void parts(const char *d, const char *qual, const char *tmpl, const char *sig)
{
	struct sb_cxx_name n;

	CHECK(!sb_cxx_name_parse(d, &n), "%s", d);
	CHECK(!strcmp(n.qual, qual), "%s: qual '%s' want '%s'", d, n.qual, qual);
	CHECK(!strcmp(n.tmpl, tmpl), "%s: tmpl '%s' want '%s'", d, n.tmpl, tmpl);
	CHECK(!strcmp(n.sig, sig), "%s: sig '%s' want '%s'", d, n.sig, sig);
}

static bool matches(const char *d, const char *want)
{
	struct sb_cxx_name n;

	return !sb_cxx_name_parse(d, &n) && sb_cxx_name_matches(&n, want);
}

static void test_strings(void)
{
	char *d = sb_demangle("_Z19parsec_barrier_waitP14parsec_barrier");

	CHECK(d && !strcmp(d, "parsec_barrier_wait(parsec_barrier*)"), "%s", d ? d : "NULL");
	free(d);
	d = sb_demangle("_ZN7threads7Barrier4WaitEv");
	CHECK(d && !strcmp(d, "threads::Barrier::Wait()"), "%s", d ? d : "NULL");
	free(d);
	CHECK(!sb_demangle("parsec_barrier_wait"), "a C name is not demangled");
	CHECK(!sb_demangle("_Zgarbage"), "not a mangled name");

	parts("parsec_barrier_wait(parsec_barrier*)", "parsec_barrier_wait",
	      "parsec_barrier_wait", "parsec_barrier_wait(parsec_barrier*)");
	parts("ns::Barrier::wait() const", "ns::Barrier::wait", "ns::Barrier::wait",
	      "ns::Barrier::wait() const");
	parts("void ns::wait<int, std::pair<int, long> >(int)", "ns::wait",
	      "ns::wait<int, std::pair<int, long> >", "ns::wait<int, std::pair<int, long> >(int)");
	parts("unsigned long ns::B<int>::get<(anonymous namespace)::T>(char)", "ns::B::get",
	      "ns::B<int>::get<(anonymous namespace)::T>",
	      "ns::B<int>::get<(anonymous namespace)::T>(char)");
	parts("(anonymous namespace)::barrier(int)", "(anonymous namespace)::barrier",
	      "(anonymous namespace)::barrier", "(anonymous namespace)::barrier(int)");
	parts("ns::Q::operator()(int)", "ns::Q::operator()", "ns::Q::operator()",
	      "ns::Q::operator()(int)");
	parts("ns::Q::operator<(ns::Q const&)", "ns::Q::operator<", "ns::Q::operator<",
	      "ns::Q::operator<(ns::Q const&)");
	parts("f(int) [clone .constprop.0]", "f", "f", "f(int)");

	/* typed names */
	CHECK(matches("parsec::parsec_barrier_wait(parsec::B*)", "parsec_barrier_wait"), "plain");
	CHECK(matches("parsec::parsec_barrier_wait(parsec::B*)", "parsec::parsec_barrier_wait"),
	      "qualified");
	CHECK(!matches("parsec::parsec_barrier_wait(parsec::B*)", "other::parsec_barrier_wait"),
	      "other scope");
	CHECK(!matches("parsec::parsec_barrier_wait(parsec::B*)", "barrier_wait"),
	      "a name part is not a component");
	CHECK(!matches("parsec::parsec_barrier_wait(parsec::B*)", "parsec"), "a scope only");
	CHECK(!matches("pgain(long, Points*, parsec_barrier*)", "parsec_barrier"),
	      "parameter types are not names");
	CHECK(matches("a::Barrier::wait()", "Barrier::wait"), "class::method");
	CHECK(matches("a::Barrier::wait(int)", "wait(int)"), "with parameters");
	CHECK(!matches("a::Barrier::wait(int)", "wait()"), "other overload");
	CHECK(matches("void ns::wait<int>(int)", "wait<int>"), "template arguments");
	CHECK(matches("void ns::wait<int>(int)", "ns::wait"), "template, without");
	CHECK(!matches("void ns::wait<int>(int)", "void"), "the return type is no name");
	CHECK(!matches("f()", ""), "empty");

	CHECK(sb_cxx_is_ctor_dtor("ns::Barrier::Barrier"), "ctor");
	CHECK(sb_cxx_is_ctor_dtor("ns::Barrier::~Barrier"), "dtor");
	CHECK(sb_cxx_is_ctor_dtor("Barrier::Barrier"), "ctor, global class");
	CHECK(!sb_cxx_is_ctor_dtor("ns::Barrier::wait"), "method");
	CHECK(!sb_cxx_is_ctor_dtor("barrier"), "free function");
	CHECK(!sb_cxx_is_ctor_dtor("xBarrier::Barrier"), "other class");
	CHECK(!strcmp(sb_cxx_last_components("a::b<x::y>::c", 2), "b<x::y>::c"), "last 2");
	CHECK(!strcmp(sb_cxx_last_components("c", 2), "c"), "last 2 of 1");
}

static const char cxx_src[] =
	"namespace parsec {\n"
	"struct parsec_barrier { int n; };\n"
	"void parsec_barrier_wait(parsec_barrier *b) { b->n++; }\n"
	"void parsec_barrier_wait(parsec_barrier *b, int k) { b->n += k; }\n"
	"}\n"
	"namespace other { void parsec_barrier_wait(int *p) { ++*p; } }\n"
	"struct Barrier {\n"
	"  int n;\n"
	"  Barrier() : n(0) {}\n"
	"  void wait();\n"
	"};\n"
	"void Barrier::wait() { n++; }\n"
	"template <class T> void tw(T *p) { ++*p; }\n"
	"template void tw<int>(int *);\n"
	"template void tw<long>(long *);\n"
	"void pgain(long, parsec::parsec_barrier *b) { parsec::parsec_barrier_wait(b); }\n"
	"int main() { Barrier b; b.wait(); return b.n; }\n";

struct seen {
	int n;
	char syms[8][128];
};

static void on_func(const char *sym, const char *demangled, uint64_t vaddr, uint64_t size,
		    void *arg)
{
	struct seen *s = arg;

	(void)demangled;
	CHECK(vaddr && size, "%s at 0x%llx size %llu", sym, (unsigned long long)vaddr,
	      (unsigned long long)size);
	if (s->n < 8)
		snprintf(s->syms[s->n], sizeof(s->syms[0]), "%s", sym);
	s->n++;
}

/* The symbols found for `want` are exactly `n` of the listed ones. */
static void find(struct sb_elf *e, const char *want, int n, const char *const *syms)
{
	struct seen s = { 0 };
	int got = sb_elf_cxx_funcs(e, want, on_func, &s);

	CHECK(got == n && s.n == n, "%s: %d functions, want %d", want, got, n);
	for (int i = 0; i < n && i < s.n; i++) {
		bool listed = false;

		for (int j = 0; j < n; j++)
			listed |= !strcmp(s.syms[i], syms[j]);
		CHECK(listed, "%s: unexpected %s", want, s.syms[i]);
	}
}

static void test_binary(void)
{
	char dir[] = "/tmp/sb_demangle_XXXXXX", src[128], bin[128];
	static const char *const wait2[] = { "_ZN6parsec19parsec_barrier_waitEPNS_14parsec_barrierE",
					     "_ZN6parsec19parsec_barrier_waitEPNS_14parsec_barrierEi" };
	static const char *const wait3[] = { wait2[0], wait2[1], "_ZN5other19parsec_barrier_waitEPi" };
	static const char *const wait1[] = { "_ZN6parsec19parsec_barrier_waitEPNS_14parsec_barrierEi" };
	static const char *const method[] = { "_ZN7Barrier4waitEv" };
	static const char *const tws[] = { "_Z2twIiEvPT_", "_Z2twIlEvPT_" };
	static const char *const twl[] = { "_Z2twIlEvPT_" };
	struct sb_elf *e;
	char err[256];

	if (system("command -v g++ >/dev/null 2>&1")) {
		printf("test_demangle: g++ not installed: binary checks skipped\n");
		return;
	}
	CHECK(mkdtemp(dir) != NULL, "mkdtemp");
	snprintf(src, sizeof(src), "%s/p.cc", dir);
	snprintf(bin, sizeof(bin), "%s/p", dir);
	CHECK(write_file(src, cxx_src), "write %s", src);
	/* -O0: every function stays, none is inlined away. */
	CHECK(run("g++ -O0 -g %s -o %s%s", src, bin, "") == 0, "g++");
	e = sb_elf_open(bin, err, sizeof(err));
	CHECK(e != NULL, "%s", err);
	if (e) {
		find(e, "parsec::parsec_barrier_wait", 2, wait2);   /* overloads */
		find(e, "parsec_barrier_wait", 3, wait3);           /* every scope */
		find(e, "parsec_barrier_wait(parsec::parsec_barrier*, int)", 1, wait1);
		find(e, "Barrier::wait", 1, method);
		find(e, "wait", 1, method);
		find(e, "tw", 2, tws);
		find(e, "tw<long>", 1, twl);
		/* C1/C2 constructors share an address: found once */
		CHECK(sb_elf_cxx_funcs(e, "Barrier::Barrier", NULL, NULL) == 1, "ctor once");
		find(e, "parsec_barrier", 0, NULL);                 /* a type, not a function */
		find(e, "nosuch::parsec_barrier_wait", 0, NULL);
		sb_elf_close(e);
	}
	run("rm -rf %s%s%s", dir, "", "");
}

int main(void)
{
	test_strings();
	test_binary();
	return CHECK_DONE("test_demangle");
}
