/* SPDX-License-Identifier: MIT */
/*
 * Software data-address sampling at record time: each cpu-clock sample
 * of a working thread is decoded (user/binary/memop.c, with its own registers
 * and skid correction) into a data address, classified and counted, and
 * the decoded ones go into the bounded reservoir of analysis/addrs/addrs.h.
 */
#ifndef SB_ADDR_SAMPLER_H
#define SB_ADDR_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "binary/symbolize.h"
#include "sbpf_events.h"

struct sb_maps;
struct sb_addr;
struct sb_profile;
struct sb_addr_sampler;

/* maps: the target's mappings (refreshed here, rate-limited, when a
 * sampled IP is not mapped yet); cap 0: the default reservoir size. */
struct sb_addr_sampler *sb_addr_sampler_alloc(struct sb_maps *maps, int pid, size_t cap);
void sb_addr_sampler_free(struct sb_addr_sampler *s);

/* true with the decoded access in *out and its code's binary (an index
 * into maps) when the sample's address was decoded. */
bool sb_addr_sampler_add(struct sb_addr_sampler *s, const struct sb_rec_sample *rs,
			 struct sb_addr *out, int *out_bin);

/*
 * Into the profile, after the sections are emitted: the kept records
 * (their IPs symbolized with loc_fn, their instances assigned), the
 * addr_* counts, and the decoding cost.  0, or -1 on ENOMEM.
 */
int sb_addr_sampler_store(struct sb_addr_sampler *s, struct sb_profile *p,
			sb_loc_fn loc_fn, void *loc_ctx);

#endif
