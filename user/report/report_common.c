// SPDX-License-Identifier: MIT
/* Formatting shared by the views: locations, durations, text escapes,
 * JSON pieces. */
#include <stdbool.h>
#include <string.h>

#include "report.h"

/* ---- text escapes: what a crafted profile may not send to a terminal ---- */

/* The length of the valid UTF-8 sequence at s (2-4) and its code point, or
 * 0: overlong forms, surrogates and values past U+10FFFF are invalid. */
static size_t utf8_seq(const unsigned char *s, unsigned *cp)
{
	size_t n;
	unsigned lo = 0x80, hi = 0xbf, v;

	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		v = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		v = s[0] & 0x0f;
		lo = s[0] == 0xe0 ? 0xa0 : 0x80;
		hi = s[0] == 0xed ? 0x9f : 0xbf;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		v = s[0] & 0x07;
		lo = s[0] == 0xf0 ? 0x90 : 0x80;
		hi = s[0] == 0xf4 ? 0x8f : 0xbf;
	} else {
		return 0;
	}
	/* the string ends at a NUL, which is never a continuation byte */
	for (size_t i = 1; i < n; i++) {
		if (s[i] < (i == 1 ? lo : 0x80) || s[i] > (i == 1 ? hi : 0xbf))
			return 0;
		v = v << 6 | (s[i] & 0x3f);
	}
	*cp = v;
	return n;
}

/* Code points a terminal acts on or that reorder what is shown: C1
 * controls (8-bit CSI), bidirectional embeddings, overrides, isolates. */
static bool cp_unsafe(unsigned cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069);
}

/* The text for the character at s into out (at most 7 bytes + NUL);
 * returns the input bytes it stands for (>= 1). */
static size_t escape_one(const unsigned char *s, char out[8], bool keep_tab)
{
	unsigned cp;
	size_t n;

	if (*s >= 0x20 && *s < 0x7f) {
		out[0] = (char)*s;
		out[1] = '\0';
		return 1;
	}
	if (*s == '\t' && keep_tab) {
		snprintf(out, 8, "\t");
		return 1;
	}
	if (*s == '\n' || *s == '\t' || *s == '\r') {
		snprintf(out, 8, "\\%c", *s == '\n' ? 'n' : *s == '\t' ? 't' : 'r');
		return 1;
	}
	if (*s >= 0x80 && (n = utf8_seq(s, &cp))) {
		if (cp_unsafe(cp)) {
			snprintf(out, 8, "\\u%04x", cp);
		} else {
			memcpy(out, s, n);
			out[n] = '\0';
		}
		return n;
	}
	snprintf(out, 8, "\\x%02x", *s);   /* C0, DEL, a byte outside UTF-8 */
	return 1;
}

static const char *escape(const char *s, char *buf, size_t len, bool keep_tab)
{
	const unsigned char *u = (const unsigned char *)(s ? s : "?");
	size_t used = 0;

	if (!len)
		return buf;
	while (*u) {
		char piece[8];
		size_t in = escape_one(u, piece, keep_tab), out = strlen(piece);

		if (out >= len - used)
			break;
		memcpy(buf + used, piece, out);
		used += out;
		u += in;
	}
	buf[used] = '\0';
	return buf;
}

const char *sb_text_escape(const char *s, char *buf, size_t len)
{
	return escape(s, buf, len, false);
}

static void print_escaped(FILE *f, const char *s, bool keep_tab)
{
	const unsigned char *u = (const unsigned char *)(s ? s : "?");

	while (*u) {
		char piece[8];

		u += escape_one(u, piece, keep_tab);
		fputs(piece, f);
	}
}

void sb_text_str(FILE *f, const char *s)
{
	print_escaped(f, s, false);
}

void sb_text_line(FILE *f, const char *s)
{
	print_escaped(f, s, true);
}

/* ---- locations ---- */

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

/* Text views only (escaped: see sb_text_escape); JSON goes through
 * sb_loc_short and sb_json_str. */
void sb_loc_format(const struct sb_profile *p, int32_t loc, char *buf, size_t len)
{
	const struct sb_loc *l;
	char fn[512], file[256], bin[256];

	if (loc < 0 || (size_t)loc >= p->nlocs) {
		snprintf(buf, len, "(unknown call site)");
		return;
	}
	l = &p->locs[loc];
	sb_text_escape(l->function ? l->function : "??", fn, sizeof(fn));
	sb_text_escape(binary_name(p, l), bin, sizeof(bin));
	if (l->file && l->line)
		snprintf(buf, len, "%s (%s:%u)", fn,
			 sb_text_escape(base_name(l->file), file, sizeof(file)), l->line);
	else if (l->function)
		snprintf(buf, len, "%s (%s+0x%llx)", fn, bin, (unsigned long long)l->offset);
	else if (l->binary >= 0)   /* as in JSON: the runtime address differs run to run */
		snprintf(buf, len, "%s+0x%llx", bin, (unsigned long long)l->offset);
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
	char bin[256];
	size_t n;

	sb_loc_format(p, loc, buf, len);
	if (loc < 0 || (size_t)loc >= p->nlocs)
		return;
	l = &p->locs[loc];
	n = strlen(buf);
	if (!l->file || !l->line || n == 0 || buf[n - 1] != ')')
		return;
	if (l->binary >= 0)
		snprintf(buf + n - 1, len - (n - 1), ", %s+0x%llx)",
			 sb_text_escape(binary_name(p, l), bin, sizeof(bin)),
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

/* Raw (JSON escapes it; a text view escapes it with sb_text_escape). */
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

/* JSON is UTF-8: a byte outside a valid sequence (a crafted profile's)
 * is written as U+FFFD, as lenient readers (jq) read it anyway. */
void sb_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		unsigned cp;
		size_t n;

		if (c == '"' || c == '\\') {
			fprintf(f, "\\%c", c);
		} else if (c < 0x20) {
			fprintf(f, "\\u%04x", c);
		} else if (c < 0x80) {
			fputc(c, f);
		} else if ((n = utf8_seq((const unsigned char *)s, &cp))) {
			fwrite(s, 1, n, f);
			s += n - 1;
		} else {
			fputs("\\ufffd", f);
		}
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

void sb_fmt_bytes(uint64_t b, char *buf, size_t len)
{
	if (b >= (1ull << 30))
		snprintf(buf, len, "%.3g GB", (double)b / (1ull << 30));
	else if (b >= (1ull << 20))
		snprintf(buf, len, "%.3g MB", (double)b / (1ull << 20));
	else
		snprintf(buf, len, "%.3g KB", (double)b / 1024);
}
