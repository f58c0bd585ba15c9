// SPDX-License-Identifier: MIT
/*
 * The end of a recording that followed processes (follow.h): which image
 * the profile is made of, and what the profile says about the others.
 */
#include "follow.h"

#include <stdio.h>
#include <string.h>

#include "profile/profile.h"
#include "record_bpf.h"
#include "record_session.h"
#include "util/idmap.h"

uint64_t sb_follow_oncpu(struct sb_rec *r, struct sb_proc *p)
{
	uint64_t sum = 0;
	size_t it = 0;
	void *v;

	while (sb_idmap_next(p->threads, &it, NULL, NULL, &v)) {
		const struct sb_thread *t = v;
		uint64_t on = t->oncpu_ns;

		if (!t->end_ns)
			sb_bpf_thread_oncpu(r->bpf, t->tid, r->end_ns, &on);
		sum += on;
	}
	return sum;
}

struct sb_proc *sb_follow_choose(struct sb_rec *r)
{
	struct sb_proc *best = NULL;
	uint64_t best_inst = 0, best_cpu = 0;

	for (size_t i = 0; i < r->fw.nprocs; i++) {
		struct sb_proc *p = r->fw.procs[i];
		struct sb_builder_stats st;
		uint64_t cpu = sb_follow_oncpu(r, p);

		sb_builder_get_stats(p->builder, &st);
		if (!best || st.instances > best_inst ||
		    (st.instances == best_inst && cpu > best_cpu)) {
			best = p;
			best_inst = st.instances;
			best_cpu = cpu;
		}
	}
	return best;
}

void sb_follow_meta(struct sb_rec *r, struct sb_profile *prof, struct sb_proc *chosen)
{
	char buf[4096], nf[sizeof(r->fw.not_followed) + 32];
	size_t len = 0, i;

	buf[0] = 0;
	for (i = 0; i < r->fw.nprocs && len + 200 < sizeof(buf); i++) {
		struct sb_proc *p = r->fw.procs[i];
		struct sb_builder_stats st;

		sb_builder_get_stats(p->builder, &st);
		len += (size_t)snprintf(buf + len, sizeof(buf) - len,
					"%s%d %s (%s; on-CPU %.1f ms; %llu instances; %zu probes)%s",
					i ? "; " : "", p->pid, p->exe,
					p->gen ? "exec'd" : p->parent ? "forked" : "started",
					(double)sb_follow_oncpu(r, p) / 1e6,
					(unsigned long long)st.instances, p->nprobes,
					p == chosen ? " [profile]" : "");
		if (len >= sizeof(buf))   /* a long path: cut there */
			len = sizeof(buf) - 1;
	}
	/* The rest are counted, never silently left out. */
	if (i < r->fw.nprocs)
		snprintf(buf + len, sizeof(buf) - len, "; +%zu more", r->fw.nprocs - i);
	sb_profile_meta_set(prof, "processes", buf);
	sb_profile_meta_set_u64(prof, "processes_followed", r->fw.nprocs + r->fw.reclaimed);
	/* Dropped at the limit of images: ended without a section. */
	sb_profile_meta_set_u64(prof, "processes_unlisted", r->fw.reclaimed);
	sb_profile_meta_set(prof, "follow", r->follow ? (r->spawned ?
			    "on (exec, fork, dlopen; stopped until probed)" :
			    "on (exec, fork, dlopen; probes attached asynchronously)") :
			    r->follow_image ? "exec and dlopen (probes attached asynchronously); "
			    "forks not followed (--follow)" : "off");
	snprintf(nf, sizeof(nf), "%s", r->fw.not_followed);
	if (r->fw.not_listed)
		snprintf(nf + strlen(nf), sizeof(nf) - strlen(nf), ", +%llu more",
			 (unsigned long long)r->fw.not_listed);
	sb_profile_meta_set(prof, "not_followed", nf);
	sb_profile_meta_set_u64(prof, "processes_not_followed", r->fw.nnot_followed);
	sb_profile_meta_set_u64(prof, "follow_stops", r->fw.stops);
	sb_profile_meta_set_u64(prof, "follow_stop_ns_max", r->fw.stop_ns_max);
	sb_profile_meta_set_u64(prof, "follow_stop_ns_total", r->fw.stop_ns_total);
	sb_profile_meta_set_u64(prof, "follow_async_delay_ns_max", r->fw.async_delay_max_ns);
	sb_profile_meta_set_u64(prof, "follow_attach_errors", r->fw.attach_errors);
	sb_profile_meta_set_u64(prof, "dlopen_events", r->fw.dlopen_events);
	sb_profile_meta_set_u64(prof, "dlopen_libraries", r->fw.dlopen_libs);
	sb_profile_meta_set(prof, "libraries_late", r->fw.late_libs);
	sb_profile_meta_set_u64(prof, "probes_late", r->fw.late_probes);
	sb_profile_meta_set_u64(prof, "records_unrouted", r->fw.unrouted);
}
