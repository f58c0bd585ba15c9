// SPDX-License-Identifier: MIT
#include "record_bpf.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpf_links.h"
#include "clock.h"
#include "rec_timing.h"
#include "record_bpf_priv.h"

int sb_bpf_add_link(struct sb_bpf *s, struct bpf_link *l, int fd, int pid)
{
	struct sb_link k = { .l = l, .fd = fd, .pid = pid };

	if (s->nlinks == s->caplinks) {
		unsigned ncap = s->caplinks ? s->caplinks * 2 : 32;
		struct sb_link *n = realloc(s->links, ncap * sizeof(*n));

		if (!n) {
			sb_link_destroy(&k);
			return -ENOMEM;
		}
		s->links = n;
		s->caplinks = ncap;
	}
	s->links[s->nlinks++] = k;
	return 0;
}

static int silent_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN && getenv("SCALEBPF_DEBUG"))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

/* The distance from per-CPU variable a to b, from the kernel's BTF (its
 * .data..percpu section lists each with its offset; every CPU's copy of
 * the area has the same layout).  -ENOENT when either is not there. */
static int percpu_distance(const char *a, const char *b, int64_t *d)
{
	struct btf *btf = btf__load_vmlinux_btf();
	const struct btf_var_secinfo *v;
	const struct btf_type *sec;
	int64_t off[2] = { -1, -1 };
	int id, ret = -ENOENT;

	if (!btf)
		return -errno;
	id = btf__find_by_name_kind(btf, ".data..percpu", BTF_KIND_DATASEC);
	sec = id > 0 ? btf__type_by_id(btf, (__u32)id) : NULL;
	v = sec ? btf_var_secinfos(sec) : NULL;
	for (unsigned i = 0; v && i < btf_vlen(sec); i++, v++) {
		const char *name = btf__name_by_offset(btf, btf__type_by_id(btf, v->type)->name_off);

		if (name && !strcmp(name, a))
			off[0] = v->offset;
		else if (name && !strcmp(name, b))
			off[1] = v->offset;
	}
	if (off[0] >= 0 && off[1] >= 0) {
		*d = off[1] - off[0];
		ret = 0;
	}
	btf__free(btf);
	return ret;
}

/* Open, set the read-only data, load: all but the target's pid, which
 * the load does not need and a spawned command may not have yet
 * (sb_bpf_prepare_wait sets it). */
