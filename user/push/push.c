// SPDX-License-Identifier: MIT
/* The sender (push.h): a bounded queue and one thread that posts each
 * profile with libcurl, retrying with backoff, never blocking the
 * recorder that queues. */
#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "push.h"

#define BACKOFF_MIN_MS 1000
#define BACKOFF_MAX_MS 60000

struct item {
	char *app, *host, *comm;
	struct sb_push_labels l;
	void *data;
	size_t n;
};

struct sb_push {
	enum sb_push_kind kind;
	char url[2048];
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct item q[SB_PUSH_QUEUE];
	size_t head, count;
	bool stopping;           /* sb_push_stop: drain until deadline */
	bool abort;              /* past the deadline: stop even mid-send */
	struct timespec deadline;
	struct sb_push_stats st;
};

static void item_free(struct item *it)
{
	free(it->app);
	free(it->host);
	free(it->comm);
	free(it->data);
	memset(it, 0, sizeof(*it));
}

static void after_ms(struct timespec *t, unsigned ms)
{
	clock_gettime(CLOCK_MONOTONIC, t);
	t->tv_sec += ms / 1000;
	t->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t->tv_nsec >= 1000000000L) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000L;
	}
}

static bool passed(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > t->tv_sec || (now.tv_sec == t->tv_sec && now.tv_nsec >= t->tv_nsec);
}

/* ---- one send ---- */

struct reply {
	char text[160];
	size_t n;
};

static size_t on_reply(char *data, size_t size, size_t nmemb, void *ctx)
{
	struct reply *r = ctx;
	size_t n = size * nmemb, room = sizeof(r->text) - 1 - r->n;

	memcpy(r->text + r->n, data, n < room ? n : room);
	r->n += n < room ? n : room;
	r->text[r->n] = 0;
	return n;
}

static int on_progress(void *ctx, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
	struct sb_push *s = ctx;

	(void)a, (void)b, (void)c, (void)d;
	return __atomic_load_n(&s->abort, __ATOMIC_RELAXED) ? 1 : 0;
}

/* 0, or -1 with why in s->st.last_error (the caller holds no lock). */
static int send_one(struct sb_push *s, const struct item *it, char *why, size_t whylen)
{
	char url[4096], ctype[128], hdr[160];
	struct curl_slist *headers = NULL;
	struct reply reply = { .n = 0 };
	char *body = NULL;
	size_t len;
	long status = 0;
	CURL *c;
	CURLcode rc;
	int ret = -1;

	if (s->kind == SB_PUSH_PYROSCOPE ? sb_push_pyroscope_url(s->url, &it->l, url, sizeof(url))
					 : (snprintf(url, sizeof(url), "%s", s->url), 0)) {
		snprintf(why, whylen, "the URL with its labels is too long");
		return -1;
	}
	if (sb_push_body(s->kind, &it->l, it->data, it->n, &body, &len, ctype, sizeof(ctype))) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	snprintf(hdr, sizeof(hdr), "Content-Type: %s", ctype);
	if (!(c = curl_easy_init()) || !(headers = curl_slist_append(NULL, hdr))) {
		snprintf(why, whylen, "cannot start a transfer (libcurl)");
		goto out;
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_POST, 1L);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "scalebpf/" SB_VERSION);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 30000L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_reply);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &reply);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, s);
	rc = curl_easy_perform(c);
	if (rc != CURLE_OK) {
		snprintf(why, whylen, "%s", curl_easy_strerror(rc));
		goto out;
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	if (status < 200 || status > 299) {
		for (size_t i = 0; i < reply.n; i++)
			if ((unsigned char)reply.text[i] < 0x20)
				reply.text[i] = ' ';
		snprintf(why, whylen, "HTTP %ld%s%.100s", status, reply.n ? ": " : "", reply.text);
		goto out;
	}
	ret = 0;
out:
	curl_slist_free_all(headers);
	if (c)
		curl_easy_cleanup(c);
	free(body);
	return ret;
}

/* ---- the thread ---- */

