/* SPDX-License-Identifier: MIT */
/*
 * The section builder: turns a stream of synchronization events into
 * dynamic parallel-section instances with per-thread busy, wait and wall
 * time (LIME §2), plus wait totals by primitive and call site.
 *
 * A thread's timeline is cut into segments by synchronization.  A segment
 * ends when the thread arrives at a closing sync (barrier, end of an
 * OpenMP region, its own exit for join sections); its busy time is the
 * on-CPU time since the segment began, so oversubscribed runs still show
 * each thread's true work.  Arrivals at one sync object are grouped into
 * an instance until the first departure; an arrival after that opens the
 * next instance.  That is exact for barriers, whatever the thread count.
 * A join instance gathers the exits of one creator's children and closes
 * once none is left and the creator is in pthread_join, at that call
 * (children often exit before their creator gets there).
 *
 * Imbalance of an instance = mean over threads of (max busy - busy) / max
 * busy: the fraction of the instance each thread would idle at the
 * closing barrier with a core to itself (LIME Table 1).  Lost thread-time
 * = sum over threads of (max busy - busy).
 *
 * Events may arrive slightly out of order (several CPUs feed one ring
 * buffer): sb_builder_add() buffers them and sb_builder_flush() processes
 * those up to a watermark in timestamp order.
 */
#ifndef SB_SECTIONS_H
#define SB_SECTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include "profile/profile.h"

/* SB_EV_THREAD_START's prim: the recorder knows, from its thread table,
 * whether the start names a new thread on a tid whose previous thread's
 * exit record was lost; the builder cannot tell that from its own state
 * (a thread seen at attach has no life to compare). */
#define SB_START_TID_REUSED 1u

/* SB_EV_COUNT's prim: counts of work done up to the event (exact mode's
 * flushed batches), not samples of what the thread does at that moment.
 * While the thread is at a closing sync (arrived, not departed) they are
 * the work of the segment that sync closed; a sample there is of the
 * waiting and is dropped. */
#define SB_COUNT_DONE 1u

enum sb_ev_kind {
	SB_EV_THREAD_START = 1, /* obj: creating thread tid (0 unknown);
				 * prim: SB_START_* flags */
	SB_EV_THREAD_EXIT,      /* oncpu: final on-CPU ns */
	SB_EV_THREAD_SEEN,      /* existed before recording: segment unknown;
				 * obj 1: the process's initial thread */
	SB_EV_SYNC_ENTER,       /* prim: BARRIER/USER_BARRIER/OMP_BARRIER/JOIN */
	SB_EV_SYNC_EXIT,
	SB_EV_REGION_ENTER,     /* OpenMP fork by the master: obj = outlined fn */
	SB_EV_REGION_EXIT,
	SB_EV_TASK_ENTER,       /* outlined fn starts in a thread: obj = fn */
	SB_EV_TASK_EXIT,
	SB_EV_WAIT,             /* a finished wait that closes no section */
	SB_EV_COUNT,            /* obj: a key (sampled IP, edge id), dur: how
				 * many; summed per thread segment into the
				 * instance's vectors */
	SB_EV_COUNT_LAST,       /* the same, for the segment the thread's last
				 * arrival closed (counts flushed just after
				 * it, see SB_EXACT_LAST) */
	/*
	 * Condition variables, for finding inline barriers (condbar.c):
	 * obj = the condvar, site = the program's call, dur = the entry of
	 * the function making it (0 unknown).  Nothing for the live pass:
	 * their waits come as SB_EV_WAIT from the futex they block on.
	 */
	SB_EV_COND_WAIT,        /* pthread_cond_wait entered; prim COND, or
				 * USER_BARRIER when the user named the site */
	SB_EV_COND_WOKEN,       /* ... and returned */
	SB_EV_COND_BROADCAST,
	SB_EV_COND_SIGNAL,
};

struct sb_event {
	uint64_t ts;
	uint32_t tid;
	uint16_t kind;     /* enum sb_ev_kind */
	uint16_t prim;     /* enum sb_prim */
	uint64_t site;     /* return address of the user call, 0 unknown */
	uint64_t obj;      /* sync object, fn, or parent tid */
	uint64_t oncpu;    /* the thread's on-CPU ns at the event */
	uint64_t dur;      /* SB_EV_WAIT: wait time */
};

struct sb_builder_stats {
	uint64_t events;
	uint64_t instances;          /* finished instances */
	uint64_t stored_instances;   /* kept in full (limit per section) */
	uint64_t partial_instances;  /* skipped: a thread's segment began before recording */
	uint64_t unmatched;          /* exits without entries, tasks without regions */
	uint64_t sections;
	uint64_t unfinished_instances; /* still open when recording ended */
	uint64_t late_events;        /* arrived behind the watermark; processed anyway */
	uint64_t counts_unplaced;    /* COUNT_LAST events whose instance had
				      * already ended (sum of their counts) */
	uint64_t cond_barriers;      /* condvars found to be inline barriers */
	uint64_t cond_episodes;      /* their release episodes */
	uint64_t cond_log_full;      /* events past the log's limit: detection skipped */
	uint64_t tids_reused;        /* threads started on the tid of one that had
				      * exited: counted as threads of their own */
	uint64_t threads_evicted;    /* sb_builder_cut: ended threads nothing
				      * referred to, dropped from the table */
	uint64_t exits_unjoined;     /* exits of threads whose creator is unknown
				      * (started before recording): in no join
				      * instance, whose thread counts lack them */
};

