// SPDX-License-Identifier: MIT
/*
 * A binary's separate debug file, looked for as gdb does: by build ID
 * (/usr/lib/debug/.build-id/xx/rest.debug, e.g. libc6-dbg), then by the
 * .gnu_debuglink name next to the binary, in its .debug/ folder and under
 * /usr/lib/debug/<its folder>/, with the link's CRC checked.
 */
#include "elfsym_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include <elfutils/libdwelf.h>

static bool readable(const char *path)
{
	return access(path, R_OK) == 0;
}

static bool crc_matches(const char *path, uint32_t want)
{
	unsigned char buf[65536];
	uLong crc = crc32(0L, Z_NULL, 0);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		crc = crc32(crc, buf, (uInt)n);
	close(fd);
	return n == 0 && (uint32_t)crc == want;
}

int sb_elf_debug_path(Elf *elf, const char *path, const char *build_id, char *out,
		      size_t len)
{
	static const char *const fmt[] = { "%.*s/%s", "%.*s/.debug/%s", "/usr/lib/debug%.*s/%s" };
	GElf_Word crc = 0;
	const char *link, *slash;
	int dirlen;

	if (build_id && strlen(build_id) > 2) {
		snprintf(out, len, "/usr/lib/debug/.build-id/%.2s/%s.debug", build_id,
			 build_id + 2);
		if (readable(out))
			return 0;
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
		if (strcmp(out, path) && readable(out) && crc_matches(out, crc))
			return 0;
	}
	return -ENOENT;
}
