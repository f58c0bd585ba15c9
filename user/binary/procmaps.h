/* SPDX-License-Identifier: MIT */
/*
 * A process's file mappings (/proc/PID/maps) and the binaries behind
 * them, so runtime addresses can be turned into (binary, vaddr).
 */
#ifndef SB_PROCMAPS_H
#define SB_PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sb_elf;

struct sb_mapping {
	uint64_t start, end;    /* runtime range */
	uint64_t pgoff;         /* file offset of start */
	bool exec;              /* 'x' permission */
	int bin;                /* index into sb_maps binaries */
};

struct sb_maps;

struct sb_maps *sb_maps_alloc(void);
void sb_maps_free(struct sb_maps *m);

/*
 * (Re)reads /proc/PID/maps.  Mappings of files only ([heap], anon and
 * friends are skipped).  Binaries are opened lazily and kept across
 * refreshes, keyed by path and inode; one that only /proc/PID names
 * (sb_maps_binary_path) is opened at once, while the process lives.
 * Returns 0, or -errno (ESRCH when the process is gone).
 */
int sb_maps_refresh(struct sb_maps *m, int pid);
/* Parses maps text (for tests); same semantics as refresh. */
int sb_maps_parse(struct sb_maps *m, const char *text);

/*
 * Runtime address -> binary index and binary vaddr.  Returns 0, or -1
 * when no file mapping covers addr.
 */
int sb_maps_resolve(struct sb_maps *m, uint64_t addr, int *bin, uint64_t *vaddr);

/*
 * The same for a live process: on a miss (a library mapped since the last
 * look), re-read its maps, at most every 50 ms whoever asks, so a burst
 * of addresses in unmapped code (JIT, vdso) costs one read, not one each.
 */
int sb_maps_resolve_live(struct sb_maps *m, int pid, uint64_t addr, int *bin,
			 uint64_t *vaddr);
/* Counts successful refreshes: caches of resolved addresses compare it. */
uint64_t sb_maps_generation(const struct sb_maps *m);

size_t sb_maps_nbinaries(const struct sb_maps *m);
/* Where this process opens it and attaches probes to it: the path maps
 * shows, or, when that names no such file here (another mount namespace,
 * deleted), a /proc/PID path to the same file (procpath.h). */
const char *sb_maps_binary_path(const struct sb_maps *m, int bin);
/* The path as the target names it (maps, " (deleted)" left out): what a
 * profile shows. */
const char *sb_maps_binary_name(const struct sb_maps *m, int bin);
/* Whether maps showed it deleted. */
bool sb_maps_binary_deleted(const struct sb_maps *m, int bin);
/* Opens the ELF on first use; NULL when it cannot be opened. */
struct sb_elf *sb_maps_binary_elf(struct sb_maps *m, int bin);
/* Index of the binary whose path ends with "/name" or equals name, or -1. */
int sb_maps_find_binary(const struct sb_maps *m, const char *basename_prefix);

/* Current mappings, for iteration. */
size_t sb_maps_count(const struct sb_maps *m);
const struct sb_mapping *sb_maps_get(const struct sb_maps *m, size_t i);

#endif
