/* SPDX-License-Identifier: MIT */
/*
 * The probe plan: which rare synchronization functions of which binaries
 * get entry/return uprobes, at which (cheap) site, and what each means.
 * Hot fast paths (mutex lock, critical-section entry) are never probed:
 * their contended waits are seen where they reach the kernel.
 */
#ifndef SB_PROBES_H
#define SB_PROBES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum sb_probe_role {
	SB_ROLE_SYNC = 1,   /* a closing barrier: arrival at entry, departure at return */
	SB_ROLE_JOIN,       /* pthread_join: a wait that names the join site */
	SB_ROLE_REGION,     /* OpenMP fork/join by the master; arg = outlined fn */
	SB_ROLE_TASK,       /* an outlined OpenMP function running in a thread */
	SB_ROLE_EXACT,      /* scalebpf_exact_batch of a `scalebpf cc` program:
			     * entry only, copies the exact-count batch */
	SB_ROLE_CHIP,       /* scalebpf_chip_batch of a `scalebpf cc --chip`
			     * program: entry only, copies the CHiP counters */
	SB_ROLE_CREATE,     /* pthread_create: arg = the start routine of the
			     * thread created before it returns */
	/* Condition variables, arg = the condvar, for finding inline barriers
	 * (analysis/sections/condbar.c); not waiting calls of their own:
	 * their futex waits are seen as before. */
	SB_ROLE_COND_WAIT,      /* pthread_cond_wait: entry and return */
	SB_ROLE_COND_BROADCAST, /* entry only */
	SB_ROLE_USER_REGION,    /* a --region function: entry and return, with
				 * the thread's CHiP counters (record_region.h) */
	SB_ROLE_CHIP_THREAD,    /* scalebpf_chip_thread of a --chip program:
				 * entry only, where a thread's counters are */
};

struct sb_probe {
	char *binary;        /* path */
	char *func;
	uint64_t func_vaddr, func_size;
	uint64_t site_vaddr; /* where the uprobe sits (sb_elf_probe_site) */
	uint64_t offset;     /* file offset of the site */
	uint16_t role, prim; /* enum sb_probe_role, enum sb_prim */
	uint8_t arg;         /* 0 none, 1..3: which argument is the object */
	bool emulated;       /* the kernel emulates the probed instruction */
	bool fixed_obj;      /* the object is the function itself (user barriers) */
	/* Flags for the probe's BPF cookie (SB_COOKIE_DEPART: glibc's
	 * pthread_barrier_wait, whose departure is its futex return, so it
	 * gets no uretprobe); 0 for most probes. */
	uint64_t cookie_flags;
	uint8_t region;      /* SB_ROLE_USER_REGION: its --region index */
};

/* A function whose on-CPU time is spin waiting, found by sampling. */
struct sb_spin_fn {
	char *binary;
	uint64_t vaddr, size;
	uint16_t prim;
};

struct sb_plan {
	struct sb_probe *probes;
	size_t n, cap;
	struct sb_spin_fn spins[8];
	size_t nspins;
	char **libs;            /* canonical paths of the loaded libraries */
	size_t nlibs;
	bool condvars;          /* condvar probes: inline barriers are looked for */
	bool condvars_named;    /* ... only at the sites below (--barrier FILE:LINE) */
	struct sb_site { char *binary; uint64_t vaddr; } *sites;  /* pthread_cond_wait
				 * calls the user named barriers: vaddr inside the call */
	size_t nsites;
	bool exact;             /* the executable counts its blocks (exact mode) */
	bool lenient;           /* following: a --barrier absent from one image
				 * is a note, not an error */
	uint32_t barriers_found; /* bit i: --barrier i matched in some image */
	bool trace_mem;         /* ... and traces its loads and stores */
	bool chip;              /* ... and profiles its cache hits (--chip) */
	uint32_t regions_found; /* bit i: --region i matched in some image */
};

void sb_plan_init(struct sb_plan *pl);
void sb_plan_free(struct sb_plan *pl);

/* Notes a library the target loads (all of them: their imports decide
 * which runtime functions are worth probing).  0 or -ENOMEM. */
int sb_plan_add_library(struct sb_plan *pl, const char *path);

/*
 * Builds the plan once the libraries are known: the runtime libraries'
 * (libc, libpthread, libgomp, libomp) sync functions that some loaded
 * binary imports, and in the target executable: OpenMP outlined functions,
 * static libc, the
 * --barrier functions, and (auto_barrier) functions named *barrier* in a
 * program that uses condition variables and no pthread barrier.  msg
 * receives one line per decision worth telling the user.
 */
typedef void (*sb_plan_msg_fn)(void *ctx, const char *fmt, ...);
/*
 * --barrier may name a place instead of a function: FILE:LINE (as the
 * report prints locations), or a call site, 0xVADDR or BINARY+0xVADDR
 * (as JSON and stripped binaries print them).  The condvar waits called
 * there become barrier waits (inline SPLASH barriers); a call there of a
 * function of the executable makes that function a barrier.
 */
struct sb_elf;
bool sb_barrier_is_site(const char *spec);
/* 0 or more probes added, -ENOENT (msg said why), -ENOMEM (probe_sites.c). */
int sb_plan_add_site_barrier(struct sb_plan *pl, struct sb_elf *e, const char *spec, size_t idx,
			     sb_plan_msg_fn msg, void *ctx);
/* The function at vaddr as a user barrier (probes.c): 1 added, 0 already. */
int sb_plan_add_barrier_func(struct sb_plan *pl, struct sb_elf *e, const char *sym,
			     uint64_t vaddr, uint64_t size);
/* Whether the call site vaddr of binary was named a barrier. */
bool sb_plan_site_named(const struct sb_plan *pl, const char *binary, uint64_t vaddr);
/* --region FUNC (probe_regions.c): FUNC of the executable, entry and
 * return, as region idx.  1 added, 0 (lenient: not in this image), or
 * -ENOENT (msg said why), -EEXIST (probed for another role), -ENOMEM. */
int sb_plan_add_region(struct sb_plan *pl, struct sb_elf *e, const char *func, size_t idx,
		       sb_plan_msg_fn msg, void *ctx);
int sb_plan_build(struct sb_plan *pl, const char *path,
			   char *const *barriers, size_t nbarriers, bool auto_barrier,
			   char *const *regions, size_t nregions,
			   sb_plan_msg_fn msg, void *ctx);

/* After libraries were added (dlopen): the runtime functions that some
 * binary now imports.  Returns probes added, or -errno. */
int sb_plan_add_runtime(struct sb_plan *pl, const char *exe);
/* A library that is not a runtime, loaded by dlopen: its OpenMP outlined
 * functions and (auto_barrier) its barrier functions, as for the
 * executable.  Returns probes added, or -errno. */
int sb_plan_add_user_binary(struct sb_plan *pl, const char *path, bool auto_barrier,
			    sb_plan_msg_fn msg, void *ctx);

#endif