static int load_object(struct sb_bpf **out, const struct sb_bpf_opts *opts,
		       char *err, size_t errlen)
{
	struct sb_bpf *s = calloc(1, sizeof(*s));
	int64_t steal_from_rq = 0;
	int ret;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		snprintf(err, errlen, "this kernel has no BTF (/sys/kernel/btf/vmlinux): "
			 "scalebpf needs CONFIG_DEBUG_INFO_BTF=y");
		free(s);
		return -ENOENT;
	}
	s->skel = record_bpf__open();
	if (!s->skel) {
		ret = -errno;
		snprintf(err, errlen, "cannot open the BPF object: %s", strerror(-ret));
		goto fail;
	}
	s->skel->rodata->stop_mode = opts->stop_mode;
	s->skel->rodata->follow_forks = opts->follow_forks;
	s->skel->rodata->sample_period_ns =
		opts->sample_hz ? 1000000000ull / opts->sample_hz : 0;
	s->skel->rodata->wakeup_bytes = opts->ringbuf_bytes / 4;
	s->skel->rodata->stack_copy = opts->stack_copy;
	/* KVM's steal clock, next to the runqueue (bpf/oncpu.bpf.h) */
	if (!percpu_distance("runqueues", "steal_time", &steal_from_rq)) {
		s->skel->rodata->steal_from_rq = steal_from_rq;
		s->skel->rodata->steal_known = 1;
	}
	bpf_map__set_max_entries(s->skel->maps.events, (__u32)opts->ringbuf_bytes);
	s->multi = sb_bpf_uprobe_multi_works();
	if (s->multi) {   /* a program of a uprobe_multi link is loaded as one */
		struct bpf_program *uprogs[] = {
			s->skel->progs.probe_enter, s->skel->progs.probe_exit,
			s->skel->progs.exact_batch, s->skel->progs.chip_batch,
			s->skel->progs.chip_thread, s->skel->progs.region_enter,
			s->skel->progs.region_exit, s->skel->progs.on_dl_state,
		};

		for (size_t i = 0; i < sizeof(uprogs) / sizeof(uprogs[0]); i++)
			bpf_program__set_expected_attach_type(uprogs[i], SB_TRACE_UPROBE_MULTI);
	}
	ret = record_bpf__load(s->skel);
	if (ret) {
		snprintf(err, errlen, "cannot load the BPF programs: %s%s", strerror(-ret),
			 ret == -EPERM ? " (needs root, or CAP_BPF and CAP_PERFMON)" : "");
		goto fail;
	}
	s->ncpus = libbpf_num_possible_cpus();
	s->perf_fds = calloc(s->ncpus > 0 ? s->ncpus : 1, sizeof(int));
	if (!s->perf_fds) {
		ret = -ENOMEM;
		goto fail;
	}
	s->sample_ctl = calloc(s->ncpus > 0 ? s->ncpus : 1, sizeof(int));
	if (!s->sample_ctl) {
		ret = -ENOMEM;
		goto fail;
	}
	for (int i = 0; i < s->ncpus; i++)
		s->perf_fds[i] = s->sample_ctl[i] = -1;
	if (opts->sample_hz) {
		struct perf_event_attr attr = {
			.type = PERF_TYPE_SOFTWARE, .size = sizeof(attr),
			.config = PERF_COUNT_SW_CPU_CLOCK, .freq = 0,
			.sample_period = 1000000000ull / opts->sample_hz,
		};

		for (int cpu = 0; cpu < s->ncpus; cpu++) {
			/* Offline CPUs fail with ENODEV: nothing to sample there. */
			s->perf_fds[cpu] = (int)syscall(__NR_perf_event_open, &attr, -1, cpu, -1,
							PERF_FLAG_FD_CLOEXEC);
		}
	}
	*out = s;
	return 0;
fail:
	sb_bpf_finish(s);
	return ret;
}

static int set_target(struct sb_bpf *s, int pid, char *err, size_t errlen)
{
	int ret;

	s->pid = pid;
	if ((ret = sb_bpf_follow(s, pid, true)))
		snprintf(err, errlen, "cannot set the target process: %s", strerror(-ret));
	return ret;
}

struct sb_bpf_loader {
	pthread_t th;
	bool threaded;
	struct sb_bpf_opts opts;
	struct sb_bpf *s;
	int ret;
	uint64_t t0, t1, cpu;
	char err[512];
};

static void *loader_main(void *arg)
{
	struct sb_bpf_loader *ld = arg;

	ld->t0 = sb_now_ns();
	ld->cpu = sb_tm_thread_cpu_ns();
	ld->ret = load_object(&ld->s, &ld->opts, ld->err, sizeof(ld->err));
	ld->cpu = sb_tm_thread_cpu_ns() - ld->cpu;
	ld->t1 = sb_now_ns();
	return NULL;
}

int sb_bpf_prepare_start(struct sb_bpf_loader **out, const struct sb_bpf_opts *opts)
{
	struct sb_bpf_loader *ld = calloc(1, sizeof(*ld));

	*out = NULL;
	if (!ld)
		return -ENOMEM;
	ld->opts = *opts;
	libbpf_set_print(silent_print);   /* not from two threads */
	ld->threaded = !pthread_create(&ld->th, NULL, loader_main, ld);
	if (!ld->threaded)
		loader_main(ld);
	*out = ld;
	return 0;
}

int sb_bpf_prepare_wait(struct sb_bpf_loader *ld, struct sb_bpf **out, int pid,
			char *err, size_t errlen)
{
	int ret;

	*out = NULL;
	if (!ld)
		return -EINVAL;
	if (ld->threaded)
		pthread_join(ld->th, NULL);
	sb_tm_span("bpf: open and load (its own thread)", ld->t0, ld->t1, ld->cpu);
	ret = ld->ret;
	if (ret) {
		snprintf(err, errlen, "%s", ld->err);
	} else if ((ret = set_target(ld->s, pid, err, errlen))) {
		sb_bpf_finish(ld->s);
	} else {
		*out = ld->s;
	}
	free(ld);
	return ret;
}

