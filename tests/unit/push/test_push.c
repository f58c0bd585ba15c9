// SPDX-License-Identifier: MIT
/* Push requests (user/push/push_req.c): which store a URL names, the
 * Pyroscope query string (percent-encoded, labels cleaned), the multipart
 * body around the profile's bytes, Parca's JSON with base64 checked on
 * RFC 4648's test vectors. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "push/push.h"

static void target(const char *url, int want_ok, enum sb_push_kind want, const char *post)
{
	char out[256], err[256] = "";
	enum sb_push_kind k = 0;
	int ret = sb_push_target(url, &k, out, sizeof(out), err, sizeof(err));

	if (want_ok)
		CHECK(!ret && k == want && !strcmp(out, post), "%s -> %d %s (%s)", url, k, out, err);
	else
		CHECK(ret == -1 && *err, "%s refused: %s", url, err);
}

static void test_targets(void)
{
	target("http://127.0.0.1:4040", 1, SB_PUSH_PYROSCOPE, "http://127.0.0.1:4040/ingest");
	target("http://pyro:4040/", 1, SB_PUSH_PYROSCOPE, "http://pyro:4040/ingest");
	target("https://x.grafana.net/prefix/ingest", 1, SB_PUSH_PYROSCOPE,
	       "https://x.grafana.net/prefix/ingest");
	target("http://parca:7070/profiles/writeraw/", 1, SB_PUSH_PARCA,
	       "http://parca:7070/profiles/writeraw");
	target("ftp://h/ingest", 0, 0, NULL);
	target("http://", 0, 0, NULL);
	target("http:///ingest", 0, 0, NULL);
	target("http://h:1/upload", 0, 0, NULL);
	target("http://h:1/ingest?x=1", 0, 0, NULL);
	target("pyroscope", 0, 0, NULL);
}

static void test_pyroscope(void)
{
	struct sb_push_labels l = { .app = "my app", .host = "node-1.dc", .comm = "a{b}=c,d",
				    .pid = 42, .from_s = 1700000000, .until_s = 1700000060 };
	char out[1024], ctype[128], *body;
	const unsigned char prof[] = { 0x1f, 0x8b, 0, 1, 2, '\r', '\n', '-', '-' };
	size_t len;

	CHECK(!sb_push_pyroscope_url("http://h/ingest", &l, out, sizeof(out)), "url");
	/* my_app{host=node-1.dc,comm=a_b__c_d,pid=42}, percent-encoded */
	CHECK(!strcmp(out, "http://h/ingest?name=my_app%7Bhost%3Dnode-1.dc%2Ccomm%3Da_b__c_d%2C"
			   "pid%3D42%7D&from=1700000000&until=1700000060&format=pprof"
			   "&spyName=scalebpf"), "%s", out);
	CHECK(sb_push_pyroscope_url("http://h/ingest", &l, out, 40) == -1, "too long: -1");
	CHECK(!sb_push_body(SB_PUSH_PYROSCOPE, &l, prof, sizeof(prof), &body, &len, ctype,
			    sizeof(ctype)), "body");
	{
		const char *b = strstr(ctype, "boundary=");
		char head[256], tail[128];
		size_t hl, tl;

		CHECK(!strncmp(ctype, "multipart/form-data; boundary=", 30) && b, "%s", ctype);
		snprintf(head, sizeof(head), "--%s\r\nContent-Disposition: form-data; "
			 "name=\"profile\"; filename=\"profile.pprof\"\r\nContent-Type: "
			 "application/octet-stream\r\n\r\n", b + 9);
		snprintf(tail, sizeof(tail), "\r\n--%s--\r\n", b + 9);
		hl = strlen(head);
		tl = strlen(tail);
		CHECK(len == hl + sizeof(prof) + tl && !memcmp(body, head, hl) &&
		      !memcmp(body + hl, prof, sizeof(prof)) && !memcmp(body + hl + sizeof(prof),
									 tail, tl),
		      "the part: headers, the bytes as they are, the closing boundary");
	}
	free(body);
}

static void test_boundary_unique(void)
{
	struct sb_push_labels l = { .app = "a" };
	char ctype[128], first[64], *body, *data;
	size_t len, n;

	/* a profile containing the first boundary tried gets another */
	sb_push_body(SB_PUSH_PYROSCOPE, &l, "x", 1, &body, &len, ctype, sizeof(ctype));
	snprintf(first, sizeof(first), "%s", strstr(ctype, "boundary=") + 9);
	free(body);
	n = strlen(first) + 4;
	data = malloc(n);
	snprintf(data, n, "<%s>", first);
	sb_push_body(SB_PUSH_PYROSCOPE, &l, data, strlen(data), &body, &len, ctype,
		     sizeof(ctype));
	CHECK(strcmp(strstr(ctype, "boundary=") + 9, first) != 0, "another boundary than %s",
	      first);
	free(body);
	free(data);
}

/* Parca's body with a profile of these bytes: its rawProfile. */
static void parca_b64(const char *bytes, const char *want)
{
	struct sb_push_labels l = { .app = "svc", .host = "h", .comm = "c", .pid = 7 };
	char ctype[64], *body, *raw, *end;
	size_t len;

	CHECK(!sb_push_body(SB_PUSH_PARCA, &l, bytes, strlen(bytes), &body, &len, ctype,
			    sizeof(ctype)), "parca body");
	CHECK(!strcmp(ctype, "application/json") && strlen(body) == len, "json, %zu bytes", len);
	raw = strstr(body, "\"rawProfile\":\"");
	end = raw ? strchr(raw + 14, '"') : NULL;
	CHECK(raw && end && (size_t)(end - raw - 14) == strlen(want) &&
	      !strncmp(raw + 14, want, strlen(want)), "base64 of '%s' is %s: %s", bytes, want,
	      raw ? raw : "(none)");
	CHECK(strstr(body, "{\"name\":\"__name__\",\"value\":\"svc\"},{\"name\":\"comm\","
			   "\"value\":\"c\"},{\"name\":\"host\",\"value\":\"h\"},{\"name\":"
			   "\"pid\",\"value\":\"7\"}") != NULL, "labels in name order");
	free(body);
}

int main(void)
{
	test_targets();
	test_pyroscope();
	test_boundary_unique();
	/* RFC 4648 §10 */
	parca_b64("", "");
	parca_b64("f", "Zg==");
	parca_b64("fo", "Zm8=");
	parca_b64("foo", "Zm9v");
	parca_b64("foob", "Zm9vYg==");
	parca_b64("fooba", "Zm9vYmE=");
	parca_b64("foobar", "Zm9vYmFy");
	return CHECK_DONE("test_push");
}
