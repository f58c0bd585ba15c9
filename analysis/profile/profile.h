/* SPDX-License-Identifier: MIT */
/*
 * The scalebpf profile: in-memory model and its on-disk form.
 *
 * A profile is self-contained: every code location is stored already
 * symbolized, so `scalebpf report` works on another machine without the
 * binaries.  The on-disk form is a chunked file so that later analyses
 * (CHiP, sharing, speedup stacks) add chunk types without breaking readers:
 *
 *   header  : "SCALEBPF" magic (8 bytes), u32 format version, u32 flags
 *   chunks  : u32 type, u32 reserved(0), u64 payload length, payload,
 *             u32 CRC-32 of the chunk header and payload
 *   trailer : a chunk of type SB_CHUNK_END whose payload is the u64 number
 *             of chunks before it
 *
 * Integers are little-endian; strings are u32 length + bytes (no NUL).
 * A reader skips chunk types it does not know, and rejects a file without
 * the END trailer (truncated) or with a CRC mismatch (corrupt).
 */
#ifndef SB_PROFILE_H
#define SB_PROFILE_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#define SB_PROFILE_MAGIC "SCALEBPF"
#define SB_PROFILE_VERSION 1

enum sb_chunk_type {
	SB_CHUNK_META = 1,      /* key/value strings */
	SB_CHUNK_BINARIES = 2,
	SB_CHUNK_LOCS = 3,
	SB_CHUNK_THREADS = 4,
	SB_CHUNK_SECTIONS = 5,
	SB_CHUNK_INSTANCES = 6,
	SB_CHUNK_WAITS = 7,
	/* Optional from here: a version-1 file may lack them. */
	SB_CHUNK_EVENTS = 8,    /* what each vector entry counts */
	SB_CHUNK_VECTORS = 9,   /* per instance and event, per-thread counts */
	SB_CHUNK_CFGS = 10,     /* serialized control-flow graphs (cfg_io.h) */
	SB_CHUNK_ADDRS = 11,    /* sampled data addresses (analysis/addrs/addrs.h) */
	SB_CHUNK_SHARING = 12,  /* cache-line sharing (analysis/coherence/) */
	SB_CHUNK_CHIP = 13,     /* cache hit profiles (analysis/chip/) */
	SB_CHUNK_STACK = 14,    /* speedup stacks' times (analysis/stack/) */
	SB_CHUNK_END = 0x454e4421, /* "!DNE" */
};

/* Section kinds: what closes a parallel section. */
enum sb_section_kind {
	SB_SECT_BARRIER = 1,      /* pthread_barrier_wait */
	SB_SECT_USER_BARRIER = 2, /* --barrier SYMBOL (mutex+condvar barriers) */
	SB_SECT_OMP_REGION = 3,   /* end of an OpenMP parallel region */
	SB_SECT_OMP_BARRIER = 4,  /* explicit/implicit OpenMP barrier in a region */
	SB_SECT_JOIN = 5,         /* threads of one creator, closed at its pthread_join */
	SB_SECT_KIND_MAX
};

/* Wait primitives. */
enum sb_prim {
	SB_PRIM_OTHER = 0,
	SB_PRIM_BARRIER = 1,
	SB_PRIM_USER_BARRIER = 2,
	SB_PRIM_JOIN = 3,
	SB_PRIM_COND = 4,
	SB_PRIM_MUTEX = 5,
	SB_PRIM_SEM = 6,
	SB_PRIM_SPIN = 7,        /* sampled */
	SB_PRIM_RWLOCK = 8,
	SB_PRIM_OMP_REGION_END = 9,  /* implicit barrier at the end of a region */
	SB_PRIM_OMP_BARRIER = 10,
	SB_PRIM_OMP_CRITICAL = 11,
	SB_PRIM_OMP_LOCK = 12,
	SB_PRIM_OMP_IDLE = 13,   /* runtime threads parked between regions */
	SB_PRIM_MAX
};

