// SPDX-License-Identifier: MIT
/* The profiled-thread framework's stats file (profiled.h): key=value
 * lines, written by the preloaded library at the program's exit and read
 * by `scalebpf stack`. */
#include "profiled.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int sb_profiled_stats_write(const struct sb_profiled_stats *s, const char *path)
{
	char tmp[4096];
	FILE *f;
	int bad;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp))
		return -ENAMETOOLONG;
	if (!(f = fopen(tmp, "w")))
		return -errno;
	fprintf(f, "tids=");
	for (uint32_t i = 0; i < s->ntids; i++)
		fprintf(f, "%s%d", i ? "," : "", s->tids[i]);
	fprintf(f, "\ntids_dropped=%" PRIu64 "\nturns=%" PRIu64 "\nalone_ns=%" PRIu64
		"\nmain_overlap=%" PRIu64 "\nabandoned=%d\nwhy=%s\npirate=%d\n",
		s->tids_dropped, s->turns, s->alone_ns, s->main_overlap, s->abandoned, s->why,
		s->pirate);
	for (uint32_t i = 0; i < s->nsites; i++)
		fprintf(f, "site=%" PRIx64 " %" PRIu64 " %" PRIu64 " %s\n", s->sites[i].vaddr,
			s->sites[i].busy_ns, s->sites[i].count, s->sites[i].binary);
	fprintf(f, "sites_dropped=%" PRIu64 "\n", s->sites_dropped);
	fprintf(f, "pirate_bytes=%" PRIu64 "\npirate_cpu=%d\npirate_counted=%d\n"
		"pirate_intervals=%" PRIu64 "\npirate_intervals_held=%" PRIu64
		"\npirate_loads=%" PRIu64 "\npirate_load_ns=%.3f\npirate_fetch_mean=%.6f"
		"\npirate_fetch_max=%.6f\npirate_warmups=%" PRIu64 "\n",
		s->ps.bytes, s->ps.cpu, s->ps.counted, s->ps.intervals, s->ps.intervals_held,
		s->ps.loads, s->ps.load_ns, s->ps.fetch_mean, s->ps.fetch_max, s->ps.warmups);
	bad = ferror(f);
	if (fclose(f) || bad || rename(tmp, path)) {
		int e = errno ? errno : EIO;

		unlink(tmp);
		return -e;
	}
	return 0;
}

static int u64(const char *v, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(v, &end, 10);
	return errno || end == v || *end || *v == '-' ? -EINVAL : 0;
}

static int i32(const char *v, int lo, int hi, int *out)
{
	char *end;
	long x;

	errno = 0;
	x = strtol(v, &end, 10);
	if (errno || end == v || *end || x < lo || x > hi)
		return -EINVAL;
	*out = (int)x;
	return 0;
}

static int dbl(const char *v, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(v, &end);
	return errno || end == v || *end || *out != *out ? -EINVAL : 0;
}

static int tids(const char *v, struct sb_profiled_stats *s)
{
	while (*v) {
		char *end;
		long t;

		errno = 0;
		t = strtol(v, &end, 10);
		if (errno || end == v || t <= 0 || t > INT32_MAX || (*end && *end != ','))
			return -EINVAL;
		if (s->ntids == SB_PROFILED_MAX_TIDS)
			return -EINVAL;
		s->tids[s->ntids++] = (int32_t)t;
		v = *end ? end + 1 : end;
	}
	return 0;
}

/* "vaddr(hex) busy count binary" */
static int site(const char *v, struct sb_profiled_stats *s)
{
	struct sb_profiled_site *x;
	char *end;

	if (s->nsites == SB_PROFILED_MAX_SITES)
		return -EINVAL;
	x = &s->sites[s->nsites];
	errno = 0;
	x->vaddr = strtoull(v, &end, 16);
	if (errno || end == v || *end != ' ')
		return -EINVAL;
	x->busy_ns = strtoull(v = end + 1, &end, 10);
	if (errno || end == v || *end != ' ')
		return -EINVAL;
	x->count = strtoull(v = end + 1, &end, 10);
	if (errno || end == v || *end != ' ' || !end[1] ||
	    strlen(end + 1) >= sizeof(x->binary))
		return -EINVAL;
	snprintf(x->binary, sizeof(x->binary), "%s", end + 1);
	s->nsites++;
	return 0;
}

static int field(struct sb_profiled_stats *s, const char *k, const char *v)
{
	if (!strcmp(k, "site"))
		return site(v, s);
	if (!strcmp(k, "sites_dropped"))
		return u64(v, &s->sites_dropped);
	if (!strcmp(k, "tids"))
		return tids(v, s);
	if (!strcmp(k, "why")) {
		snprintf(s->why, sizeof(s->why), "%s", v);
		return 0;
	}
	if (!strcmp(k, "tids_dropped"))
		return u64(v, &s->tids_dropped);
	if (!strcmp(k, "turns"))
		return u64(v, &s->turns);
	if (!strcmp(k, "alone_ns"))
		return u64(v, &s->alone_ns);
	if (!strcmp(k, "main_overlap"))
		return u64(v, &s->main_overlap);
	if (!strcmp(k, "abandoned"))
		return i32(v, 0, 1, &s->abandoned);
	if (!strcmp(k, "pirate"))
		return i32(v, 0, 1, &s->pirate);
	if (!strcmp(k, "pirate_bytes"))
		return u64(v, &s->ps.bytes);
	if (!strcmp(k, "pirate_cpu"))
		return i32(v, -1, 1 << 20, &s->ps.cpu);
	if (!strcmp(k, "pirate_counted"))
		return i32(v, 0, 1, &s->ps.counted);
	if (!strcmp(k, "pirate_intervals"))
		return u64(v, &s->ps.intervals);
	if (!strcmp(k, "pirate_intervals_held"))
		return u64(v, &s->ps.intervals_held);
	if (!strcmp(k, "pirate_loads"))
		return u64(v, &s->ps.loads);
	if (!strcmp(k, "pirate_warmups"))
		return u64(v, &s->ps.warmups);
	if (!strcmp(k, "pirate_load_ns"))
		return dbl(v, &s->ps.load_ns);
	if (!strcmp(k, "pirate_fetch_mean"))
		return dbl(v, &s->ps.fetch_mean) || s->ps.fetch_mean > 1 ? -EINVAL : 0;
	if (!strcmp(k, "pirate_fetch_max"))
		return dbl(v, &s->ps.fetch_max) || s->ps.fetch_max > 1 ? -EINVAL : 0;
	return 1;   /* unknown: a newer writer's; skipped */
}

int sb_profiled_stats_read(struct sb_profiled_stats *s, const char *path, char *err,
			   size_t len)
{
	char line[1024];
	unsigned n = 0;
	FILE *f;
	int r = 0;

	memset(s, 0, sizeof(*s));
	s->ps.fetch_mean = -1;
	if (!(f = fopen(path, "r"))) {
		r = -errno;
		snprintf(err, len, "%s: %s", path, strerror(errno));
		return r;
	}
	while (fgets(line, sizeof(line), f)) {
		char *eq = strchr(line, '=');
		size_t l = strlen(line);

		n++;
		if (l && line[l - 1] == '\n')
			line[--l] = 0;
		if (!eq || field(s, (*eq = 0, line), eq + 1) < 0) {
			snprintf(err, len, "%s: line %u is not key=value of a known form", path, n);
			r = -EINVAL;
			break;
		}
	}
	fclose(f);
	return r;
}
