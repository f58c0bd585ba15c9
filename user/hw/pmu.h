/* SPDX-License-Identifier: MIT */
/*
 * Which sampling path `record` takes (--events auto|hw|sw), whether the
 * machine has a hardware PMU, and the perf_event attributes of the
 * hardware samplers (LBR branch stacks, PEBS loads through libpfm4).
 *
 * Only sysfs decides whether a PMU exists: libpfm4 encodes events from
 * CPUID even in a VM whose kernel has no PMU driver, so its success
 * proves nothing (../shared/notes/platform.md).
 */
#ifndef SB_PMU_H
#define SB_PMU_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum sb_events_mode {
	SB_EVENTS_AUTO = 0,
	SB_EVENTS_HW,
	SB_EVENTS_SW,
};

/* "auto", "hw", "sw" -> mode; -1 for anything else. */
int sb_events_parse(const char *s);
const char *sb_events_name(int mode);

struct sb_pmu {
	bool present;
	char name[16];            /* "cpu" or "cpu_core" (hybrid parts) */
	uint32_t type;            /* its perf_event type */
	char why[256];            /* when absent: what was looked at */
};

/* Looks for the core PMU under devices_dir (normally
 * /sys/bus/event_source/devices).  Always fills *out. */
void sb_pmu_detect(const char *devices_dir, struct sb_pmu *out);

/* The LBR sampler: user-space cycles sampled at hz with a branch stack
 * of any taken user branch.  0, or -1 with err. */
int sb_pmu_lbr_attr(const struct sb_pmu *pmu, unsigned hz, struct perf_event_attr *attr,
		    char *err, size_t errlen);
/* The PEBS load sampler: the first load-latency/all-loads event libpfm4
 * knows for this CPU, precise, every period-th load.  0, or -1 with err
 * (no such event: e.g. AMD, whose IBS is not supported yet). */
int sb_pmu_load_attr(const struct sb_pmu *pmu, uint64_t period, struct perf_event_attr *attr,
		     char *ev_name, size_t namelen, char *err, size_t errlen);
/* The PEBS store sampler: retired stores with their data address (Intel
 * Haswell and later), every period-th store.  0, or -1 with err.  Sharing
 * candidates only: record runs on without it. */
int sb_pmu_store_attr(const struct sb_pmu *pmu, uint64_t period, struct perf_event_attr *attr,
		      char *ev_name, size_t namelen, char *err, size_t errlen);
/* The reuse probes' counter (record_reuse.c): every retired load and
 * store at user level, counted, not sampled, read by BPF at a
 * watchpoint's trap.  0, or -1 with err (no such event: e.g. AMD). */
int sb_pmu_memops_attr(const struct sb_pmu *pmu, struct perf_event_attr *attr, char *ev_name,
		       size_t namelen, char *err, size_t errlen);

/*
 * --events: the path record takes.  auto without a PMU returns
 * SB_EVENTS_SW with msg saying why (record prints it in one line); hw
 * without one returns -1 with msg the error; else msg is "".  sampling
 * gets the path for the profile's metadata.
 */
int sb_events_choose(int requested, const struct sb_pmu *pmu, char *sampling, size_t slen,
		     char *msg, size_t msglen);

#define SB_SAMPLING_SW "software (cpu-clock)"
#define SB_SAMPLING_HW "hardware (LBR+PEBS) and software (cpu-clock)"

#endif
