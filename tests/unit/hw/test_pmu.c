// SPDX-License-Identifier: MIT
/*
 * PMU detection against fake sysfs trees, the --events decision, and the
 * perf_event attributes of the hardware samplers (user/hw/pmu.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "hw/pmu.h"

static void put(const char *root, const char *pmu, const char *type)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, pmu);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/type", root, pmu);
	f = fopen(path, "w");
	if (f) {
		fputs(type, f);
		fclose(f);
	}
}

static void test_detect(void)
{
	char root[] = "/tmp/sb_pmu_test.XXXXXX";
	struct sb_pmu p;
	char cmd[600];

	if (!mkdtemp(root)) {
		CHECK(0, "mkdtemp");
		return;
	}
	/* A VM without a PMU driver: software, breakpoint, tracepoint only. */
	put(root, "software", "1\n");
	put(root, "breakpoint", "5\n");
	sb_pmu_detect(root, &p);
	CHECK(!p.present && strstr(p.why, "no PMU driver"), "why: %s", p.why);
	put(root, "cpu", "4\n");
	sb_pmu_detect(root, &p);
	CHECK(p.present && !strcmp(p.name, "cpu") && p.type == 4, "%s type %u", p.name, p.type);
	/* Hybrid parts: the big cores' PMU is the one to sample. */
	put(root, "cpu_core", "8\n");
	sb_pmu_detect(root, &p);
	CHECK(p.present && !strcmp(p.name, "cpu_core") && p.type == 8, "%s type %u", p.name,
	      p.type);
	/* An unreadable type file is no PMU. */
	put(root, "cpu_core", "garbage\n");
	put(root, "cpu", "");
	sb_pmu_detect(root, &p);
	CHECK(!p.present, "garbage type taken for a PMU");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	CHECK(system(cmd) == 0, "cleanup");
}

static void test_choose(void)
{
	struct sb_pmu none = { .present = false, .why = "no cpu PMU" };
	struct sb_pmu cpu = { .present = true, .name = "cpu", .type = 4 };
	char s[256], err[256] = "";

	CHECK(sb_events_parse("auto") == SB_EVENTS_AUTO && sb_events_parse("hw") == SB_EVENTS_HW &&
	      sb_events_parse("sw") == SB_EVENTS_SW && sb_events_parse("HW") == -1 &&
	      sb_events_parse("") == -1, "parse");
	CHECK(sb_events_choose(SB_EVENTS_AUTO, &none, s, sizeof(s), err, sizeof(err)) ==
	      SB_EVENTS_SW && strstr(s, "software (cpu-clock)") && strstr(s, "no hardware PMU"),
	      "auto without a PMU: %s", s);
	CHECK(sb_events_choose(SB_EVENTS_HW, &none, s, sizeof(s), err, sizeof(err)) == -1 &&
	      strstr(err, "no hardware PMU (no cpu PMU)"), "hw without a PMU: %s", err);
	CHECK(sb_events_choose(SB_EVENTS_SW, &cpu, s, sizeof(s), err, sizeof(err)) ==
	      SB_EVENTS_SW && !strcmp(s, SB_SAMPLING_SW), "sw with a PMU: %s", s);
	CHECK(sb_events_choose(SB_EVENTS_AUTO, &cpu, s, sizeof(s), err, sizeof(err)) ==
	      SB_EVENTS_HW && !strcmp(s, SB_SAMPLING_HW), "auto with a PMU: %s", s);
}

