// SPDX-License-Identifier: MIT
#include "pmu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <perfmon/pfmlib_perf_event.h>

int sb_events_parse(const char *s)
{
	if (!strcmp(s, "auto"))
		return SB_EVENTS_AUTO;
	if (!strcmp(s, "hw"))
		return SB_EVENTS_HW;
	if (!strcmp(s, "sw"))
		return SB_EVENTS_SW;
	return -1;
}

const char *sb_events_name(int mode)
{
	return mode == SB_EVENTS_HW ? "hw" : mode == SB_EVENTS_SW ? "sw" : "auto";
}

static int read_type(const char *dir, const char *name, uint32_t *type)
{
	char path[512];
	unsigned long v;
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/%s/type", dir, name);
	if (!(f = fopen(path, "r")))
		return -1;
	ok = fscanf(f, "%lu", &v) == 1;
	fclose(f);
	if (!ok)
		return -1;
	*type = (uint32_t)v;
	return 0;
}

void sb_pmu_detect(const char *dir, struct sb_pmu *out)
{
	/* Hybrid parts (Alder Lake...) name the big cores' PMU cpu_core;
	 * LBR and PEBS loads are sampled there. */
	static const char *const names[] = { "cpu_core", "cpu" };

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (read_type(dir, names[i], &out->type))
			continue;
		out->present = true;
		snprintf(out->name, sizeof(out->name), "%s", names[i]);
		return;
	}
	snprintf(out->why, sizeof(out->why), "no %s/cpu or cpu_core: the kernel has no "
		 "PMU driver here, as in most VMs", dir);
}

int sb_pmu_lbr_attr(const struct sb_pmu *pmu, unsigned hz, struct perf_event_attr *a,
		    char *err, size_t errlen)
{
	if (!pmu->present || !hz) {
		snprintf(err, errlen, "%s", !pmu->present ? "no hardware PMU"
							  : "LBR sampling needs -F > 0");
		return -1;
	}
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_HARDWARE;
	a->config = PERF_COUNT_HW_CPU_CYCLES;
	/* On a hybrid part the generic event must name its PMU (the extended
	 * type in the upper config bits, kernel >= 5.13). */
	if (!strcmp(pmu->name, "cpu_core"))
		a->config |= (uint64_t)pmu->type << 32;
	a->freq = 1;
	a->sample_freq = hz;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_BRANCH_STACK;
	a->branch_sample_type = PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_ANY;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	return 0;
}

/* The first of events libpfm4 can encode for this CPU, precise, user
 * level, every period-th occurrence.  0, or -1 with err. */
