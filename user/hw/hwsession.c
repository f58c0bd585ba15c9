// SPDX-License-Identifier: MIT
#include "hwsession.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwagg.h"
#include "hwsample.h"
#include "pmu.h"
#include "profile/profile.h"

#define SYSFS_PMUS "/sys/bus/event_source/devices"

struct sb_hwsession {
	int events_req, events;   /* enum sb_events_mode: asked for, taken */
	struct sb_pmu pmu;
	char sampling[512];       /* the path taken, for the profile */
	struct sb_hw *hw;         /* the samplers, while they run */
	struct sb_hwagg *agg;     /* NULL unless the samplers run */
};

int sb_hwsession_alloc(struct sb_hwsession **out, int events_req, char *msg, size_t len)
{
	struct sb_hwsession *hs = calloc(1, sizeof(*hs));
	int mode;

	*out = NULL;
	if (!hs) {
		snprintf(msg, len, "out of memory");
		return -ENOMEM;
	}
	hs->events_req = events_req;
	sb_pmu_detect(SYSFS_PMUS, &hs->pmu);
	mode = sb_events_choose(events_req, &hs->pmu, hs->sampling, sizeof(hs->sampling),
				msg, len);
	if (mode < 0) {
		free(hs);
		return -ENODEV;
	}
	hs->events = mode;
	*out = hs;
	return 0;
}

int sb_hwsession_start(struct sb_hwsession *hs, const struct sb_hwsession_opts *o,
		       char *msg, size_t len)
{
	char err[512] = "", ev[384], sev[384];   /* sev may be "none (why)" */
	int ret;

	if (len)
		msg[0] = 0;
	if (hs->events != SB_EVENTS_HW)
		return 0;
	ret = sb_hw_load(&hs->hw, o->pid, o->ringbuf_fd, o->ringbuf_bytes / 4, err,
			 sizeof(err));
	if (!ret)
		ret = sb_hw_attach(hs->hw, &hs->pmu, o->sample_hz, SB_HW_LOAD_PERIOD,
				   SB_HW_STORE_PERIOD, ev, sev, sizeof(ev), err, sizeof(err));
	if (!ret && !(hs->agg = sb_hwagg_alloc())) {
		snprintf(msg, len, "out of memory");
		return -ENOMEM;
	}
	if (!ret) {
		char per[32] = "";

		if (strncmp(sev, "none", 4))
			snprintf(per, sizeof(per), " every %u stores", SB_HW_STORE_PERIOD);
		snprintf(hs->sampling, sizeof(hs->sampling), "%s; LBR: cycles at %u Hz; "
			 "PEBS: %.96s every %u loads; stores: %.200s%s", SB_SAMPLING_HW,
			 o->sample_hz, ev, SB_HW_LOAD_PERIOD, sev, per);
		return 0;
	}
	sb_hw_close(hs->hw);
	hs->hw = NULL;
	if (!err[0])
		snprintf(err, sizeof(err), "%s", strerror(-ret));
	if (hs->events_req == SB_EVENTS_HW) {
		snprintf(msg, len, "--events hw: %s", err);
		return ret;
	}
	/* A PMU without LBR or PEBS (many hypervisors, AMD): still a profile. */
	snprintf(msg, len, "%s", err);
	hs->events = SB_EVENTS_SW;
	snprintf(hs->sampling, sizeof(hs->sampling), "%s; hardware samplers failed: %.300s",
		 SB_SAMPLING_SW, err);
	return 0;
}

int sb_hwsession_record(struct sb_hwsession *hs, struct sb_builder *b, const void *data,
			size_t size)
{
	if (!hs || !hs->agg)
		return -ENODEV;
	return sb_hwagg_record(hs->agg, b, data, size);
}

void sb_hwsession_stop(struct sb_hwsession *hs)
{
	if (hs)
		sb_hw_stop(hs->hw);
}

void sb_hwsession_free(struct sb_hwsession *hs)
{
	if (!hs)
		return;
	sb_hw_close(hs->hw);
	sb_hwagg_free(hs->agg);
	free(hs);
}

uint64_t sb_hwsession_meta(struct sb_hwsession *hs, struct sb_profile *p)
{
	uint64_t c[SB_HWCNT_MAX];
	struct sb_hwagg_stats st;
	char buf[2048];

	sb_profile_meta_set(p, "sampling", hs->sampling);
	sb_profile_meta_set(p, "events_requested", sb_events_name(hs->events_req));
	if (!hs->agg)
		return 0;
	sb_hw_read_counters(hs->hw, c);
	sb_hwagg_get_stats(hs->agg, &st);
	sb_profile_meta_set_u64(p, "drops_lbr", c[SB_HWCNT_DROP_LBR]);
	sb_profile_meta_set_u64(p, "drops_load", c[SB_HWCNT_DROP_LOAD]);
	sb_profile_meta_set_u64(p, "hw_lbr_samples", c[SB_HWCNT_LBR]);
	sb_profile_meta_set_u64(p, "hw_lbr_read_errors", c[SB_HWCNT_LBR_ERR]);
	sb_profile_meta_set_u64(p, "hw_load_samples", c[SB_HWCNT_LOAD]);
	sb_profile_meta_set_u64(p, "hw_store_samples", c[SB_HWCNT_STORE]);
	sb_profile_meta_set_u64(p, "drops_store", c[SB_HWCNT_DROP_STORE]);
	sb_profile_meta_set_u64(p, "hw_branches", st.branches);
	sb_profile_meta_set_u64(p, "hw_branches_kernel", st.branches_kernel);
	sb_profile_meta_set_u64(p, "hw_edges", st.edges);
	sb_profile_meta_set_u64(p, "hw_edges_cross_binary", st.edges_cross_binary);
	sb_profile_meta_set_u64(p, "hw_ranges", st.ranges);
	sb_profile_meta_set_u64(p, "hw_ranges_inconsistent", st.ranges_bad);
	sb_profile_meta_set_u64(p, "hw_loads_weighted", st.loads_weighted);
	sb_profile_meta_set_u64(p, "hw_bad_records", st.bad_records);
	sb_hwagg_loads_summary(hs->agg, 10, buf, sizeof(buf));
	sb_profile_meta_set(p, "hw_loads_top", buf);
	return c[SB_HWCNT_DROP_LBR] + c[SB_HWCNT_DROP_LOAD] + c[SB_HWCNT_DROP_STORE];
}

struct sb_hwagg *sb_hwsession_agg(const struct sb_hwsession *hs)
{
	return hs ? hs->agg : NULL;
}

const struct sb_pmu *sb_hwsession_pmu(const struct sb_hwsession *hs)
{
	return hs && hs->agg ? &hs->pmu : NULL;
}
