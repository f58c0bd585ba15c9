// SPDX-License-Identifier: MIT
/*
 * `record --sample-duty ON/PERIOD`: the cpu-clock samplers run ON seconds
 * of every PERIOD (from the recording's start), so that a fleet can keep
 * code samples at a fraction of their cost; sections, waits and threads
 * (uprobes and tracepoints) are always on.  The samplers' perf events are
 * disabled in between (PERF_EVENT_IOC_DISABLE): an off second costs the
 * target nothing of them.  The profile says what was on: sample_duty and
 * samples_on_ns (the time the samplers ran).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record_bpf.h"
#include "record_session.h"

int sb_rec_duty_option(struct sb_rec *r, const char *arg)
{
	char *end;
	double on, period;

	errno = 0;
	on = strtod(arg, &end);
	if (*end == '/')
		period = strtod(end + 1, &end);
	else
		period = 0;
	if (errno || *end || !(on > 0) || !(period > 0) || on > period || period > 86400) {
		fprintf(stderr, "scalebpf record: invalid --sample-duty '%s' (ON/PERIOD in "
			"seconds, 0 < ON <= PERIOD <= 86400, e.g. 10/60)\n", arg);
		return 2;
	}
	r->duty_on_ns = (uint64_t)(on * 1e9);
	r->duty_period_ns = (uint64_t)(period * 1e9);
	return 0;
}

void sb_rec_duty_tick(struct sb_rec *r, uint64_t now)
{
	bool on;
	int ret;

	if (!r->duty_period_ns || !r->sample_hz || now < r->start_ns)
		return;
	on = (now - r->start_ns) % r->duty_period_ns < r->duty_on_ns;
	if (!r->duty_started) {
		r->duty_started = true;
		r->duty_on = true;     /* the samplers start enabled */
		r->duty_since = r->start_ns;
	}
	if (on == r->duty_on)
		return;
	if ((ret = sb_bpf_samples_enable(r->bpf, on))) {
		if (!r->duty_warned)
			fprintf(stderr, "scalebpf: warning: --sample-duty: cannot turn the samplers "
				"%s: %s\n", on ? "on" : "off", strerror(-ret));
		r->duty_warned = true;
	}
	if (r->duty_on)
		r->duty_on_total += now - r->duty_since;
	r->duty_on = on;
	r->duty_since = now;
}

void sb_rec_duty_meta(struct sb_rec *r, struct sb_profile *p)
{
	char buf[96];
	uint64_t on = r->duty_on_total;

	if (!r->duty_period_ns) {
		sb_profile_meta_set(p, "sample_duty", "always");
		return;
	}
	if (r->duty_on && r->end_ns > r->duty_since)
		on += r->end_ns - r->duty_since;
	snprintf(buf, sizeof(buf), "%.3g s of every %.3g s", r->duty_on_ns / 1e9,
		 r->duty_period_ns / 1e9);
	sb_profile_meta_set(p, "sample_duty", buf);
	sb_profile_meta_set_u64(p, "samples_on_ns", on);
}
