/* SPDX-License-Identifier: MIT */
/*
 * Symbolized addresses of one binary whose lines come from a separate
 * debug file, kept across recordings: <cache dir>/<build-id>.sym
 * (cachefile.h, kind "sym").  Opening such a file's DWARF costs libdw
 * the decompression of all its debug sections (libc6-dbg: ~40 ms on the
 * development machine), on the way from the target's exit to the
 * profile; a recording whose addresses in it were all seen before does
 * not open it (symbolize.c).
 *
 * An entry holds the debug file's path, size, mtime, device and inode,
 * and is used only for a binary whose debug file that is now (elfdebug.c's
 * search: another copy of the binary may have none) and while that file
 * is unchanged; the build-id fixes the code, and the debug file of a
 * build-id describes that code only.  That identity also spares a hit the
 * .gnu_debuglink CRC pass over the file (elfsym.h's hint).  Entries
 * are untrusted input: anything that does not parse is a miss, replaced
 * when the entry is saved.
 */
#ifndef SB_SYMCACHE_H
#define SB_SYMCACHE_H

#include <stdbool.h>
#include <stdint.h>

struct sb_symcache;
struct stat;

/* A file's identity: any change of it (rewritten, replaced, another file
 * system mounted there) makes an entry made from it a miss. */
struct sb_symcache_fid {
	uint64_t size, mtime_ns, dev, ino;
};

/* The entry of build-id bid (plain hex) as stored, NULL when there is
 * none or it does not parse.  cache_dir as sb_cache_dir() takes it (NULL:
 * the default).  Nothing is looked up in it before sb_symcache_check(). */
struct sb_symcache *sb_symcache_read(const char *cache_dir, const char *bid);
/* True, and the entry usable, when dbg (the debug file the binary's lines
 * would come from now) is the one it was made from and unchanged.  st:
 * dbg's fstat, from the file that will be read (NULL: stat dbg by name). */
bool sb_symcache_check(struct sb_symcache *c, const char *dbg, const struct stat *st);
/* sb_symcache_read() and sb_symcache_check(c, dbg, NULL): the entry when
 * it is current, else NULL. */
struct sb_symcache *sb_symcache_load(const char *cache_dir, const char *bid, const char *dbg);
/* An empty one for bid whose lines come from debug file dbg (identity:
 * st, NULL to stat dbg), or NULL (no cache directory, dbg not a regular
 * file, no memory). */
struct sb_symcache *sb_symcache_new(const char *cache_dir, const char *bid, const char *dbg,
				    const struct stat *st);
/* The debug file the entry is of, and its identity when it was made. */
const char *sb_symcache_debug_file(const struct sb_symcache *c);
const struct sb_symcache_fid *sb_symcache_debug_id(const struct sb_symcache *c);
/* vaddr's location when the entry has it (strings valid until close):
 * file NULL and line 0 when no line is known, func NULL when no name. */
bool sb_symcache_get(const struct sb_symcache *c, uint64_t vaddr, const char **file,
		     unsigned *line, const char **func);
/* Adds vaddr's location (copied); on ENOMEM it is only not kept. */
void sb_symcache_put(struct sb_symcache *c, uint64_t vaddr, const char *file, unsigned line,
		     const char *func);
/* Writes the entry when something was added (atomically; a failure only
 * costs a later recording the lookups), then frees it.  NULL is fine. */
void sb_symcache_close(struct sb_symcache *c);

#endif
