/* SPDX-License-Identifier: MIT */
/*
 * A control-flow graph (cfg.h) as bytes, for the per-build-id cache and
 * for carrying graphs inside profiles.  Pure C, no ELF.
 *
 * Layout (all integers little-endian):
 *   magic "sbpfcfg\n" (8 bytes), u32 version (5; 4, 3 and 2 are read too),
 *   u32 nfuncs, u32 nblocks, u32 nedges,
 *   build-id: uleb len, bytes (len 0: none),
 *   per function in order: uleb name len, name bytes,
 *     sleb start - previous function's start, uleb end - start,
 *     uleb nblocks, then its blocks, each:
 *     uleb start - previous block's end, uleb end - start,
 *     uleb last_insn - start,
 *     uleb flags (SB_BLOCK_*; version 3 on, absent in version 2),
 *   per edge in array order: sleb src - previous src,
 *     uleb (zigzag(dst - src) << 3 | kind),
 *   u32 CRC-32 (sb_bytes_crc32) of every byte before it.
 * uleb/sleb are LEB128 varints (sleb is zigzag-coded): addresses inside
 * a binary are close together, so most fields take one or two bytes
 * (libc's graph: about 4 bytes per block and per edge).  Back-edge flags
 * are not stored; sb_cfg_finalize() derives them again.
 */
#ifndef SB_CFG_IO_H
#define SB_CFG_IO_H

#include <stddef.h>

#include "cfg.h"

/* 2: CALL edges; older caches are rebuilt.  3: block flags.  4: tail
 * calls (SB_BLOCK_TAIL_CALL and their CALL edges).  5: tail calls through
 * a pointer (SB_BLOCK_TAIL_INDIRECT).  Versions 2 to 4 are still read
 * (profiles recorded before carry them): version 2 graphs have has_flags
 * false and every block's flags 0, version 3 and 2 graphs has_tail_calls
 * false, version 4 and older has_indirect_tails false, "unknown", so
 * analyses that act on a flag act on nothing and old profiles report as
 * they did. */
#define SB_CFG_IO_VERSION 5
#define SB_CFG_IO_VERSION_NOINDIRECT 4
#define SB_CFG_IO_VERSION_NOTAIL 3
#define SB_CFG_IO_VERSION_NOFLAGS 2

/*
 * Encodes g (finalized or not) into a malloc'ed buffer.  The graph must
 * be what the builder makes: functions ascend without overlap, each
 * function's blocks follow the previous function's and lie in its range,
 * blocks ascend without overlap, last_insn lies in its block, edge kinds
 * are enum sb_edge_kind values, only CALL edges leave a function (for a
 * function's first block), FALLTHROUGH, SEQUENTIAL and CALL_RETURN go to
 * the next block, and counts fit in 32 bits.  Returns 0, or -1 with
 * errno (EINVAL for a graph that breaks those rules, ENOMEM).
 */
int sb_cfg_serialize(const struct sb_cfg *g, unsigned char **buf, size_t *len);

/*
 * Decodes untrusted bytes into a new finalized graph.  Every count and
 * index is checked against the input before use, and the graph against
 * the rules above (a CRC is no proof: anyone can recompute it), so
 * corrupt, truncated or crafted input gives -1 with a message in err,
 * never a crash or a graph the builder could not have made.  Returns 0
 * and sets *out, or -1.
 */
int sb_cfg_deserialize(const unsigned char *buf, size_t len, struct sb_cfg **out,
		       char *err, size_t errlen);

#endif
