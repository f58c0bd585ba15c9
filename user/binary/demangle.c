// SPDX-License-Identifier: MIT
#include "demangle.h"

#include <stdlib.h>
#include <string.h>

/* libstdc++ (linked with -lstdc++; libstdc++6 is on every Debian system). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

char *sb_demangle(const char *sym)
{
	int status = 0;
	char *d;

	if (!sym || strncmp(sym, "_Z", 2))
		return NULL;
	d = __cxa_demangle(sym, NULL, NULL, &status);
	if (status) {
		free(d);
		return NULL;
	}
	return d;
}

/* Length of an "operator..." token at s (0 if none): its symbol characters
 * ("operator()", "operator<<") or, for new/delete/conversions, up to the
 * parameters.  Its '<' or '(' are not brackets. */
static size_t op_len(const char *start, const char *s)
{
	const char *p;

	if (strncmp(s, "operator", 8) || (s > start && s[-1] != ':' && s[-1] != ' '))
		return 0;
	p = s + 8;
	if (!strncmp(p, "()", 2))
		return 10;
	if (*p == ' ') {
		while (*p && *p != '(')
			p++;
		return (size_t)(p - s);
	}
	while (*p && strchr("<>=!+-*/%&|^~[],", *p))
		p++;
	return (size_t)(p - s);
}

#define ANON "(anonymous namespace)"

/* The length of a token at d[i] whose brackets are not brackets: the
 * anonymous namespace, an operator name (operator(), operator<); 0 else. */
static size_t atom_len(const char *d, size_t i)
{
	if (!strncmp(d + i, ANON, sizeof(ANON) - 1))
		return sizeof(ANON) - 1;
	return op_len(d, d + i);
}

/* The end of the name: the '(' that opens the parameters, at depth 0. */
static size_t name_end(const char *d)
{
	int depth = 0;
	size_t i = 0, k;

	while (d[i]) {
		if ((k = atom_len(d, i))) {
			i += k;
			continue;
		}
		if (d[i] == '(' && !depth)
			return i;
		if (strchr("<({[", d[i]))
			depth++;
		else if (strchr(">)}]", d[i]) && depth > 0)
			depth--;
		i++;
	}
	return i;
}

/* Where the name starts in d[0, end): after a template function's return
 * type ("void ns::f<int>"), which only template instances show. */
static size_t name_start(const char *d, size_t end)
{
	size_t start = 0, k;
	int depth = 0;

	if (!end || d[end - 1] != '>')
		return 0;
	for (size_t i = 0; i < end;) {
		if ((k = atom_len(d, i))) {
			i += k;
			continue;
		}
		if (strchr("<({[", d[i]))
			depth++;
		else if (strchr(">)}]", d[i]) && depth > 0)
			depth--;
		else if (d[i] == ' ' && !depth)
			start = i + 1;
		i++;
	}
	return start;
}

int sb_cxx_name_parse(const char *d, struct sb_cxx_name *out)
{
	const char *clone = d ? strstr(d, " [clone ") : NULL;
	size_t end, start, n = 0, len;
	int depth = 0;

	if (!d)
		return -1;
	len = clone ? (size_t)(clone - d) : strlen(d);
	end = name_end(d);
	if (end > len)
		end = len;
	start = name_start(d, end);
	if (end - start >= sizeof(out->tmpl) || len - start >= sizeof(out->sig))
		return -1;
	memcpy(out->tmpl, d + start, end - start);
	out->tmpl[end - start] = 0;
	memcpy(out->sig, d + start, len - start);
	out->sig[len - start] = 0;
	/* qual: tmpl without template arguments */
	for (size_t i = 0; out->tmpl[i];) {
		const char *t = out->tmpl;
		size_t k = !depth ? op_len(t, t + i) : 0;

		if (!k && !strncmp(t + i, ANON, sizeof(ANON) - 1))
			k = depth ? 0 : sizeof(ANON) - 1;
		if (k) {
			memcpy(out->qual + n, t + i, k);
			n += k;
			i += k;
			continue;
		}
		if (t[i] == '<')
			depth++;
		else if (t[i] == '>' && depth > 0)
			depth--;
		else if (!depth)
			out->qual[n++] = t[i];
		i++;
	}
	out->qual[n] = 0;
	return 0;
}

bool sb_cxx_name_matches(const struct sb_cxx_name *n, const char *want)
{
	const char *form = strchr(want, '(') ? n->sig : strchr(want, '<') ? n->tmpl : n->qual;
	size_t lf = strlen(form), lw = strlen(want);

	if (!lw)
		return false;
	if (lf == lw)
		return !strcmp(form, want);
	return lf > lw + 2 && !strcmp(form + lf - lw, want) &&
	       !strncmp(form + lf - lw - 2, "::", 2);
}

const char *sb_cxx_last_components(const char *qual, int k)
{
	int depth = 0;

	for (size_t i = strlen(qual); i > 1; i--) {
		char c = qual[i - 1];

		if (strchr(">)}]", c))
			depth++;
		else if (strchr("<({[", c) && depth > 0)
			depth--;
		else if (!depth && c == ':' && qual[i - 2] == ':' && --k == 0)
			return qual + i;
	}
	return qual;
}

bool sb_cxx_is_ctor_dtor(const char *qual)
{
	const char *last = sb_cxx_last_components(qual, 1);
	const char *prev = sb_cxx_last_components(qual, 2);
	size_t lp = (size_t)(last - prev);

	if (*last == '~')
		return true;
	/* prev is "B::B" when last is "B" */
	return prev != last && lp > 2 && strlen(last) == lp - 2 && !strncmp(prev, last, lp - 2);
}

struct cxx_ctx {
	const char *want;
	sb_cxx_func_cb cb;
	void *arg;
	int count;
};

static void on_sym(const char *name, uint64_t vaddr, uint64_t size, void *arg)
{
	struct cxx_ctx *c = arg;
	struct sb_cxx_name n;
	char *d;

	/* f.cold is jumped into and f.part.0 called by f: neither is what
	 * callers call (f.constprop.0 and f.isra.0 are) */
	if (strncmp(name, "_Z", 2) || strstr(name, ".cold") || strstr(name, ".part.") ||
	    !(d = sb_demangle(name)))
		return;
	if (!sb_cxx_name_parse(d, &n) && sb_cxx_name_matches(&n, c->want)) {
		if (c->cb)
			c->cb(name, d, vaddr, size, c->arg);
		c->count++;
	}
	free(d);
}

int sb_elf_cxx_funcs(const struct sb_elf *e, const char *want, sb_cxx_func_cb cb, void *arg)
{
	struct cxx_ctx c = { .want = want, .cb = cb, .arg = arg };

	sb_elf_funcs_matching(e, "_Z", on_sym, &c);
	return c.count;
}