const char *sb_section_kind_name(uint32_t kind);
const char *sb_prim_name(uint32_t prim);
/* Returns SB_PRIM_MAX when the name is unknown. */
uint32_t sb_prim_from_name(const char *name);

struct sb_kv {
	char *key;
	char *value;
};

struct sb_binary {
	char *path;
	char *build_id;     /* lowercase hex, NULL when the binary has none */
};

/* A code location, symbolized at record time. */
struct sb_loc {
	uint64_t addr;      /* runtime address in the target */
	uint64_t offset;    /* address relative to the binary's load base */
	int32_t binary;     /* index into binaries, -1 when unknown */
	uint32_t line;      /* 0 when unknown */
	char *function;     /* NULL when unknown */
	char *file;         /* source path as in DWARF, NULL when unknown */
};

struct sb_thread {
	uint32_t tid;
	uint32_t parent_tid;  /* 0 when unknown (existed before attach) */
	char *comm;
	uint64_t start_ns;    /* first seen (creation or attach) */
	uint64_t end_ns;      /* exit or end of recording */
	uint64_t oncpu_ns;    /* on-CPU time while recorded */
};

/* One thread's share of one dynamic section instance. */
struct sb_thread_time {
	uint32_t tid;
	uint64_t busy_ns;   /* on-CPU time spent working in the section */
	uint64_t wait_ns;   /* time at the closing synchronization */
	uint64_t wall_ns;   /* segment start to departure */
};

/* A static section: the closing sync location.  Aggregates cover every
 * instance, including those beyond the stored-instance limit. */
struct sb_section {
	uint32_t kind;               /* enum sb_section_kind */
	uint32_t loc;                /* index into locs */
	uint64_t ninstances;         /* all instances seen */
	uint32_t nthreads;           /* entries in per_thread */
	struct sb_thread_time *per_thread; /* summed over all instances */
	uint64_t lost_ns;            /* sum over instances of idle thread-time */
	uint64_t capacity_ns;        /* sum over instances of nthreads * max busy */
};

struct sb_instance {
	uint32_t section;            /* index into sections */
	uint64_t seq;                /* 0-based instance number in its section */
	uint64_t start_ns;
	uint64_t end_ns;
	uint32_t nthreads;
	struct sb_thread_time *per_thread;
};

/* Waits aggregated by (primitive, call site, object). */
struct sb_wait {
	uint32_t prim;               /* enum sb_prim */
	int32_t loc;                 /* call site, index into locs, -1 unknown */
	uint64_t object;             /* lock/condvar/barrier address, 0 unknown */
	uint64_t count;
	uint64_t wait_ns;
};

/* What a vector entry counts. */
enum sb_event_kind {
	SB_EVK_BLOCK_SAMPLES = 1, /* cpu-clock samples whose IP is in a block:
				   * time in the block, not executions */
	SB_EVK_EDGE = 2,          /* executions of a CFG edge (exact or LBR) */
	SB_EVK_BLOCK_COUNT = 3,   /* executions of a block (exact) */
	SB_EVK_HW = 4,            /* a hardware event at an instruction */
	SB_EVK_MAX
};

struct sb_event_def {
	uint32_t kind;              /* enum sb_event_kind */
	int32_t binary;             /* index into binaries, -1 unknown */
	uint64_t vaddr;             /* block start, edge source block, instruction */
	uint64_t vaddr2;            /* edge destination block; a block's last
				     * instruction; else 0 */
	int32_t loc;                /* symbolized vaddr, index into locs, -1 */
	int32_t loc2;               /* symbolized vaddr2, -1 */
	uint64_t hot;               /* block samples: the most sampled (skid-
				     * corrected) instruction, else 0 */
	int32_t loc_hot;            /* symbolized hot, -1 */
	uint32_t stmt_line;         /* block samples: a statement line at vaddr
				     * with no code of its own there (the debug
				     * info's first row at vaddr, superseded by
				     * another line's at the same address: the
				     * `if` a compiler hoisted out of a loop it
				     * copied), in loc's file; 0 none */
};

