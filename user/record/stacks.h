/* SPDX-License-Identifier: MIT */
/*
 * A sample's user call chain.  SB_REC_SAMPLE records carry the kernel's
 * frame-pointer walk only; SB_REC_SAMPLE_STACK records also carry the top
 * of the user stack, unwound here with the binaries' CFI
 * (binary/unwind.h), so frameless code (gcc/clang -O2, Debian packages)
 * keeps its callers.  Where the CFI unwind stops early (the copy ends, a
 * pc without CFI) the frame-pointer chain continues it if it shares the
 * last frame found.  Every stop is counted and stored in the profile.
 */
#ifndef SB_STACKS_H
#define SB_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "sbpf_events.h"

struct sb_maps;
struct sb_profile;
struct sb_stacks;

struct sb_stacks *sb_stacks_alloc(struct sb_maps *maps, int pid);
void sb_stacks_free(struct sb_stacks *s);

/* The call chain of a sample record (either type, size bytes):
 * frames[0] is the IP, then return addresses, innermost first. */
size_t sb_stacks_chain(struct sb_stacks *s, const struct sb_rec_sample *rec, size_t size,
		       uint64_t *frames, size_t max);

/* Stores the unwinding statistics in the profile's metadata, and a
 * user-facing note in notes when many unwinds ended early.  counters:
 * the BPF side's (copies cut short). */
int sb_stacks_store(struct sb_stacks *s, struct sb_profile *p, const uint64_t *counters,
		    char *notes, size_t len);

#endif
