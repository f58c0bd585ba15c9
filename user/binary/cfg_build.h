/* SPDX-License-Identifier: MIT */
/*
 * Builds the control-flow graph (analysis/cfg/cfg.h) of every function of an
 * x86-64 ELF binary by a linear sweep with capstone, and caches it per
 * build-id (analysis/cfg/cfg_io.h holds the file format).
 *
 * What the graph does and does not contain (why: a linear sweep sees
 * only what the bytes say directly):
 *  - functions are the function symbols with nonzero size that lie in an
 *    executable section, one per address, in address order; a symbol that
 *    overlaps the previous function is skipped.  When the binary has no
 *    .symtab (stripped), the .symtab of its separate debug file
 *    /usr/lib/debug/.build-id/xx/rest.debug is used if present, else only
 *    .dynsym functions exist (fewer: see struct sb_cfg_build_stats);
 *  - a call always gets a CALL_RETURN edge, even to a noreturn callee
 *    (exit, abort, __stack_chk_fail): the block after it may be padding
 *    or another path's code, which makes it look reachable;
 *  - ret and indirect jumps have no edges: switch jump tables are not
 *    followed, so the case blocks have no predecessors (they are still
 *    blocks, since each starts after a jmp/ret or at a direct target);
 *  - a direct jump out of the function to another function's entry (a
 *    tail call) gets a CALL edge there and SB_BLOCK_TAIL_CALL, no other
 *    edge; other jumps out of the function (into a .cold part) get none;
 *  - a branch into the middle of an instruction (the "jne 1f; lock; 1:"
 *    idiom) is redirected to the start of that instruction;
 *  - undecodable bytes end the function's sweep: the blocks before them
 *    are kept, and the rest of the symbol has no block.
 */
#ifndef SB_CFG_BUILD_H
#define SB_CFG_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfg/cfg.h"

struct sb_elf;

enum sb_cfg_symsrc {
	SB_CFG_SYMS_SYMTAB = 1,   /* the binary's own .symtab */
	SB_CFG_SYMS_DEBUGFILE,    /* stripped; .symtab of the debug file */
	SB_CFG_SYMS_DYNSYM,       /* stripped; exported functions only */
};

struct sb_cfg_build_stats {
	enum sb_cfg_symsrc symsrc;
	uint64_t nsyms;           /* function symbols, one per address */
	uint64_t nfuncs;          /* functions in the graph */
	uint64_t noverlap;        /* skipped: overlap an earlier function */
	uint64_t nnotext;         /* skipped: not inside an executable section */
	uint64_t ninsns;          /* instructions decoded */
	uint64_t ninvalid;        /* functions whose sweep stopped at bytes
				   * capstone cannot decode */
	uint64_t nmidinsn;        /* branch targets inside an instruction */
};

/* NULL on failure (not x86-64, not an executable or shared object, no
 * memory), with a message in err.  stats may be NULL. */
struct sb_cfg *sb_cfg_build_stats(struct sb_elf *e, struct sb_cfg_build_stats *stats,
				  char *err, size_t errlen);
struct sb_cfg *sb_cfg_build(struct sb_elf *e, char *err, size_t errlen);

/*
 * What the builder finds beyond the format (cfg_io.h): its block flags'
 * patterns, as a revision in the cache file's name: a graph cached by a
 * builder that found less is not read.  Bump it when a pattern changes
 * (r2: a counted loop entered by a jump into it, cfg_insn.c).
 */
#define SB_CFG_CACHE_EXT ".r2.cfg"

/*
 * sb_cfg_build() through a cache: <cache_dir>/<build-id>.r<N>.cfg, cache_dir
 * NULL meaning $XDG_CACHE_HOME/scalebpf/cfg, else $HOME/.cache/scalebpf/cfg
 * (missing directories are created 0700).  *hit tells whether the graph
 * came from the cache.  Binaries without a build-id are built every
 * time.  A cache file that does not parse, or belongs to another
 * build-id, is rebuilt and replaced; writing is atomic (temporary file +
 * rename), and a failure to write only costs the next call a rebuild.
 * The cache does not notice debug symbols installed after it was written.
 */
struct sb_cfg *sb_cfg_cached(struct sb_elf *e, const char *cache_dir, bool *hit,
			     char *err, size_t errlen);

#endif
