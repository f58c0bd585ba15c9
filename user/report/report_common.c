// SPDX-License-Identifier: MIT
/* Formatting shared by the views: locations, durations, JSON pieces. */
#include <string.h>

#include "report.h"

static const char *base_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : (path ? path : "?");
}

static const char *binary_name(const struct sb_profile *p, const struct sb_loc *l)
{
	if (l->binary < 0 || (size_t)l->binary >= p->nbinaries)
		return "?";
	return base_name(p->binaries[l->binary].path);
}

void sb_loc_format(const struct sb_profile *p, int32_t loc, char *buf, size_t len)
{
	const struct sb_loc *l;

	if (loc < 0 || (size_t)loc >= p->nlocs) {
		snprintf(buf, len, "(unknown call site)");
		return;
	}
	l = &p->locs[loc];
	if (l->file && l->line)
		snprintf(buf, len, "%s (%s:%u)", l->function ? l->function : "??",
			 base_name(l->file), l->line);
	else if (l->function)
		snprintf(buf, len, "%s (%s+0x%llx)", l->function, binary_name(p, l),
			 (unsigned long long)l->offset);
	else if (l->binary >= 0)   /* as in JSON: the runtime address differs run to run */
		snprintf(buf, len, "%s+0x%llx", binary_name(p, l), (unsigned long long)l->offset);
	else
		snprintf(buf, len, "0x%llx (?)", (unsigned long long)l->addr);
}

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

bool sb_loc_same_line(const struct sb_profile *p, int32_t a, int32_t b)
{
	const struct sb_loc *x, *y;

	if (a == b || a < 0 || b < 0 || (size_t)a >= p->nlocs || (size_t)b >= p->nlocs)
		return false;
	x = &p->locs[a];
	y = &p->locs[b];
	return x->line && x->file && x->line == y->line && str_eq(x->file, y->file) &&
	       str_eq(x->function, y->function);
}

void sb_loc_format_addr(const struct sb_profile *p, int32_t loc, char *buf, size_t len)
{
	const struct sb_loc *l;
	size_t n;

	sb_loc_format(p, loc, buf, len);
	if (loc < 0 || (size_t)loc >= p->nlocs)
		return;
	l = &p->locs[loc];
	n = strlen(buf);
	if (!l->file || !l->line || n == 0 || buf[n - 1] != ')')
		return;
	if (l->binary >= 0)
		snprintf(buf + n - 1, len - (n - 1), ", %s+0x%llx)", binary_name(p, l),
			 (unsigned long long)l->offset);
	else
		snprintf(buf + n - 1, len - (n - 1), ", 0x%llx)", (unsigned long long)l->addr);
}

void sb_loc_format_section(const struct sb_profile *p, size_t s, char *buf, size_t len)
{
	int32_t loc = (int32_t)p->sections[s].loc;

	for (size_t i = 0; i < p->nsections; i++)
		if (sb_loc_same_line(p, loc, (int32_t)p->sections[i].loc)) {
			sb_loc_format_addr(p, loc, buf, len);
			return;
		}
	sb_loc_format(p, loc, buf, len);
}

void sb_loc_short(const struct sb_profile *p, int32_t loc, char *buf, size_t len)
{
	const struct sb_loc *l;

	if (loc < 0 || (size_t)loc >= p->nlocs) {
		snprintf(buf, len, "?");
		return;
	}
	l = &p->locs[loc];
	if (l->file && l->line)
		snprintf(buf, len, "%s:%u", base_name(l->file), l->line);
	else if (l->binary >= 0)
		snprintf(buf, len, "%s+0x%llx", binary_name(p, l), (unsigned long long)l->offset);
	else
		snprintf(buf, len, "0x%llx", (unsigned long long)l->addr);
}

void sb_fmt_ns(uint64_t ns, char *buf, size_t len)
{
	if (ns >= 1000000000ull)
		snprintf(buf, len, "%.2f s", (double)ns / 1e9);
	else if (ns >= 1000000ull)
		snprintf(buf, len, "%.1f ms", (double)ns / 1e6);
	else if (ns >= 1000ull)
		snprintf(buf, len, "%.0f us", (double)ns / 1e3);
	else
		snprintf(buf, len, "%llu ns", (unsigned long long)ns);
}

void sb_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

void sb_json_loc_fields(FILE *f, const struct sb_profile *p, int32_t loc)
{
	char buf[512];
	const struct sb_loc *l = loc >= 0 && (size_t)loc < p->nlocs ? &p->locs[loc] : NULL;

	sb_loc_short(p, loc, buf, sizeof(buf));
	fputs("\"location\": ", f);
	sb_json_str(f, buf);
	fputs(", \"function\": ", f);
	if (l && l->function)
		sb_json_str(f, l->function);
	else
		fputs("null", f);
	fprintf(f, ", \"address\": \"0x%llx\"", l ? (unsigned long long)l->addr : 0ull);
}

void sb_json_member(struct sb_json *j, const char *name)
{
	fputs(j->nmembers++ ? ",\n  " : "  ", j->f);
	sb_json_str(j->f, name);
	fputs(": ", j->f);
}
