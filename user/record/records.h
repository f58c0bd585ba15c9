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

#include <stddef.h>
#include <stdint.h>

#include "probes.h"
#include "sbpf_events.h"
#include "sbpf_keys.h"
#include "sections/sections.h"

struct sb_maps;
struct sb_idmap;

struct sb_records {
	const struct sb_plan *plan;
	struct sb_maps *maps;
	int pid;
	uint64_t maps_gen;          /* sb_maps_generation of the words cache */
	uint64_t bad_records;       /* unknown type, wrong size, bad probe id */
	uint64_t unattributed;      /* waits with no user-code call site */
	struct sb_idmap *words;     /* stack word -> what it is (records.c) */
};

/* The events of an exact-count batch (SB_REC_EXACT): one SB_EV_COUNT (or
 * SB_EV_COUNT_LAST) per block, keys tagged SB_KEY_EXACT, into ev[] of
 * SB_EXACT_BATCH.  Returns how many, or -1 for a malformed record (counted
 * in bad_records). */
int sb_records_exact(struct sb_records *d, const void *data, size_t size, struct sb_event *ev);

/* The call-site keys of a sample's call chain, each once: the blocks a
 * sample's time is spent under.  Returns how many (<= max). */
size_t sb_records_callsites(const struct sb_rec_sample *s, uint64_t *keys, size_t max);

/* True for the C and OpenMP runtimes (libc, libpthread, ld.so, libstdc++,
 * libgomp, libomp), whose frames are not the program's own. */
bool sb_records_is_runtime(const char *path);

/* Frees what the decoder caches. */
void sb_records_release(struct sb_records *d);

/* Primitive named by a runtime function, or SB_PRIM_MAX if none. */
uint16_t sb_prim_of_function(const char *name);

/* Fills *ev; returns 1 when the record yields an event, 0 when it does not,
 * -1 for a malformed record (counted in bad_records). */
int sb_decode_record(struct sb_records *d, const void *data, size_t size,
		     struct sb_event *ev);

#endif