/* One event's per-thread counts in one stored instance, in the order of
 * the instance's per_thread array. */
struct sb_vector {
	uint32_t instance;          /* index into instances */
	uint32_t event;             /* index into events */
	uint32_t nthreads;
	uint64_t *counts;
};

/* A serialized sb_cfg (analysis/cfg/cfg_io.h) of one binary. */
struct sb_cfg_blob {
	int32_t binary;             /* index into binaries */
	uint64_t len;
	unsigned char *data;
};

/* One sampled data access (software address sampling, analysis/addrs/addrs.h):
 * a kept member of the bounded reservoir, not every sample. */
struct sb_addr {
	uint64_t ts;                /* sample time, CLOCK_MONOTONIC ns */
	uint64_t ip;                /* runtime IP of the accessing instruction
				     * (skid-corrected) */
	uint64_t addr;              /* effective data address */
	uint32_t tid;
	int32_t loc;                /* symbolized ip, index into locs, -1 */
	int32_t instance;           /* stored instance it fell in, -1 */
	uint8_t size;               /* access bytes, 0 unknown */
	uint8_t flags;              /* SB_ADDR_STORE, SB_ADDR_SKID */
};
#define SB_ADDR_STORE 0x1           /* writes memory */
#define SB_ADDR_SKID 0x2            /* the instruction before the sampled IP */

/*
 * Cache-line sharing (analysis/coherence/coherence.h): typed rows of one
 * analysis run each, so that a simulation's per-line, per-reference and
 * per-thread counts, its invalidator lists and races, and later the
 * sampled estimates, share one chunk.  Which counts a row has depends on
 * its kind; the others are 0.
 */
enum sb_sharing_kind {
	SB_SHARING_LINE = 1,        /* addr: a line; name: its data; refs */
	SB_SHARING_REF = 2,         /* addr: a reference's pc; loc */
	SB_SHARING_THREAD = 3,      /* tid: a simulated thread */
	SB_SHARING_INVALIDATOR = 4, /* loc: the store, loc2: the reference whose
				     * line it invalidated, tid: the storer */
	SB_SHARING_RACE = 5,        /* loc, loc2: two unlocked stores of the same
				     * bytes in one region */
	SB_SHARING_KIND_MAX
};

enum sb_sharing_mode {
	SB_SHARING_PIPED = 1,       /* exact: ccSIM, piped */
	SB_SHARING_INTERLEAVED = 2, /* exact: ccSIM, interleaved */
	SB_SHARING_SAMPLED = 3,     /* record: samples confirmed by watchpoints */
	SB_SHARING_MODE_MAX
};

enum sb_sharing_value {
	SB_SHV_LOADS, SB_SHV_STORES, SB_SHV_L1_HITS, SB_SHV_L2_HITS, SB_SHV_MISSES,
	SB_SHV_COH_TRUE, SB_SHV_COH_FALSE,     /* coherence misses */
	/* invalidations of data the row held (LINE, THREAD) or brought in
	 * (REF); in_true includes its locked and racy parts */
	SB_SHV_IN_TRUE, SB_SHV_IN_TRUE_LOCKED, SB_SHV_IN_TRUE_RACE, SB_SHV_IN_FALSE,
	SB_SHV_ACROSS_TRUE, SB_SHV_ACROSS_FALSE,
	SB_SHV_CAUSED,              /* REF: invalidations its stores caused */
	SB_SHV_THREADS,             /* LINE: threads that took part */
	SB_SHV_COUNT,               /* INVALIDATOR, RACE: how often */
	SB_SHV_BYTES_TRUE,          /* LINE: bytes two threads touched and one
				     * wrote (bit b: byte b < 64) */
	SB_SHV_FOOTPRINT_TRUE,      /* LINE: 1 when there are such bytes */
	/* sampled mode (LINE) */
	SB_SHV_SAMPLES,             /* samples that touched the line (their
				     * access, or one their block was about
				     * to make) */
	SB_SHV_HITS,                /* watchpoint hits */
	SB_SHV_CONFIRMS,            /* hits in confirming windows */
	SB_SHV_WINDOWS, SB_SHV_WINDOWS_CONFIRMED, SB_SHV_WINDOWS_IN_REGION,
	SB_SHV_HITM,                /* PMU loads that hit it modified elsewhere */
	SB_SHV_COST_PPM,            /* of its section's busy time */
	SB_SHV_SECTION,             /* its section's index + 1, 0 none */
	SB_SHV_SAMPLES_TIME,        /* samples whose access was to it: time */
	SB_SHV_PAIRS_IN_REGION,     /* (store, other thread's touch) pairs in
				     * one section instance */
	SB_SHV_PAIRS_ACROSS,        /* ... in different instances */
	SB_SHV_MAX
};