static void *worker(void *arg)
{
	struct sb_push *s = arg;
	unsigned backoff = BACKOFF_MIN_MS;
	struct timespec next = { 0, 0 };
	sigset_t all;

	/* the recorder's signals are the main thread's */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_mutex_lock(&s->lock);
	for (;;) {
		char why[sizeof(s->st.last_error)];
		struct item it;
		int ret;

		if (s->stopping && (!s->count || passed(&s->deadline)))
			break;
		if (!s->count) {
			if (s->stopping)
				pthread_cond_timedwait(&s->wake, &s->lock, &s->deadline);
			else
				pthread_cond_wait(&s->wake, &s->lock);
			continue;
		}
		if (next.tv_sec && !passed(&next)) {
			/* backing off; a stop's deadline may come first */
			const struct timespec *until = &next;

			if (s->stopping && (s->deadline.tv_sec < next.tv_sec ||
					    (s->deadline.tv_sec == next.tv_sec &&
					     s->deadline.tv_nsec < next.tv_nsec)))
				until = &s->deadline;
			pthread_cond_timedwait(&s->wake, &s->lock, until);
			continue;
		}
		it = s->q[s->head];      /* sent unlocked; stays queued until done */
		s->st.attempts++;
		pthread_mutex_unlock(&s->lock);
		ret = send_one(s, &it, why, sizeof(why));
		pthread_mutex_lock(&s->lock);
		if (!ret) {
			item_free(&s->q[s->head]);
			s->head = (s->head + 1) % SB_PUSH_QUEUE;
			s->count--;
			s->st.pushed++;
			backoff = BACKOFF_MIN_MS;
			next.tv_sec = 0;
		} else {
			s->st.failures++;
			snprintf(s->st.last_error, sizeof(s->st.last_error), "%s", why);
			after_ms(&next, backoff);
			backoff = backoff * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : backoff * 2;
		}
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

struct sb_push *sb_push_start(const char *url, char *err, size_t errlen)
{
	struct sb_push *s = calloc(1, sizeof(*s));
	pthread_condattr_t ca;

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (sb_push_target(url, &s->kind, s->url, sizeof(s->url), err, errlen)) {
		free(s);
		return NULL;
	}
	/* once, before any thread: libcurl's global state is not thread-safe */
	if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
		snprintf(err, errlen, "libcurl would not start");
		free(s);
		return NULL;
	}
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->wake, &ca);
	pthread_condattr_destroy(&ca);
	if ((errno = pthread_create(&s->thread, NULL, worker, s))) {
		snprintf(err, errlen, "cannot start the push thread: %s", strerror(errno));
		pthread_cond_destroy(&s->wake);
		pthread_mutex_destroy(&s->lock);
		curl_global_cleanup();
		free(s);
		return NULL;
	}
	return s;
}

static char *dup_or_empty(const char *s)
{
	return strdup(s ? s : "");
}

int sb_push_enqueue(struct sb_push *s, const struct sb_push_labels *l, const void *pprof,
		    size_t n)
{
	struct item it = { .l = *l, .n = n };
	int ret = 0;

	it.app = dup_or_empty(l->app);
	it.host = dup_or_empty(l->host);
	it.comm = dup_or_empty(l->comm);
	it.data = malloc(n ? n : 1);
	pthread_mutex_lock(&s->lock);
	if (!it.app || !it.host || !it.comm || !it.data) {
		s->st.dropped++;
		item_free(&it);
		ret = -1;
		goto out;
	}
	memcpy(it.data, pprof, n);
	it.l.app = it.app;
	it.l.host = it.host;
	it.l.comm = it.comm;
	if (s->count == SB_PUSH_QUEUE) {
		/* the oldest goes: it is the one a store needs least, and
		 * the head may be in the thread's hands (it copied it) */
		size_t drop = (s->head + 1) % SB_PUSH_QUEUE;

		item_free(&s->q[drop]);
		for (size_t k = drop; k != (s->head + s->count - 1) % SB_PUSH_QUEUE;
		     k = (k + 1) % SB_PUSH_QUEUE)
			s->q[k] = s->q[(k + 1) % SB_PUSH_QUEUE];
		s->count--;
		s->st.dropped++;
	}
	s->q[(s->head + s->count) % SB_PUSH_QUEUE] = it;
	s->count++;
	s->st.queued++;
	pthread_cond_signal(&s->wake);
out:
	pthread_mutex_unlock(&s->lock);
	return ret;
}

void sb_push_stop(struct sb_push *s, unsigned wait_ms, struct sb_push_stats *st)
{
	pthread_mutex_lock(&s->lock);
	s->stopping = true;
	after_ms(&s->deadline, wait_ms);
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
	/* past the deadline, a transfer under way is cut short too */
	for (;;) {
		struct timespec t = { 0, 50000000L };

		if (pthread_tryjoin_np(s->thread, NULL) == 0)
			break;
		if (passed(&s->deadline))
			__atomic_store_n(&s->abort, true, __ATOMIC_RELAXED);
		nanosleep(&t, NULL);
	}
	s->st.unsent = s->count;
	while (s->count) {
		item_free(&s->q[s->head]);
		s->head = (s->head + 1) % SB_PUSH_QUEUE;
		s->count--;
	}
	*st = s->st;
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->lock);
	curl_global_cleanup();
	free(s);
}
