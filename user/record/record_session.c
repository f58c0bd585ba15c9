// SPDX-License-Identifier: MIT
#include "record_session.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "addr_sampler.h"
#include "stacks.h"
#include "clock.h"
#include "binary/elfsym.h"
#include "hw/hwsession.h"
#include "hw/pmu.h"
#include "util/idmap.h"
#include "binary/procmaps.h"
#include "record_bpf.h"
#include "record_footprint.h"
#include "record_reuse.h"
#include "record_watch.h"
#include "rec_timing.h"

int sb_rec_fail(struct sb_rec *r, const char *fmt, ...)
{
	va_list ap;

	(void)r;
	fputs("scalebpf record: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

static void note(void *ctx, const char *fmt, ...)
{
	struct sb_rec *r = ctx;
	size_t len = strlen(r->notes);
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (!r->quiet || !strncmp(line, "error", 5))
		fprintf(stderr, "scalebpf: %s\n", line);
	if (strncmp(line, "error", 5) && len + strlen(line) + 2 < sizeof(r->notes))
		snprintf(r->notes + len, sizeof(r->notes) - len, "%s%s", len ? "; " : "", line);
}

static int plan_probes(struct sb_rec *r)
{
	int ret = sb_follow_plan_image(r, r->fw.cur, !r->spawned);

	if (ret == -ENOENT && (r->nbarriers || r->nregions))
		return 1;   /* the message is out (a --barrier or --region not found) */
	if (ret == -ESRCH || (ret < 0 && !r->spawned && !sb_target_alive(r->pid)))
		return sb_rec_fail(r, "cannot read the mappings of process %d: %s",
				   r->pid, strerror(-ret));
	if (ret < 0)
		return sb_rec_fail(r, "cannot read the executable %s: %s", r->exe, strerror(-ret));
	/* A launcher (env, sh, time) has none: the program it starts is
	 * planned when it is exec'd or forked (follow.c). */
	if (r->plan.n == 0 && !(r->spawned && r->follow))
		note(r, "warning: no synchronization functions found to probe in %s or its "
		     "libraries: only waits and threads will be recorded", r->exe);
	return 0;
}

/* -p with --region on a `scalebpf cc --chip` program: its threads that
 * began before the attach say where their counters are only now and then
 * (every 256 segments: a serial program never would); the runtime keeps
 * them in TLS, found from each thread's pointer.  Not such a program, or
 * not an executable whose TLS layout is known: nothing. */
static void chip_tls_known(struct sb_rec *r)
{
	char err[256];
	struct sb_elf *e;
	int64_t off;

	if (r->spawned || !r->nregions || !(e = sb_elf_open(r->exe, err, sizeof(err))))
		return;
	if (!sb_elf_tls_offset(e, "sb_chip_k", &off) && sb_bpf_chip_tls(r->bpf, r->pid, off))
		note(r, "warning: the CHiP counters of threads begun before the attach cannot "
		     "be read (a BPF map update failed)");
	sb_elf_close(e);
}

/* Threads that exist before recording: timed from now on. */
static int seed_threads(struct sb_rec *r)
{
	uint64_t now = sb_now_ns();
	uint32_t *tids = NULL;
	size_t n = 0;

	if (r->spawned) {
		sb_bpf_seed_thread(r->bpf, (uint32_t)r->child.pid, now,
				   sb_target_runtime(r->pid, (uint32_t)r->child.pid));
		sb_rec_thread_seen(r, (uint32_t)r->child.pid, 0, now, NULL, SB_EV_THREAD_START);
		return 0;
	}
	if (sb_target_threads(r->pid, &tids, &n)) {
		free(tids);
		return sb_rec_fail(r, "process %d exited during attach", r->pid);
	}
	for (size_t i = 0; i < n; i++) {
		char comm[32];

		/* A leader gone by pthread_exit: no thread to time, and no
		 * exit will ever come for it. */
		if (!sb_target_thread_live(r->pid, tids[i]))
			continue;
		sb_target_comm(r->pid, tids[i], comm, sizeof(comm));
		sb_bpf_seed_thread(r->bpf, tids[i], now, sb_target_runtime(r->pid, tids[i]));
		sb_rec_thread_seen(r, tids[i], 0, now, comm, SB_EV_THREAD_SEEN);
	}
	free(tids);
	return 0;
}

static bool is_omp_runtime(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "libgomp.so", 10) || !strncmp(base, "libomp.so", 9) ||
	       !strncmp(base, "libiomp5.so", 11);
}

static void set_range(struct sb_rec *r, unsigned slot, uint64_t start, uint64_t end)
{
	struct sb_ip_range rg = { .start = start, .end = end };

	if (slot < SB_MAX_SPIN_RANGES && !(r->spin_set & (1u << slot)) &&
	    !sb_bpf_set_spin_range(r->bpf, slot, &rg))
		r->spin_set |= 1u << slot;
}

/*
 * Sampled spin waits: pthread_spin_lock, and the whole text of the OpenMP
 * runtimes, whose spinning barriers, critical sections and locks live in
 * hidden functions; the stack scan names the primitive of each sample.
 * Runtime addresses are known only once the libraries are mapped.
 */
void sb_rec_set_spin_ranges(struct sb_rec *r)
{
	unsigned slot = (unsigned)r->plan.nspins;

	for (size_t m = 0; m < sb_maps_count(r->maps); m++) {
		const struct sb_mapping *mp = sb_maps_get(r->maps, m);
		const char *path;

		if (!mp->exec)
			continue;
		path = sb_maps_binary_path(r->maps, mp->bin);
		for (size_t i = 0; i < r->plan.nspins; i++) {
			const struct sb_spin_fn *sp = &r->plan.spins[i];
			struct sb_elf *e;
			uint64_t off;

			if (strcmp(path, sp->binary))
				continue;
			e = sb_maps_binary_elf(r->maps, mp->bin);
			if (!e || sb_elf_vaddr_to_offset(e, sp->vaddr, &off) || off < mp->pgoff ||
			    off - mp->pgoff >= mp->end - mp->start)
				continue;
			off = mp->start + (off - mp->pgoff);
			set_range(r, (unsigned)i, off, off + sp->size);
		}
		if (is_omp_runtime(sb_maps_binary_name(r->maps, mp->bin)))
			set_range(r, slot++, mp->start, mp->end);
	}
}

/*
 * A command released from its gate execs at once; a short one may exit
 * before the first periodic look at its mappings, leaving every address
 * unresolvable.  The executable is mapped by exec itself: wait (200 ms at
 * most) until /proc/PID/exe is the program, then read the mappings once.
 * Libraries come a moment later and are caught by the fast first polls.
 */
static void await_exec(struct sb_rec *r)
{
	char proc[64];
	struct stat want, got;

	snprintf(proc, sizeof(proc), "/proc/%d/exe", r->pid);
	if (stat(r->exe, &want))
		return;
	for (int i = 0; i < 1000; i++) {
		if (stat(proc, &got))
			return;   /* gone already */
		if (got.st_dev == want.st_dev && got.st_ino == want.st_ino) {
			sb_maps_refresh(r->maps, r->pid);
			return;
		}
		usleep(200);
	}
}

/* The one line --events auto prints when the hardware path cannot be
 * taken: the profile is still made, from software samples. */
static void events_fallback_line(const char *why)
{
	fprintf(stderr, "scalebpf: hardware sampling unavailable (%s): using software "
		"sampling (cpu-clock)\n", why);
}

int sb_rec_choose_events(struct sb_rec *r)
{
	char msg[640];
	int ret = sb_hwsession_alloc(&r->hw, r->events_req, msg, sizeof(msg));

	if (ret < 0)
		return sb_rec_fail(r, "%s", msg);
	if (*msg && !r->quiet)
		events_fallback_line(msg);
	return 0;
}

/* After the BPF load (sb_bpf_prepare_wait): the hardware samplers share its ring buffer. */
static int start_hw(struct sb_rec *r)
{
	struct sb_hwsession_opts o = {
		.pid = r->pid, .ringbuf_fd = sb_bpf_ringbuf_fd(r->bpf),
		.ringbuf_bytes = (size_t)r->ringbuf_mb << 20, .sample_hz = r->sample_hz,
	};
	char msg[640];
	int ret = sb_hwsession_start(r->hw, &o, msg, sizeof(msg));

	if (ret < 0)
		return sb_rec_fail(r, "%s", msg);
	if (*msg && !r->quiet)
		events_fallback_line(msg);
	return 0;
}

/* --chip on the hardware path: reuse probes instead of footprint probes
 * where the CPU counts its retired memory operations (record_reuse.h). */
static int start_reuse(struct sb_rec *r)
{
	struct sb_rprobe_opts o = {
		.rate = r->chip_probes, .load_period = SB_HW_LOAD_PERIOD,
		.store_period = SB_HW_STORE_PERIOD,
	};
	const struct sb_pmu *pmu;
	char err[256];

	if (!r->fprobe)
		return 0;
	if (!sb_rprobe_test_counter(&o)) {
		if (!(pmu = sb_hwsession_pmu(r->hw)))
			return 0;   /* the software path: footprint probes */
		if (sb_pmu_memops_attr(pmu, &o.counter, o.counter_name, sizeof(o.counter_name),
				       err, sizeof(err))) {
			note(r, "--chip: no counter of memory operations (%s): footprint probes "
			     "instead of reuse probes", err);
			return 0;
		}
	}
	if (!(r->rprobe = sb_rprobe_alloc(&o)))
		return sb_rec_fail(r, "out of memory");
	sb_fprobe_free(r->fprobe);
	r->fprobe = NULL;
	return 0;
}

int sb_rec_setup(struct sb_rec *r)
{
	struct sb_bpf_opts bo = { 0 };
	char err[512];
	int ret;

	sb_plan_init(&r->plan);
	r->child.gate_fd = r->child.err_fd = -1;
	r->pin.fd = -1;
	if (!(r->watch = sb_watch_alloc(r->watch_rate, err, sizeof(err))))
		return sb_rec_fail(r, "%s", err);
	if (r->chip_probes && !(r->fprobe = sb_fprobe_alloc(r->chip_probes)))
		return sb_rec_fail(r, "out of memory");
	/* -p: the process runs on; stopping it could show to a job-control
	 * shell as a stopped job, so probes go in asynchronously there. */
	bo.stop_mode = r->ncmd > 0 && r->follow;
	bo.follow_forks = r->follow;
	bo.sample_hz = r->sample_hz;
	bo.stack_copy = !r->unwind_fp;
	bo.ringbuf_bytes = (size_t)r->ringbuf_mb << 20;
	/* Stack copies make samples 16 KiB each: room for half a second of
	 * them on every CPU (the consumer drains every 100 ms), up to 256 MiB,
	 * so a high -F does not drop them. */
	if (bo.stack_copy) {
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		size_t need = (size_t)r->sample_hz * (size_t)(ncpu > 0 ? ncpu : 1) *
			      sizeof(struct sb_rec_sample_stack) / 2;

		while (bo.ringbuf_bytes < need && bo.ringbuf_bytes < (256u << 20))
			bo.ringbuf_bytes <<= 1;
		r->ringbuf_mb = bo.ringbuf_bytes >> 20;   /* the hardware path's too */
	}
	if (r->ncmd > 0) {
		char dir[4200];

		/* A `scalebpf cc --trace-mem` program writes its memory traces
		 * next to the profile (user/rt/trace_mem.c).  Before the load
		 * thread: setenv is not safe with another thread's getenv. */
		snprintf(dir, sizeof(dir), "%s.trace", r->output);
		setenv("SCALEBPF_TRACE_DIR", dir, 0);
	}
	sb_tm_mark("setup: spawn or pin the target");
	/* The command is forked before the load thread starts: libbpf 1.1
	 * opens /sys/kernel/btf/vmlinux without O_CLOEXEC, and a fork while
	 * it is open would leave it to the command as a stray fd.  The fork
	 * costs the load nothing: the child only waits at its gate. */
	if (r->ncmd > 0) {
		if (sb_target_spawn(r->cmd, &r->child, r->exe, sizeof(r->exe), err, sizeof(err)))
			return sb_rec_fail(r, "%s", err);
		r->spawned = true;
		r->pid = r->child.pid;
	}
	/* Loaded in a thread while the target's probes are planned: all it
	 * needs are the options. */
	if (sb_bpf_prepare_start(&r->loader, &bo))
		return sb_rec_fail(r, "out of memory");
	if (r->ncmd > 0) {
		/* Our child: its pid is ours until reaped, the pidfd lets the
		 * end wait for it and signals together (builtin-record.c). */
		sb_target_pin(r->pid, &r->pin);
		/* A script: the kernel runs its interpreter, the first image. */
		{
			char interp[sizeof(r->exe)];

			if (!sb_target_script(r->exe, interp, sizeof(interp)))
				memcpy(r->exe, interp, sizeof(interp));
		}
	} else {
		if (sb_target_check_pid(r->pid, err, sizeof(err)))
			return sb_rec_fail(r, "%s", err);
		/* From here on the process, not the number: once it exits,
		 * a new process may get its pid and must not be recorded. */
		if ((ret = sb_target_pin(r->pid, &r->pin)))
			return ret == -ESRCH ?
			       sb_rec_fail(r, "process %d exited during attach", r->pid) :
			       sb_rec_fail(r, "cannot hold process %d: %s", r->pid, strerror(-ret));
		if ((ret = sb_target_exe(r->pid, r->exe, sizeof(r->exe))))
			return sb_rec_fail(r, "cannot find the executable of process %d: %s",
					   r->pid, strerror(-ret));
	}
	sb_tm_mark("setup: first image (maps, threads)");
	if (sb_follow_init(r))   /* the first image: maps, threads, builder, stacks */
		return sb_rec_fail(r, "out of memory");
	sb_tm_mark("setup: probe plan (ELF, symbols, sites)");
	if ((ret = plan_probes(r)))
		return ret;
	sb_tm_mark("setup: wait for the BPF load");
	ret = sb_bpf_prepare_wait(r->loader, &r->bpf, r->pid, err, sizeof(err));
	r->loader = NULL;
	if (ret)
		return sb_rec_fail(r, "%s", err);
	sb_tm_mark("setup: hardware samplers");
	if ((ret = start_hw(r)))
		return ret;
	if ((ret = start_reuse(r)))
		return ret;
	if (!r->spawned && sb_target_leader_exited(r->pid)) {
		sb_bpf_probe_wide(r->bpf, r->pid);
		note(r, "the main thread of process %d has exited (pthread_exit): its other "
		     "threads are recorded; its probes are not filtered by the kernel (other "
		     "processes calling the probed functions pay a trap each)", r->pid);
	}
	chip_tls_known(r);
	sb_tm_mark("setup: uprobes attach");
	ret = sb_follow_attach(r, r->fw.cur, true);
	if (ret < 0)
		return 1;
	r->fw.first_exec_pending = r->spawned;
	sb_tm_mark("setup: tracepoints, samplers, ring buffer");
	if (sb_bpf_start(r->bpf, sb_rec_route_record, r, err, sizeof(err)))
		return sb_rec_fail(r, "%s", err);
	r->start_ns = sb_now_ns();
	r->start_realtime = (int64_t)time(NULL);
	sb_tm_mark("setup: seed threads");
	if ((ret = seed_threads(r)))
		return ret;
	sb_tm_mark("setup: release, await exec");
	if (r->spawned) {
		if (sb_target_release(&r->child, err, sizeof(err))) {
			r->spawned = false;   /* reaped already */
			return sb_rec_fail(r, "%s", err);
		}
		await_exec(r);
	} else {
		sb_rec_set_spin_ranges(r);
		if (!sb_pin_alive(&r->pin))
			return sb_rec_fail(r, "process %d exited during attach", r->pid);
	}
	if (!r->quiet)
		fprintf(stderr, "scalebpf: recording %s %d (%s): %u probes on %zu functions%s, "
			"Ctrl-C to stop\n", r->spawned ? "command, PID" : "PID", r->pid, r->exe,
			sb_bpf_nprobes(r->bpf), r->plan.n,
			r->follow ? "; following exec, fork and dlopen" : "");
	return 0;
}

uint64_t sb_rec_drops(const uint64_t *c)
{
	return c[SB_CNT_DROP_PROBE] + c[SB_CNT_DROP_WAIT] + c[SB_CNT_DROP_THREAD] +
	       c[SB_CNT_DROP_SAMPLE] + c[SB_CNT_DROP_EXACT] + c[SB_CNT_DROP_PROC] +
	       c[SB_CNT_DROP_WATCH] + c[SB_CNT_DROP_CHIP];
}

void sb_rec_status(struct sb_rec *r, bool final)
{
	uint64_t c[SB_CNT_MAX];
	struct sb_builder_stats st;
	double secs = (double)(sb_now_ns() - r->start_ns) / 1e9;

	sb_bpf_read_counters(r->bpf, c);
	sb_builder_get_stats(r->builder, &st);
	fprintf(stderr, "%sscalebpf: %.1fs, %llu threads live, %llu sections, %llu instances, "
		"%llu events, %llu dropped%s", r->tty && !final ? "\r" : "", secs,
		(unsigned long long)r->nthreads_live, (unsigned long long)st.sections,
		(unsigned long long)st.instances, (unsigned long long)r->records,
		(unsigned long long)sb_rec_drops(c),
		r->tty && !final ? "   " : "\n");
	if (final && r->tty)
		fputc('\n', stderr);
}

void sb_rec_stop(struct sb_rec *r)
{
	uint64_t nf;

	r->end_ns = sb_now_ns();
	r->fw.stopping = true;   /* the drain below attaches nothing more */
	sb_tm_mark("stop: hardware samplers");
	sb_hwsession_stop(r->hw);
	if (!r->bpf)
		return;
	sb_tm_mark("stop: detach and drain");
	sb_watch_stop(r->watch, r->bpf, r->end_ns);   /* its events, before the drain */
	sb_fprobe_stop(r->fprobe);
	sb_rprobe_stop(r->rprobe, r->bpf);
	nf = r->fw.nnot_followed;
	sb_bpf_stop(r->bpf);   /* detaches, then drains the ring buffer */
	/* Not when the command and every process it started were seen to
	 * end, and the drain met no new one: a process's records are all in
	 * before its exit is seen, so no late record can come from one, and
	 * none is left stopped.  (20 ms of a short run's fixed cost.) */
	if (r->spawned && r->follow &&
	    (!r->child_exited || sb_follow_alive(r) || r->fw.nnot_followed != nf)) {
		sb_tm_mark("stop: late drain, unstop");
		/* Closing a link does not wait for a program running on
		 * another CPU: one may still have emitted a record and
		 * stopped its process.  Drain again a moment later (each
		 * stopped process drained is sent SIGCONT), then continue
		 * any live image still stopped. */
		usleep(20000);
		sb_bpf_poll(r->bpf, 0);
		sb_follow_unstop(r);
	}
}

void sb_rec_target_gone(struct sb_rec *r)
{
	if (r->target_gone)
		return;
	r->target_gone = true;
	for (size_t i = 0; i < r->fw.nprocs; i++) {
		struct sb_proc *p = r->fw.procs[i];

		if (p->pid != r->pin.pid || p->done || p->end_ns)
			continue;
		/* Ended: no periodic refresh (follow.c), and an address not
		 * yet mapped is not looked up in /proc/PID/maps (records.c). */
		p->end_ns = sb_now_ns();
		p->recs.pid = 0;
		if (p == r->fw.cur)
			r->recs.pid = 0;
	}
}

void sb_rec_cleanup(struct sb_rec *r)
{
	sb_tm_mark("cleanup");
	sb_bpf_prepare_cancel(r->loader);   /* setup failed before it was joined */
	r->loader = NULL;
	sb_pin_close(&r->pin);
	sb_hwsession_free(r->hw);
	sb_watch_free(r->watch);
	sb_fprobe_free(r->fprobe);
	sb_rprobe_free(r->rprobe);
	r->fprobe = NULL;
	r->rprobe = NULL;
	r->watch = NULL;
	/* After a setup failure too: the drain attaches nothing more. */
	r->fw.stopping = true;
	sb_bpf_finish(r->bpf);
	sb_follow_free(r);   /* every image's maps, threads, builder, stacks, records */
	sb_regions_fini(&r->regions);
	sb_plan_free(&r->plan);
	r->hw = NULL;
	r->bpf = NULL;
}
