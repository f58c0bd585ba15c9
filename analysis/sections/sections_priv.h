/* SPDX-License-Identifier: MIT */
/* Private to the section builder (sections.c, sections_emit.c). */
#ifndef SB_SECTIONS_PRIV_H
#define SB_SECTIONS_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "sbpf_keys.h"
#include "sections.h"
#include "vectors.h"

#define SB_SYNC_STACK 8

struct sb_idmap;
struct sb_evqueue;

struct sb_sect_arrival {
	uint32_t tid;
	uint32_t life;               /* the thread's lifetime (sb_sect_thread.life) */
	bool departed;
	uint64_t site, seg_start, arrive, depart, busy;
	struct sb_counts *counts;    /* the segment's event counts, owned */
};

/* One dynamic instance in the making. */
struct sb_sect_inst {
	struct sb_sect_inst *prev, *next;   /* the builder's live list owns instances */
	uint16_t prim;
	uint64_t obj;
	bool partial;          /* some thread's segment began before recording */
	uint32_t n, cap, ndeparted;
	struct sb_sect_arrival *a;
};

struct sb_sect_region {
	uint64_t id, fn, site;
	uint32_t master;
	struct sb_sect_inst *end;
	struct sb_sect_region *next;
};

struct sb_sect_thread {
	uint32_t tid, parent;
	/* Tids are reused (pid_max wraps, 32768 by default): one tid can be
	 * several threads in a recording.  life numbers each started thread
	 * (0: one that existed before recording), so sections count threads,
	 * not tids; exited marks a tid free for its next thread. */
	uint32_t life;
	bool exited;
	bool initial;                /* the process's first thread, seen at attach */
	bool joined_once;            /* it closed a join instance */
	uint32_t joins;              /* pthread_join calls it returned from */
	struct sb_sect_inst *first_join;  /* its first join instance, undecided */
	uint64_t first_join_site;
	bool seg_valid;
	uint64_t seg_ts, seg_oncpu;
	struct sb_sect_inst *pending;        /* instance it arrived in, not departed */
	uint64_t region;             /* id of the region whose task it runs */
	uint64_t join_site;          /* last pthread_join call site */
	struct sb_counts *seg_counts; /* counts of the current segment */
	uint32_t live_children;
	int nsync;
	struct { uint16_t prim; uint64_t site, obj, ts; } sync[SB_SYNC_STACK];
};

struct sb_sect_section {
	size_t index;          /* creation order = index among emitted sections */
	uint16_t kind;
	uint64_t site;
	uint64_t ninst, stored, lost, capacity;
	uint64_t totals[SB_KEY_TOTALS];   /* SB_KEY_TOTAL keys, every instance */
	uint32_t totals_threads;          /* most threads of an instance counting one */
	uint32_t npt, cappt;
	struct sb_thread_time *pt;
	struct sb_idmap *ptidx;     /* (tid, life) -> index in pt + 1 */
};

struct sb_sect_stored {
	struct sb_sect_section *sec;
	uint64_t seq, start, end;
	uint32_t n;
	struct sb_thread_time *pt;
	struct sb_vecset vec;        /* columns in pt order */
};

struct sb_sect_wait {
	uint16_t prim;
	uint64_t site, obj, count, wait;
};

struct sb_builder {
	uint64_t max_instances;
	bool single_joins;      /* a join of one thread is a section */
	struct sb_evqueue *queue;
	struct sb_idmap *threads;    /* tid -> bthread */
	struct sb_idmap *syncobjs;   /* (prim, obj) -> current inst */
	struct sb_idmap *sections;   /* (kind, site) -> bsection */
	struct sb_idmap *waits;      /* (prim|site, obj) -> bwait */
	struct sb_sect_region *regions;      /* active, most recent first */
	struct sb_sect_inst *live;           /* every instance not yet finalized */
	uint64_t next_region;
	uint32_t lives;              /* threads started so far (sb_sect_thread.life) */
	struct sb_sect_stored *stored;
	size_t nstored, capstored;
	struct sb_sect_section **secorder;  /* creation order, for stable output */
	size_t nsec, capsec;
	struct sb_builder_stats st;
	struct sb_event *log;        /* sb_builder_keep_log: every event processed */
	size_t nlog, caplog, maxlog;
	bool logging, named_only;
	bool log_over;          /* the log outgrew maxlog: events counted only */
	uint64_t late_cut;      /* the queue's late events at the last cut */
	int err;
};

bool sb_sect_grow(void **arr, size_t elem, size_t need, size_t *cap);
void sb_sect_wait_add(struct sb_builder *b, uint16_t prim, uint64_t site,
		      uint64_t obj, uint64_t dur);
/* Accounts a finished instance to its section (site_hint when no arrival
 * named a site), stores it within the limit and frees it. */
void sb_sect_finalize(struct sb_builder *b, struct sb_sect_inst *in, uint64_t site_hint);
void sb_sect_section_free(void *p);
/* One event, in order (sections.c). */
void sb_sect_process(struct sb_builder *b, const struct sb_event *ev);
/* After the live pass: finds condvar barriers in b's log and, when there
 * are, rebuilds b from the log with them as barriers (condbar.c). */
int sb_condbar_rebuild(struct sb_builder *b);
/* The end of a pass: joins never closed, instances left open. */
void sb_sect_finish_pass(struct sb_builder *b);

#endif
