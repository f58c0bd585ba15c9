// SPDX-License-Identifier: MIT
/* The end of a recording: a self-describing, self-contained profile. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "addr_sampler.h"
#include "stacks.h"
#include "util/idmap.h"
#include "profile/profile.h"
#include "record_bpf.h"
#include "record_chip.h"
#include "record_session.h"
#include "rec_timing.h"
#include "eventmap.h"
#include "hw/hwagg.h"
#include "hw/hwsession.h"
#include "binary/symbolize.h"
#include "record_sharing.h"
#include "sections/sections.h"

static void cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];

	snprintf(buf, len, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (strncmp(line, "model name", 10) || !colon)
			continue;
		snprintf(buf, len, "%s", colon + 2);
		buf[strcspn(buf, "\n")] = 0;
		break;
	}
	fclose(f);
}

/* PMU presence decides the event path later analyses can take. */
static const char *pmu_state(void)
{
	if (!access("/sys/bus/event_source/devices/cpu", F_OK) ||
	    !access("/sys/bus/event_source/devices/cpu_core", F_OK))
		return "present";
	return "none (software events only)";
}

static void add_meta(struct sb_rec *r, struct sb_profile *p, const uint64_t *c)
{
	struct sb_builder_stats st;
	struct utsname u;
	char buf[4096];
	size_t len = 0;
	uint64_t hw_drops;

	sb_builder_get_stats(r->builder, &st);
	sb_profile_meta_set(p, "tool", "scalebpf " SB_VERSION);
	if (!uname(&u)) {
		snprintf(buf, sizeof(buf), "%s %s %s", u.sysname, u.release, u.machine);
		sb_profile_meta_set(p, "kernel", buf);
		sb_profile_meta_set(p, "hostname", u.nodename);
	}
	cpu_model(buf, sizeof(buf));
	sb_profile_meta_set(p, "cpu", buf);
	sb_profile_meta_set_u64(p, "ncpus", (uint64_t)sysconf(_SC_NPROCESSORS_ONLN));
	sb_profile_meta_set(p, "pmu", pmu_state());
	buf[0] = 0;
	if (r->spawned)
		for (int i = 0; i < r->ncmd && len < sizeof(buf) - 2; i++)
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s",
						i ? " " : "", r->cmd[i]);
	sb_profile_meta_set(p, "command", r->spawned ? buf : "");
	/* The process image the profile is made of (follow.c). */
	sb_profile_meta_set(p, "executable", r->fw.cur->exe);
	sb_profile_meta_set(p, "attach", r->spawned ? "spawned" : "pid");
	sb_profile_meta_set_u64(p, "pid", (uint64_t)r->fw.cur->pid);
	sb_follow_meta(r, p, r->fw.cur);
	sb_profile_meta_set_u64(p, "start_realtime", (uint64_t)r->start_realtime);
	sb_profile_meta_set_u64(p, "start_ns", r->start_ns);
	sb_profile_meta_set_u64(p, "duration_ns", r->end_ns - r->start_ns);
	sb_profile_meta_set(p, "stop_reason", r->stop_reason ? r->stop_reason : "");
	size_t entry_only = 0;

	for (size_t i = 0; i < r->plan.n; i++)
		entry_only += r->plan.probes[i].role == SB_ROLE_EXACT ||
			      r->plan.probes[i].role == SB_ROLE_CHIP ||
		       r->plan.probes[i].role == SB_ROLE_COND_BROADCAST ||
		       (r->plan.probes[i].cookie_flags & SB_COOKIE_DEPART);
	/* The profile's image's probes (follow.c); the plan holds all images'. */
	snprintf(buf, sizeof(buf), "uprobes: %zu functions (entry+return%s%.0zu%s); "
		 "tracepoints: sched_switch, sys_enter/sys_exit (futex waits), task_newtask, "
		 "sched_process_exit, sched_process_exec; cpu-clock sampling: %u Hz "
		 "(per-thread IP samples, spin waits)", r->fw.cur->nprobes,
		 entry_only ? "; " : "", entry_only, entry_only ? " entry only" : "",
		 r->sample_hz);
	sb_profile_meta_set(p, "event_sources", buf);
	len = 0;
	buf[0] = 0;
	for (size_t i = 0; i < r->plan.n && len < sizeof(buf) - 1; i++) {
		const struct sb_probe *pr = &r->plan.probes[i];
		const char *base = strrchr(pr->binary, '/');

		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s:%s+%llu%s",
					i ? "," : "", base ? base + 1 : pr->binary, pr->func,
					(unsigned long long)(pr->site_vaddr - pr->func_vaddr),
					pr->emulated ? "" : "(single-step)");
	}
	sb_profile_meta_set(p, "probes", buf);
	sb_profile_meta_set(p, "uprobe_links", sb_bpf_uprobe_links(r->bpf));
	sb_profile_meta_set_u64(p, "drops_probe", c[SB_CNT_DROP_PROBE]);
	sb_profile_meta_set_u64(p, "drops_wait", c[SB_CNT_DROP_WAIT]);
	sb_profile_meta_set_u64(p, "drops_thread", c[SB_CNT_DROP_THREAD]);
	sb_profile_meta_set_u64(p, "drops_sample", c[SB_CNT_DROP_SAMPLE]);
	sb_profile_meta_set_u64(p, "drops_proc", c[SB_CNT_DROP_PROC]);
	/* watchpoint hits of sampled sharing (record_watch.h) */
	sb_profile_meta_set_u64(p, "drops_watch", c[SB_CNT_DROP_WATCH]);
	sb_profile_meta_set_u64(p, "follow_full", c[SB_CNT_FOLLOW_FULL]);
	/* Exact mode: a `scalebpf cc` program's per-thread block counts. */
	sb_profile_meta_set(p, "block_counts", r->plan.exact ?
			    "exact (scalebpf cc: every block counted per thread)" :
			    "sampled (cpu-clock samples per block measure time)");
	if (r->plan.exact) {
		sb_profile_meta_set_u64(p, "drops_exact", c[SB_CNT_DROP_EXACT]);
		sb_profile_meta_set_u64(p, "exact_faults", c[SB_CNT_EXACT_FAULT]);
		sb_profile_meta_set_u64(p, "exact_batches", r->exact_batches);
		sb_profile_meta_set_u64(p, "exact_counts", r->exact_counts);
		sb_profile_meta_set_u64(p, "exact_counts_unplaced", st.counts_unplaced);
	}
	if (r->plan.trace_mem) {
		const char *dir = getenv("SCALEBPF_TRACE_DIR");

		if (r->spawned && dir)
			sb_profile_meta_set(p, "mem_traces", dir);
		else   /* attached: the program chose, see its environment */
			sb_profile_meta_set(p, "mem_traces", "SCALEBPF_TRACE_DIR of the target, "
					    "or scalebpf-trace.PID in its working directory");
	}
	sb_profile_meta_set_u64(p, "threads_untimed", c[SB_CNT_STATE_FULL]);
	sb_profile_meta_set_u64(p, "sites_trampoline_lost", c[SB_CNT_TRAMPOLINE_LOST]);
	sb_profile_meta_set_u64(p, "samples", c[SB_CNT_SAMPLES]);
	sb_rec_duty_meta(r, p);
	sb_profile_meta_set_u64(p, "futex_waits", c[SB_CNT_FUTEX_WAITS]);
	/* pthread_barrier_wait without a uretprobe (SB_COOKIE_DEPART):
	 * where its departures were found. */
	sb_profile_meta_set_u64(p, "barrier_departs_futex", c[SB_CNT_DEPART_FUTEX]);
	sb_profile_meta_set_u64(p, "barrier_departs_later", c[SB_CNT_DEPART_LATER]);
	sb_profile_meta_set_u64(p, "switches_unseen", c[SB_CNT_SWITCH_UNSEEN]);
	/* calls made while their probes went in: their returns are left out */
	sb_profile_meta_set_u64(p, "probe_returns_unpaired", c[SB_CNT_RET_UNPAIRED]);
	sb_profile_meta_set_u64(p, "records", r->records);
	sb_profile_meta_set_u64(p, "bad_records", r->recs.bad_records);
	sb_profile_meta_set_u64(p, "waits_unattributed", r->recs.unattributed);

	sb_profile_meta_set_u64(p, "instances", st.instances);
	sb_profile_meta_set_u64(p, "instances_stored", st.stored_instances);
	sb_profile_meta_set_u64(p, "instances_partial", st.partial_instances);
	sb_profile_meta_set_u64(p, "instances_unfinished", st.unfinished_instances);
	sb_profile_meta_set_u64(p, "events_unmatched", st.unmatched);
	sb_profile_meta_set_u64(p, "events_late", st.late_events);
	/* Thread churn (issue 10): tids handed out again are threads of
	 * their own; exits that join nothing and table entries lost, said. */
	sb_profile_meta_set_u64(p, "tids_reused", st.tids_reused);
	sb_profile_meta_set_u64(p, "thread_exits_unjoined", st.exits_unjoined);
	/* --rotate: ended threads the section builder let go at the boundary */
	sb_profile_meta_set_u64(p, "threads_evicted", st.threads_evicted);
	sb_profile_meta_set_u64(p, "threads_unlisted", r->recs.threads_unlisted);
	sb_profile_meta_set(p, "notes", r->notes);
	hw_drops = sb_hwsession_meta(r->hw, p);   /* sampling path, hardware counters */
	if (hw_drops)
		fprintf(stderr, "scalebpf: warning: %llu hardware samples were dropped (ring "
			"buffer full): raise --ringbuf-mb or lower -F\n",
			(unsigned long long)hw_drops);
}