struct sb_sharing {
	uint32_t kind;              /* enum sb_sharing_kind */
	uint32_t mode;              /* enum sb_sharing_mode */
	uint64_t addr;
	int32_t loc, loc2;          /* index into locs, -1 */
	uint32_t tid;
	char *name;                 /* LINE: "counts+8" etc.; NULL otherwise */
	int32_t refs[4];            /* LINE: its references' locs, -1 */
	uint64_t v[SB_SHV_MAX];
};

/* "piped", "interleaved" (the JSON's and the listings' mode). */
const char *sb_sharing_mode_name(uint32_t mode);

/*
 * Cache hit profiles (analysis/chip/chip.h): a row per profiled region,
 * its CHiP counters summed over every instance and thread.  A region is
 * a parallel section, a function `record --region` named (every
 * outermost call, in any thread), or the whole run (every thread's
 * every access: a serial program's only region; recorded where no
 * section was profiled).  A row's shape
 * (max_bytes, line, rate) is the one the counters were made with.
 */
#define SB_CHIP_MAX_REGIONS 32      /* --region functions: region < 32 */
enum sb_chip_kind {
	SB_CHIP_KIND_SECTION = 0,   /* .section */
	SB_CHIP_KIND_FUNCTION = 1,  /* .region: meta chip_region_<region>_* */
	SB_CHIP_KIND_RUN = 2,       /* the whole run */
	SB_CHIP_KIND_MAX
};

enum sb_chip_mode {
	SB_CHIP_MODE_EXACT = 1,     /* every load and store (scalebpf cc --chip) */
	SB_CHIP_MODE_SAMPLED = 2,   /* record: footprint probes, no PMU */
	SB_CHIP_MODE_SAMPLED_PMU = 3, /* record: PEBS loads and reuse */
	SB_CHIP_MODE_MAX
};
#define SB_CHIP_ROW_DEPTHS 17       /* hits at depth 1..16, misses */
#define SB_CHIP_ROW_WINDOWS 8       /* footprint probe windows */

struct sb_chip_row {
	uint32_t section;           /* SECTION: index into sections; else 0 */
	uint32_t mode;              /* enum sb_chip_mode */
	uint32_t threads;           /* threads profiled: most of one instance */
	uint32_t line;              /* bytes */
	uint64_t max_bytes;         /* the largest cache mapped (16 depths) */
	uint32_t rate_t;            /* SHARDS T of 2^24 (2^24: every line) */
	uint64_t accesses;          /* every reference */
	uint64_t depth[SB_CHIP_ROW_DEPTHS]; /* sampled references by depth found */
	uint32_t kind;              /* enum sb_chip_kind */
	uint32_t region;            /* FUNCTION: its index in the chip_region_
				     * meta keys; else 0 */
	uint64_t busy_ns;           /* FUNCTION: time inside its outermost
				     * calls, summed; else 0 (a section's and
				     * the run's come from their threads) */
	/* mode SAMPLED (no PMU: accesses and depths 0): footprint probes
	 * (analysis/chip/chip_footprint.h) by window, ascending; windows
	 * without probes are 0 */
	uint64_t fp_window_ns[SB_CHIP_ROW_WINDOWS];
	uint64_t fp_probes[SB_CHIP_ROW_WINDOWS];
	uint64_t fp_touched[SB_CHIP_ROW_WINDOWS];
	uint64_t fp_universe;       /* bytes the probes were drawn from (mean) */
	/* mode SAMPLED_PMU (depths from reuses: analysis/chip/chip_reuse.h) */
	uint64_t reuse_samples;     /* the reuse probes behind depth[] */
	uint32_t resolved;          /* bit k: size k measured; the others'
				     * hit ratios are lower bounds */
};

