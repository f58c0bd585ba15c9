/* gen_work.c — where a generated program's work sits.
 *
 * The work is N units of a dependent LCG chain (~1.3 us a unit), placed
 * by p->place: written inline at the site, in a noinline helper, two
 * calls deep, behind a tail call, in a helper the balanced path calls
 * too, through a function pointer, or done by a library function (qsort,
 * memcpy, strtod).  The planted decision is never in here: it is the
 * cause's line around the call (gen_emit.c).
 */
#include "gen.h"

/* --- work of N units at a site -------------------------------------- */

void emit_helpers(struct prog *p)
{
	L(p, "static __attribute__((noinline)) void %s(unsigned long units)", p->kern);
	L(p, "{");
	L(p, "\tunsigned long x = units | 1;");
	L(p, "\tfor (unsigned long i = 0; i < units * 1000; i++) {");
	L(p, "\t\tx = x * 6364136223846793005UL + 1442695040888963407UL;");
	L(p, "\t\t__asm__ volatile(\"\" : \"+r\"(x));");
	L(p, "\t}");
	L(p, "\tsink = x;");
	L(p, "}");
	L(p, "%s", "");
	if (p->place != P_SHARED) {
		/* the balanced part's own work, so the planted work is apart */
		L(p, "static __attribute__((noinline)) void %s(unsigned long n)", p->bal);
		L(p, "{");
		L(p, "\tunsigned long y = 7;");
		L(p, "\tfor (unsigned long i = 0; i < n * 1000; i++) {");
		L(p, "\t\ty = (y ^ (y << 7)) + i;");
		L(p, "\t\t__asm__ volatile(\"\" : \"+r\"(y));");
		L(p, "\t}");
		L(p, "\tsink = y;");
		L(p, "}");
		L(p, "%s", "");
	}
	if (p->place == P_DEEP) {
		L(p, "static __attribute__((noinline)) void %s(unsigned long n)", p->outer);
		L(p, "{");
		L(p, "\tif (n)");
		L(p, "\t\t%s(n);", p->kern);
		L(p, "\tsink += 1;");
		L(p, "}");
		L(p, "%s", "");
	}
	if (p->place == P_TAIL) {
		L(p, "static __attribute__((noinline)) void %s(unsigned long n)", p->wrap);
		L(p, "{");
		L(p, "\tif (n == 0)");
		L(p, "\t\treturn;");
		L(p, "\t%s(n);", p->kern);
		L(p, "}");
		L(p, "%s", "");
	}
	if (p->place == P_FPTR)
		L(p, "static void (*volatile work_fn)(unsigned long);");
	if (p->place == P_LIB) {
		L(p, "static int cmp_u(const void *a, const void *b)");
		L(p, "{");
		L(p, "\tunsigned x = *(const unsigned *)a, y = *(const unsigned *)b;");
		L(p, "\treturn (x > y) - (x < y);");
		L(p, "}");
		L(p, "static unsigned qtmpl[40];");
		L(p, "static const char numtext[] = \"3.14159 2.71828 1.41421 1.73205 0.57721 \"");
		L(p, "\t\"6.02214e23 1.60217e-19 9.10938e-31 299792458 6.67430e-11 \"");
		L(p, "\t\"1.38064e-23 8.31446 0.69314 2.30258 1.61803 4.66920\";");
		L(p, "%s", "");
	}
}

/* The balanced part or the planted part's work: UNITS (an expression). */
void emit_work(struct prog *p, const char *ind, const char *units)
{
	switch (p->place) {
	case P_INLINE:
		L(p, "%s{", ind);
		L(p, "%s\tunsigned long x_ = 0x9e37UL, n_ = (%s) * 1000;", ind, units);
		L(p, "%s\tfor (unsigned long q_ = 0; q_ < n_; q_++) {", ind);
		L(p, "%s\t\tx_ = x_ * 6364136223846793005UL + q_;", ind);
		L(p, "%s\t\t__asm__ volatile(\"\" : \"+r\"(x_));", ind);
		L(p, "%s\t}", ind);
		L(p, "%s\tsink = x_;", ind);
		L(p, "%s}", ind);
		break;
	case P_HELPER: case P_SHARED:
		L(p, "%s%s(%s);", ind, p->kern, units);
		break;
	case P_DEEP:
		L(p, "%s%s(%s);", ind, p->outer, units);
		break;
	case P_TAIL:
		L(p, "%s%s(%s);", ind, p->wrap, units);
		break;
	case P_FPTR:
		L(p, "%swork_fn(%s);", ind, units);
		break;
	case P_LIB:
		if (p->lib == 0) {
			L(p, "%sfor (unsigned long r_ = 0; r_ < (%s); r_++) {", ind, units);
			L(p, "%s\tunsigned q_[40];", ind);
			L(p, "%s\tmemcpy(q_, qtmpl, sizeof(q_));", ind);
			L(p, "%s\tqsort(q_, 40, sizeof(q_[0]), cmp_u);", ind);
			L(p, "%s\tsink += q_[3];", ind);
			L(p, "%s}", ind);
		} else if (p->lib == 1) {
			L(p, "%s{", ind);
			L(p, "%s\tstatic __thread char mb_[2][32768];", ind);
			L(p, "%s\tfor (unsigned long r_ = 0; r_ < (%s); r_++) {", ind, units);
			L(p, "%s\t\tmemcpy(mb_[r_ & 1], mb_[!(r_ & 1)], sizeof(mb_[0]));", ind);
			L(p, "%s\t\t__asm__ volatile(\"\" ::: \"memory\");", ind);
			L(p, "%s\t}", ind);
			L(p, "%s}", ind);
		} else {
			L(p, "%sfor (unsigned long r_ = 0; r_ < (%s); r_++) {", ind, units);
			L(p, "%s\tconst char *s_ = numtext;", ind);
			L(p, "%s\tchar *e_;", ind);
			L(p, "%s\tdouble d_ = 0;", ind);
			L(p, "%s\twhile (*s_) {", ind);
			L(p, "%s\t\td_ += strtod(s_, &e_);", ind);
			L(p, "%s\t\ts_ = e_;", ind);
			L(p, "%s\t}", ind);
			L(p, "%s\tsink += (unsigned long)d_;", ind);
			L(p, "%s}", ind);
		}
		break;
	}
}

