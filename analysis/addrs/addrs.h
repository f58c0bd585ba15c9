/* SPDX-License-Identifier: MIT */
/*
 * Sampled data addresses in bounded memory (issue 3, software path).
 *
 * Every cpu-clock sample of a working thread is classified by the
 * recorder (user/record/addr_sampler.c): its access decoded to an address, an
 * access that cannot be decoded (the load overwrote its own address
 * register, a thread-local with no fs base, a gather), no data access at
 * all, or no code known at the IP.  Each class is counted exactly; the
 * decoded accesses go through a reservoir (Algorithm R, deterministic
 * seed), so memory is bounded by the capacity and the kept records are a
 * uniform sample of all decoded ones, whatever the recording length.
 *
 * The kept records become the profile's optional ADDRS chunk and the
 * counts its addr_* metadata, for later analyses (CHiP cache-hit
 * profiles, true/false-sharing estimates) and the reports.
 */
#ifndef SB_ADDRS_H
#define SB_ADDRS_H

#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

/* 3 MiB of records: a few minutes of 199 Hz sampling on many cores are
 * kept whole, longer recordings are sampled down uniformly. */
#define SB_ADDRS_DEFAULT_CAP ((size_t)1 << 16)

enum sb_addrs_class {
	SB_ADDRS_DECODED = 0,    /* an address: offered to the reservoir */
	SB_ADDRS_UNDECODABLE,    /* a data access whose address is lost */
	SB_ADDRS_NO_ACCESS,      /* neither the sampled nor the previous
				  * instruction touches data memory */
	SB_ADDRS_NO_CODE,        /* IP outside any known function / mapping */
	SB_ADDRS_NCLASS
};

struct sb_addrs_counts {
	uint64_t samples;        /* classified: the sum of the four below */
	uint64_t decoded, undecodable, no_access, no_code;
	uint64_t skid;           /* decoded at the instruction before the IP */
	uint64_t kept;           /* records in the reservoir (<= capacity) */
	uint64_t capacity;
};

struct sb_addrs;

/* cap 0: SB_ADDRS_DEFAULT_CAP.  NULL on ENOMEM. */
struct sb_addrs *sb_addrs_alloc(size_t cap, uint64_t seed);
void sb_addrs_free(struct sb_addrs *r);

/* A sample that yields no address: counted in class c (not DECODED). */
void sb_addrs_count(struct sb_addrs *r, enum sb_addrs_class c);
/* A decoded access: counted, and kept with probability cap / decoded. */
void sb_addrs_offer(struct sb_addrs *r, const struct sb_addr *a);

void sb_addrs_get_counts(const struct sb_addrs *r, struct sb_addrs_counts *c);
/* The kept records, in reservoir order; *n of them. */
const struct sb_addr *sb_addrs_kept(const struct sb_addrs *r, size_t *n);

/*
 * Into the profile: the kept records sorted by time become p->addrs
 * (replacing none: p->addrs must be empty) and the counts the addr_*
 * metadata.  0, or -1 on ENOMEM.
 */
int sb_addrs_store(const struct sb_addrs *r, struct sb_profile *p);
/* The counts back from a profile's metadata; -1 when it has none (a
 * profile recorded before address sampling existed). */
int sb_addrs_counts_read(const struct sb_profile *p, struct sb_addrs_counts *c);

/*
 * Sets each record's instance: the stored instance of the record's
 * thread whose [start_ns, end_ns] holds its time, the latest-starting
 * one when instances nest; -1 when none does.  0, or -1 on ENOMEM.
 */
int sb_addrs_assign_instances(struct sb_profile *p);

#endif