static int add_threads(struct sb_rec *r, struct sb_profile *p)
{
	size_t it = 0;
	void *v;

	while (sb_idmap_next(r->threads, &it, NULL, NULL, &v)) {
		struct sb_thread t = *(struct sb_thread *)v;

		if (!t.end_ns) {   /* alive at the end */
			t.end_ns = r->end_ns;
			sb_bpf_thread_oncpu(r->bpf, t.tid, r->end_ns, &t.oncpu_ns);
		}
		if (sb_profile_add_thread(p, &t) < 0)
			return -1;
	}
	return 0;
}

static void name_sites(struct sb_sect_table *t, size_t from, size_t to,
		       struct sb_symbolizer *sym)
{
	for (size_t i = from; i < to; i++)
		t->locs[i] = (int32_t)sb_symbolizer_loc(sym, t->sites[i]);
}

/*
 * The events of the counter keys, in the table's order: edge and load
 * keys (LBR, PEBS) through hwagg.c, the others through the eventmap,
 * which first decodes all of its keys binary by binary.  0 or -ENOMEM.
 */
static int name_keys(struct sb_rec *r, struct sb_profile *p, struct sb_symbolizer *sym,
		     struct sb_eventmap *em, struct sb_sect_table *t)
{
	struct sb_hwagg *agg = sb_hwsession_agg(r->hw);
	uint64_t *rest = malloc((t->nkeys ? t->nkeys : 1) * sizeof(*rest));
	size_t nrest = 0;
	int ret = -ENOMEM;

