// SPDX-License-Identifier: MIT
/*
 * `scalebpf report --format html`: one self-contained page (no network:
 * inline CSS and SVG, no script; a section opens with the HTML <details>
 * element).  Like the text and JSON reports it walks the view table: a
 * view with an html() gets a panel, in table order, titled by it; a view
 * whose data the profile lacks says "not recorded".  The views' text
 * headers (what was recorded, where, how, with what losses) become the
 * summary strip.
 *
 * Every string from the profile goes through sb_html_str: the text escape
 * first (control characters, invalid UTF-8, bidirectional overrides: a
 * profile may be crafted), then HTML's five.  Colours are the Okabe-Ito
 * palette, told apart with any common colour-vision deficiency.
 */
#include <stdlib.h>
#include <string.h>

#include "report.h"

static const char css[] =
	":root{--busy:#0072B2;--wait:#E69F00;--blocked:#CC79A7;--cache:#009E73;"
	"--memory:#56B4E9;--sync:#D55E00;--residual:#999999;--ink:#1b1b1b;--dim:#5c5c5c;"
	"--line:#d8d8d8;--bg:#fff;--band:#f4f6f8}\n"
	"*{box-sizing:border-box}\n"
	"body{margin:0;font:15px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;"
	"color:var(--ink);background:var(--bg)}\n"
	"header,main,footer{max-width:1200px;margin:0 auto;padding:12px 16px}\n"
	/* a long path or name breaks anywhere rather than widen a phone's page */
	"h1,h2,h3,p,td,th,summary span{overflow-wrap:anywhere}\n"
	"h1{font-size:1.35em;margin:.3em 0}h2{font-size:1.15em;margin:1.2em 0 .4em;"
	"border-bottom:2px solid var(--line)}h3{font-size:1em;margin:.8em 0 .3em}\n"
	".strip{display:grid;grid-template-columns:repeat(auto-fit,minmax(230px,1fr));gap:6px 16px;"
	"background:var(--band);padding:10px 12px;border-radius:6px}\n"
	".kv .k{color:var(--dim);font-size:.85em;display:block}.kv .v{overflow-wrap:anywhere}\n"
	".warn{background:#fff4e0;border-left:4px solid var(--wait);padding:6px 10px;margin:6px 0}\n"
	"nav a{margin-right:12px}\n"
	"table{border-collapse:collapse;width:100%;font-size:.92em}\n"
	"th,td{text-align:left;padding:4px 6px;border-bottom:1px solid var(--line);"
	"vertical-align:top}\nth{color:var(--dim);font-weight:600}\n"
	"td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
	".scroll{overflow-x:auto}\n"
	"details.sec{border:1px solid var(--line);border-radius:6px;margin:6px 0}\n"
	"details.sec>summary{cursor:pointer;list-style:none;padding:8px 10px;display:grid;"
	"grid-template-columns:2.2em minmax(12em,3fr) repeat(4,minmax(5em,1fr)) minmax(120px,2fr);"
	"gap:4px 10px;align-items:center}\n"
	"details.sec>summary::-webkit-details-marker{display:none}\n"
	"details.sec[open]>summary{background:var(--band)}\n"
	".sec .body{padding:6px 12px 12px}\n"
	".hdr{display:grid;grid-template-columns:2.2em minmax(12em,3fr) repeat(4,minmax(5em,1fr)) "
	"minmax(120px,2fr);gap:4px 10px;padding:0 10px;color:var(--dim);font-size:.85em}\n"
	"svg.bar{width:100%;height:14px;display:block}\n"
	"svg.chart{width:100%;max-width:720px;height:auto;display:block}\n"
	"pre{background:var(--band);padding:8px;overflow-x:auto;font-size:.85em}\n"
	".key span{display:inline-block;margin-right:12px}.key i{display:inline-block;width:.9em;"
	"height:.9em;margin-right:4px;vertical-align:-1px}\n"
	".none{color:var(--dim);font-style:italic}\n"
	"@media (max-width:700px){details.sec>summary,.hdr{grid-template-columns:2em 1fr 1fr}"
	".hdr .opt,details.sec>summary .opt{display:none}body{font-size:14px}}\n";