/* "exact", "sampled", "sampled-pmu" (the JSON's mode). */
const char *sb_chip_mode_name(uint32_t mode);

/* A whole-run row of a recording's sampled mode: its shape, the rest 0
 * (the caller adds what its mode measured). */
void sb_chip_row_run(struct sb_chip_row *row, uint32_t mode, uint32_t threads, uint32_t line,
		     uint64_t max_bytes);

/*
 * A speedup stack's times (analysis/stack/stack.h): one phase (a section
 * of this profile, which is the run with the most threads) at one thread
 * count.  `scalebpf stack` runs the program at each count and keeps them.
 */
struct sb_stack_row {
	uint32_t section;      /* index into sections */
	uint32_t threads;      /* the run's */
	uint32_t pirate;       /* enum sb_stack_pirate */
	uint32_t held;         /* the pirate held its share (virtual: 1) */
	uint64_t base_ns;      /* the phase at one thread */
	uint64_t time_ns;      /* ... at `threads` */
	uint64_t nolock_ns;    /* the slowest thread: busy and blocked inside */
	uint64_t free_ns;      /* the slowest thread: busy */
	uint64_t imbalance_ns; /* waiting for each instance's slowest */
	uint64_t pirate_bytes; /* the cache the pirate left a thread */
	uint64_t slowdown_ppm; /* the pirate's slowdown x 10^6 */
};

struct sb_profile;
int sb_profile_stack_append(struct sb_profile *p, const struct sb_stack_row *row);

struct sb_profile {
	size_t nmeta;
	struct sb_kv *meta;
	size_t nbinaries;
	struct sb_binary *binaries;
	size_t nlocs;
	struct sb_loc *locs;
	size_t nthreads;
	struct sb_thread *threads;
	size_t nsections;
	struct sb_section *sections;
	size_t ninstances;
	struct sb_instance *instances;
	size_t nwaits;
	struct sb_wait *waits;
	size_t nevents;
	struct sb_event_def *events;
	size_t nvectors;
	struct sb_vector *vectors;
	size_t ncfgs;
	struct sb_cfg_blob *cfgs;
	size_t naddrs;
	struct sb_addr *addrs;
	size_t nsharing;
	struct sb_sharing *sharing;
	size_t nchip;
	struct sb_chip_row *chip;
	size_t nstack;
	struct sb_stack_row *stack;
};

/* Status codes; sb_profile_strerror() turns them into words. */
enum sb_status {
	SB_OK = 0,
	SB_ERR_IO = -1,        /* open/read/write failed: errno is kept */
	SB_ERR_MAGIC = -2,     /* not a scalebpf profile */
	SB_ERR_VERSION = -3,   /* newer format version than this reader */
	SB_ERR_TRUNCATED = -4, /* file ends before the END trailer */
	SB_ERR_CORRUPT = -5,   /* CRC mismatch or inconsistent contents */
	SB_ERR_NOMEM = -6,
};

struct sb_profile *sb_profile_alloc(void);
void sb_profile_free(struct sb_profile *p);

/* Appends; strings are copied.  Return an index, or -1 on ENOMEM. */
int sb_profile_meta_set(struct sb_profile *p, const char *key, const char *value);
/* The one way a number goes into the metadata: decimal, as every
 * reader (report, jq) expects.  An index, or -1 on ENOMEM. */
