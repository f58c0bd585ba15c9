/* SPDX-License-Identifier: MIT */
/* One recording: its target, probes, BPF side, records and section builder. */
#ifndef SB_RECORD_SESSION_H
#define SB_RECORD_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "follow.h"
#include "records.h"
#include "record_region.h"
#include "probes.h"
#include "sections/sections.h"
#include "target.h"

#define SB_REC_MAX_BARRIERS 32
#define SB_REC_MAX_REGIONS 32   /* a bit each in plan.regions_found */

struct sb_bpf;
struct sb_bpf_loader;
struct sb_maps;
struct sb_idmap;
struct sb_addr_sampler;
struct sb_stacks;
struct sb_hwsession;
struct sb_watch;
struct sb_fprobe;
struct sb_push;
struct sb_rotation;

struct sb_rec {
	/* options */
	int pid;
	const char *output;
	double duration_s;
	char *barriers[SB_REC_MAX_BARRIERS];
	size_t nbarriers;
	char *region_funcs[SB_REC_MAX_REGIONS];   /* --region FUNC */
	size_t nregions;
	bool auto_barrier, quiet, tty;
	bool follow, follow_set;     /* --follow/--no-follow (default: on with -- CMD) */
	bool follow_image;           /* exec and dlopen of followed processes: all
				      * but an explicit --no-follow (-p too) */
	unsigned sample_hz;
	uint64_t max_instances;
	bool single_joins;      /* --single-joins */
	unsigned long ringbuf_mb;
	char **cmd;
	int ncmd;
	int events_req;              /* --events: enum sb_events_mode (hw/pmu.h) */
	bool unwind_fp;              /* --unwind fp: no stack copies */
	unsigned watch_rate;         /* --watch-rate: watchpoint arms/s */
	unsigned chip_probes;        /* --chip, --chip-probes: footprint probes/s */
	uint64_t duty_on_ns, duty_period_ns;  /* --sample-duty ON/PERIOD (record_duty.c) */
	bool duty_started, duty_on, duty_warned;
	uint64_t duty_since, duty_on_total;   /* the samplers' state, their time on */
	double rotate_s;             /* --rotate: seconds an interval (record_rotate.c) */
	uint64_t keep, max_bytes;    /* --keep, --max-bytes: the directory's bound */
	struct sb_rotation *rot;     /* its state, with --rotate */
	const char *push_url;        /* --push URL (record_push.c) */
	const char *push_app;        /* --push-app: the store's application name */
	unsigned push_wait_ms;       /* --push-wait: the last wait for the store */

	/* state */
	bool spawned, child_exited;
	int child_status;
	struct sb_child child;
	struct sb_pin pin;           /* the target (-p PID, or the command):
				      * by identity, its pid may be reused */
	bool target_gone;            /* the pinned process exited */
	bool written;                /* the profile is on disk */
	char exe[4096];
	struct sb_plan plan;
	struct sb_bpf *bpf;
	struct sb_bpf_loader *loader; /* loading bpf (setup), NULL once joined */
	struct sb_maps *maps;
	struct sb_records recs;      /* ring records -> events (records.h) */
	struct sb_builder *builder;
	struct sb_idmap *threads;    /* tid -> struct sb_thread */
	uint64_t start_ns, end_ns;
	int64_t start_realtime;
	uint64_t records, nthreads_live;
	uint64_t exact_batches, exact_counts;   /* exact mode (`scalebpf cc`) */
	struct {                 /* `scalebpf cc --chip`: the first batch's shape */
		uint64_t batches, reshaped;   /* ... batches of another (or no valid)
					       * shape, dropped */
		uint64_t max_bytes;
		uint32_t line, rate_t;
	} chip;
	struct sb_fprobe *fprobe;    /* footprint probes (record_footprint.h) */
	struct sb_rprobe *rprobe;    /* reuse probes instead, with a PMU
				      * (record_reuse.h) */
	struct sb_regions regions;   /* --region functions, the whole run
				      * (record_region.h); allocated at the
				      * first record that needs it */
	unsigned spin_set;           /* bitmask of spin ranges installed */
	const char *stop_reason;
	char notes[2048];            /* user-facing warnings, stored in the profile */
	struct sb_addr_sampler *addrs; /* sampled data addresses (addr_sampler.h) */
	struct sb_stacks *stacks;    /* samples' call chains (stacks.h) */
	struct sb_hwsession *hw;     /* the hardware path (hw/hwsession.h) */
	struct sb_watch *watch;      /* sampled sharing (record_watch.h) */
	struct sb_push *push;        /* the sender, with --push (user/push/) */
	/* Process images followed (follow.h): maps, builder, recs, addrs,
	 * threads and nthreads_live above are those of fw.cur. */
	struct sb_follow_state fw;
};

