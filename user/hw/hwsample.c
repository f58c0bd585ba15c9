// SPDX-License-Identifier: MIT
#include "hwsample.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "hwsample.skel.h"

struct sb_hw {
	struct hwsample_bpf *skel;
	struct bpf_link **links;   /* up to 3 per CPU: LBR, load, store */
	int nlinks, ncpus;
};

int sb_hw_load(struct sb_hw **out, int pid, int ringbuf_fd, size_t wakeup_bytes,
	       char *err, size_t errlen)
{
	struct sb_hw *h = calloc(1, sizeof(*h));
	int ret;

	*out = NULL;
	if (!h)
		return -ENOMEM;
	h->skel = hwsample_bpf__open();
	if (!h->skel) {
		ret = -errno;
		snprintf(err, errlen, "cannot open the hardware-sampling BPF object: %s",
			 strerror(-ret));
		goto fail;
	}
	h->skel->rodata->wakeup_bytes = wakeup_bytes;
	/* One ring buffer, one consumer, one timestamp order. */
	ret = bpf_map__reuse_fd(h->skel->maps.events, ringbuf_fd);
	if (ret) {
		snprintf(err, errlen, "cannot share the ring buffer with the hardware "
			 "samplers: %s", strerror(-ret));
		goto fail;
	}
	ret = hwsample_bpf__load(h->skel);
	if (ret) {
		snprintf(err, errlen, "cannot load the hardware-sampling BPF programs: %s",
			 strerror(-ret));
		goto fail;
	}
	/* Its perf events are opened on pid alone (hwsession.c): the
	 * processes record follows after exec keep them, forked ones
	 * are software-sampled only (README, "Following"). */
	{
		__u32 k = (__u32)pid;
		struct sb_follow f = { 0 };

		ret = bpf_map__update_elem(h->skel->maps.followed, &k, sizeof(k), &f,
					   sizeof(f), BPF_ANY);
		if (ret) {
			snprintf(err, errlen, "cannot set the hardware samplers' target: %s",
				 strerror(-ret));
			goto fail;
		}
	}
	h->ncpus = libbpf_num_possible_cpus();
	if (h->ncpus <= 0) {
		ret = -EINVAL;
		snprintf(err, errlen, "cannot count the CPUs");
		goto fail;
	}
	h->links = calloc((size_t)h->ncpus * 3, sizeof(*h->links));
	if (!h->links) {
		ret = -ENOMEM;
		goto fail;
	}
	*out = h;
	return 0;
fail:
	sb_hw_close(h);
	return ret;
}

int sb_hw_prog_fds(const struct sb_hw *h, int *lbr_fd, int *load_fd, int *store_fd)
{
	*lbr_fd = bpf_program__fd(h->skel->progs.on_lbr);
	*load_fd = bpf_program__fd(h->skel->progs.on_load);
	*store_fd = bpf_program__fd(h->skel->progs.on_store);
	return *lbr_fd >= 0 && *load_fd >= 0 && *store_fd >= 0 ? 0 : -ENOENT;
}

/* Opens attr on cpu and attaches prog; the link then owns the fd.
 * Offline CPUs (ENODEV) are skipped. */
static int open_attach(struct sb_hw *h, struct perf_event_attr *attr, int cpu,
		       struct bpf_program *prog, const char *what, char *err, size_t errlen)
{
	struct bpf_link *l;
	int fd, ret;

	fd = (int)syscall(__NR_perf_event_open, attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		if (ret == -ENODEV)
			return 0;
		snprintf(err, errlen, "cannot open the %s sampler on CPU %d: %s%s", what, cpu,
			 strerror(-ret), ret == -EOPNOTSUPP || ret == -ENOENT ?
			 " (the CPU or hypervisor does not provide it)" : "");
		return ret;
	}
	l = bpf_program__attach_perf_event(prog, fd);
	if (!l) {
		ret = -errno;
		close(fd);
		snprintf(err, errlen, "cannot attach the %s sampler on CPU %d: %s", what, cpu,
			 strerror(-ret));
		return ret;
	}
	h->links[h->nlinks++] = l;
	return 0;
}

/* The store sampler, where the CPU has one; all CPUs or none.  Its
 * absence is said in store_event, never an error. */
static void attach_stores(struct sb_hw *h, const struct sb_pmu *pmu, uint64_t period,
			  char *store_event, size_t namelen)
{
	struct perf_event_attr st;
	char ev[96], why[256] = "";
	int first = h->nlinks;

	if (sb_pmu_store_attr(pmu, period, &st, ev, sizeof(ev), why, sizeof(why))) {
		snprintf(store_event, namelen, "none (%s)", why);
		return;
	}
	for (int cpu = 0; cpu < h->ncpus; cpu++)
		if (open_attach(h, &st, cpu, h->skel->progs.on_store, "PEBS store", why,
				sizeof(why))) {
			while (h->nlinks > first)
				bpf_link__destroy(h->links[--h->nlinks]);
			snprintf(store_event, namelen, "none (%s)", why);
			return;
		}
	snprintf(store_event, namelen, "%s", ev);
}

int sb_hw_attach(struct sb_hw *h, const struct sb_pmu *pmu, unsigned lbr_hz,
		 uint64_t load_period, uint64_t store_period, char *load_event,
		 char *store_event, size_t namelen, char *err, size_t errlen)
{
	struct perf_event_attr lbr, load;
	int ret;

	if (sb_pmu_lbr_attr(pmu, lbr_hz, &lbr, err, errlen) ||
	    sb_pmu_load_attr(pmu, load_period, &load, load_event, namelen, err, errlen))
		return -EINVAL;
	for (int cpu = 0; cpu < h->ncpus; cpu++) {
		if ((ret = open_attach(h, &lbr, cpu, h->skel->progs.on_lbr, "LBR", err, errlen)) ||
		    (ret = open_attach(h, &load, cpu, h->skel->progs.on_load, "PEBS load", err,
				       errlen))) {
			sb_hw_stop(h);
			return ret;
		}
	}
	attach_stores(h, pmu, store_period, store_event, namelen);
	return 0;
}

int sb_hw_read_counters(struct sb_hw *h, uint64_t out[SB_HWCNT_MAX])
{
	__u64 *vals;

	memset(out, 0, sizeof(uint64_t) * SB_HWCNT_MAX);
	if (!h)
		return 0;
	vals = calloc((size_t)h->ncpus, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (__u32 k = 0; k < SB_HWCNT_MAX; k++) {
		if (bpf_map__lookup_elem(h->skel->maps.hw_counters, &k, sizeof(k), vals,
					 sizeof(*vals) * (size_t)h->ncpus, 0))
			continue;
		for (int c = 0; c < h->ncpus; c++)
			out[k] += vals[c];
	}
	free(vals);
	return 0;
}

void sb_hw_stop(struct sb_hw *h)
{
	if (!h)
		return;
	for (int i = 0; i < h->nlinks; i++)
		bpf_link__destroy(h->links[i]);
	h->nlinks = 0;
}

void sb_hw_close(struct sb_hw *h)
{
	if (!h)
		return;
	sb_hw_stop(h);
	free(h->links);
	hwsample_bpf__destroy(h->skel);
	free(h);
}
