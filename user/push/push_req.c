// SPDX-License-Identifier: MIT
/* Push requests (push.h): where to post, Pyroscope's query string, the
 * multipart or JSON body.  Label values are reduced to [A-Za-z0-9_.-]
 * (anything else becomes '_'): they sit inside Pyroscope's
 * name{k=v,...} syntax and Parca's label sets, where braces, commas,
 * quotes and '=' would change the meaning. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "push.h"

static bool has_suffix(const char *s, size_t n, const char *x)
{
	size_t k = strlen(x);

	return n >= k && !strncmp(s + n - k, x, k);
}

int sb_push_target(const char *url, enum sb_push_kind *kind, char *post_url, size_t len,
		   char *err, size_t errlen)
{
	const char *host, *path;
	size_t n;

	if (!strncmp(url, "http://", 7))
		host = url + 7;
	else if (!strncmp(url, "https://", 8))
		host = url + 8;
	else {
		snprintf(err, errlen, "'%s' is not an http:// or https:// URL", url);
		return -1;
	}
	if (!*host || *host == '/' || strchr(url, '?') || strchr(url, '#')) {
		snprintf(err, errlen, "'%s': give the store's address (and path), no query: "
			 "http://HOST:PORT for Pyroscope, http://HOST:PORT/profiles/writeraw "
			 "for Parca", url);
		return -1;
	}
	path = strchr(host, '/');
	n = strlen(url);
	while (n > (size_t)(host - url) && url[n - 1] == '/')
		n--;   /* trailing slashes */
	if (!path || path - url >= (long)n) {
		*kind = SB_PUSH_PYROSCOPE;
		if ((size_t)snprintf(post_url, len, "%.*s/ingest", (int)n, url) >= len)
			goto long_url;
		return 0;
	}
	if (has_suffix(url, n, "/ingest"))
		*kind = SB_PUSH_PYROSCOPE;
	else if (has_suffix(url, n, "/profiles/writeraw"))
		*kind = SB_PUSH_PARCA;
	else {
		snprintf(err, errlen, "'%s': the path is neither Pyroscope's /ingest nor Parca's "
			 "/profiles/writeraw", url);
		return -1;
	}
	if ((size_t)snprintf(post_url, len, "%.*s", (int)n, url) >= len)
		goto long_url;
	return 0;
long_url:
	snprintf(err, errlen, "the URL is too long");
	return -1;
}

/* A label value as the stores take it (see the top). */
static void clean(const char *s, char *out, size_t len)
{
	size_t i = 0;

	for (; s && *s && i + 1 < len; s++) {
		char c = *s;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';

		out[i++] = ok ? c : '_';
	}
	out[i] = 0;
	if (!i && len > 1)
		snprintf(out, len, "_");
}

/* s percent-encoded (RFC 3986 unreserved kept) onto out at *pos. */
static void encode(const char *s, char *out, size_t len, size_t *pos)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			    (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' || c == '~';

		if (*pos + 4 >= len)
			return;
		if (keep) {
			out[(*pos)++] = (char)c;
		} else {
			out[(*pos)++] = '%';
			out[(*pos)++] = hex[c >> 4];
			out[(*pos)++] = hex[c & 15];
		}
	}
	out[*pos] = 0;
}

int sb_push_pyroscope_url(const char *url, const struct sb_push_labels *l, char *out,
			  size_t len)
{
	char app[128], host[128], comm[64], name[512];
	size_t pos;
	int n;

	clean(l->app, app, sizeof(app));
	clean(l->host, host, sizeof(host));
	clean(l->comm, comm, sizeof(comm));
	snprintf(name, sizeof(name), "%s{host=%s,comm=%s,pid=%" PRIu64 "}", app, host, comm,
		 l->pid);
	n = snprintf(out, len, "%s?name=", url);
	if (n < 0 || (size_t)n >= len)
		return -1;
	pos = (size_t)n;
	encode(name, out, len, &pos);
	n = snprintf(out + pos, len - pos, "&from=%" PRIu64 "&until=%" PRIu64
		     "&format=pprof&spyName=scalebpf", l->from_s, l->until_s);
	return n < 0 || (size_t)n >= len - pos ? -1 : 0;
}