	if (!rest)
		return ret;
	for (size_t i = 0; i < t->nkeys; i++)   /* the eventmap's keys, decoded first */
		if (!(agg && sb_hwagg_is_key(t->keys[i].key)))
			rest[nrest++] = t->keys[i].key;
	if (sb_eventmap_prepare(em, rest, nrest))
		goto out;
	for (size_t i = 0; i < t->nkeys; i++) {
		struct sb_sect_key *k = &t->keys[i];

		k->event = (int32_t)(agg && sb_hwagg_is_key(k->key) ?
			sb_hwagg_event(agg, r->maps, p, sb_symbolizer_loc, sym, k->key,
				       k->instances) :
			sb_eventmap_block(em, k->key, k->weight));
	}
	ret = 0;
out:
	free(rest);
	return ret;
}

/* The builder's sections, instances, vectors and waits: their call sites
 * and counter keys named in the builder's first-seen order (the order
 * the profile's locations and events follow), then written. */
static int add_sections(struct sb_rec *r, struct sb_profile *p, struct sb_symbolizer *sym,
			struct sb_eventmap *em)
{
	struct sb_sect_table t;
	int ret = -1;

	sb_tm_mark("write: section keys");
	if (sb_builder_keys(r->builder, &t))
		goto out;
	sb_tm_mark("write: name section sites");
	name_sites(&t, 0, t.nsection_sites, sym);
	sb_tm_mark("write: name counter keys");
	if (name_keys(r, p, sym, em, &t))
		goto out;
	sb_tm_mark("write: name wait sites");
	name_sites(&t, t.nsection_sites, t.nsites, sym);
	sb_tm_mark("write: emit sections");
	if (sb_builder_emit(r->builder, p, &t))
		goto out;
	ret = 0;
out:
	sb_sect_table_free(&t);
	return ret;
}