/* `record --help` (record_usage.c). */
extern const char sb_record_usage[];
/* Prints "scalebpf record: <msg>" and returns 1 (the exit code). */
int sb_rec_fail(struct sb_rec *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* --events, before the target starts: detects the PMU and picks the
 * path; 0, or the exit code after a clear message (--events hw without a
 * PMU).  With auto and no PMU, one line says so. */
int sb_rec_choose_events(struct sb_rec *r);
/* Target, probe plan, BPF load/attach, thread seeding, child release. */
int sb_rec_setup(struct sb_rec *r);
void sb_rec_set_spin_ranges(struct sb_rec *r);
/* The ring buffer's record callback (record_route.c): one handler per
 * record type. */
int sb_rec_route_record(void *ctx, const void *data, size_t size);
/* A thread starts (SB_EV_THREAD_START) or is found running at attach
 * (SB_EV_THREAD_SEEN): its table entry and its event. */
void sb_rec_thread_seen(struct sb_rec *r, uint32_t tid, uint32_t parent, uint64_t ts,
			const char *comm, uint16_t kind);
/* A thread ends (a THREAD_EXIT record, or an exec ending its image). */
void sb_rec_thread_exit(struct sb_rec *r, const struct sb_rec_thread *rt);
void sb_rec_status(struct sb_rec *r, bool final);
/* Records lost to a full ring buffer, all sources (counters from BPF). */
uint64_t sb_rec_drops(const uint64_t *counters);
/* Detaches everything and drains what was recorded. */
void sb_rec_stop(struct sb_rec *r);
int sb_rec_write(struct sb_rec *r);
/* Before anything starts (record_checks.c): the capabilities, and the
 * output (a file, or with --rotate the directory); 0 or the exit code. */
int sb_rec_check_privileges(struct sb_rec *r);
int sb_rec_check_output(struct sb_rec *r);
/*
 * --rotate (record_rotate.c): the options ('T' --rotate, 'k' --keep, 'B'
 * --max-bytes; 0 or the exit code); the directory made ready (by
 * sb_rec_check_output); an interval written when one is due; the path
 * of the last one (sb_rec_write's), and what each profile written in the
 * rotation is given: its own start and duration, counts less the earlier
 * intervals', threads with their on-CPU time in it.
 */
int sb_rec_rotate_option(struct sb_rec *r, int opt, const char *arg);
int sb_rec_rotate_prepare(struct sb_rec *r);
int sb_rec_rotate_tick(struct sb_rec *r, uint64_t now);
const char *sb_rec_rotate_last_path(struct sb_rec *r);
const char *sb_rec_rotate_dir(struct sb_rec *r);
/* One interval's profile of the current image (record_write.c). */
int sb_rec_write_interval(struct sb_rec *r, const char *path);
void sb_rec_rotate_adjust(struct sb_rec *r, struct sb_profile *p);
void sb_rec_rotate_written(struct sb_rec *r, const char *path);
void sb_rec_rotate_free(struct sb_rec *r);
/* --sample-duty (record_duty.c): the option (0 or the exit code), the
 * samplers turned on and off as the time comes, and what the profile
 * says of it (sample_duty, samples_on_ns). */
int sb_rec_duty_option(struct sb_rec *r, const char *arg);
void sb_rec_duty_tick(struct sb_rec *r, uint64_t now);
void sb_rec_duty_meta(struct sb_rec *r, struct sb_profile *p);
/* --push (record_push.c): the options ('H' --push, 'a' --push-app, 'w'
 * --push-wait; 0 or the exit code), the sender's start before recording
 * (0 or the exit code), each written profile queued as pprof, and the
 * last wait with what was sent said. */
int sb_rec_push_option(struct sb_rec *r, int opt, const char *arg);
int sb_rec_push_start(struct sb_rec *r);
void sb_rec_push_profile(struct sb_rec *r, const struct sb_profile *p);
void sb_rec_push_finish(struct sb_rec *r);
void sb_rec_cleanup(struct sb_rec *r);
/* The pinned target exited: its image ends now, and its pid, free for
 * another process, is read no more (mappings). */
void sb_rec_target_gone(struct sb_rec *r);

#endif
