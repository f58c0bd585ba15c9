// SPDX-License-Identifier: MIT
/*
 * cachefile.c - the files of the per-build-id caches (cachefile.h),
 * shared by cfg_cache.c and symcache.c: where they live, and reading an
 * entry as untrusted input.
 */
#include "cachefile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* mkdir -p, new components 0700: the cache reveals which binaries ran. */
int sb_cache_mkdirs(const char *dir)
{
	char *p = strdup(dir);
	int ret = 0;

	if (!p)
		return -1;
	for (char *s = p + (p[0] == '/'); ret == 0; s++) {
		char c = *s;

		if (c && c != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0700) < 0 && errno != EEXIST)
			ret = -1;
		*s = c;
		if (!c)
			break;
	}
	free(p);
	return ret;
}

char *sb_cache_dir(const char *dir, const char *sub)
{
	const char *base = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char *out = NULL;

	if (dir)
		return dir[0] ? strdup(dir) : NULL;
	/* XDG: a relative value is invalid and must be ignored */
	if (base && base[0] == '/') {
		if (asprintf(&out, "%s/scalebpf/%s", base, sub) < 0)
			out = NULL;
	} else if (home && home[0] == '/') {
		if (asprintf(&out, "%s/.cache/scalebpf/%s", home, sub) < 0)
			out = NULL;
	}
	return out;
}

unsigned char *sb_cache_read(const char *path, uint64_t max, size_t *len, const char **why)
{
	unsigned char *data = NULL;
	char fdpath[64];
	struct stat st;
	size_t n = 0;
	int fd, rfd;

	*why = NULL;
	/* O_PATH|O_NOFOLLOW: a link is opened as itself (then refused), a
	 * FIFO does not block, a device is never opened */
	if ((fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		if (errno != ENOENT)
			*why = strerror(errno);
		return NULL;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		*why = "not a regular file (a link, a FIFO or a device)";
		return NULL;
	}
	/* As ssh does for its keys: an entry another user could have written
	 * (someone else's, or group/other-writable) is not trusted. */
	if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		close(fd);
		*why = "not owned by us, or writable by others";
		return NULL;
	}
	if ((uint64_t)st.st_size > max || st.st_size == 0) {
		close(fd);
		*why = st.st_size ? "larger than an entry of its kind can be" : "empty";
		return NULL;
	}
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
	rfd = open(fdpath, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	close(fd);
	if (rfd < 0) {
		*why = strerror(errno);
		return NULL;
	}
	/* exactly the size seen: a file growing meanwhile is not read on */
	if ((data = malloc((size_t)st.st_size))) {
		while (n < (size_t)st.st_size) {
			ssize_t r = read(rfd, data + n, (size_t)st.st_size - n);

			if (r <= 0)
				break;
			n += (size_t)r;
		}
	}
	close(rfd);
	if (!data || n != (size_t)st.st_size) {
		free(data);
		*why = data ? "changed while read" : "out of memory";
		return NULL;
	}
	*len = n;
	return data;
}
