// SPDX-License-Identifier: MIT
/*
 * procmaps.c - /proc/PID/maps parsing and runtime address -> (binary,
 * vaddr) translation.  Binaries are kept across refreshes (keyed by
 * path and inode) so their indices stay stable and their ELF is opened
 * once.  A binary the target names by a path that does not name it here
 * (another mount namespace, deleted) is opened through /proc/PID
 * (procpath.h) as soon as it is seen mapped: those paths end with the
 * process, and its addresses are named when the profile is written.
 */
#include "procmaps.h"

#include "elfsym.h"
#include "procpath.h"

#include "util/search.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct binary {
	char *path;             /* as the target names it (maps) */
	char *open;             /* where it opens here, when not path */
	struct sb_file_id id;   /* the file maps shows; ino 0: unknown */
	struct sb_elf *elf;
	bool tried;             /* open attempted; do not retry a failure */
	bool settled;           /* where it opens was looked for, pid alive */
	bool deleted;           /* maps said "(deleted)" */
};

struct sb_maps {
	struct sb_mapping *map; /* sorted by start */
	size_t nmap;
	struct binary *bins;
	size_t nbins, capbins;
	uint64_t generation;    /* successful refreshes */
	uint64_t last_miss_refresh_ns;
	int pid;                /* of the last refresh: its /proc paths */
};

#define DELETED_SUFFIX " (deleted)"

struct sb_maps *sb_maps_alloc(void)
{
	return calloc(1, sizeof(struct sb_maps));
}

void sb_maps_free(struct sb_maps *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nbins; i++) {
		sb_elf_close(m->bins[i].elf);
		free(m->bins[i].path);
		free(m->bins[i].open);
	}
	free(m->bins);
	free(m->map);
	free(m);
}

/* Index of the binary for (path, id), adding it when new; -1 on ENOMEM.
 * A file replaced at the same path (an upgrade) is another binary. */
static int bin_index(struct sb_maps *m, const char *path, const struct sb_file_id *id)
{
	for (size_t i = 0; i < m->nbins; i++)
		if (!strcmp(m->bins[i].path, path) && m->bins[i].id.ino == id->ino &&
		    m->bins[i].id.maj == id->maj && m->bins[i].id.min == id->min)
			return (int)i;
	if (m->nbins == m->capbins) {
		size_t cap = m->capbins ? 2 * m->capbins : 16;
		struct binary *b = realloc(m->bins, cap * sizeof(*b));

		if (!b)
			return -1;
		m->bins = b;
		m->capbins = cap;
	}
	m->bins[m->nbins] = (struct binary){ .path = strdup(path), .id = *id };
	if (!m->bins[m->nbins].path)
		return -1;
	return (int)m->nbins++;
}

/*
 * One maps line: "start-end perms offset dev inode   path".  The path
 * is everything after the inode's padding and may contain spaces.
 * Returns 1 for a file mapping (path set, pointing into line), 0 for
 * anything else (anon, [heap], [vdso], malformed).
 */
static int parse_line(char *line, struct sb_mapping *mp, char **path, struct sb_file_id *id,
		      bool *deleted)
{
	unsigned long long start, end, pgoff, inode;
	unsigned maj, min;
	char perms[8];
	int pos = -1;
	size_t len;
	char *p;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end,
		   perms, &pgoff, &maj, &min, &inode, &pos) < 7 || pos < 0)
		return 0;
	p = line + pos;
	len = strlen(p);
	while (len && (p[len - 1] == '\n' || p[len - 1] == '\r'))
		p[--len] = '\0';
	/* Keep deleted files: opened through /proc/PID while it runs. */
	*deleted = len > strlen(DELETED_SUFFIX) &&
		   !strcmp(p + len - strlen(DELETED_SUFFIX), DELETED_SUFFIX);
	if (*deleted)
		p[len - strlen(DELETED_SUFFIX)] = '\0';
	if (p[0] != '/' || end <= start)
		return 0;
	*mp = (struct sb_mapping){ .start = start, .end = end, .pgoff = pgoff,
				   .exec = strchr(perms, 'x') != NULL };
	*id = (struct sb_file_id){ maj, min, inode };
	*path = p;
	return 1;
}

