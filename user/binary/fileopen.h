/* SPDX-License-Identifier: MIT */
#ifndef SB_FILEOPEN_H
#define SB_FILEOPEN_H

#include <stddef.h>
#include <stdint.h>

/*
 * Opens path read-only only if it is a regular file of at most max_size
 * bytes (0: no cap), without blocking: a FIFO, device or socket a
 * binary's name or .gnu_debuglink leads to (/dev/zero, a named pipe)
 * would otherwise hang or never end the read.  The check is on the fd
 * itself (fstat), so a name swapped between check and open cannot slip
 * past it.  Returns the fd (O_CLOEXEC, blocking again) or -errno, with
 * err set when err is not NULL.
 */
int sb_open_regular(const char *path, uint64_t max_size, char *err, size_t errlen);

#endif
