/* SPDX-License-Identifier: MIT */
/*
 * Ring-buffer records -> section-builder events.  Futex waits and spin
 * samples are classified by scanning the copied user stack: the innermost
 * exported runtime function (pthread_mutex_lock, pthread_cond_wait,
 * GOMP_critical_start...) names the primitive, and the first return
 * address into user code is the call site.
 */
#ifndef SB_RECORDS_H
#define SB_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "probes.h"
#include "sbpf_events.h"
#include "sbpf_keys.h"
#include "sections/sections.h"

struct sb_maps;
struct sb_idmap;

/* What turning records into events needs and counts (the stack-word
 * cache, malformed records), one per recording. */
struct sb_records {
	const struct sb_plan *plan;
	struct sb_maps *maps;
	int pid;
	uint64_t maps_gen;          /* sb_maps_generation of the words cache */
	uint64_t bad_records;       /* unknown type, wrong size, bad probe id */
	uint64_t unattributed;      /* waits with no user-code call site */
	uint64_t threads_unlisted;  /* ended threads the table lost (no memory) */
	struct sb_idmap *words;     /* stack word -> what it is (records.c) */
	struct sb_idmap *tasks;     /* tid -> the OpenMP outlined function it runs */
	struct sb_idmap *starts;    /* tid -> its start routine (pthread_create) */
	struct sb_idmap *creating;  /* tid in pthread_create -> the start routine */
	struct sb_idmap *sites;     /* (return address, caller, probe) -> call site */
	struct sb_idmap *condwaits; /* tid in pthread_cond_wait -> the condvar */
	struct sb_idmap *condsites; /* ... -> its call site */
	/* Runtime ranges of the user barrier functions entered so far
	 * (--barrier, *barrier*): exact counts of their blocks are the
	 * barrier's own, no segment's work (sb_records_exact). */
	struct sb_ip_range barfns[SB_MAX_SPIN_RANGES];
	uint32_t nbarfns;
};

/*
 * One function per record type.  Each takes a record whose type and size
 * the caller's routing table checked (record_route.c) and fills the
 * section-builder event(s) it yields.  A THREAD_NEW record's event is the
 * thread table's (sb_rec_thread_seen); LBR and LOAD records go to the
 * hardware path (hw/hwsession.h).
 */

/* SB_REC_PROBE_ENTER (enter) or SB_REC_PROBE_EXIT: 1, 0 for a probe that
 * yields no event (pthread_create), or -1 for a probe id or role not in
 * the plan (counted in bad_records). */
int sb_records_probe(struct sb_records *d, const struct sb_rec_probe *r, bool enter,
		     struct sb_event *ev);
/* SB_REC_WAIT: the stack scan names the primitive and the call site. */
void sb_records_wait(struct sb_records *d, const struct sb_rec_wait *w, struct sb_event *ev);
/* SB_REC_THREAD_NEW: a thread made by pthread_create learns its start
 * routine (the frame a tail-called barrier returns past). */
void sb_records_thread_new(struct sb_records *d, const struct sb_rec_thread *t);
void sb_records_thread_exit(struct sb_records *d, const struct sb_rec_thread *t,
			    struct sb_event *ev);
/* SB_REC_SAMPLE: one sample at its IP (an SB_EV_COUNT). */
void sb_records_sample(const struct sb_rec_sample *s, struct sb_event *ev);

/* SB_REC_EXACT, an exact-count batch: one SB_EV_COUNT (or
 * SB_EV_COUNT_LAST) per block, keys tagged SB_KEY_EXACT, into ev[] of
 * SB_EXACT_BATCH.  Returns how many, or -1 for a malformed batch (counted
 * in bad_records). */
int sb_records_exact(struct sb_records *d, const struct sb_rec_exact *r, struct sb_event *ev);

/* SB_REC_CHIP, a segment's cache hit profile counters: one SB_EV_COUNT
 * (or _LAST) per non-zero counter, keys SB_KEY_TOTAL | depth (and
 * SB_KEY_CHIP_ACCESSES), into ev[] of SB_KEY_TOTALS: section totals, kept
 * out of LIME's vectors.  Returns how many, or -1 (bad_records). */
int sb_records_chip(struct sb_records *d, const struct sb_rec_chip *r, struct sb_event *ev);

/* The call-site keys of a sample's call chain (frames[0] its IP, then
 * return addresses: stacks.h), each once: the blocks a sample's time is
 * spent under.  Returns how many (<= max). */
size_t sb_records_callsites(const uint64_t *frames, size_t n, uint64_t *keys, size_t max);

/* True for the C and OpenMP runtimes (libc, libpthread, ld.so, libstdc++,
 * libgomp, libomp), whose frames are not the program's own. */
bool sb_records_is_runtime(const char *path);

/* Frees what the stack-word cache holds. */
void sb_records_release(struct sb_records *d);

/* Primitive named by a runtime function, or SB_PRIM_MAX if none. */
uint16_t sb_prim_of_function(const char *name);

#endif
