/* SPDX-License-Identifier: MIT */
/* Sharing: ccSIM over a recording's memory traces, and the sampled
 * estimates (record_sharing.c). */
#ifndef SB_RECORD_SHARING_H
#define SB_RECORD_SHARING_H

struct sb_rec;
struct sb_profile;
struct sb_symbolizer;

/* Simulates both interleavings over <output>.trace and adds the SHARING
 * rows and coherence_* metadata to p.  Traces that cannot be simulated
 * (or too little memory) are said, in stderr and coherence_error, without
 * failing the recording: returns 0. */
int sb_rec_sharing(struct sb_rec *r, struct sb_profile *p, struct sb_symbolizer *sym);

/* Sampled sharing (record_watch.h): its reported lines, named like exact
 * mode's, as SHARING rows of mode sampled; never fails the recording. */
int sb_rec_sharing_sampled(struct sb_rec *r, struct sb_profile *p, struct sb_symbolizer *sym);

#endif