static void add_note(struct sb_rec *r, const char *fmt, const char *a, const char *b)
{
	size_t len = strlen(r->notes);

	snprintf(r->notes + len, sizeof(r->notes) - len, "%s", len ? "; " : "");
	len = strlen(r->notes);
	snprintf(r->notes + len, sizeof(r->notes) - len, fmt, a, b);
}

/*
 * The notes of the profile's image first (what planning its probes
 * found), then what following left out: the user must not be told to
 * name a barrier when the work ran in a process that was not followed.
 */
static void follow_notes(struct sb_rec *r)
{
	char keep[sizeof(r->notes)];
	struct sb_proc *p = r->fw.cur;

	snprintf(keep, sizeof(keep), "%s", r->notes);
	snprintf(r->notes, sizeof(r->notes), "%s", p->notes);
	if (*keep)
		add_note(r, "%s%s", keep, "");
	if (p->nprobes == 0 && r->spawned && r->follow)
		add_note(r, "warning: no synchronization functions found to probe in %s or its "
			 "libraries%s: only waits and threads were recorded", p->exe,
			 r->fw.nprocs > 1 ? " (the process that did the most work)" : "");
	if (*r->fw.not_followed)
		add_note(r, "processes not followed: %s%s", r->fw.not_followed,
			 r->follow ? "" : " (record with --follow)");
}

/* --barrier names looked up in every image followed (probes.h, lenient):
 * one that none had is the error it is without following, once the
 * profile is written.  Returns 1 then (the exit code). */
static int barriers_missing(struct sb_rec *r)
{
	int ret = 0;

	for (size_t i = 0; r->plan.lenient && i < r->nbarriers && i < 32; i++)
		if (!(r->plan.barriers_found & (1u << i)))
			ret = sb_rec_fail(r, "--barrier %s: %s in any process followed",
					  r->barriers[i], sb_barrier_is_site(r->barriers[i]) ?
					  "no pthread_cond_wait call and no call of a function "
					  "of the program there" : "no such function");
	for (size_t i = 0; r->plan.lenient && i < r->nregions; i++)
		if (!(r->plan.regions_found & (1u << i)))
			ret = sb_rec_fail(r, "--region %s: no such function in any process "
					  "followed", r->region_funcs[i]);
	return ret;
}

/*
 * One profile of the current image (r->builder's result) to path.  An
 * interval of a rotation (record_rotate.c) has its sections, waits and
 * counts; the whole-run parts -- CHiP, sharing, sampled addresses, call
 * chains -- go with the last profile only, so that the intervals added
 * up count them once.
 */
