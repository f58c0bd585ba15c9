/* SPDX-License-Identifier: MIT */
/*
 * A target's files as the target sees them.  A path in /proc/PID/maps or
 * /proc/PID/exe is the target's name for a file: in its mount namespace,
 * under its root, possibly deleted since.  The recorder opens (and
 * attaches uprobes to) the same inode through a path that names it here:
 * the path itself when it does, else /proc/PID/root/<path> (the target's
 * namespace and root), else /proc/PID/exe, else /proc/PID/map_files/
 * (a deleted library).  The /proc paths hold only while the process
 * lives: whoever keeps a binary past that opens it at once (procmaps.c).
 */
#ifndef SB_PROCPATH_H
#define SB_PROCPATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A file as the kernel names it in maps: device major:minor and inode. */
struct sb_file_id {
	unsigned maj, min;
	uint64_t ino;
};

/* Whether path names the file id here (stat).  On overlayfs the device
 * stat shows is the overlay's and maps shows the real file's: there the
 * inode, or size and mtime with ref_path's (when given), must agree. */
bool sb_path_is_file(const char *path, const struct sb_file_id *id, const char *ref_path);

/* Whether a path is one of the pid-bound /proc forms above (not to be
 * canonicalized with realpath(3), which resolves it in this namespace). */
bool sb_path_is_proc_bound(const char *path);

/* The file name (no folder) the target knows a path's file by: for
 * /proc/PID/exe and /proc/PID/map_files/... that of the link's text, so
 * a deleted libc.so.6 is still libc.so.6 (probes by library name). */
const char *sb_path_base(const char *path, char *buf, size_t len);

/*
 * Where this process opens the file that process pid maps as path (id),
 * one of its mappings being [start, end) (0, 0: it is the executable).  Returns 0
 * with out = path (it names the file here), 1 with out a pid-bound /proc
 * path, or -ENOENT (out = path: nothing names it).
 */
int sb_proc_file_path(int pid, const char *path, const struct sb_file_id *id,
		      uint64_t start, uint64_t end, char *out, size_t len);

/*
 * The executable of pid: shown is its name as the target sees it (the
 * link's text, " (deleted)" kept), open a path to open it by, found as
 * sb_proc_file_path does (so both name the executable the same way).
 * Returns 0 or 1 as sb_proc_file_path, or -errno (ESRCH: gone).
 */
int sb_proc_exe_path(int pid, char *shown, size_t shownlen, char *open, size_t openlen);

#endif
