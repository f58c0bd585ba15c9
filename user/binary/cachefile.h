/* SPDX-License-Identifier: MIT */
/*
 * The files of record's per-build-id caches (cachefile.c, used by
 * cfg_cache.c for CFGs and symcache.c for symbolized addresses): where
 * they live, and reading an entry as the untrusted input it is.
 */
#ifndef SB_CACHEFILE_H
#define SB_CACHEFILE_H

#include <stddef.h>
#include <stdint.h>

/* mkdir -p dir, new components 0700; 0 or -1. */
int sb_cache_mkdirs(const char *dir);
/* The cache directory of one kind (malloc'ed), or NULL when there is
 * none: dir itself when given ("" for none), else
 * $XDG_CACHE_HOME/scalebpf/SUB, else $HOME/.cache/scalebpf/SUB. */
char *sb_cache_dir(const char *dir, const char *sub);
/* An entry's bytes (malloc'ed) when it is a regular file of 1..max bytes,
 * ours and writable by no one else, opened without following a link or
 * blocking (max: the most an entry of the caller's kind can need); NULL
 * with why (NULL why: there is no entry, a plain miss). */
unsigned char *sb_cache_read(const char *path, uint64_t max, size_t *len, const char **why);

#endif