void sb_html_text(FILE *f, const char *s)
{
	for (; s && *s; s++)
		switch (*s) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&#39;", f);
			break;
		default:
			fputc(*s, f);
		}
}

void sb_html_str(FILE *f, const char *s)
{
	char buf[4096];

	sb_html_text(f, sb_text_escape(s, buf, sizeof(buf)));
}

int sb_html_capture(FILE *f, void (*fn)(void *ctx, FILE *m), void *ctx, const char *before,
		    const char *after)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	if (!m)
		return -1;
	fn(ctx, m);
	if (fclose(m)) {
		free(text);
		return -1;
	}
	if (len) {
		fputs(before, f);
		sb_html_text(f, text);
		fputs(after, f);
	}
	free(text);
	return 0;
}

void sb_html_bar(FILE *f, const double *parts, const char *const *vars, const char *const *names,
		 size_t n, double total)
{
	double x = 0;

	fputs("<svg class=\"bar\" viewBox=\"0 0 1000 14\" preserveAspectRatio=\"none\" "
	      "role=\"img\">", f);
	for (size_t i = 0; i < n && total > 0; i++) {
		double w = parts[i] > 0 ? parts[i] / total * 1000 : 0;

		if (w > 1000 - x)
			w = 1000 - x;
		if (w <= 0)
			continue;
		fprintf(f, "<rect x=\"%.1f\" y=\"0\" width=\"%.1f\" height=\"14\" "
			"fill=\"var(--%s)\"><title>%s</title></rect>", x, w, vars[i], names[i]);
		x += w;
	}
	fputs("</svg>", f);
}

void sb_html_chart(FILE *f, const double *y, const char *const *xlabel, size_t n, double ymax,
		   const char *ytitle, const char *what)
{
	const double W = 640, H = 220, L = 56, R = 12, T = 10, B = 40;
	double dx = n > 1 ? (W - L - R) / (double)(n - 1) : 0;

	if (!(ymax > 0))
		ymax = 1;
	fprintf(f, "<svg class=\"chart\" viewBox=\"0 0 %.0f %.0f\" role=\"img\"><title>", W, H);
	sb_html_text(f, what);
	fputs("</title>", f);
	for (int g = 0; g <= 4; g++) {   /* grid and y labels */
		double yy = T + (H - T - B) * (1 - g / 4.0);

		fprintf(f, "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\" "
			"stroke=\"var(--line)\"/><text x=\"%.0f\" y=\"%.1f\" font-size=\"11\" "
			"text-anchor=\"end\" fill=\"var(--dim)\">%.3g</text>", L, W - R, yy, yy,
			L - 4, yy + 4, ymax * g / 4);
	}
	fprintf(f, "<text x=\"12\" y=\"%.0f\" font-size=\"11\" fill=\"var(--dim)\" "
		"transform=\"rotate(-90 12 %.0f)\" text-anchor=\"middle\">", (H - B + T) / 2,
		(H - B + T) / 2);
	sb_html_text(f, ytitle);
	fputs("</text><polyline fill=\"none\" stroke=\"var(--busy)\" stroke-width=\"2\" points=\"", f);
	for (size_t i = 0; i < n; i++) {
		double v = y[i] == y[i] ? (y[i] < 0 ? 0 : y[i] > ymax ? ymax : y[i]) : 0;

		fprintf(f, "%.1f,%.1f ", L + dx * (double)i, T + (H - T - B) * (1 - v / ymax));
	}
	fputs("\"/>", f);
	for (size_t i = 0; i < n; i++) {
		double v = y[i] == y[i] ? (y[i] < 0 ? 0 : y[i] > ymax ? ymax : y[i]) : 0;

		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"var(--busy)\"><title>",
			L + dx * (double)i, T + (H - T - B) * (1 - v / ymax));
		sb_html_text(f, xlabel[i]);
		fprintf(f, ": %.4g</title></circle>", y[i] == y[i] ? y[i] : 0);
		if (n <= 8 || i % 2 == 0) {
			fprintf(f, "<text x=\"%.1f\" y=\"%.0f\" font-size=\"10\" "
				"text-anchor=\"middle\" fill=\"var(--dim)\">", L + dx * (double)i,
				H - B + 14);
			sb_html_text(f, xlabel[i]);
			fputs("</text>", f);
		}
	}
	fputs("</svg>\n", f);
}

