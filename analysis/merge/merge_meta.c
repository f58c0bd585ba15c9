// SPDX-License-Identifier: MIT
/*
 * Merging metadata (merge.h).  A key is one of:
 *   SUM   a count over the recording (drops, records, samples, instances,
 *         the duration): the inputs' values add;
 *   MIN   where the recording began (start_ns, start_realtime, the first
 *         verdict's time);
 *   MAX   a maximum (a key with "_max"), a rotation's interval number
 *         and counts so far ("rotate_");
 *   NOTES free text: each input's notes, once;
 *   DERIVED a figure of one interval's counts (a mean, a rate, a
 *         histogram: "_mean", "_per_", "_hist"; why it stopped, its
 *         process lines): the newest input's, as every interval has its
 *         own;
 *   LAST  a setting (the pid, the command, the sampling path): the
 *         newest input's; one whose value differs between inputs is named
 *         in merge_differing, so no one mistakes it for the whole's.
 * A SUM, MIN or MAX key whose value is not a number is a LAST one.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "merge_priv.h"

enum rule { LAST, SUM, MIN, MAX, NOTES, DERIVED };

static bool has_prefix(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

static bool has_suffix(const char *s, const char *x)
{
	size_t n = strlen(s), k = strlen(x);

	return n >= k && !strcmp(s + n - k, x);
}

static enum rule rule_of(const char *key)
{
	static const char *const sums[] = {
		"duration_ns", "records", "bad_records", "samples", "futex_waits",
		"switches_unseen", "probe_returns_unpaired", "waits_unattributed", "instances",
		"events_unmatched", "events_late", "tids_reused", "thread_exits_unjoined",
		"threads_unlisted", "threads_untimed", "recorder_cpu_ns", "follow_stops",
		"follow_stop_ns_total", "follow_attach_errors", "follow_full", "dlopen_events",
		"probes_late", "records_unrouted", "sites_trampoline_lost", "sample_keys",
		"sample_keys_unmapped", "cfg_cache_hits", "unwind_samples", "chip_batches",
		"threads_evicted",
	};
	static const char *const sum_prefixes[] = {
		"drops_", "instances_", "barrier_departs_", "samples_", "addr_", "unwind_stop_",
		"unwind_stack_", "coherence_sampled_", "exact_",
	};
	static const char *const lasts[] = {
		"addr_capacity", "coherence_sampled_path", "coherence_sampled_slots",
		"coherence_sampled_arm_error",
	};

	if (!strcmp(key, "notes"))
		return NOTES;
	if (!strcmp(key, "start_ns") || !strcmp(key, "start_realtime") ||
	    has_suffix(key, "_first_verdict_ms"))
		return MIN;
	if (strstr(key, "_max") || !strncmp(key, "rotate_", 7))
		return MAX;   /* a rotation's counts so far and interval number too */
	for (size_t i = 0; i < sizeof(lasts) / sizeof(lasts[0]); i++)
		if (!strcmp(key, lasts[i]))
			return LAST;
	if (strstr(key, "_mean") || strstr(key, "_per_") || strstr(key, "_hist"))
		return DERIVED;
	/* an interval's own account: why it ended, its processes' lines */
	if (!strcmp(key, "stop_reason") || !strcmp(key, "processes") ||
	    !strcmp(key, "cfg_binaries"))
		return DERIVED;
	for (size_t i = 0; i < sizeof(sums) / sizeof(sums[0]); i++)
		if (!strcmp(key, sums[i]))
			return SUM;
	for (size_t i = 0; i < sizeof(sum_prefixes) / sizeof(sum_prefixes[0]); i++)
		if (has_prefix(key, sum_prefixes[i]))
			return SUM;
	return LAST;
}

bool sb_merge_meta_adds(const char *key)
{
	return rule_of(key) == SUM;
}

/* A decimal count as sb_profile_meta_set_u64 writes it. */
static bool number(const char *s, uint64_t *v)
{
	char *end;

	if (!s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return !*end && !errno;
}

/* Appends key to m->differing once. */
static int differs(struct sb_merge *m, const char *key)
{
	size_t n = m->differing ? strlen(m->differing) : 0, k = strlen(key);
	char *d;

	for (const char *s = m->differing; s && (s = strstr(s, key)); s += k)
		if ((s == m->differing || s[-1] == ',') && (s[k] == ',' || !s[k]))
			return 0;
	if (!(d = realloc(m->differing, n + k + 2)))
		return SB_ERR_NOMEM;
	snprintf(d + n, k + 2, "%s%s", n ? "," : "", key);
	m->differing = d;
	return 0;
}

/* Notes are "; "-separated: each of src's not yet in old, after them. */
static int notes_add(struct sb_profile *p, const char *old, const char *add)
{
	size_t cap = strlen(old) + strlen(add) + 3;
	char *out = malloc(cap), *copy = strdup(add), *save = NULL;
	int ret = 0;

	if (!out || !copy) {
		free(out);
		free(copy);
		return SB_ERR_NOMEM;
	}
	snprintf(out, cap, "%s", old);
	for (char *t = strtok_r(copy, ";", &save); t; t = strtok_r(NULL, ";", &save)) {
		while (*t == ' ')
			t++;
		if (!*t || strstr(out, t))
			continue;
		size_t n = strlen(out);

		snprintf(out + n, cap - n, "%s%s", n ? "; " : "", t);
	}
	if (sb_profile_meta_set(p, "notes", out) < 0)
		ret = SB_ERR_NOMEM;
	free(out);
	free(copy);
	return ret;
}

int sb_merge_meta(struct sb_merge *m, const struct sb_profile *src)
{
	struct sb_profile *p = m->p;

	for (size_t i = 0; i < src->nmeta; i++) {
		const char *key = src->meta[i].key, *val = src->meta[i].value;
		const char *old = sb_profile_meta_get(p, key);
		enum rule r = rule_of(key);
		uint64_t a, b;
		int ret = 0;

		if (!val)
			continue;
		if (!old) {
			if (sb_profile_meta_set(p, key, val) < 0)
				return SB_ERR_NOMEM;
			continue;
		}
		if (r == NOTES) {
			ret = notes_add(p, old, val);
		} else if (r != LAST && number(old, &a) && number(val, &b)) {
			uint64_t v = r == SUM ? (a + b < a ? UINT64_MAX : a + b)
				     : r == MIN ? (a < b ? a : b) : (a > b ? a : b);

			ret = sb_profile_meta_set_u64(p, key, v) < 0 ? SB_ERR_NOMEM : 0;
		} else if (r == DERIVED) {
			ret = sb_profile_meta_set(p, key, val) < 0 ? SB_ERR_NOMEM : 0;
		} else if (strcmp(old, val)) {
			ret = differs(m, key);
			if (!ret && sb_profile_meta_set(p, key, val) < 0)
				ret = SB_ERR_NOMEM;
		}
		if (ret)
			return ret;
	}
	return 0;
}