static int map_cmp(const void *a, const void *b)
{
	const struct sb_mapping *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

int sb_maps_parse(struct sb_maps *m, const char *text)
{
	char *buf = strdup(text), *line, *save = NULL;
	struct sb_mapping *map = NULL;
	size_t n = 0, cap = 0;

	if (!buf)
		return -ENOMEM;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		struct sb_mapping mp;
		struct sb_file_id id;
		bool deleted;
		char *path;

		if (!parse_line(line, &mp, &path, &id, &deleted))
			continue;
		if (n == cap) {
			size_t nc = cap ? 2 * cap : 64;
			struct sb_mapping *nm = realloc(map, nc * sizeof(*nm));

			if (!nm)
				goto nomem;
			map = nm;
			cap = nc;
		}
		if ((mp.bin = bin_index(m, path, &id)) < 0)
			goto nomem;
		m->bins[mp.bin].deleted |= deleted;
		map[n++] = mp;
	}
	free(buf);
	/* The kernel lists mappings in order, but synthetic text may not. */
	if (n)
		qsort(map, n, sizeof(*map), map_cmp);
	free(m->map);
	m->map = map;
	m->nmap = n;
	return 0;
nomem:
	free(map);
	free(buf);
	return -ENOMEM;
}

/* Whole file into a NUL-terminated buffer; -errno on failure. */
static int read_all(int fd, char **out)
{
	size_t len = 0, cap = 0;
	char *buf = NULL;

	for (;;) {
		ssize_t r;

		if (cap - len < 4096) {
			char *nb = realloc(buf, cap ? 2 * cap : 65536);

			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap = cap ? 2 * cap : 65536;
		}
		r = read(fd, buf + len, cap - len - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int err = -errno;

			free(buf);
			return err;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	buf[len] = '\0';
	*out = buf;
	return 0;
}

/* Whether [start, end) overlaps a current mapping (m->map is sorted). */
static bool overlaps(const struct sb_maps *m, uint64_t start, uint64_t end)
{
	size_t lo = 0, hi = m->nmap;

	while (lo < hi) {   /* the first mapping that ends after start */
		size_t mid = lo + (hi - lo) / 2;

		if (m->map[mid].end <= start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->nmap && m->map[lo].start < end;
}

/*
 * Mappings gone since the last look whose addresses nothing reuses: a
 * library unloaded by dlclose.  Addresses recorded while it was mapped
 * (call sites, samples) are named when the profile is written, after it
 * may be gone.  Overlapped ones are dropped: the new mapping rules.
 */
static int keep_unmapped(struct sb_maps *m, const struct sb_mapping *old, size_t nold)
{
	size_t keep = 0, n = m->nmap;
	struct sb_mapping *nm;

	for (size_t i = 0; i < nold; i++)
		keep += !overlaps(m, old[i].start, old[i].end);
	if (!keep)
		return 0;
	nm = realloc(m->map, (n + keep) * sizeof(*nm));
	if (!nm)
		return -ENOMEM;
	m->map = nm;   /* the checks below see the first m->nmap only */
	for (size_t i = 0; i < nold; i++)
		if (!overlaps(m, old[i].start, old[i].end))
			nm[n++] = old[i];
	m->nmap = n;
	qsort(m->map, m->nmap, sizeof(*m->map), map_cmp);
	return 0;
}

/* A mapping of binary bin, an executable one first; NULL when none. */
static const struct sb_mapping *mapping_of(const struct sb_maps *m, int bin)
{
	const struct sb_mapping *any = NULL;

	for (size_t i = 0; i < m->nmap; i++)
		if (m->map[i].bin == bin) {
			if (m->map[i].exec)
				return &m->map[i];
			any = any ? any : &m->map[i];
		}
	return any;
}

/* Opens binary bin's ELF from path; a /proc one's debug file is looked
 * for now, next to the binary, while /proc/PID/root still leads there. */
static void open_elf(struct binary *b, const char *path)
{
	char err[256];

	b->tried = true;
	b->elf = sb_elf_open(path, err, sizeof(err));
	if (b->elf && sb_path_is_proc_bound(path))
		sb_elf_has_lines(b->elf);
}

/*
 * Binaries first seen mapped for execution (their code is what addresses
 * name) are located while the process runs (procpath.h): their path, or
 * a /proc/PID one, kept as where they open and are probed, and opened
 * now (it ends with the process).  One found deleted later, not opened
 * yet, is opened through /proc/PID now, its path left as it was handed
 * out (the plan and probes know it by that).
 */
static void settle(struct sb_maps *m)
{
	char buf[4200];

	for (size_t i = 0; i < m->nmap; i++) {
		const struct sb_mapping *mp = &m->map[i];
		struct binary *b = &m->bins[mp->bin];
		int ret;

		if (!mp->exec || !b->id.ino || (b->settled && (!b->deleted || b->tried)))
			continue;
		ret = sb_proc_file_path(m->pid, b->path, &b->id, mp->start, mp->end, buf,
					sizeof(buf));
		if (!b->settled && ret == 1)
			b->open = strdup(buf);   /* NULL: its path, which fails */
		b->settled = true;
		if (ret == 1 && !b->tried)
			open_elf(b, buf);
	}
}

/* The mappings as a live thread of pid sees them: its leader may have
 * exited alone (pthread_exit), and /proc/PID/maps is then empty while
 * the other threads run on in the same address space.  0 or -ESRCH. */
static int thread_maps(int pid, char **text)
{
	char path[96];
	struct dirent *de;
	int ret = -ESRCH;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	if (!(d = opendir(path)))
		return -ESRCH;
	while (ret && (de = readdir(d))) {
		long tid = strtol(de->d_name, NULL, 10);
		int fd;

		if (tid <= 0 || tid == pid)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%ld/maps", pid, tid);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		if (!read_all(fd, text)) {
			if (strchr(*text, '/'))
				ret = 0;
			else
				free(*text);
		}
		close(fd);
	}
	closedir(d);
	return ret;
}

int sb_maps_refresh(struct sb_maps *m, int pid)
{
	char path[64], *text = NULL;
	struct sb_mapping *old;
	size_t nold;
	int fd, ret;

	if (pid <= 0)
		return -ESRCH;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	ret = read_all(fd, &text);
	close(fd);
	if (ret)
		return ret;
	/* An exiting process (zombie) shows no mappings: keep what we knew,
	 * addresses recorded before the exit still need them. */
	if (!strchr(text, '/')) {
		free(text);
		if (thread_maps(pid, &text))
			return -ESRCH;
	}
	old = m->map;
	nold = m->nmap;
	m->map = NULL;
	m->nmap = 0;
	ret = sb_maps_parse(m, text);
	free(text);
	if (ret) {
		free(m->map);
		m->map = old;
		m->nmap = nold;
		return ret;
	}
	m->pid = pid;
	settle(m);
	ret = keep_unmapped(m, old, nold);
	free(old);
	m->generation += !ret;
	return ret;
}

uint64_t sb_maps_generation(const struct sb_maps *m)
{
	return m->generation;
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int sb_maps_resolve_live(struct sb_maps *m, int pid, uint64_t addr, int *bin, uint64_t *vaddr)
{
	uint64_t now;

	if (!sb_maps_resolve(m, addr, bin, vaddr))
		return 0;
	now = monotonic_ns();
	if (now - m->last_miss_refresh_ns < 50000000ull)
		return -1;
	m->last_miss_refresh_ns = now;
	if (sb_maps_refresh(m, pid))
		return -1;
	return sb_maps_resolve(m, addr, bin, vaddr);
}

int sb_maps_resolve(struct sb_maps *m, uint64_t addr, int *bin, uint64_t *vaddr)
{
	size_t hi = SB_SEARCH_STARTS(m->map, m->nmap, start, addr);
	const struct sb_mapping *mp;
	struct sb_elf *e;

	if (!hi || addr >= m->map[hi - 1].end)
		return -1;
	mp = &m->map[hi - 1];
	e = sb_maps_binary_elf(m, mp->bin);
	if (!e || sb_elf_offset_to_vaddr(e, addr - mp->start + mp->pgoff, vaddr))
		return -1;
	if (bin)
		*bin = mp->bin;
	return 0;
}

size_t sb_maps_nbinaries(const struct sb_maps *m)
{
	return m->nbins;
}

const char *sb_maps_binary_path(const struct sb_maps *m, int bin)
{
	if (bin < 0 || (size_t)bin >= m->nbins)
		return NULL;
	return m->bins[bin].open ? m->bins[bin].open : m->bins[bin].path;
}

const char *sb_maps_binary_name(const struct sb_maps *m, int bin)
{
	return bin >= 0 && (size_t)bin < m->nbins ? m->bins[bin].path : NULL;
}

bool sb_maps_binary_deleted(const struct sb_maps *m, int bin)
{
	return bin >= 0 && (size_t)bin < m->nbins && m->bins[bin].deleted;
}

struct sb_elf *sb_maps_binary_elf(struct sb_maps *m, int bin)
{
	const struct sb_mapping *mp;
	struct binary *b;
	char buf[4200];
	int ret;

	if (bin < 0 || (size_t)bin >= m->nbins)
		return NULL;
	b = &m->bins[bin];
	if (b->tried)
		return b->elf;
	/* Located by its path: the path must still name the file mapped,
	 * or its symbols would be another file's.  Replaced or deleted
	 * since: through the process, while it still runs. */
	if (b->settled && !b->open && !sb_path_is_file(b->path, &b->id, NULL)) {
		b->tried = true;
		if (!(mp = mapping_of(m, bin)))
			return NULL;
		ret = sb_proc_file_path(m->pid, b->path, &b->id, mp->start, mp->end, buf,
					sizeof(buf));
		if (ret >= 0)
			open_elf(b, buf);
		return b->elf;
	}
	open_elf(b, b->open ? b->open : b->path);
	return b->elf;
}

/*
 * A path equal to name or ending in "/name" matches first; otherwise the
 * first binary whose basename starts with name followed by '.', '-' or
 * the end, so "libgomp.so" finds ".../libgomp.so.1" but "libc" does not
 * find "libcapstone.so.4".
 */
int sb_maps_find_binary(const struct sb_maps *m, const char *name)
{
	size_t nl = strlen(name);

	for (size_t i = 0; i < m->nbins; i++) {
		const char *p = m->bins[i].path;
		size_t pl = strlen(p);

		if (!strcmp(p, name) ||
		    (pl > nl && p[pl - nl - 1] == '/' && !strcmp(p + pl - nl, name)))
			return (int)i;
	}
	for (size_t i = 0; i < m->nbins && nl; i++) {
		const char *base = strrchr(m->bins[i].path, '/');

		base = base ? base + 1 : m->bins[i].path;
		if (!strncmp(base, name, nl) &&
		    (base[nl] == '\0' || base[nl] == '.' || base[nl] == '-'))
			return (int)i;
	}
	return -1;
}

size_t sb_maps_count(const struct sb_maps *m)
{
	return m->nmap;
}

const struct sb_mapping *sb_maps_get(const struct sb_maps *m, size_t i)
{
	return i < m->nmap ? &m->map[i] : NULL;
}