static int write_profile(struct sb_rec *r, const char *path, bool interval)
{
	struct sb_profile *p = sb_profile_alloc();
	struct sb_symbolizer *sym = NULL;
	struct sb_eventmap *em = NULL;
	struct sb_eventmap_stats est;
	uint64_t c[SB_CNT_MAX];
	char err[512];
	int ret = 1;

	if (!p)
		return sb_rec_fail(r, "out of memory");
	sb_bpf_read_counters(r->bpf, c);
	sym = sb_symbolizer_alloc(r->maps, p);
	em = sym ? sb_eventmap_alloc(r->maps, sym, p) : NULL;
	if (!em || add_threads(r, p) ||
	    /* before the sections go out: their totals, same indices */
	    (!interval && sb_rec_chip_rows(r, p, p->nsections, c)) ||
	    add_sections(r, p, sym, em) ||
	    (!interval && sb_rec_chip_region_rows(r, p)) ||
	    (sb_tm_mark("write: finish the eventmap"), 0) ||
	    /* the eventmap tells the program's binary from libraries by it */
	    sb_profile_meta_set(p, "executable", r->fw.cur->exe) < 0 ||
	    sb_eventmap_finish(em) ||
	    (sb_tm_mark("write: addresses, notes"), 0) ||
	    (!interval && sb_addr_sampler_store(r->addrs, p, sb_symbolizer_loc, sym))) {
		sb_rec_fail(r, "out of memory while writing the profile");
		goto out;
	}
	sb_eventmap_get_stats(em, &est);
	/* How many samples' accesses can be decoded to an address (issue 3). */
	sb_profile_meta_set_u64(p, "samples_memory_access", est.samples_access);
	sb_profile_meta_set_u64(p, "samples_no_memory_access", est.samples_none);
	sb_profile_meta_set_u64(p, "samples_undecodable", est.samples_undecodable);
	sb_profile_meta_set_u64(p, "samples_skid_corrected", est.samples_skid);
	sb_profile_meta_set_u64(p, "sample_keys", est.keys);
	sb_profile_meta_set_u64(p, "sample_keys_unmapped", est.unmapped);
	if (r->plan.exact) {
		sb_profile_meta_set_u64(p, "exact_blocks", est.exact_keys);
		sb_profile_meta_set_u64(p, "exact_blocks_unmapped", est.exact_unmapped);
		sb_profile_meta_set_u64(p, "sample_keys_in_exact_runtime", est.exact_runtime);
	}
	sb_profile_meta_set_u64(p, "cfg_binaries", est.binaries);
	sb_profile_meta_set_u64(p, "cfg_cache_hits", est.cfg_cache_hits);
	if (*sb_symbolizer_nodebug(sym)) {
		size_t len = strlen(r->notes);

		snprintf(r->notes + len, sizeof(r->notes) - len,
			 "%sno debug info (locations are addresses): %s", len ? "; " : "",
			 sb_symbolizer_nodebug(sym));
	}
	if (*sb_symbolizer_debug_files(sym)) {
		size_t len = strlen(r->notes);

		snprintf(r->notes + len, sizeof(r->notes) - len,
			 "%sdebug info from separate files: %s", len ? "; " : "",
			 sb_symbolizer_debug_files(sym));
	}
	{
		struct sb_builder_stats st;
		size_t len = strlen(r->notes);

		/* Found only now, from the whole history: tell how. */
		sb_builder_get_stats(r->builder, &st);
		if (st.cond_barriers && r->plan.condvars_named)
			snprintf(r->notes + len, sizeof(r->notes) - len,
				 "%s--barrier: %llu condition variable%s waited on at the named "
				 "sites (%llu release episodes): barrier sections there",
				 len ? "; " : "", (unsigned long long)st.cond_barriers,
				 st.cond_barriers > 1 ? "s" : "", (unsigned long long)st.cond_episodes);
		else if (st.cond_barriers)
			snprintf(r->notes + len, sizeof(r->notes) - len,
				 "%sinline barrier detected: %llu condition variable%s used as "
				 "mutex + condvar barrier%s (%llu release episodes), sections at "
				 "the pthread_cond_wait call sites; --no-auto-barrier to ignore, "
				 "--barrier FILE:LINE to choose", len ? "; " : "",
				 (unsigned long long)st.cond_barriers,
				 st.cond_barriers > 1 ? "s" : "", st.cond_barriers > 1 ? "s" : "",
				 (unsigned long long)st.cond_episodes);
		else if (st.cond_log_full)
			snprintf(r->notes + len, sizeof(r->notes) - len,
				 "%sinline condvar barriers not looked for: more events than "
				 "the history keeps", len ? "; " : "");
		if (!r->quiet && (st.cond_barriers || st.cond_log_full))
			fprintf(stderr, "scalebpf: %s\n", r->notes + len + (len ? 2 : 0));
	}
	sb_tm_mark("write: meta, stacks");
	add_meta(r, p, c);
	if (!interval)
		sb_rec_sharing_sampled(r, p, sym);
	/* Traces are where record put them only for a command it ran. */
	if (r->plan.trace_mem && r->spawned && !interval)
		sb_rec_sharing(r, p, sym);
	else if (r->plan.trace_mem && !interval)
		sb_profile_meta_set(p, "coherence_error", "attached with -p: the traces are where "
				    "the program's SCALEBPF_TRACE_DIR (or scalebpf-trace.PID) says; "
				    "sharing is simulated for a command `record -- CMD` runs");
	{
		uint64_t ns, runs, cpu = sb_tm_cpu_ns();

		/* The recorder's own CPU time so far (make bench divides it by
		 * the samples: what a sample costs the recorder). */
		if (cpu)
			sb_profile_meta_set_u64(p, "recorder_cpu_ns", cpu);
		/* What a sample costs the target in BPF (stack copy included),
		 * where kernel.bpf_stats_enabled lets the kernel time it. */
		if (!sb_bpf_sample_stats(r->bpf, &ns, &runs) && runs)
			sb_profile_meta_set_u64(p, "bpf_sample_ns_per_run", ns / runs);
	}
	if ((!interval && sb_stacks_store(r->stacks, p, c, r->notes, sizeof(r->notes))) ||
	    sb_profile_meta_set(p, "notes", r->notes) < 0) {
		sb_rec_fail(r, "out of memory while writing the profile");
		goto out;
	}
	if (r->rot)     /* its own interval's times and counts */
		sb_rec_rotate_adjust(r, p);
	sb_tm_mark("write: the profile file");
	if (sb_profile_write(p, path, err, sizeof(err))) {
		sb_rec_fail(r, "%s", err);
		goto out;
	}
	if (r->rot)
		sb_rec_rotate_written(r, path);
	sb_rec_push_profile(r, p);   /* a copy for the store, when --push */
	sb_tm_mark("write: status, free");
	if (interval) {
		if (!r->quiet)
			fprintf(stderr, "scalebpf: wrote %s (%zu sections, %zu instances)\n", path,
				p->nsections, (size_t)sb_profile_meta_get_u64(p, "instances"));
		ret = 0;
		goto out;
	}
	if (!r->quiet) {
		sb_rec_status(r, true);
		fprintf(stderr, "scalebpf: wrote %s (%zu sections, %zu threads); "
			"see it with: scalebpf report -i %s\n", path, p->nsections,
			p->nthreads, r->rot ? sb_rec_rotate_dir(r) : path);
	}
	if (sb_rec_drops(c))
		fprintf(stderr, "scalebpf: warning: %llu records were dropped (ring buffer "
			"full): raise --ringbuf-mb or lower -F\n",
			(unsigned long long)sb_rec_drops(c));
	ret = barriers_missing(r);
out:
	sb_eventmap_free(em);
	sb_symbolizer_free(sym);
	sb_profile_free(p);
	return ret;
}

int sb_rec_write(struct sb_rec *r)
{
	sb_tm_mark("write: finish sections");
	/* Every image's sections are complete (inline condvar barriers are
	 * found only from a whole history), then one profile: the image that
	 * did the work (the others are listed). */
	for (size_t i = 0; i < r->fw.nprocs; i++)
		if (sb_builder_finish(r->fw.procs[i]->builder))
			return sb_rec_fail(r, "out of memory while building sections");
	sb_tm_mark("write: choose the image, threads");
	sb_follow_use(r, sb_follow_choose(r));
	follow_notes(r);
	return write_profile(r, r->rot ? sb_rec_rotate_last_path(r) : r->output, false);
}

int sb_rec_write_interval(struct sb_rec *r, const char *path)
{
	return write_profile(r, path, true);
}