void sb_bpf_prepare_cancel(struct sb_bpf_loader *ld)
{
	if (!ld)
		return;
	if (ld->threaded)
		pthread_join(ld->th, NULL);
	sb_bpf_finish(ld->s);   /* NULL when the load failed */
	free(ld);
}

int sb_bpf_follow(struct sb_bpf *s, int pid, bool add)
{
	__u32 k = (__u32)pid;
	struct sb_follow f = { 0 };

	if (!add)
		return bpf_map__delete_elem(s->skel->maps.followed, &k, sizeof(k), 0);
	return bpf_map__update_elem(s->skel->maps.followed, &k, sizeof(k), &f, sizeof(f),
				    BPF_ANY);
}

int sb_bpf_fork_stop(struct sb_bpf *s, int pid, bool stop)
{
	__u32 k = (__u32)pid;
	__u8 one = 1;

	if (!stop)
		return bpf_map__delete_elem(s->skel->maps.fork_stop, &k, sizeof(k), 0);
	return bpf_map__update_elem(s->skel->maps.fork_stop, &k, sizeof(k), &one,
				    sizeof(one), BPF_ANY);
}

int sb_bpf_chip_tls(struct sb_bpf *s, int pid, int64_t tp_offset)
{
	__u32 k = (__u32)pid;
	__s64 v = tp_offset;

	return bpf_map__update_elem(s->skel->maps.chip_tls, &k, sizeof(k), &v, sizeof(v),
				    BPF_ANY);
}

int sb_bpf_memops_set(struct sb_bpf *s, uint32_t tid, uint32_t slot, int fd)
{
	__u32 k = tid, v = slot, f = (__u32)fd;
	int ret;

	if (!s || !s->skel || slot >= SB_MEMOPS_SLOTS)
		return -EINVAL;
	if (fd < 0) {
		bpf_map__delete_elem(s->skel->maps.memop_slot, &k, sizeof(k), 0);
		bpf_map__delete_elem(s->skel->maps.memops, &v, sizeof(v), 0);
		return 0;
	}
	/* the counter first: a trap that finds the slot finds it there */
	if ((ret = bpf_map__update_elem(s->skel->maps.memops, &v, sizeof(v), &f, sizeof(f),
					BPF_ANY)))
		return ret;
	return bpf_map__update_elem(s->skel->maps.memop_slot, &k, sizeof(k), &v, sizeof(v),
				    BPF_ANY);
}

int sb_bpf_set_spin_range(struct sb_bpf *s, unsigned idx, const struct sb_ip_range *r)
{
	__u32 k = idx;

	if (idx >= SB_MAX_SPIN_RANGES)
		return -EINVAL;
	return bpf_map__update_elem(s->skel->maps.spin_ranges, &k, sizeof(k), r,
				    sizeof(*r), BPF_ANY);
}

int sb_bpf_thread_oncpu(struct sb_bpf *s, uint32_t tid, uint64_t now_ns, uint64_t *oncpu)
{
	struct sb_thread_state st;

	if (bpf_map__lookup_elem(s->skel->maps.threads, &tid, sizeof(tid), &st, sizeof(st), 0))
		return -ENOENT;
	*oncpu = st.oncpu_total + (st.on_cpu && now_ns > st.last_in ? now_ns - st.last_in : 0);
	return 0;
}

int sb_bpf_seed_thread(struct sb_bpf *s, uint32_t tid, uint64_t now_ns,
		       uint64_t runtime_ns)
{
	struct sb_thread_state st = { .last_in = now_ns, .on_cpu = 1, .k0 = runtime_ns };

	return bpf_map__update_elem(s->skel->maps.threads, &tid, sizeof(tid), &st,
				    sizeof(st), BPF_NOEXIST);
}

