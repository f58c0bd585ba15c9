// SPDX-License-Identifier: MIT
/* `record --push URL`: each profile written is also exported as pprof
 * and queued for the store (user/push/push.h); the profile file is the
 * record, the push a copy that may fail without costing it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "push/push.h"
#include "record_session.h"
#include "report/export/export.h"

int sb_rec_push_option(struct sb_rec *r, int opt, const char *arg)
{
	char post[2048], err[512];
	enum sb_push_kind kind;
	unsigned long long v;
	char *end;

	switch (opt) {
	case 'H':
		if (sb_push_target(arg, &kind, post, sizeof(post), err, sizeof(err))) {
			sb_rec_fail(r, "--push: %s", err);
			return 2;
		}
		r->push_url = arg;
		return 0;
	case 'a':
		if (!*arg) {
			sb_rec_fail(r, "--push-app needs a name");
			return 2;
		}
		r->push_app = arg;
		return 0;
	default:   /* 'w' */
		errno = 0;
		v = strtoull(arg, &end, 10);
		if (*arg < '0' || *arg > '9' || *end || errno || v > 3600) {
			fprintf(stderr, "scalebpf record: invalid --push-wait '%s' (seconds, "
				"0..3600)\n", arg);
			return 2;
		}
		r->push_wait_ms = (unsigned)v * 1000;
		return 0;
	}
}

int sb_rec_push_start(struct sb_rec *r)
{
	char err[512];

	if (!r->push_url)
		return 0;
	if (!(r->push = sb_push_start(r->push_url, err, sizeof(err)))) {
		sb_rec_fail(r, "--push: %s", err);
		return 1;
	}
	return 0;
}

/* The program's name: the image's file name. */
static const char *comm_of(const char *exe)
{
	const char *b = exe ? strrchr(exe, '/') : NULL;

	return b ? b + 1 : exe && *exe ? exe : "unknown";
}

void sb_rec_push_profile(struct sb_rec *r, const struct sb_profile *p)
{
	const struct sb_export_format *fmt = sb_export_find("pprof");
	struct sb_push_labels l;
	char *data = NULL, err[256];
	size_t n = 0;
	FILE *f;

	if (!r->push)
		return;
	l = (struct sb_push_labels){
		.comm = comm_of(sb_profile_meta_get(p, "executable")),
		.host = sb_profile_meta_get(p, "hostname"),
		.pid = sb_profile_meta_get_u64(p, "pid"),
		.from_s = sb_profile_meta_get_u64(p, "start_realtime"),
	};
	l.app = r->push_app ? r->push_app : l.comm;
	l.until_s = l.from_s + (sb_profile_meta_get_u64(p, "duration_ns") + 999999999) / 1000000000;
	if (!(f = open_memstream(&data, &n)) || fmt->write(p, f, err, sizeof(err)) ||
	    fclose(f)) {
		fprintf(stderr, "scalebpf: warning: --push: the pprof export failed (%s); "
			"this profile is not pushed\n", f ? err : strerror(errno));
		free(data);
		return;
	}
	if (sb_push_enqueue(r->push, &l, data, n))
		fprintf(stderr, "scalebpf: warning: --push: out of memory: this profile is not "
			"pushed\n");
	free(data);
}

void sb_rec_push_finish(struct sb_rec *r)
{
	struct sb_push_stats st;

	if (!r->push)
		return;
	sb_push_stop(r->push, r->push_wait_ms, &st);
	r->push = NULL;
	if (st.pushed == st.queued && !st.dropped) {
		if (!r->quiet)
			fprintf(stderr, "scalebpf: pushed %llu profile%s to %s (%llu attempt%s)\n",
				(unsigned long long)st.pushed, st.pushed == 1 ? "" : "s",
				r->push_url, (unsigned long long)st.attempts,
				st.attempts == 1 ? "" : "s");
		return;
	}
	fprintf(stderr, "scalebpf: warning: --push: %llu of %llu profiles pushed to %s, %llu "
		"not (%llu unsent after a %u s wait, %llu dropped from a full queue; %llu failed "
		"attempts, the last: %s); the profile files are where they were written\n",
		(unsigned long long)st.pushed,
		(unsigned long long)(st.pushed + st.unsent + st.dropped),
		r->push_url, (unsigned long long)(st.unsent + st.dropped),
		(unsigned long long)st.unsent, r->push_wait_ms / 1000,
		(unsigned long long)st.dropped, (unsigned long long)st.failures,
		st.last_error[0] ? st.last_error : "none");
}
