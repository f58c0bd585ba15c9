/* SPDX-License-Identifier: MIT */
/*
 * The hardware path inside a recording (--events): choosing it, starting
 * its samplers after the main BPF object, aggregating their records, its
 * metadata.  It owns the PMU description, the samplers (hwsample.h) and
 * the aggregator (hwagg.h) and is given what it needs; user/record drives
 * it and prints what it reports: nothing here prints, errors come back as
 * -errno with a message in the caller's buffer.  The events of its
 * counter keys come from hwagg.c, asked by record_write.c.
 */
#ifndef SB_HWSESSION_H
#define SB_HWSESSION_H

#include <stddef.h>
#include <stdint.h>

struct sb_builder;
struct sb_hwagg;
struct sb_hwsession;
struct sb_profile;

/* PEBS: one load sampled in this many (a prime, so loop strides do not
 * alias with it). */
#define SB_HW_LOAD_PERIOD 20011
/* PEBS stores: one in this many (prime; stores are fewer than loads). */
#define SB_HW_STORE_PERIOD 10007

/*
 * Before the target starts: detects the PMU and picks the path that
 * events_req (enum sb_events_mode) asks for.  0 with *out and msg ""; or
 * 0 with msg saying why when auto falls back to software (the caller
 * prints the one line); -ENODEV with msg (--events hw without a PMU), or
 * -ENOMEM.
 */
int sb_hwsession_alloc(struct sb_hwsession **out, int events_req, char *msg, size_t len);
/* start and meta take the session alloc made; record, stop, agg and free
 * also accept NULL (no session). */
void sb_hwsession_free(struct sb_hwsession *hs);

struct sb_hwsession_opts {
	int pid;                  /* target tgid */
	int ringbuf_fd;           /* the main object's ring buffer, shared */
	size_t ringbuf_bytes;
	unsigned sample_hz;       /* LBR sampling rate (record's -F) */
};

/*
 * After the main BPF object is loaded: on the hardware path, loads and
 * attaches the samplers.  0 with msg "" when they run (or the path is
 * software); 0 with msg saying why when auto falls back to software; a
 * negative errno with msg when --events hw cannot have them, or -ENOMEM.
 */
int sb_hwsession_start(struct sb_hwsession *hs, const struct sb_hwsession_opts *o,
		       char *msg, size_t len);

/* A record of type SB_REC_LBR or SB_REC_LOAD: aggregated, its count
 * events added to b.  0; -1 when malformed (counted in hw_bad_records);
 * -ENODEV when no hardware sampler runs, so the record is not ours. */
int sb_hwsession_record(struct sb_hwsession *hs, struct sb_builder *b, const void *data,
			size_t size);
/* Detaches the samplers; their counters stay readable. */
void sb_hwsession_stop(struct sb_hwsession *hs);

/* The path taken, its counters, the top sampled loads.  Returns the
 * hardware samples dropped (ring buffer full), for the caller to warn. */
uint64_t sb_hwsession_meta(struct sb_hwsession *hs, struct sb_profile *p);

/* The aggregator of the LBR edges and PEBS loads, which names their keys'
 * events (hwagg.h); NULL on the software path or for a NULL session. */
struct sb_hwagg *sb_hwsession_agg(const struct sb_hwsession *hs);
/* The PMU its samplers run on; NULL on the software path or for NULL. */
struct sb_pmu;
const struct sb_pmu *sb_hwsession_pmu(const struct sb_hwsession *hs);

#endif
