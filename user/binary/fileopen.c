// SPDX-License-Identifier: MIT
/* fileopen.c - open a binary or debug file without blocking (fileopen.h). */
#include "fileopen.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int sb_open_regular(const char *path, uint64_t max_size, char *err, size_t errlen)
{
	struct stat st;
	int fd, fl, rc;

	/* O_NONBLOCK: opening a FIFO with no writer returns at once rather
	 * than waiting for one; O_NOCTTY: a tty never becomes ours. */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		if (err)
			snprintf(err, errlen, "cannot open %s: %s", path, strerror(-rc));
		return rc;
	}
	if (fstat(fd, &st)) {
		rc = -errno;
		if (err)
			snprintf(err, errlen, "cannot stat %s: %s", path, strerror(-rc));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = -EINVAL;
		if (err)
			snprintf(err, errlen, "%s: not a regular file", path);
		goto fail;
	}
	if (max_size && (uint64_t)st.st_size > max_size) {
		rc = -EFBIG;
		if (err)
			snprintf(err, errlen, "%s: too large (%lld bytes)", path,
				 (long long)st.st_size);
		goto fail;
	}
	/* Reads of a regular file never block anyway; cleared so the fd
	 * behaves as a plain open's for libelf and read loops. */
	if ((fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK)) {
		rc = -errno;
		if (err)
			snprintf(err, errlen, "%s: fcntl: %s", path, strerror(-rc));
		goto fail;
	}
	if (err && errlen)
		err[0] = '\0';
	return fd;
fail:
	close(fd);
	return rc;
}