int sb_bpf_start(struct sb_bpf *s, sb_bpf_record_fn fn, void *ctx,
		 char *err, size_t errlen)
{
	/* Exits before starts: a thread whose start is recorded then has its
	 * exit recorded too.  The other way round, a thread started and ended
	 * between the two attaches left a start without an exit, and its
	 * creator's join instance, waiting for it, never closed: with -p on a
	 * program churning threads, no join instance at all was recorded. */
	struct bpf_program *tps[] = {
		s->skel->progs.on_switch, s->skel->progs.on_sys_enter,
		s->skel->progs.on_sys_exit, s->skel->progs.on_exit,
		s->skel->progs.on_newtask, s->skel->progs.on_exec,
	};
	int ret;

	for (size_t i = 0; i < sizeof(tps) / sizeof(tps[0]); i++) {
		struct bpf_link *l = bpf_program__attach(tps[i]);

		if (!l) {
			ret = -errno;
			snprintf(err, errlen, "cannot attach %s: %s",
				 bpf_program__name(tps[i]), strerror(-ret));
			return ret;
		}
		if ((ret = sb_bpf_add_link(s, l, -1, 0)))
			return ret;
	}
	sb_tm_mark("bpf: attach cpu-clock samplers");
	for (int cpu = 0; cpu < s->ncpus; cpu++) {
		struct bpf_link *l;

		if (s->perf_fds[cpu] < 0)
			continue;
		l = bpf_program__attach_perf_event(s->skel->progs.on_sample, s->perf_fds[cpu]);
		if (!l) {
			ret = -errno;
			snprintf(err, errlen, "cannot attach the cpu-clock sampler on CPU %d: %s",
				 cpu, strerror(-ret));
			return ret;
		}
		/* the link owns and closes it; a dup turns it on and off */
		s->sample_ctl[cpu] = fcntl(s->perf_fds[cpu], F_DUPFD_CLOEXEC, 0);
		s->perf_fds[cpu] = -1;
		if ((ret = sb_bpf_add_link(s, l, -1, 0)))
			return ret;
	}
	sb_tm_mark("bpf: ring buffer");
	s->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.events),
				 (ring_buffer_sample_fn)fn, ctx, NULL);
	if (!s->rb) {
		ret = -errno;
		snprintf(err, errlen, "cannot open the ring buffer: %s", strerror(-ret));
		return ret;
	}
	return 0;
}

int sb_bpf_poll(struct sb_bpf *s, int timeout_ms)
{
	int n = ring_buffer__poll(s->rb, timeout_ms), m;

	if (n < 0 && n != -EINTR)
		return n;
	/* Records come without wake-ups (see wakeup_flags): drain them. */
	m = ring_buffer__consume(s->rb);
	return m < 0 ? m : (n > 0 ? n : 0) + m;
}

int sb_bpf_poll_fd(struct sb_bpf *s, int timeout_ms, int fd)
{
	struct pollfd p[2] = {
		{ .fd = ring_buffer__epoll_fd(s->rb), .events = POLLIN },
		{ .fd = fd, .events = POLLIN },
	};

	if (fd < 0)
		return sb_bpf_poll(s, timeout_ms);
	if (poll(p, 2, timeout_ms) < 0 && errno != EINTR)
		return -errno;
	/* Ready or not: records come without wake-ups (see sb_bpf_poll). */
	return ring_buffer__consume(s->rb);
}

int sb_bpf_read_counters(struct sb_bpf *s, uint64_t out[SB_CNT_MAX])
{
	int ncpu = libbpf_num_possible_cpus();
	__u64 *vals;

	memset(out, 0, sizeof(uint64_t) * SB_CNT_MAX);
	if (ncpu <= 0)
		return -EINVAL;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (__u32 k = 0; k < SB_CNT_MAX; k++) {
		if (bpf_map__lookup_elem(s->skel->maps.counters, &k, sizeof(k), vals,
					 sizeof(*vals) * ncpu, 0))
			continue;
		for (int c = 0; c < ncpu; c++)
			out[k] += vals[c];
	}
	free(vals);
	return 0;
}

