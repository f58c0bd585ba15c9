/* SPDX-License-Identifier: MIT */
/* The CHIP rows and machine model of a recording (record_chip.c). */
#ifndef SB_RECORD_CHIP_H
#define SB_RECORD_CHIP_H

#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

struct sb_rec;

/* After the builder finished, before it emits (base: the profile's
 * sections before it); c: the BPF counters.  0, or -1 out of memory. */
int sb_rec_chip_rows(struct sb_rec *r, struct sb_profile *p, size_t base, const uint64_t *c);

/* After the sections and instances are in p: the sampled probes' rows
 * per section and --region function (record_footprint.h,
 * record_reuse.h).  0, or -1 out of memory. */
int sb_rec_chip_region_rows(struct sb_rec *r, struct sb_profile *p);

#endif
