/* SPDX-License-Identifier: MIT */
/*
 * Pushing profiles to a continuous-profiling store (`record --push URL`):
 * each profile the recorder writes is also exported as pprof (gzipped
 * profile.proto, user/report/export/) and sent, labelled with host, comm
 * and pid.
 *
 *   Pyroscope  POST URL (…/ingest; a bare http://host:port gets /ingest)
 *              ?name=APP{host=…,comm=…,pid=…}&from=S&until=S&format=pprof
 *              &spyName=scalebpf, the pprof as the multipart/form-data
 *              part "profile" (as Pyroscope's own clients send it).
 *   Parca      POST URL (…/profiles/writeraw), the WriteRawRequest as
 *              JSON (grpc-gateway's mapping): one series labelled
 *              __name__=APP, host, comm, pid, one sample whose rawProfile
 *              is the pprof in base64.
 *
 * Sending never blocks the recorder: profiles wait in a bounded queue
 * for a thread of their own, which retries a failed send (connection
 * refused, timeout, an HTTP status other than 2xx) with backoff doubling
 * from 1 s to 60 s.  A full queue drops its oldest, counted.  Nothing here
 * touches the profile files: a push that never succeeds costs nothing on
 * disk.  sb_push_stop() gives the queue a last bounded wait, then counts
 * what is left unsent.
 */
#ifndef SB_PUSH_H
#define SB_PUSH_H

#include <stddef.h>
#include <stdint.h>

enum sb_push_kind { SB_PUSH_PYROSCOPE = 1, SB_PUSH_PARCA = 2 };

#define SB_PUSH_QUEUE 64   /* profiles waiting at most */

struct sb_push_labels {
	const char *app;         /* Pyroscope's name / Parca's __name__ */
	const char *host, *comm;
	uint64_t pid;
	uint64_t from_s, until_s;   /* the interval, Unix seconds */
};

struct sb_push_stats {
	uint64_t queued, pushed, attempts, failures;
	uint64_t dropped;        /* the queue was full: the oldest went */
	uint64_t unsent;         /* still queued when sb_push_stop gave up */
	char last_error[256];    /* the last failure's why, "" none */
};

/* ---- the request (push_req.c): pure, unit-tested ---- */

/* The kind a URL names (by its path), and the URL to post to: 0, or -1
 * with why in err (no http:// or https://, a path that is neither). */
int sb_push_target(const char *url, enum sb_push_kind *kind, char *post_url, size_t len,
		   char *err, size_t errlen);
/* Pyroscope's query string appended to url: "...?name=..&from=..". */
int sb_push_pyroscope_url(const char *url, const struct sb_push_labels *l, char *out,
			  size_t len);
/* The request body for kind: malloc'd into *body (*len bytes), with the
 * Content-Type in ctype; 0 or -1 without memory. */
int sb_push_body(enum sb_push_kind kind, const struct sb_push_labels *l, const void *pprof,
		 size_t n, char **body, size_t *len, char *ctype, size_t ctlen);

/* ---- the sender (push.c) ---- */

struct sb_push;

/* NULL with why in err (a bad URL, no memory, no thread). */
struct sb_push *sb_push_start(const char *url, char *err, size_t errlen);
/* Queues a copy of pprof[0..n) with its labels; never blocks.  0, or -1
 * without memory (counted as dropped). */
int sb_push_enqueue(struct sb_push *s, const struct sb_push_labels *l, const void *pprof,
		    size_t n);
/* Waits up to wait_ms for the queue to empty (retries go on meanwhile),
 * stops the thread, fills st and frees s. */
void sb_push_stop(struct sb_push *s, unsigned wait_ms, struct sb_push_stats *st);

#endif
