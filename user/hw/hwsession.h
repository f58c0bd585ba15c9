/* SPDX-License-Identifier: MIT */
/*
 * The hardware path inside a recording (--events): choosing it, starting
 * its samplers after the main BPF object, routing its records to the
 * aggregator, its metadata.  record_session.c, builtin-record.c and
 * record_write.c each call in here at one place (the events of its
 * counter keys come from hwagg.c, asked by record_write.c).
 */
#ifndef SB_HWSESSION_H
#define SB_HWSESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sb_rec;
struct sb_profile;

/* PEBS: one load sampled in this many (a prime, so loop strides do not
 * alias with it). */
#define SB_HW_LOAD_PERIOD 20011

/* Before the target starts: detect the PMU and pick the path.  0, or the
 * exit code after a clear message (--events hw without a PMU). */
int sb_hwsession_choose(struct sb_rec *r);
/* After sb_bpf_prepare: load and attach the hardware samplers.  With
 * --events auto a failure falls back to software with one line. */
int sb_hwsession_start(struct sb_rec *r);
/* True when the record belonged to the hardware path (it is consumed). */
bool sb_hwsession_record(struct sb_rec *r, const void *data, size_t size);
void sb_hwsession_stop(struct sb_rec *r);
void sb_hwsession_cleanup(struct sb_rec *r);
/* The path taken, its counters and drops, the top sampled loads. */
void sb_hwsession_meta(struct sb_rec *r, struct sb_profile *p);

#endif
