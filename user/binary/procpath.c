// SPDX-License-Identifier: MIT
/*
 * procpath.c - the path by which the recorder opens a file the target
 * names (procpath.h): in another mount namespace, under another root,
 * or deleted while it runs.
 */
#include "procpath.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define OVERLAYFS_MAGIC 0x794c7630

#define DELETED_SUFFIX " (deleted)"

bool sb_path_is_file(const char *path, const struct sb_file_id *id, const char *ref_path)
{
	struct stat st, ref;
	struct statfs sf;

	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return false;
	if (major(st.st_dev) == id->maj && minor(st.st_dev) == id->min && st.st_ino == id->ino)
		return true;
	/* Maps name the file under the overlay (its upper or lower layer),
	 * stat the overlay's inode: the same file unless it was replaced. */
	if (statfs(path, &sf) || sf.f_type != OVERLAYFS_MAGIC)
		return false;
	if (st.st_ino == id->ino)
		return true;
	return ref_path && !stat(ref_path, &ref) && ref.st_size == st.st_size &&
	       ref.st_mtim.tv_sec == st.st_mtim.tv_sec &&
	       ref.st_mtim.tv_nsec == st.st_mtim.tv_nsec;
}

bool sb_path_is_proc_bound(const char *path)
{
	return !strncmp(path, "/proc/", 6);
}

const char *sb_path_base(const char *path, char *buf, size_t len)
{
	const char *base = strrchr(path, '/');
	ssize_t n;

	base = base ? base + 1 : path;
	if (!sb_path_is_proc_bound(path) || (strcmp(base, "exe") && !strstr(path, "/map_files/")) ||
	    (n = readlink(path, buf, len - 1)) <= 0)
		return base;
	buf[n] = '\0';
	if ((size_t)n > strlen(DELETED_SUFFIX) && !strcmp(buf + n - strlen(DELETED_SUFFIX), DELETED_SUFFIX))
		buf[n - strlen(DELETED_SUFFIX)] = '\0';
	base = strrchr(buf, '/');
	return base ? base + 1 : buf;
}

int sb_proc_file_path(int pid, const char *path, const struct sb_file_id *id,
		      uint64_t start, uint64_t end, char *out, size_t len)
{
	char mf[96], *ref = NULL;

	if (start < end) {
		snprintf(mf, sizeof(mf), "/proc/%d/map_files/%llx-%llx", pid,
			 (unsigned long long)start, (unsigned long long)end);
		ref = mf;
	} else {
		snprintf(mf, sizeof(mf), "/proc/%d/exe", pid);
		ref = mf;
	}
	if (sb_path_is_file(path, id, ref)) {
		snprintf(out, len, "%s", path);
		return 0;
	}
	/* Its root and mount namespace: a private mount, a chroot, a container. */
	if (snprintf(out, len, "/proc/%d/root%s", pid, path) < (int)len &&
	    sb_path_is_file(out, id, ref))
		return 1;
	/* Deleted (or replaced) since it was mapped: the executable by its
	 * link, a library by its mapping. */
	snprintf(out, len, "/proc/%d/exe", pid);
	if (sb_path_is_file(out, id, NULL))
		return 1;
	if (start < end && snprintf(out, len, "%s", mf) < (int)len &&
	    sb_path_is_file(out, id, NULL))
		return 1;
	snprintf(out, len, "%s", path);
	return -ENOENT;
}

int sb_proc_exe_path(int pid, char *shown, size_t shownlen, char *open, size_t openlen)
{
	char link[64], name[4096];
	struct sb_file_id id;
	struct stat st;
	ssize_t n;
	size_t nl;
	int ret;

	snprintf(link, sizeof(link), "/proc/%d/exe", pid);
	n = readlink(link, name, sizeof(name) - 1);
	if (n < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	name[n] = '\0';
	if (stat(link, &st))
		return errno == ENOENT ? -ESRCH : -errno;
	snprintf(shown, shownlen, "%s", name);
	nl = strlen(name);
	if (nl > strlen(DELETED_SUFFIX) && !strcmp(name + nl - strlen(DELETED_SUFFIX), DELETED_SUFFIX))
		name[nl - strlen(DELETED_SUFFIX)] = '\0';
	id = (struct sb_file_id){ major(st.st_dev), minor(st.st_dev), st.st_ino };
	ret = sb_proc_file_path(pid, name, &id, 0, 0, open, openlen);
	return ret < 0 ? -ENOENT : ret;
}
