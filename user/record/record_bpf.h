/* SPDX-License-Identifier: MIT */
/*
 * The BPF side of `record` behind prepare/attach/start/poll/stop/finish,
 * so builtin-record.c never touches the skeleton.
 */
#ifndef SB_RECORD_BPF_H
#define SB_RECORD_BPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sbpf_events.h"

struct sb_bpf;

/* What the load needs; the target's pid comes after (sb_bpf_prepare_wait). */
struct sb_bpf_opts {
	bool stop_mode;                /* stop followed processes for attaching */
	bool follow_forks;             /* follow processes that followed ones fork */
	unsigned sample_hz;            /* cpu-clock sampling per CPU, 0 = off */
	size_t ringbuf_bytes;          /* power of two */
	bool stack_copy;               /* samples carry their stack (stacks.h) */
};

/* Called for each ring-buffer record; data is valid during the call. */
typedef int (*sb_bpf_record_fn)(void *ctx, const void *data, size_t size);

/*
 * Open, set the read-only data, load, in a thread of its own: the load
 * (~35 ms: libbpf parses the kernel's BTF, relocates, the verifier runs)
 * overlaps with planning the target's probes.  _wait joins it, sets the
 * target pid, and gives err a clear message on failure; it frees ld.
 * Once for each _start, or _cancel.  A command is forked before _start:
 * libbpf opens files without O_CLOEXEC (record_session.c).
 */
struct sb_bpf_loader;
int sb_bpf_prepare_start(struct sb_bpf_loader **ld, const struct sb_bpf_opts *opts);
int sb_bpf_prepare_wait(struct sb_bpf_loader *ld, struct sb_bpf **out, int pid,
			char *err, size_t errlen);
/* Instead of _wait, on an error path: joins it, frees what it loaded. */
void sb_bpf_prepare_cancel(struct sb_bpf_loader *ld);
/* Which program a uprobe runs. */
enum sb_uprobe_prog {
	SB_UPROG_PROBE = 0,   /* probe_enter, or probe_exit for a retprobe */
	SB_UPROG_EXACT,       /* exact_batch: a `scalebpf cc` batch */
	SB_UPROG_CHIP,        /* chip_batch: a `scalebpf cc --chip` batch */
	SB_UPROG_CHIP_THREAD, /* chip_thread: where a thread's counters are */
	SB_UPROG_REGION,      /* region_enter, or region_exit for a retprobe */
};

/* Entry or return probe at a file offset of a binary, with a cookie, of
 * the program `which` (enum sb_uprobe_prog, below; a batch program is an
 * entry probe).  It fires in process pid only (0: the first target). */
int sb_bpf_attach_uprobe(struct sb_bpf *s, const char *path, uint64_t offset,
			 bool retprobe, int prog, uint64_t cookie, int pid,
			 char *err, size_t errlen);
/* The dlopen hook: ld.so's _dl_debug_state at offset, to_state the
 * distance from it to r_debug.r_state (bytes, runtime = link-time). */
int sb_bpf_attach_dl_state(struct sb_bpf *s, const char *ldso, uint64_t offset,
			   int64_t to_state, int pid, char *err, size_t errlen);
/* Whether children pid forks wait (stopped) for their probes: when its
 * image has some (launch mode). */
int sb_bpf_fork_stop(struct sb_bpf *s, int pid, bool stop);
/* A `scalebpf cc --chip` executable run by pid keeps each thread's CHiP
 * counters at tp_offset from its thread pointer: where --region reads
 * those of threads that have not said yet (bpf/record_chip.bpf.h). */
int sb_bpf_chip_tls(struct sb_bpf *s, int pid, int64_t tp_offset);
/* Reuse probes (record_reuse.c): thread tid's counter of retired memory
 * operations, perf event fd, goes in slot (< SB_MEMOPS_SLOTS), read at
 * its watchpoint traps; fd < 0 takes the thread's out.  0 or -errno. */
int sb_bpf_memops_set(struct sb_bpf *s, uint32_t tid, uint32_t slot, int fd);
/* Adds a process to (or removes it from) the followed set. */
int sb_bpf_follow(struct sb_bpf *s, int pid, bool add);
/* The uprobes of pid, attached from now on, are not filtered by the
 * kernel: its leader exited alone (pthread_exit), and the kernel's pid
 * filter goes by the leader's address space, which it has no more, so
 * they would never fire.  The BPF programs still record only followed
 * processes; other processes calling the probed functions pay a trap. */
void sb_bpf_probe_wide(struct sb_bpf *s, int pid);
/* Sets sampled spin-wait range idx (< SB_MAX_SPIN_RANGES). */
int sb_bpf_set_spin_range(struct sb_bpf *s, unsigned idx, const struct sb_ip_range *r);
/* Gives an existing thread a state as if it went on CPU at now_ns, its
 * kernel runtime so far being runtime_ns (/proc/.../schedstat). */
int sb_bpf_seed_thread(struct sb_bpf *s, uint32_t tid, uint64_t now_ns,
		       uint64_t runtime_ns);
/* On-CPU ns of a thread still alive, as of now_ns.  0 or -ENOENT. */
int sb_bpf_thread_oncpu(struct sb_bpf *s, uint32_t tid, uint64_t now_ns, uint64_t *oncpu);
/* Attach tracepoints and the sampler, open the ring buffer. */
int sb_bpf_start(struct sb_bpf *s, sb_bpf_record_fn fn, void *ctx,
		 char *err, size_t errlen);
/* Returns records consumed, or a negative errno. */
int sb_bpf_poll(struct sb_bpf *s, int timeout_ms);
/* The same, waking up early too when fd (>= 0, e.g. a pidfd) becomes
 * readable: a target's exit is seen at once, not at the next tick. */
int sb_bpf_poll_fd(struct sb_bpf *s, int timeout_ms, int fd);
/* Counter totals over CPUs. */
int sb_bpf_read_counters(struct sb_bpf *s, uint64_t out[SB_CNT_MAX]);
/* The cpu-clock samplers on or off (--sample-duty); 0 or -errno. */
int sb_bpf_samples_enable(struct sb_bpf *s, bool on);
/* Detaches the uprobes that fire in pid (its process ended), in the
 * background; returns how many. */
unsigned sb_bpf_detach_pid(struct sb_bpf *s, int pid);
/* Detach every probe (the target runs on untouched), then drain. */
void sb_bpf_stop(struct sb_bpf *s);
void sb_bpf_finish(struct sb_bpf *s);
unsigned sb_bpf_nprobes(const struct sb_bpf *s);
/* Time the kernel spent in the cpu-clock sample program, and its runs
 * (all CPUs, target or not): counted only while the kernel.bpf_stats_enabled
 * sysctl is 1, else zeros.  0 or -errno. */
int sb_bpf_sample_stats(struct sb_bpf *s, uint64_t *run_ns, uint64_t *runs);
/* How uprobes are attached: "uprobe_multi" links (Linux >= 6.6, detached
 * together) or "perf_event" (one perf event each; slow to detach). */
const char *sb_bpf_uprobe_links(const struct sb_bpf *s);
/* The ring buffer's map fd, shared with the hardware samplers (hwsample.c). */
int sb_bpf_ringbuf_fd(struct sb_bpf *s);

/* The program for watchpoint events (record_watch.c attaches it with
 * PERF_EVENT_IOC_SET_BPF, which does not enable the event); -EINVAL. */
int sb_bpf_watch_prog_fd(const struct sb_bpf *s);

#endif
