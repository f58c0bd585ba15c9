// SPDX-License-Identifier: MIT
/* The per-machine cache of `scalebpf calibrate` (calibrate.h): a text file
 * of "key value" lines, one "latency BYTES NS" line per point. */
#include "calibrate.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#define MAGIC "scalebpf-calibration 1"

/* The value of "key" in a /proc file of "key : value" lines. */
static void proc_field(const char *path, const char *key, char *out, size_t len)
{
	char line[512];
	FILE *f = fopen(path, "r");

	snprintf(out, len, "?");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':'), *v;

		if (!colon || strncmp(line, key, strlen(key)))
			continue;
		for (v = colon + 1; *v == ' ' || *v == '\t'; v++)
			;
		v[strcspn(v, "\n")] = 0;
		snprintf(out, len, "%s", v);
		break;
	}
	fclose(f);
}

void sb_calibrate_identity(char *buf, size_t len)
{
	char model[160], mem[48];
	struct utsname u;

	proc_field("/proc/cpuinfo", "model name", model, sizeof(model));
	proc_field("/proc/meminfo", "MemTotal", mem, sizeof(mem));
	if (uname(&u))
		snprintf(u.release, sizeof(u.release), "?");
	snprintf(buf, len, "%s; %ld CPUs; %s; Linux %s", model, sysconf(_SC_NPROCESSORS_ONLN),
		 mem, u.release);
}

int sb_calibrate_path(char *buf, size_t len)
{
	const char *v = getenv("SCALEBPF_CALIBRATION");

	if (v && *v) {
		snprintf(buf, len, "%s", v);
		return 0;
	}
	if ((v = getenv("XDG_CACHE_HOME")) && *v) {
		snprintf(buf, len, "%s/scalebpf/calibration", v);
		return 0;
	}
	if ((v = getenv("HOME")) && *v) {
		snprintf(buf, len, "%s/.cache/scalebpf/calibration", v);
		return 0;
	}
	return -ENOENT;
}

