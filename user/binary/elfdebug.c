// SPDX-License-Identifier: MIT
/*
 * A binary's separate debug file, looked for as gdb does: by build ID
 * (/usr/lib/debug/.build-id/xx/rest.debug, e.g. libc6-dbg), then by the
 * .gnu_debuglink name next to the binary, in its .debug/ folder and under
 * /usr/lib/debug/<its folder>/, with the link's CRC checked.
 */
#include "elfsym_priv.h"
#include "fileopen.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <elfutils/libdwelf.h>

/* Candidates are opened once, as regular files only (fileopen.h): a link
 * naming a FIFO or a symlink to /dev/zero must not hang the CRC read,
 * and the file checked is the one handed back, not one reopened by name. */
static bool crc_matches(int fd, uint32_t want)
{
	unsigned char buf[65536];
	uLong crc = crc32(0L, Z_NULL, 0);
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		crc = crc32(crc, buf, (uInt)n);
	return n == 0 && (uint32_t)crc == want && lseek(fd, 0, SEEK_SET) == 0;
}

/* The candidate is hint's file, unchanged since its CRC was checked. */
static bool is_hinted(int fd, const char *cand, const struct sb_elf_debug_hint *hint)
{
	struct stat st;

	return hint && hint->path && !strcmp(cand, hint->path) && !fstat(fd, &st) &&
	       (uint64_t)st.st_size == hint->size &&
	       (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec ==
		       hint->mtime_ns &&
	       (uint64_t)st.st_dev == hint->dev && (uint64_t)st.st_ino == hint->ino;
}

int sb_elf_debug_open(Elf *elf, const char *path, const char *build_id,
		      const struct sb_elf_debug_hint *hint, char *out, size_t len)
{
	static const char *const fmt[] = { "%.*s/%s", "%.*s/.debug/%s", "/usr/lib/debug%.*s/%s" };
	GElf_Word crc = 0;
	const char *link, *slash;
	int dirlen, fd;

	if (build_id && strlen(build_id) > 2) {
		snprintf(out, len, "/usr/lib/debug/.build-id/%.2s/%s.debug", build_id,
			 build_id + 2);
		if ((fd = sb_open_regular(out, SB_DEBUG_MAX_SIZE, NULL, 0)) >= 0)
			return fd;
	}
	link = dwelf_elf_gnu_debuglink(elf, &crc);
	if (!link || !*link || strchr(link, '/'))
		return -ENOENT;
	slash = strrchr(path, '/');
	dirlen = slash ? (int)(slash - path) : 1;
	if (!slash)
		path = ".";
	for (size_t i = 0; i < sizeof(fmt) / sizeof(fmt[0]); i++) {
		if (snprintf(out, len, fmt[i], dirlen, path, link) >= (int)len)
			continue;
		/* Not the binary itself (a link naming its own file). */
		if (!strcmp(out, path) ||
		    (fd = sb_open_regular(out, SB_DEBUG_MAX_SIZE, NULL, 0)) < 0)
			continue;
		if (is_hinted(fd, out, hint) || crc_matches(fd, crc))
			return fd;
		close(fd);
	}
	return -ENOENT;
}