void sb_html_key(FILE *f, const char *const *vars, const char *const *names, size_t n)
{
	fputs("<p class=\"key\">", f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "<span><i style=\"background:var(--%s)\"></i>%s</span>", vars[i], names[i]);
	fputs("</p>\n", f);
}

/* The views' text headers as the summary strip: "  label: value" lines
 * as label and value, then the WARNING lines, each in full. */
static void strip(const struct sb_report_ctx *r, FILE *f)
{
	char *text = NULL, *copy, *line, *save = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	if (!m)
		return;
	for (size_t i = 0; i < sb_report_nviews; i++)
		if (sb_report_views[i]->head)
			sb_report_views[i]->head(r, m);
	if (fclose(m) || !(copy = strdup(text))) {
		free(text);
		return;
	}
	fputs("<div class=\"strip\">\n", f);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':');

		while (*line == ' ')
			line++;
		if (!strncmp(line, "WARNING:", 8) || !strncmp(line, "scalebpf report:", 16) ||
		    !colon)
			continue;
		*colon = 0;
		fputs("<div class=\"kv\"><span class=\"k\">", f);
		/* (the views escaped what the profile says: HTML's turn) */
		sb_html_text(f, line);
		fputs("</span><span class=\"v\">", f);
		for (colon++; *colon == ' '; colon++)
			;       /* the text's alignment */
		sb_html_text(f, colon);
		fputs("</span></div>\n", f);
	}
	fputs("</div>\n", f);
	save = NULL;
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		while (*line == ' ')
			line++;
		if (strncmp(line, "WARNING:", 8))
			continue;
		fputs("<p class=\"warn\">", f);
		sb_html_text(f, line + 8 + (line[8] == ' '));
		fputs("</p>\n", f);
	}
	free(text);
	free(copy);
}

int sb_report_html(const struct sb_profile *p, const struct sb_causes *c,
		   const struct sb_report_opts *o, FILE *f)
{
	struct sb_report_ctx r = { .p = p, .causes = c, .o = o };
	const char *exe = sb_profile_meta_get(p, "executable");
	size_t *order;
	int ret = 0;

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<title>scalebpf: ", f);
	sb_html_str(f, exe ? exe : o->input);
	fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<header>\n"
		"<h1>scalebpf report: ", css);
	sb_html_str(f, exe ? exe : o->input);
	fputs("</h1>\n", f);
	strip(&r, f);
	fputs("<nav>", f);
	for (size_t i = 0; i < sb_report_nviews; i++)
		if (sb_report_views[i]->html)
			fprintf(f, "<a href=\"#%s\">%s</a>", sb_report_views[i]->name,
				sb_report_views[i]->title);
	fputs("</nav>\n</header>\n<main>\n", f);
	r.order = order = sb_report_sections_sorted(p, "lost");
	for (size_t i = 0; i < sb_report_nviews && !ret; i++) {
		const struct sb_report_view *v = sb_report_views[i];

		if (!v->html)
			continue;
		fprintf(f, "<section class=\"panel\" id=\"%s\">\n<h2>%s</h2>\n", v->name, v->title);
		ret = v->html(&r, f);
		if (ret > 0) {   /* nothing of it in this profile */
			fputs("<p class=\"none\">not recorded</p>\n", f);
			ret = 0;
		}
		fputs("</section>\n", f);
	}
	free(order);
	fprintf(f, "</main>\n<footer><p class=\"none\">scalebpf %s</p></footer>\n</body>\n"
		"</html>\n", SB_VERSION);
	return ret || ferror(f) ? -1 : 0;
}
