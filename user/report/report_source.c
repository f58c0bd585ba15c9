// SPDX-License-Identifier: MIT
/*
 * Source lines beside the causes, read only from files the profile cannot
 * choose.  `report` runs as root next to the recorder, and a profile may
 * be crafted: a path read from it (/etc/shadow, a FIFO, /dev/zero, a
 * symlink) must never decide what is opened and printed.  So:
 *
 *   default: the source file is the one the recorded binary's own debug
 *     info names for the cause's address.  The binary (the profile's path)
 *     must be a regular file whose build-id is the recorded one, the
 *     profile's file name must be that file (else the profile lies and
 *     nothing is shown), the path must be absolute and reached without
 *     any symbolic link (openat2 RESOLVE_NO_SYMLINKS), and the file must
 *     belong to the binary's owner: an ELF someone crafted with debug info
 *     naming a file of another user (root's) shows nothing.
 *   --source-dir DIR: the profile's file name, or its trailing components,
 *     looked up beneath DIR only (RESOLVE_BENEATH: no "..", no absolute
 *     or escaping symlink leaves it).  DIR is what the user trusts; the
 *     binary is not needed (a profile from another machine).
 *   --no-source: nothing is opened.
 * A path is first opened O_PATH, which neither blocks (a FIFO) nor
 * touches a device (opening some has effects); only a regular file of at
 * most SRC_MAX_BYTES is then opened for reading, through the descriptor,
 * and only that much is read; its lines are printed escaped.  What was
 * not shown is said once, at the end of the causes, with the first reason.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "binary/elfsym.h"
#include "report.h"

/* Larger than any real source file; a crafted one costs at most this. */
#define SRC_MAX_BYTES (16u << 20)
#define SRC_LINE 512

/* A binary of the profile, opened once: NULL elf when it may not be used
 * (why says it). */
struct src_bin {
	struct sb_elf *elf;
	uid_t owner;
	char why[256];
	bool tried;
};

struct sb_source {
	const struct sb_profile *p;
	const struct sb_report_opts *o;
	struct src_bin *bins;      /* p->nbinaries */
	int dirfd;                 /* --source-dir, or -1 */
	char dir_why[256];         /* --source-dir cannot be used */
	size_t omitted;            /* causes whose lines were not shown */
	char why[512];             /* the first reason */
};

static long openat2_call(int dirfd, const char *path, uint64_t resolve)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC,
		.resolve = resolve | RESOLVE_NO_MAGICLINKS,
	};

	return syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

/*
 * An O_PATH descriptor of path (relative to dirfd) as openat2 with
 * resolve gives, on kernels without openat2 (before 5.6) too: O_NOFOLLOW
 * for the last component (a link is then opened as itself, and is not a
 * regular file), then the path the descriptor really has must be the one
 * asked for (default: no link on the way) or lie beneath the directory.
 */