int sb_profile_meta_set_u64(struct sb_profile *p, const char *key, uint64_t value);

/* Appends a copy of row to p's CHIP rows: 0, or -1 without memory. */
int sb_profile_chip_append(struct sb_profile *p, const struct sb_chip_row *row);
const char *sb_profile_meta_get(const struct sb_profile *p, const char *key);
/*
 * The stored instance thread tid was in at time ts (profile_instances.c):
 * the instance of p listing tid whose [start_ns, end_ns] holds ts, the
 * latest-starting one when instances nest; -1 when none does.  The index
 * is of p's instances as they are at _alloc (NULL on ENOMEM).
 */
/* A path's last component ("" for NULL): files match by name across
 * machines and build trees. */
const char *sb_base_name(const char *path);
/* The same section in another profile (another run of the program): q's
 * section of p's section s's kind, function, file name and line, the
 * k-th of several that read alike as s is in p; -1 if none. */
long sb_section_match(const struct sb_profile *p, size_t s, const struct sb_profile *q);

struct sb_instance_index;
struct sb_instance_index *sb_instance_index_alloc(const struct sb_profile *p);
void sb_instance_index_free(struct sb_instance_index *x);
int32_t sb_instance_index_find(const struct sb_instance_index *x, uint32_t tid, uint64_t ts);

/* A numeric value (decimal, as _set_u64 writes it); 0 when absent. */
uint64_t sb_profile_meta_get_u64(const struct sb_profile *p, const char *key);
/* Binary bin is a library: not the profile's executable (meta
 * "executable"; when it names none of the binaries, a shared object by its
 * name, lib*.so[.N]). */
bool sb_profile_library(const struct sb_profile *p, int32_t bin);
long sb_profile_add_binary(struct sb_profile *p, const char *path, const char *build_id);
long sb_profile_add_loc(struct sb_profile *p, const struct sb_loc *loc);
long sb_profile_add_thread(struct sb_profile *p, const struct sb_thread *t);
/* per_thread arrays are copied. */
long sb_profile_add_section(struct sb_profile *p, const struct sb_section *s);
long sb_profile_add_instance(struct sb_profile *p, const struct sb_instance *in);
long sb_profile_add_wait(struct sb_profile *p, const struct sb_wait *w);
long sb_profile_add_event(struct sb_profile *p, const struct sb_event_def *e);
/* counts are copied. */
long sb_profile_add_vector(struct sb_profile *p, const struct sb_vector *v);
/* data is copied. */
long sb_profile_add_cfg(struct sb_profile *p, int32_t binary, const void *data, uint64_t len);

/*
 * Writes atomically: the data goes to a temporary file in the target's
 * directory, is fsync'ed and renamed over path, so an interrupted write
 * leaves either the old file, the complete new one, or nothing.
 * err (may be NULL) receives a message on failure.
 */
int sb_profile_write(const struct sb_profile *p, const char *path, char *err, size_t errlen);

/*
 * Whether sb_profile_write could write path now: the temporary file it
 * would write is created (and dropped) in path's directory, and path is
 * neither empty nor a directory.  A recorder checks this before it
 * records, so an unwritable -o never costs a whole run.  0, or an
 * SB_ERR_ code with the reason in err.
 */
int sb_profile_check_path(const char *path, char *err, size_t errlen);
/* On failure *out is NULL and err says what is wrong and where (offset).
 * Only regular files are read (symbolic links to them are fine): a
 * directory, FIFO or device is SB_ERR_IO at once, without blocking. */
int sb_profile_read(const char *path, struct sb_profile **out, char *err, size_t errlen);
/* The same from a file image in memory; name is what err calls it. */
int sb_profile_read_mem(const void *data, size_t len, const char *name,
			struct sb_profile **out, char *err, size_t errlen);
const char *sb_profile_strerror(int status);

#endif
