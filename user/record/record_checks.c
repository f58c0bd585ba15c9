// SPDX-License-Identifier: MIT
/* What `record` checks before it starts anything: the privileges the
 * kernel will ask for, and that the output can be written. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile/profile.h"
#include "record_session.h"

/* Capability numbers (linux/capability.h; CAP_PERFMON and CAP_BPF: 5.8). */
#define SB_CAP_SYS_ADMIN 21
#define SB_CAP_PERFMON 38
#define SB_CAP_BPF 39

/* The effective capability set (CapEff in /proc/self/status): no libcap
 * needed for one hexadecimal mask.  -1 when it cannot be read. */
static int cap_effective(uint64_t *caps)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	int ret = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "CapEff:", 7)) {
			*caps = strtoull(line + 7, NULL, 16);
			ret = 0;
			break;
		}
	fclose(f);
	return ret;
}

/* The highest capability this kernel knows: before 5.8 there is no
 * CAP_BPF nor CAP_PERFMON, and CAP_SYS_ADMIN stands for both. */
static int cap_last(void)
{
	FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "r");
	int last = SB_CAP_BPF;

	if (f) {
		if (fscanf(f, "%d", &last) != 1)
			last = SB_CAP_BPF;
		fclose(f);
	}
	return last;
}

/*
 * What the kernel checks, not who we are: BPF programs need CAP_BPF,
 * tracing ones and uprobes CAP_PERFMON, and CAP_SYS_ADMIN the rest
 * (other users' /proc maps, perf events of other processes).  A non-root
 * user granted the three may record; root without them (a container)
 * could not load anything.
 */
int sb_rec_check_privileges(struct sb_rec *r)
{
	static const struct { int cap; const char *name; } need[] = {
		{ SB_CAP_BPF, "CAP_BPF" }, { SB_CAP_PERFMON, "CAP_PERFMON" },
		{ SB_CAP_SYS_ADMIN, "CAP_SYS_ADMIN" },
	};
	char missing[96] = "";
	int last = cap_last();
	uint64_t caps;

	if (cap_effective(&caps))
		return geteuid() == 0 ? 0 : sb_rec_fail(r, "recording needs root (CAP_BPF, "
							 "CAP_PERFMON and CAP_SYS_ADMIN): run it with sudo");
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		if (need[i].cap > last || (caps >> need[i].cap & 1))
			continue;
		snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing), "%s%s",
			 *missing ? ", " : "", need[i].name);
	}
	if (!*missing)
		return 0;
	return sb_rec_fail(r, "recording needs root or the capabilities CAP_BPF, CAP_PERFMON "
			   "and CAP_SYS_ADMIN (BPF programs and uprobes); missing: %s. Run it "
			   "with sudo, or grant them (e.g. setcap or capsh --addamb)", missing);
}

/* An output that cannot be written is found before the run, not after
 * it: the profile's temporary file is created there and dropped. */
int sb_rec_check_output(struct sb_rec *r)
{
	char err[512];

	if (r->rotate_s > 0)   /* a directory of intervals (record_rotate.c) */
		return sb_rec_rotate_prepare(r);
	if (r->keep || r->max_bytes) {
		sb_rec_fail(r, "--keep and --max-bytes bound the directory of --rotate");
		return 2;
	}
	if (sb_profile_check_path(r->output, err, sizeof(err)) == SB_OK)
		return 0;
	return sb_rec_fail(r, "%s (nothing recorded; choose another -o)", err);
}
