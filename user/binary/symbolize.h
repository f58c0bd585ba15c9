/* SPDX-License-Identifier: MIT */
/*
 * Runtime addresses -> profile locations, symbolized at record time so
 * that the profile reports anywhere.  Binaries enter the profile with
 * their build-ids; those without line information are named once.
 */
#ifndef SB_SYMBOLIZE_H
#define SB_SYMBOLIZE_H

#include <stdint.h>

struct sb_maps;
struct sb_profile;
struct sb_symbolizer;

struct sb_symbolizer *sb_symbolizer_alloc(struct sb_maps *maps, struct sb_profile *p);
void sb_symbolizer_free(struct sb_symbolizer *s);
/* A location callback: the index of addr's location in a profile, or -1. */
typedef long (*sb_loc_fn)(void *ctx, uint64_t addr);

/* The index of addr's location in the profile (added on first use), or
 * -1 on ENOMEM.  s is a struct sb_symbolizer: the function is an
 * sb_loc_fn (sb_hwagg_event, sb_addr_sampler_store). */
long sb_symbolizer_loc(void *s, uint64_t addr);

/* sb_elf_ghost_line() at runtime address addr (of a mapped binary), 0
 * when none or unknown. */
unsigned sb_symbolizer_ghost_line(struct sb_symbolizer *s, uint64_t addr);
/* Binaries that had no debug information, comma separated ("" if none). */
const char *sb_symbolizer_nodebug(const struct sb_symbolizer *s);
/* Binaries whose lines came from a separate debug file, "binary (debug
 * file)", comma separated ("" if none). */
const char *sb_symbolizer_debug_files(const struct sb_symbolizer *s);

#endif