static void test_attrs(void)
{
	struct sb_pmu none = { .present = false };
	struct sb_pmu cpu = { .present = true, .name = "cpu", .type = 4 };
	struct sb_pmu core = { .present = true, .name = "cpu_core", .type = 8 };
	struct perf_event_attr a;
	char err[256], ev[128];
	int ret;

	CHECK(sb_pmu_lbr_attr(&none, 199, &a, err, sizeof(err)) == -1, "LBR without a PMU");
	CHECK(sb_pmu_lbr_attr(&cpu, 0, &a, err, sizeof(err)) == -1 && strstr(err, "-F"),
	      "LBR with -F 0: %s", err);
	CHECK(sb_pmu_lbr_attr(&cpu, 499, &a, err, sizeof(err)) == 0, "LBR attr");
	CHECK(a.type == PERF_TYPE_HARDWARE && a.config == PERF_COUNT_HW_CPU_CYCLES && a.freq &&
	      a.sample_freq == 499 && (a.sample_type & PERF_SAMPLE_BRANCH_STACK) &&
	      a.branch_sample_type == (PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_ANY) &&
	      a.exclude_kernel && a.size == sizeof(a), "LBR attr fields");
	CHECK(sb_pmu_lbr_attr(&core, 499, &a, err, sizeof(err)) == 0 &&
	      a.config == ((8ull << 32) | PERF_COUNT_HW_CPU_CYCLES), "hybrid: extended type");

	CHECK(sb_pmu_load_attr(&none, 1000, &a, ev, sizeof(ev), err, sizeof(err)) == -1,
	      "PEBS without a PMU");
	/* libpfm4 knows the events only on CPUs that have them (not on this
	 * AMD VM): either a precise load event or a message naming them. */
	ret = sb_pmu_load_attr(&cpu, 1000, &a, ev, sizeof(ev), err, sizeof(err));
	if (ret == 0)
		CHECK(a.precise_ip > 0 && a.sample_period == 1000 && !a.freq &&
		      (a.sample_type & PERF_SAMPLE_ADDR) &&
		      (a.sample_type & PERF_SAMPLE_WEIGHT_STRUCT) &&
		      (a.sample_type & PERF_SAMPLE_DATA_SRC) && a.exclude_kernel &&
		      (strstr(ev, "LOADS") || strstr(ev, "LOAD_LATENCY")), "PEBS attr: %s", ev);
	else
		CHECK(strstr(err, "MEM_TRANS_RETIRED:LOAD_LATENCY"), "PEBS error: %s", err);

	CHECK(sb_pmu_store_attr(&none, 1000, &a, ev, sizeof(ev), err, sizeof(err)) == -1 &&
	      strstr(err, "no hardware PMU"), "store sampler without a PMU: %s", err);
	ret = sb_pmu_store_attr(&cpu, 997, &a, ev, sizeof(ev), err, sizeof(err));
	if (ret == 0)
		CHECK(a.precise_ip > 0 && a.sample_period == 997 && !a.freq &&
		      (a.sample_type & PERF_SAMPLE_ADDR) && a.exclude_kernel &&
		      strstr(ev, "ALL_STORES"), "store attr: %s", ev);
	else
		CHECK(strstr(err, "MEM_INST_RETIRED:ALL_STORES"), "store error: %s", err);

	/* the reuse probes' counter: counted, never sampled, not inherited
	 * (BPF reads it in the thread's own context) */
	CHECK(sb_pmu_memops_attr(&none, &a, ev, sizeof(ev), err, sizeof(err)) == -1 &&
	      strstr(err, "no hardware PMU"), "memops counter without a PMU: %s", err);
	ret = sb_pmu_memops_attr(&cpu, &a, ev, sizeof(ev), err, sizeof(err));
	if (ret == 0)
		CHECK(!a.sample_period && !a.sample_type && !a.precise_ip && !a.inherit &&
		      !a.disabled && a.exclude_kernel && a.size == sizeof(a) &&
		      strstr(ev, "RETIRED"), "memops attr: %s", ev);
	else
		CHECK(strstr(err, "MEM_INST_RETIRED:ANY") && strstr(err, "AMD"),
		      "memops error: %s", err);
}

int main(void)
{
	test_detect();
	test_choose();
	test_attrs();
	return CHECK_DONE("test_pmu");
}