static int encode_first(const struct sb_pmu *pmu, const char *const *events, size_t n,
			uint64_t period, uint64_t sample_type, struct perf_event_attr *a,
			char *ev_name, size_t namelen, char *err, size_t errlen)
{
	int ret;

	if (!pmu->present) {
		snprintf(err, errlen, "no hardware PMU");
		return -1;
	}
	if ((ret = pfm_initialize()) != PFM_SUCCESS) {
		snprintf(err, errlen, "libpfm4 cannot initialize: %s", pfm_strerror(ret));
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		pfm_perf_encode_arg_t arg;

		memset(a, 0, sizeof(*a));
		memset(&arg, 0, sizeof(arg));
		arg.attr = a;
		arg.size = sizeof(arg);
		/* PFM_PLM3: user level only, as the target's own accesses. */
		ret = pfm_get_os_event_encoding(events[i], PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
		if (ret != PFM_SUCCESS)
			continue;
		a->size = sizeof(*a);
		if (!strcmp(pmu->name, "cpu_core") && a->type == PERF_TYPE_RAW)
			a->type = pmu->type;
		a->sample_period = period;
		a->freq = 0;
		a->sample_type = sample_type;
		a->exclude_kernel = 1;
		a->exclude_hv = 1;
		if (!a->precise_ip)
			a->precise_ip = 2;
		snprintf(ev_name, namelen, "%s", events[i]);
		pfm_terminate();
		return 0;
	}
	pfm_terminate();
	if (errlen)
		err[0] = 0;
	return -1;
}

int sb_pmu_load_attr(const struct sb_pmu *pmu, uint64_t period, struct perf_event_attr *a,
		     char *ev_name, size_t namelen, char *err, size_t errlen)
{
	/* Load latency gives weight and data source; the all-loads events
	 * of other generations give precise IP and address only.  Not done:
	 * Sapphire Rapids and hybrid parts want the load-latency event in a
	 * group led by mem-loads-aux; there the open fails and auto falls
	 * back with the kernel's reason. */
	static const char *const events[] = {
		"MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=3:precise=2",
		"MEM_INST_RETIRED:ALL_LOADS:precise=2",
		"MEM_UOPS_RETIRED:ALL_LOADS:precise=2",
	};

	if (!encode_first(pmu, events, sizeof(events) / sizeof(events[0]), period,
			  PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_ADDR |
			  PERF_SAMPLE_WEIGHT_STRUCT | PERF_SAMPLE_DATA_SRC, a, ev_name, namelen,
			  err, errlen))
		return 0;
	if (errlen && !err[0])
		snprintf(err, errlen, "libpfm4 knows no PEBS load event for this CPU (tried "
			 "MEM_TRANS_RETIRED:LOAD_LATENCY, MEM_INST_RETIRED:ALL_LOADS, "
			 "MEM_UOPS_RETIRED:ALL_LOADS; AMD IBS is not supported)");
	return -1;
}

int sb_pmu_store_attr(const struct sb_pmu *pmu, uint64_t period, struct perf_event_attr *a,
		      char *ev_name, size_t namelen, char *err, size_t errlen)
{
	/* Skylake and later, then Haswell/Broadwell: retired stores with
	 * their data address (PEBS), so a sampled store names its line. */
	static const char *const events[] = {
		"MEM_INST_RETIRED:ALL_STORES:precise=2",
		"MEM_UOPS_RETIRED:ALL_STORES:precise=2",
	};

	if (!encode_first(pmu, events, sizeof(events) / sizeof(events[0]), period,
			  PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_ADDR | PERF_SAMPLE_DATA_SRC,
			  a, ev_name, namelen, err, errlen))
		return 0;
	if (errlen && !err[0])
		snprintf(err, errlen, "libpfm4 knows no precise store event for this CPU (tried "
			 "MEM_INST_RETIRED:ALL_STORES, MEM_UOPS_RETIRED:ALL_STORES)");
	return -1;
}

int sb_pmu_memops_attr(const struct sb_pmu *pmu, struct perf_event_attr *a, char *ev_name,
		       size_t namelen, char *err, size_t errlen)
{
	/* Ice Lake and later count loads and stores in one umask (ANY);
	 * Skylake's two umasks combine to the same 0x83; Haswell/Broadwell
	 * have the uops event.  AMD has no retired load+store count that
	 * fits (its dispatch counts include speculation). */
	static const char *const events[] = {
		"MEM_INST_RETIRED:ANY",
		"MEM_INST_RETIRED:ALL_LOADS:ALL_STORES",
		"MEM_UOPS_RETIRED:ALL_LOADS:ALL_STORES",
	};

	if (!encode_first(pmu, events, sizeof(events) / sizeof(events[0]), 0, 0, a, ev_name,
			  namelen, err, errlen)) {
		/* a counter read at traps, never sampled */
		a->sample_period = 0;
		a->sample_type = 0;
		a->precise_ip = 0;
		a->disabled = 0;
		a->inherit = 0;
		return 0;
	}
	if (errlen && !err[0])
		snprintf(err, errlen, "libpfm4 knows no retired load+store count for this CPU "
			 "(tried MEM_INST_RETIRED:ANY, MEM_INST_RETIRED:ALL_LOADS:ALL_STORES, "
			 "MEM_UOPS_RETIRED:ALL_LOADS:ALL_STORES; AMD has none that fits)");
	return -1;
}

int sb_events_choose(int requested, const struct sb_pmu *pmu, char *sampling, size_t slen,
		     char *msg, size_t msglen)
{
	if (msglen)
		msg[0] = 0;
	snprintf(sampling, slen, "%s", SB_SAMPLING_SW);
	if (requested == SB_EVENTS_SW)
		return SB_EVENTS_SW;
	if (!pmu->present) {
		if (requested == SB_EVENTS_HW) {
			snprintf(msg, msglen, "--events hw: no hardware PMU (%s); use --events "
				 "sw or auto", pmu->why);
			return -1;
		}
		snprintf(msg, msglen, "%s", pmu->why);
		snprintf(sampling, slen, "%s; no hardware PMU", SB_SAMPLING_SW);
		return SB_EVENTS_SW;
	}
	snprintf(sampling, slen, "%s", SB_SAMPLING_HW);
	return SB_EVENTS_HW;
}