static size_t base64(const unsigned char *in, size_t n, char *out)
{
	static const char t[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t o = 0;

	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0) |
			     (i + 2 < n ? in[i + 2] : 0);

		out[o++] = t[v >> 18];
		out[o++] = t[(v >> 12) & 63];
		out[o++] = i + 1 < n ? t[(v >> 6) & 63] : '=';
		out[o++] = i + 2 < n ? t[v & 63] : '=';
	}
	return o;
}

static int parca_body(const struct sb_push_labels *l, const void *pprof, size_t n, char **body,
		      size_t *len)
{
	char app[128], host[128], comm[64], head[1024];
	const char *tail = "\"}]}],\"normalized\":false}";
	int h;

	clean(l->app, app, sizeof(app));
	clean(l->host, host, sizeof(host));
	clean(l->comm, comm, sizeof(comm));
	/* labels in name order, as label sets are kept */
	h = snprintf(head, sizeof(head), "{\"series\":[{\"labels\":{\"labels\":["
		     "{\"name\":\"__name__\",\"value\":\"%s\"},"
		     "{\"name\":\"comm\",\"value\":\"%s\"},"
		     "{\"name\":\"host\",\"value\":\"%s\"},"
		     "{\"name\":\"pid\",\"value\":\"%" PRIu64 "\"}]},"
		     "\"samples\":[{\"rawProfile\":\"", app, comm, host, l->pid);
	if (h < 0 || (size_t)h >= sizeof(head))
		return -1;
	if (!(*body = malloc((size_t)h + (n + 2) / 3 * 4 + strlen(tail) + 1)))
		return -1;
	memcpy(*body, head, (size_t)h);
	*len = (size_t)h + base64(pprof, n, *body + h);
	memcpy(*body + *len, tail, strlen(tail) + 1);
	*len += strlen(tail);
	return 0;
}

static int pyroscope_body(const void *pprof, size_t n, char **body, size_t *len, char *ctype,
			  size_t ctlen)
{
	char boundary[64], head[256], tail[80];
	uint64_t salt = 0x5ca1ab1e;
	int h, t;

	/* a boundary the profile's bytes do not contain */
	do {
		snprintf(boundary, sizeof(boundary), "scalebpf-%016" PRIx64, salt);
		salt = salt * 6364136223846793005ull + 1442695040888963407ull;
	} while (memmem(pprof, n, boundary, strlen(boundary)));
	h = snprintf(head, sizeof(head), "--%s\r\nContent-Disposition: form-data; "
		     "name=\"profile\"; filename=\"profile.pprof\"\r\nContent-Type: "
		     "application/octet-stream\r\n\r\n", boundary);
	t = snprintf(tail, sizeof(tail), "\r\n--%s--\r\n", boundary);
	snprintf(ctype, ctlen, "multipart/form-data; boundary=%s", boundary);
	if (!(*body = malloc((size_t)h + n + (size_t)t + 1)))
		return -1;
	memcpy(*body, head, (size_t)h);
	if (n)
		memcpy(*body + h, pprof, n);
	memcpy(*body + h + n, tail, (size_t)t + 1);
	*len = (size_t)h + n + (size_t)t;
	return 0;
}

int sb_push_body(enum sb_push_kind kind, const struct sb_push_labels *l, const void *pprof,
		 size_t n, char **body, size_t *len, char *ctype, size_t ctlen)
{
	*body = NULL;
	*len = 0;
	if (kind == SB_PUSH_PARCA) {
		snprintf(ctype, ctlen, "application/json");
		return parca_body(l, pprof, n, body, len);
	}
	return pyroscope_body(pprof, n, body, len, ctype, ctlen);
}