struct sb_builder;
struct sb_idmap;

/* max_instances: instances kept in full per section (aggregates count all). */
struct sb_builder *sb_builder_alloc(uint64_t max_instances);
/* A join of one thread (a program's one worker) is no parallel section,
 * and is left out, unless on: `scalebpf stack`'s one-thread runs, whose
 * fork-join phases are just that. */
void sb_builder_single_joins(struct sb_builder *b, bool on);
void sb_builder_free(struct sb_builder *b);

/* Returns 0 or SB_ERR_NOMEM. */
int sb_builder_add(struct sb_builder *b, const struct sb_event *ev);
/* Processes buffered events with ts <= watermark, in ts order. */
int sb_builder_flush(struct sb_builder *b, uint64_t watermark);
/*
 * Inline mutex + condvar barriers (SPLASH's BARRIER macro) have no
 * function to probe: whether a condvar is one shows only from its whole
 * history.  With a log, the builder keeps every event it processes (at
 * most max); sb_builder_finish() then looks for condvars used as
 * barriers (condbar.c) and, if it finds any, builds everything again from
 * the log with their waits as barrier arrivals, so segments are cut there
 * and nowhere else.  Without one found, the result is the live one.
 * named_only: only condvars waited on at sites the user named barriers
 * (SB_EV_COND_WAIT with prim USER_BARRIER) are, without the test.
 * 0 or SB_ERR_NOMEM.
 */
int sb_builder_keep_log(struct sb_builder *b, size_t max, bool named_only);
/* Processes everything; instances still open are counted, not stored. */
int sb_builder_finish(struct sb_builder *b);

void sb_builder_get_stats(const struct sb_builder *b, struct sb_builder_stats *st);

/*
 * Rotation (`record --rotate`): moves what is finished -- the sections
 * with their totals, the stored instances, the waits and the statistics
 * -- into *out, a builder that holds only that (for sb_builder_totals,
 * _keys and _emit; it takes no events), and leaves b with its threads,
 * open instances and regions and no finished result.  So an instance is
 * in the cut taken after it ends, and in no other: cuts add up to the
 * builder never cut (instance numbers restart at 0 in each).  Threads
 * that ended and that nothing refers to any more leave b's table (the
 * cut's threads_evicted): b holds its live threads, not a day's.  Events
 * still queued are processed up to watermark first.  Not with a log
 * (sb_builder_keep_log): inline barriers are found from a whole history.
 * 0, SB_ERR_NOMEM (b unchanged), or -1 with a log.
 */
int sb_builder_cut(struct sb_builder *b, uint64_t watermark, struct sb_builder **out);

/*
 * Moving the result into a profile takes two phases, so that call sites
 * and counter keys are named in bulk by the caller (the recorder decodes
 * keys and loads CFGs binary by binary) instead of one at a time from
 * inside the walk:
 *
 *   sb_builder_keys()   lists what needs a name: the distinct call sites
 *                       and the distinct counter keys of the stored
 *                       instances, with their total weight;
 *   the caller          fills in each site's location and each key's event;
 *   sb_builder_emit()   writes sections, instances, vectors and waits from
 *                       that table.
 *
 * Everything is listed in the order the write walks it, first seen first
 * (sections' sites; per stored instance, its keys ascending; waits'
 * sites): naming them in that order (sites[0..nsection_sites), keys,
 * then the remaining sites) adds locations and events to the profile in
 * a stable order.
 */
struct sb_sect_key {
	uint64_t key;
	uint64_t weight;      /* its counts, every stored instance and thread together */
	uint32_t instances;   /* stored instances that counted it */
	int32_t event;        /* the caller's answer: index in p->events, -1 (the
			       * default) drops it; keys of one event are summed */
};

struct sb_sect_table {
	uint64_t *sites;          /* distinct call sites, first seen */
	int32_t *locs;            /* the caller's answer per site: index in
				   * p->locs; a section's must be valid, a
				   * wait's may be -1 (the default) */
	size_t nsites;
	size_t nsection_sites;    /* sites[0..nsection_sites): the sections';
				   * after them the waits' (site 0 is not one) */
	struct sb_sect_key *keys; /* distinct counter keys, first seen */
	size_t nkeys;
	struct sb_idmap *index;   /* private: site or key -> its position + 1 */
};

/* After sb_builder_finish, before sb_builder_emit: the SB_KEY_TOTAL
 * counts (include/sbpf_keys.h) of the section emitted at index `section`
 * (creation order), summed over all its instances and threads; *threads:
 * the most threads of one instance that counted any.  0, or -1 past the
 * last section. */
int sb_builder_totals(const struct sb_builder *b, size_t section, uint64_t *out,
		      uint32_t *threads);

/* After sb_builder_finish.  0 or SB_ERR_NOMEM; free t either way. */
int sb_builder_keys(const struct sb_builder *b, struct sb_sect_table *t);
void sb_sect_table_free(struct sb_sect_table *t);
/* Moves sections, instances, waits and vectors into p, named by t (from
 * sb_builder_keys of the same builder).  0 or SB_ERR_NOMEM (also for a
 * section without a location). */
int sb_builder_emit(struct sb_builder *b, struct sb_profile *p, const struct sb_sect_table *t);

#endif