unsigned sb_bpf_detach_pid(struct sb_bpf *s, int pid)
{
	unsigned k = 0, n = 0;

	if (!s || pid <= 0)
		return 0;
	for (unsigned i = 0; i < s->nlinks; i++) {
		if (s->links[i].pid == pid) {
			sb_reaper_give(&s->reap, &s->links[i]);
			n++;
		} else {
			s->links[k++] = s->links[i];
		}
	}
	s->nlinks = k;
	return n;
}

/*
 * Detach every link; the ring buffer is drained after.  Tracepoints and
 * samplers first, one by one (they do not wait, ~0.1 ms each).  The
 * uprobes of processes that ended go to the reaper (the closer process:
 * no wait for links that cannot fire any more).  Then the uprobes of
 * live processes, together: each detach waits for RCU grace periods (a
 * tasks-trace one implies a normal one) begun after the tracepoints were
 * gone, so a tracepoint program still running when its link was closed
 * has finished, its record in, by the drain.
 */
void sb_bpf_stop(struct sb_bpf *s)
{
	unsigned k = 0;

	for (unsigned i = 0; i < s->nlinks; i++) {
		struct sb_link *l = &s->links[i];

		if (!l->pid)
			sb_link_destroy(l);
		else if (kill(l->pid, 0) && errno == ESRCH)   /* no such process */
			sb_reaper_give(&s->reap, l);
		else
			s->links[k++] = *l;
	}
	sb_tm_mark("bpf: detach uprobes of live processes");
	sb_links_destroy(s->links, k);
	s->nlinks = 0;
	sb_reaper_join(&s->reap);   /* what the thread reaper has (no closer) */
	sb_tm_mark("bpf: drain");
	if (s->rb)
		ring_buffer__consume(s->rb);
}

int sb_bpf_sample_stats(struct sb_bpf *s, uint64_t *run_ns, uint64_t *runs)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	*run_ns = *runs = 0;
	if (!s || !s->skel)
		return -EINVAL;
	if (bpf_obj_get_info_by_fd(bpf_program__fd(s->skel->progs.on_sample), &info, &len))
		return -errno;
	*run_ns = info.run_time_ns;
	*runs = info.run_cnt;
	return 0;
}

unsigned sb_bpf_nprobes(const struct sb_bpf *s)
{
	return s->nprobes;
}

const char *sb_bpf_uprobe_links(const struct sb_bpf *s)
{
	return s->multi ? "uprobe_multi" : "perf_event";
}

int sb_bpf_ringbuf_fd(struct sb_bpf *s)
{
	return bpf_map__fd(s->skel->maps.events);
}

void sb_bpf_finish(struct sb_bpf *s)
{
	if (!s)
		return;
	sb_bpf_stop(s);
	/* Records drained above may have attached or detached links still. */
	sb_reaper_join(&s->reap);
	sb_links_destroy(s->links, s->nlinks);
	s->nlinks = 0;
	ring_buffer__free(s->rb);
	for (int i = 0; s->sample_ctl && i < s->ncpus; i++)
		if (s->sample_ctl[i] >= 0)
			close(s->sample_ctl[i]);
	free(s->sample_ctl);
	if (s->perf_fds)
		for (int i = 0; i < s->ncpus; i++)
			if (s->perf_fds[i] >= 0)
				close(s->perf_fds[i]);
	free(s->perf_fds);
	free(s->links);
	record_bpf__destroy(s->skel);
	free(s);
}

int sb_bpf_watch_prog_fd(const struct sb_bpf *s)
{
	return s && s->skel ? bpf_program__fd(s->skel->progs.on_watch) : -EINVAL;
}

int sb_bpf_samples_enable(struct sb_bpf *s, bool on)
{
	int ret = 0;

	for (int cpu = 0; s->sample_ctl && cpu < s->ncpus; cpu++)
		if (s->sample_ctl[cpu] >= 0 &&
		    ioctl(s->sample_ctl[cpu], on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0))
			ret = -errno;
	return ret;
}