static int open_safely(int dirfd, const char *path, uint64_t resolve)
{
	char want[PATH_MAX], got[PATH_MAX], fdpath[64];
	long fd = openat2_call(dirfd, path, resolve);
	struct stat st;
	ssize_t n;

	if (fd >= 0 || errno != ENOSYS)
		return (int)fd;
	fd = openat(dirfd, path, O_PATH | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -1;
	if (fstat((int)fd, &st) == 0 && S_ISLNK(st.st_mode)) {
		close((int)fd);
		errno = ELOOP;      /* as openat2 says it */
		return -1;
	}
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", dirfd);
	if (resolve & RESOLVE_BENEATH) {
		if ((n = readlink(fdpath, want, sizeof(want) - 1)) < 0)
			goto refuse;
		want[n] = '\0';
	} else {
		snprintf(want, sizeof(want), "%s", path);
	}
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%ld", fd);
	if ((n = readlink(fdpath, got, sizeof(got) - 1)) < 0)
		goto refuse;
	got[n] = '\0';
	if (resolve & RESOLVE_BENEATH ? strncmp(got, want, strlen(want)) ||
						got[strlen(want)] != '/'
				      : strcmp(got, want))
		goto refuse;
	return (int)fd;
refuse:
	close((int)fd);
	errno = EXDEV;
	return -1;
}

static void set_why(char *why, size_t len, const char *path, const char *what)
{
	char p[256];

	snprintf(why, len, "%s: %s", sb_text_escape(path, p, sizeof(p)), what);
}

/* The binary of location l, usable for source lines, or NULL (why set). */
static struct src_bin *binary_of(struct sb_source *s, const struct sb_loc *l)
{
	const struct sb_binary *b;
	struct src_bin *sb;
	char err[256], self[32];
	struct stat st;
	int fd;

	if (l->binary < 0 || (size_t)l->binary >= s->p->nbinaries)
		return NULL;
	b = &s->p->binaries[l->binary];
	sb = &s->bins[l->binary];
	if (sb->tried)
		return sb;
	sb->tried = true;
	if (!b->path || !b->build_id || !b->build_id[0]) {
		set_why(sb->why, sizeof(sb->why), b->path,
			"no build-id recorded, so the binary cannot be checked");
		return sb;
	}
	/* One open, by O_PATH (a FIFO does not block, a device is not opened):
	 * the type and owner are those of that inode, and libelf reads the same
	 * inode through /proc/self/fd/N, so a symlink or file swapped in after
	 * the check is never read.  (A .gnu_debuglink next to the binary is not
	 * found that way; build-id debug files still are.) */
	if ((fd = open(b->path, O_PATH | O_CLOEXEC)) < 0) {
		set_why(sb->why, sizeof(sb->why), b->path, strerror(errno));
		return sb;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		set_why(sb->why, sizeof(sb->why), b->path, "the binary is not a regular file");
		return sb;
	}
	sb->owner = st.st_uid;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	sb->elf = sb_elf_open(self, err, sizeof(err));
	close(fd);
	if (!sb->elf) {
		set_why(sb->why, sizeof(sb->why), b->path, "not a readable ELF file");
	} else if (!sb_elf_build_id(sb->elf) || strcmp(sb_elf_build_id(sb->elf), b->build_id)) {
		sb_elf_close(sb->elf);
		sb->elf = NULL;
		set_why(sb->why, sizeof(sb->why), b->path,
			"not the recorded binary (build-id differs)");
	}
	return sb;
}

/* The default: the file the binary's debug info names; -1 with why. */
static int open_default(struct sb_source *s, const struct sb_loc *l, char *why, size_t len)
{
	struct src_bin *b = binary_of(s, l);
	const char *file = NULL;
	struct stat st;
	unsigned line;
	int fd;

	if (!b) {
		set_why(why, len, l->file, "the profile names no binary for it");
		return -1;
	}
	if (!b->elf) {
		snprintf(why, len, "%s", b->why);
		return -1;
	}
	/* The line too: else a crafted profile picks which lines of a file
	 * the debug info names are printed.  (Or the empty statement row the
	 * debug info has there: a hoisted test's own line, eventmap.c.) */
	if (sb_elf_srcline(b->elf, l->offset, &file, &line, NULL) || !file ||
	    strcmp(file, l->file) ||
	    (line != l->line && sb_elf_ghost_line(b->elf, l->offset) != l->line)) {
		set_why(why, len, l->file, "not the source file and line the binary's debug info "
			"names for that address");
		return -1;
	}
	if (file[0] != '/') {
		set_why(why, len, file, "a relative path (use --source-dir)");
		return -1;
	}
	if ((fd = open_safely(AT_FDCWD, file, RESOLVE_NO_SYMLINKS)) < 0) {
		set_why(why, len, file, errno == ELOOP || errno == EXDEV
			? "a symbolic link on the way (use --source-dir)" : strerror(errno));
		return -1;
	}
	if (!fstat(fd, &st) && st.st_uid != b->owner) {
		close(fd);
		set_why(why, len, file, "not owned by the owner of the binary");
		return -1;
	}
	return fd;
}

/* --source-dir: the profile's path, then its shorter and shorter tails,
 * beneath the directory; -1 with why. */
static int open_in_dir(struct sb_source *s, const struct sb_loc *l, char *why, size_t len)
{
	const char *rel = l->file;
	int saved = ENOENT;

	if (s->dirfd < 0) {
		snprintf(why, len, "%s", s->dir_why);
		return -1;
	}
	while (rel && *rel) {
		int fd;

		rel += strspn(rel, "/");
		if (!*rel)
			break;
		if ((fd = open_safely(s->dirfd, rel, RESOLVE_BENEATH)) >= 0)
			return fd;
		if (errno != ENOENT && errno != ENOTDIR)
			saved = errno;
		rel = strchr(rel, '/');
	}
	set_why(why, len, l->file, saved == EXDEV || saved == ELOOP
		? "outside --source-dir (a link or \"..\" leaves it)"
		: saved == ENOENT ? "not found under --source-dir" : strerror(saved));
	return -1;
}

/* Prints the lines around `line` of the file behind the O_PATH
 * descriptor fd (closed); -1 with why when it is not a regular file or is
 * too large: only then is it opened for reading. */
static int print_lines(int fd, unsigned line, FILE *f, const char *name, char *why,
		       size_t len)
{
	char buf[SRC_LINE], fdpath[64];
	struct stat st;
	unsigned n = 1;
	bool start = true;
	size_t total = 0;
	FILE *src;
	int rfd;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		set_why(why, len, name, "not a regular file");
		return -1;
	}
	if (st.st_size > SRC_MAX_BYTES) {
		close(fd);
		set_why(why, len, name, "larger than a source file can be (16 MiB)");
		return -1;
	}
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
	rfd = open(fdpath, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	close(fd);
	if (rfd < 0 || !(src = fdopen(rfd, "r"))) {
		set_why(why, len, name, strerror(errno));
		if (rfd >= 0)
			close(rfd);
		return -1;
	}
	/* A line longer than buf shows its start; the rest is skipped.  The
	 * file may grow after the check: no more than the limit is read. */
	while (n <= line + 2 && total < SRC_MAX_BYTES && fgets(buf, sizeof(buf), src)) {
		size_t k = strlen(buf);
		bool end = k && buf[k - 1] == '\n';

		total += k;
		buf[strcspn(buf, "\n")] = '\0';
		if (start && n + 2 >= line) {
			fprintf(f, "        %s %5u | ", n == line ? ">" : " ", n);
			sb_text_line(f, buf);
			fputc('\n', f);
		}
		start = end;
		n += end;
	}
	fclose(src);
	return 0;
}

struct sb_source *sb_source_open(const struct sb_profile *p, const struct sb_report_opts *o)
{
	struct sb_source *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->p = p;
	s->o = o;
	s->dirfd = -1;
	if (!(s->bins = calloc(p->nbinaries ? p->nbinaries : 1, sizeof(*s->bins)))) {
		free(s);
		return NULL;
	}
	if (o->source_dir && !o->no_source &&
	    (s->dirfd = open(o->source_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		set_why(s->dir_why, sizeof(s->dir_why), o->source_dir, strerror(errno));
	return s;
}

void sb_source_lines(struct sb_source *s, int32_t loc, FILE *f)
{
	const struct sb_loc *l;
	char why[512];
	int fd;

	if (!s || s->o->no_source || loc < 0 || (size_t)loc >= s->p->nlocs)
		return;
	l = &s->p->locs[loc];
	if (!l->file || !l->line)
		return;
	fd = s->o->source_dir ? open_in_dir(s, l, why, sizeof(why))
			      : open_default(s, l, why, sizeof(why));
	if (fd < 0 || print_lines(fd, l->line, f, l->file, why, sizeof(why))) {
		if (!s->omitted++)
			snprintf(s->why, sizeof(s->why), "%s", why);
	}
}

void sb_source_note(struct sb_source *s, FILE *f)
{
	if (!s || !s->omitted)
		return;
	fprintf(f, "  note: source lines not shown for %zu cause%s: %s\n", s->omitted,
		s->omitted == 1 ? "" : "s", s->why);
	fputs(s->o->source_dir
	      ? "  (only regular files beneath --source-dir are read)\n"
	      : "  (only the files the recorded binaries' debug info names are read; "
		"--source-dir DIR reads them from DIR)\n", f);
}

void sb_source_close(struct sb_source *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->p->nbinaries; i++)
		sb_elf_close(s->bins[i].elf);
	if (s->dirfd >= 0)
		close(s->dirfd);
	free(s->bins);
	free(s);
}
