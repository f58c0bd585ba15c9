/* SPDX-License-Identifier: MIT */
/*
 * C++ function names (Itanium ABI, as g++ and clang++ mangle them) for
 * naming functions the way users write them: `--barrier
 * parsec_barrier_wait` finds _Z19parsec_barrier_waitP14parsec_barrier,
 * and barrier detection looks at a function's own name, not at the
 * parameter types its mangled name spells ("pgain(..., parsec_barrier*)"
 * is not a barrier).  Demangling is libstdc++'s __cxa_demangle.
 */
#ifndef SB_DEMANGLE_H
#define SB_DEMANGLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elfsym.h"

/* The demangled form of a C++ symbol ("ns::f(int)"), malloc'd; NULL when
 * sym is not a mangled C++ name (or out of memory). */
char *sb_demangle(const char *sym);

/*
 * The parts of a demangled function name that users type:
 *   qual: the qualified name without return type, template arguments and
 *         parameters ("ns::Barrier::wait");
 *   tmpl: the same with template arguments ("ns::wait<int>");
 *   sig:  tmpl with its parameters and qualifiers ("ns::wait<int>(int) const").
 * A compiler clone's suffix ("f() [clone .constprop.0]") is left out.
 * Returns 0, or -1 for a name longer than the buffers.
 */
struct sb_cxx_name {
	char qual[256], tmpl[384], sig[512];
};
int sb_cxx_name_parse(const char *demangled, struct sb_cxx_name *out);

/*
 * Whether `want`, as typed ("f", "ns::f", "Class::method", "f(int)",
 * "f<int>"), names n: it equals the form of n it is written in (sig when
 * it has a '(', tmpl when it has a '<', qual otherwise), or that form
 * ends with "::" + want (a plain name matches in every scope, as a
 * debugger's breakpoint does).
 */
bool sb_cxx_name_matches(const struct sb_cxx_name *n, const char *want);

/* The last `k` components of a qualified name ("a::b::c", 2 -> "b::c"). */
const char *sb_cxx_last_components(const char *qual, int k);

/* A constructor ("ns::B::B") or destructor ("ns::B::~B"). */
bool sb_cxx_is_ctor_dtor(const char *qual);

/*
 * Calls cb for every C++ function symbol of e (each address once; not
 * the .cold and .part clones, which callers do not call) whose demangled
 * name `want` names (sb_cxx_name_matches).
 * Returns the count.
 */
typedef void (*sb_cxx_func_cb)(const char *sym, const char *demangled, uint64_t vaddr,
			       uint64_t size, void *arg);
int sb_elf_cxx_funcs(const struct sb_elf *e, const char *want, sb_cxx_func_cb cb, void *arg);

#endif