/* mkdir -p of path's directory. */
static int make_dirs(const char *path)
{
	char d[4096];

	snprintf(d, sizeof(d), "%s", path);
	for (char *p = d + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(d, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return 0;
}

int sb_calibrate_save(const struct sb_calibration *c, const char *path, char *err, size_t len)
{
	char tmp[4200];
	FILE *f;
	int ret, bad, fd;

	errno = 0;
	if ((ret = make_dirs(path))) {
		snprintf(err, len, "cannot make the directories of %s: %s", path, strerror(-ret));
		return ret;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", path);
	/* a fresh file of our own: never through a link someone placed */
	if ((fd = mkstemp(tmp)) < 0 || !(f = fdopen(fd, "w"))) {
		ret = -errno;
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		snprintf(err, len, "cannot write %s: %s", tmp, strerror(-ret));
		return ret;
	}
	fprintf(f, "%s\nmachine %s\nwhen %lld\nline %u\nllc_nominal %llu\nllc_shared_by %u\n"
		"llc_effective %llu\nllc_effective_shared_by %u\nshared_slowdown %.3f\n"
		"private_slowdown %.3f\ndram_latency_ns %.3f\nbandwidth_one %.0f\n"
		"bandwidth_all %.0f\nthreads_all %u\n", MAGIC, c->identity, (long long)c->when,
		c->line, (unsigned long long)c->llc_nominal, c->llc_shared_by,
		(unsigned long long)c->llc_effective, c->llc_effective_shared_by, c->shared_slowdown,
		c->private_slowdown, c->dram_latency_ns, c->bw_one, c->bw_all,
		c->threads_all);
	for (size_t i = 0; i < c->n; i++)
		fprintf(f, "latency %llu %.3f\n", (unsigned long long)c->ws[i], c->latency_ns[i]);
	bad = fflush(f) != 0;
	bad |= ferror(f) != 0;
	bad |= fclose(f) != 0;
	if (bad || rename(tmp, path)) {
		ret = errno ? -errno : -EIO;
		unlink(tmp);
		snprintf(err, len, "cannot write %s: %s", path, strerror(-ret));
		return ret;
	}
	return 0;
}

int sb_calibrate_load(struct sb_calibration *c, const char *path, char *err, size_t len)
{
	char line[512];
	unsigned ln = 0, have = 0;
	FILE *f = fopen(path, "r");

	memset(c, 0, sizeof(*c));
	if (!f) {
		snprintf(err, len, "no calibration at %s", path);
		return -ENOENT;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a;
		long long t;
		double x;
		int ok = 1;

		ln++;
		line[strcspn(line, "\n")] = 0;
		if (ln == 1)
			ok = !strcmp(line, MAGIC);
		else if (!strncmp(line, "machine ", 8))
			snprintf(c->identity, sizeof(c->identity), "%.255s", line + 8);
		else if (sscanf(line, "when %lld", &t) == 1)
			c->when = (time_t)t;
		else if (sscanf(line, "line %llu", &a) == 1)
			ok = (c->line = (uint32_t)a) >= 8 && a <= 4096;
		else if (sscanf(line, "llc_nominal %llu", &a) == 1)
			c->llc_nominal = a;
		else if (sscanf(line, "llc_shared_by %llu", &a) == 1)
			c->llc_shared_by = (unsigned)a;
		else if (sscanf(line, "llc_effective_shared_by %llu", &a) == 1)
			c->llc_effective_shared_by = (unsigned)a;
		else if (sscanf(line, "shared_slowdown %lf", &x) == 1)
			c->shared_slowdown = x;
		else if (sscanf(line, "private_slowdown %lf", &x) == 1)
			c->private_slowdown = x;
		else if (sscanf(line, "llc_effective %llu", &a) == 1)
			c->llc_effective = a, have |= 1;
		else if (sscanf(line, "dram_latency_ns %lf", &x) == 1)
			ok = (c->dram_latency_ns = x) > 0, have |= 2;
		else if (sscanf(line, "bandwidth_one %lf", &x) == 1)
			ok = (c->bw_one = x) > 0;
		else if (sscanf(line, "bandwidth_all %lf", &x) == 1)
			ok = (c->bw_all = x) > 0, have |= 4;
		else if (sscanf(line, "threads_all %llu", &a) == 1)
			c->threads_all = (unsigned)a;
		else if (sscanf(line, "latency %llu %lf", &a, &x) == 2)
			ok = c->n < SB_CAL_MAX_SIZES && x > 0 &&
			     (c->ws[c->n] = a, c->latency_ns[c->n++] = x, 1);
		else
			ok = 0;
		if (!ok) {
			fclose(f);
			snprintf(err, len, "%s:%u: not a calibration line: %.80s", path, ln, line);
			return -EINVAL;
		}
	}
	fclose(f);
	if (have != 7 || !c->line || c->n < 3) {
		snprintf(err, len, "%s: incomplete calibration (run scalebpf calibrate --force)",
			 path);
		return -EINVAL;
	}
	return 0;
}

double sb_calibrate_llc_latency(const struct sb_calibration *c)
{
	double lat = 0;

	for (size_t i = 0; i < c->n; i++)
		if (c->ws[i] <= c->llc_effective / 2)
			lat = c->latency_ns[i];
	return lat;
}

int sb_calibrate_cached(struct sb_calibration *c, char *why, size_t len)
{
	char path[4096], id[256];
	int ret;

	if (sb_calibrate_path(path, sizeof(path))) {
		snprintf(why, len, "no calibration: HOME is not set");
		return -ENOENT;
	}
	if ((ret = sb_calibrate_load(c, path, why, len)))
		return ret;
	sb_calibrate_identity(id, sizeof(id));
	if (strcmp(id, c->identity)) {
		snprintf(why, len, "the calibration at %s is of another machine (%.80s)", path,
			 c->identity);
		return -ESTALE;
	}
	return 0;
}
