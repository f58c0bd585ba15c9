// SPDX-License-Identifier: MIT
#include "hwsession.h"

#include <stdio.h>
#include <string.h>

#include "hwagg.h"
#include "hwsample.h"
#include "pmu.h"
#include "profile/profile.h"
#include "record/record_bpf.h"
#include "record/record_session.h"

#define SYSFS_PMUS "/sys/bus/event_source/devices"

int sb_hwsession_choose(struct sb_rec *r)
{
	char err[512];
	int mode;

	sb_pmu_detect(SYSFS_PMUS, &r->pmu);
	mode = sb_events_choose(r->events_req, &r->pmu, r->quiet, r->sampling,
				sizeof(r->sampling), err, sizeof(err));
	if (mode < 0)
		return sb_rec_fail(r, "%s", err);
	r->events = mode;
	return 0;
}

int sb_hwsession_start(struct sb_rec *r)
{
	char err[512], ev[128];
	int ret;

	if (r->events != SB_EVENTS_HW)
		return 0;
	ret = sb_hw_load(&r->hw, r->pid, sb_bpf_ringbuf_fd(r->bpf),
			 ((size_t)r->ringbuf_mb << 20) / 4, err, sizeof(err));
	if (!ret)
		ret = sb_hw_attach(r->hw, &r->pmu, r->sample_hz, SB_HW_LOAD_PERIOD, ev,
				   sizeof(ev), err, sizeof(err));
	if (!ret && !(r->hwagg = sb_hwagg_alloc()))
		return sb_rec_fail(r, "out of memory");
	if (!ret) {
		snprintf(r->sampling, sizeof(r->sampling), "%s; LBR: cycles at %u Hz; "
			 "PEBS: %s every %u loads", SB_SAMPLING_HW, r->sample_hz, ev,
			 SB_HW_LOAD_PERIOD);
		return 0;
	}
	sb_hw_close(r->hw);
	r->hw = NULL;
	if (r->events_req == SB_EVENTS_HW)
		return sb_rec_fail(r, "--events hw: %s", err);
	/* A PMU without LBR or PEBS (many hypervisors, AMD): still a profile. */
	if (!r->quiet)
		sb_events_fallback_line(err);
	r->events = SB_EVENTS_SW;
	snprintf(r->sampling, sizeof(r->sampling), "%s; hardware samplers failed: %.300s",
		 SB_SAMPLING_SW, err);
	return 0;
}

bool sb_hwsession_record(struct sb_rec *r, const void *data, size_t size)
{
	const struct sb_rec_hdr *h = data;

	if (size < sizeof(*h) || (h->type != SB_REC_LBR && h->type != SB_REC_LOAD))
		return false;
	if (r->hwagg)
		sb_hwagg_record(r->hwagg, r->builder, data, size);
	else
		r->dec.bad_records++;   /* no hardware sampler runs: not ours */
	return true;
}

void sb_hwsession_stop(struct sb_rec *r)
{
	sb_hw_stop(r->hw);
}

void sb_hwsession_cleanup(struct sb_rec *r)
{
	sb_hw_close(r->hw);
	sb_hwagg_free(r->hwagg);
	r->hw = NULL;
	r->hwagg = NULL;
}

static void meta_u64(struct sb_profile *p, const char *key, uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	sb_profile_meta_set(p, key, buf);
}

void sb_hwsession_meta(struct sb_rec *r, struct sb_profile *p)
{
	uint64_t c[SB_HWCNT_MAX];
	struct sb_hwagg_stats st;
	char buf[2048];

	sb_profile_meta_set(p, "sampling", r->sampling);
	sb_profile_meta_set(p, "events_requested", sb_events_name(r->events_req));
	if (!r->hwagg)
		return;
	sb_hw_read_counters(r->hw, c);
	sb_hwagg_get_stats(r->hwagg, &st);
	meta_u64(p, "drops_lbr", c[SB_HWCNT_DROP_LBR]);
	meta_u64(p, "drops_load", c[SB_HWCNT_DROP_LOAD]);
	meta_u64(p, "hw_lbr_samples", c[SB_HWCNT_LBR]);
	meta_u64(p, "hw_lbr_read_errors", c[SB_HWCNT_LBR_ERR]);
	meta_u64(p, "hw_load_samples", c[SB_HWCNT_LOAD]);
	meta_u64(p, "hw_branches", st.branches);
	meta_u64(p, "hw_branches_kernel", st.branches_kernel);
	meta_u64(p, "hw_edges", st.edges);
	meta_u64(p, "hw_edges_cross_binary", st.edges_cross_binary);
	meta_u64(p, "hw_ranges", st.ranges);
	meta_u64(p, "hw_ranges_inconsistent", st.ranges_bad);
	meta_u64(p, "hw_loads_weighted", st.loads_weighted);
	meta_u64(p, "hw_bad_records", st.bad_records);
	sb_hwagg_loads_summary(r->hwagg, 10, buf, sizeof(buf));
	sb_profile_meta_set(p, "hw_loads_top", buf);
	if (c[SB_HWCNT_DROP_LBR] + c[SB_HWCNT_DROP_LOAD])
		fprintf(stderr, "scalebpf: warning: %llu hardware samples were dropped (ring "
			"buffer full): raise --ringbuf-mb or lower -F\n",
			(unsigned long long)(c[SB_HWCNT_DROP_LBR] + c[SB_HWCNT_DROP_LOAD]));
}
