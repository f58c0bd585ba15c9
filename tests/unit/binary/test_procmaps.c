// SPDX-License-Identifier: MIT
/*
 * test_procmaps: synthetic maps text (spaces in paths, "(deleted)",
 * anon and pseudo mappings) with resolve arithmetic checked against the
 * test binary's own ELF, then the live /proc/self/maps and a dead pid,
 * and a deleted binary opened through /proc/self/map_files.
 */
#include "check.h"
#include "binary/elfsym.h"
#include "binary/procmaps.h"
#include "binary/procpath.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAP_BASE 0x555500000000ULL      /* synthetic exe text mapping */
#define COPY_BASE 0x7f1000000000ULL     /* the spaced, deleted copy */

__attribute__((noinline)) int marker_fn(int x)
{
	return x * 7 + 1;
}

static const char *base_name(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;

	return s ? s + 1 : p;
}

/* Resolves addr and checks it lands on marker_fn in binary want_bin. */
static void check_marker(struct sb_maps *m, uint64_t addr, int want_bin,
			 uint64_t want_vaddr, const char *what)
{
	uint64_t vaddr = 0, start = 0;
	int bin = -1;
	const char *fn = NULL;

	CHECK(sb_maps_resolve(m, addr, &bin, &vaddr) == 0, "%s: resolve", what);
	CHECK(bin == want_bin && vaddr == want_vaddr, "%s: bin %d vaddr %#" PRIx64
	      " want %d %#" PRIx64, what, bin, vaddr, want_bin, want_vaddr);
	if (bin >= 0 && sb_maps_binary_elf(m, bin))
		fn = sb_elf_func_at(sb_maps_binary_elf(m, bin), vaddr, &start);
	CHECK(fn && !strcmp(fn, "marker_fn") && start == want_vaddr,
	      "%s: func %s", what, fn);
}

static void check_synthetic(const char *exe, const char *dir)
{
	char copy[600], cmd[2048], text[8192], err[256];
	uint64_t mv = 0, off = 0, pgoff, vaddr;
	struct sb_maps *m = sb_maps_alloc();
	struct sb_elf *e = sb_elf_open(exe, err, sizeof(err));
	const struct sb_mapping *mp;
	int bin, exe_bin, copy_bin, gomp;

	CHECK(m && e, "alloc/open self: %s", err);
	if (!m || !e)
		goto out;
	CHECK(sb_elf_func_by_name(e, "marker_fn", &mv, NULL) == 0 &&
	      sb_elf_vaddr_to_offset(e, mv, &off) == 0, "marker_fn in self");
	pgoff = off & ~0xfffULL;

	/* a copy whose path has spaces, listed as deleted */
	snprintf(copy, sizeof(copy), "%s/dir with space/copy of exe", dir);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/dir with space' && cp '%s' '%s'",
		 dir, exe, copy);
	CHECK(system(cmd) == 0, "%s", cmd);

	snprintf(text, sizeof(text),
		 "%llx-%llx r--p 00000000 08:01 1234                       %s\n"
		 "%llx-%llx r-xp %08" PRIx64 " 08:01 1234                       %s\n"
		 "555500200000-555500221000 rw-p 00000000 00:00 0                          [heap]\n"
		 "7f0000000000-7f0000021000 rw-p 00000000 00:00 0 \n"
		 "%llx-%llx r-xp %08" PRIx64 " 08:01 99 %s (deleted)\n"
		 "7f2000000000-7f2000010000 r-xp 00002000 08:01 7 /nonexistent/libfoo.so.1\n"
		 "7f3000000000-7f3000010000 r-xp 00001000 08:01 8 /usr/lib/x86_64-linux-gnu/libgomp.so.1\n"
		 "7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]\n"
		 "7ffd00100000-7ffd00102000 r-xp 00000000 00:00 0                          [vdso]\n",
		 MAP_BASE - 0x1000, MAP_BASE, exe, MAP_BASE, MAP_BASE + 0x100000, pgoff, exe,
		 COPY_BASE, COPY_BASE + 0x100000, pgoff, copy);
	CHECK(sb_maps_parse(m, text) == 0, "parse");
	CHECK(sb_maps_count(m) == 5, "5 file mappings, got %zu", sb_maps_count(m));
	if (sb_maps_count(m) != 5)
		goto out;
	CHECK(sb_maps_nbinaries(m) == 4, "4 binaries, got %zu", sb_maps_nbinaries(m));
	mp = sb_maps_get(m, 1);
	CHECK(mp && mp->start == MAP_BASE && mp->end == MAP_BASE + 0x100000 &&
	      mp->pgoff == pgoff && mp->exec, "mapping 1 fields");
	mp = sb_maps_get(m, 0);
	CHECK(mp && !mp->exec && mp->pgoff == 0, "mapping 0 fields");
	CHECK(sb_maps_get(m, 5) == NULL, "get past end");
	exe_bin = sb_maps_get(m, 0)->bin;
	CHECK(sb_maps_get(m, 1)->bin == exe_bin, "same binary for both exe maps");
	copy_bin = sb_maps_get(m, 2)->bin;
	CHECK(!strcmp(sb_maps_binary_path(m, copy_bin), copy),
	      "deleted suffix stripped, spaces kept: '%s'", sb_maps_binary_path(m, copy_bin));

	/* addr - start + pgoff is the file offset, then PT_LOAD to vaddr */
	check_marker(m, MAP_BASE + (off - pgoff), exe_bin, mv, "exe");
	check_marker(m, COPY_BASE + (off - pgoff), copy_bin, mv, "spaced copy");
	CHECK(sb_maps_resolve(m, 0x7f0000000100ULL, &bin, &vaddr) == -1, "anon");
	CHECK(sb_maps_resolve(m, 0x555500200100ULL, &bin, &vaddr) == -1, "heap");
	CHECK(sb_maps_resolve(m, 0x1000, &bin, &vaddr) == -1, "below all");
	CHECK(sb_maps_resolve(m, MAP_BASE + 0x100000 + 0x10, &bin, &vaddr) == -1,
	      "just past the exe mapping");
	CHECK(sb_maps_resolve(m, 0x7f2000000010ULL, &bin, &vaddr) == -1,
	      "unopenable binary");
	bin = sb_maps_get(m, 3)->bin;
	CHECK(sb_maps_binary_elf(m, bin) == NULL &&
	      !strcmp(sb_maps_binary_path(m, bin), "/nonexistent/libfoo.so.1"),
	      "missing file listed, no ELF");

	gomp = sb_maps_get(m, 4)->bin;
	CHECK(sb_maps_find_binary(m, "libgomp.so") == gomp, "libgomp.so prefix");
	CHECK(sb_maps_find_binary(m, "libgomp.so.1") == gomp, "exact basename");
	CHECK(sb_maps_find_binary(m, "x86_64-linux-gnu/libgomp.so.1") == gomp,
	      "path suffix");
	CHECK(sb_maps_find_binary(m, "libfoo") == bin, "libfoo -> libfoo.so.1");
	CHECK(sb_maps_find_binary(m, "libg") == -1, "libg is no library name");
	CHECK(sb_maps_find_binary(m, "libomp.so") == -1, "absent");
	CHECK(sb_maps_find_binary(m, base_name(exe)) == exe_bin, "exe by name");

	/* binaries survive refreshes with stable indices */
	CHECK(sb_maps_parse(m, text) == 0 && sb_maps_nbinaries(m) == 4 &&
	      sb_maps_get(m, 2)->bin == copy_bin, "reparse keeps indices");
	CHECK(sb_maps_parse(m, "7f3000000000-7f3000010000 r-xp 00001000 08:01 8 "
			       "/usr/lib/x86_64-linux-gnu/libgomp.so.1\n") == 0 &&
	      sb_maps_count(m) == 1 && sb_maps_nbinaries(m) == 4 &&
	      sb_maps_get(m, 0)->bin == gomp, "smaller map, same binaries");
	CHECK(sb_maps_resolve(m, MAP_BASE + (off - pgoff), &bin, &vaddr) == -1,
	      "exe no longer mapped");
	CHECK(sb_maps_parse(m, "") == 0 && sb_maps_count(m) == 0, "empty text");
out:
	sb_elf_close(e);
	sb_maps_free(m);
}

static void check_live(const char *exe)
{
	struct sb_maps *m = sb_maps_alloc();
	uint64_t vaddr = 0, start = 0;
	const char *fn = NULL, *path;
	bool any_exec = false;
	int bin = -1, st;
	pid_t child;

	CHECK(m && sb_maps_refresh(m, getpid()) == 0, "refresh self");
	if (!m)
		return;
	for (size_t i = 0; i < sb_maps_count(m); i++)
		any_exec |= sb_maps_get(m, i)->exec;
	CHECK(sb_maps_count(m) > 0 && any_exec, "own mappings");
	CHECK(sb_maps_resolve(m, (uintptr_t)&marker_fn, &bin, &vaddr) == 0, "self");
	path = sb_maps_binary_path(m, bin);
	CHECK(path && !strcmp(path, exe), "self path %s", path);
	if (sb_maps_binary_elf(m, bin))
		fn = sb_elf_func_at(sb_maps_binary_elf(m, bin), vaddr, &start);
	CHECK(fn && !strcmp(fn, "marker_fn"), "self func %s", fn);
	CHECK(sb_maps_resolve(m, (uintptr_t)&marker_fn + 3, &bin, &vaddr) == 0 &&
	      vaddr == start + 3, "offset inside marker_fn");

	/* a libc function resolves into libc by its preferred name */
	fn = NULL;
	CHECK(sb_maps_resolve(m, (uintptr_t)&getpid, &bin, &vaddr) == 0, "getpid");
	path = sb_maps_binary_path(m, bin);
	if (sb_maps_binary_elf(m, bin))
		fn = sb_elf_func_at(sb_maps_binary_elf(m, bin), vaddr, NULL);
	CHECK(path && strstr(base_name(path), "libc.so") && fn && !strcmp(fn, "getpid"),
	      "getpid in %s as %s", path, fn);
	CHECK(sb_maps_find_binary(m, "libc.so") == bin, "find libc.so");

	/* a reaped child's pid no longer exists */
	child = fork();
	if (child == 0)
		_exit(0);
	CHECK(child > 0 && waitpid(child, &st, 0) == child, "fork/wait");
	CHECK(sb_maps_refresh(m, child) == -ESRCH, "dead pid");
	CHECK(sb_maps_refresh(m, -5) == -ESRCH, "negative pid");
	sb_maps_free(m);
}

/* A miss on a live process re-reads its maps once, then not again for
 * 50 ms; the generation counts the re-reads. */
static void check_resolve_live(void)
{
	struct sb_maps *m = sb_maps_alloc();
	uint64_t vaddr;
	int bin;

	CHECK(m && sb_maps_generation(m) == 0, "fresh maps: generation 0");
	CHECK(sb_maps_resolve_live(m, getpid(), (uint64_t)(uintptr_t)&check_resolve_live,
				   &bin, &vaddr) == 0, "a miss re-reads the maps and resolves");
	CHECK(sb_maps_generation(m) == 1, "one re-read: %llu",
	      (unsigned long long)sb_maps_generation(m));
	CHECK(sb_maps_resolve_live(m, getpid(), 16, &bin, &vaddr) < 0, "unmapped stays a miss");
	CHECK(sb_maps_generation(m) == 1, "no second re-read within 50 ms");
	sb_maps_free(m);
}

/* A file unmapped since the last look (dlclose) keeps resolving, until
 * another file is mapped over its addresses. */
static void check_unmapped_kept(const char *exe)
{
	struct sb_maps *m = sb_maps_alloc();
	int fd = open(exe, O_RDONLY | O_CLOEXEC), bin = -1;
	uint64_t vaddr = 0;
	char *a = MAP_FAILED, *b;

	if (fd >= 0)
		a = mmap(NULL, 8192, PROT_READ, MAP_PRIVATE, fd, 0);
	CHECK(m && a != MAP_FAILED, "map the executable's first pages");
	if (!m || a == MAP_FAILED) {
		sb_maps_free(m);
		if (fd >= 0)
			close(fd);
		return;
	}
	CHECK(sb_maps_refresh(m, getpid()) == 0 &&
	      sb_maps_resolve(m, (uintptr_t)a + 0x40, &bin, &vaddr) == 0 && vaddr == 0x40 &&
	      !strcmp(sb_maps_binary_path(m, bin), exe), "mapped: resolves to offset 0x40");
	munmap(a, 8192);
	vaddr = 0;
	CHECK(sb_maps_refresh(m, getpid()) == 0 &&
	      sb_maps_resolve(m, (uintptr_t)a + 0x40, &bin, &vaddr) == 0 && vaddr == 0x40,
	      "unmapped since: still resolves (0x%llx)", (unsigned long long)vaddr);
	b = mmap(a, 4096, PROT_READ, MAP_PRIVATE | MAP_FIXED_NOREPLACE, fd, 4096);
	vaddr = 0;
	CHECK(b == a && sb_maps_refresh(m, getpid()) == 0 &&
	      sb_maps_resolve(m, (uintptr_t)a + 0x40, &bin, &vaddr) == 0 && vaddr == 0x1040,
	      "mapped over: the new mapping rules (0x%llx)", (unsigned long long)vaddr);
	if (b != MAP_FAILED)
		munmap(b, 4096);
	close(fd);
	sb_maps_free(m);
}

/*
 * A copy of this executable, mapped for execution, then deleted (issue
 * 10: "rebuild with -g" on a binary that has -g): its path opens nothing,
 * so it is opened through /proc/PID/map_files, at the refresh that finds
 * it, and keeps resolving after it is unmapped; the profile's name stays
 * the path the process used.  Then a file put at that path later, another
 * file, is never read for it.
 */
static void check_deleted(const char *exe, const char *dir)
{
	struct sb_maps *m = sb_maps_alloc();
	char copy[600], cmd[2048], pre[64];
	uint64_t mv = 0, off = 0, vaddr = 0, start = 0;
	struct sb_elf *e = NULL, *ce;
	char err[256], *a = MAP_FAILED;
	const char *fn = NULL;
	int fd = -1, bin = -1;

	snprintf(copy, sizeof(copy), "%s/deleted copy", dir);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", exe, copy);
	CHECK(system(cmd) == 0, "%s", cmd);
	e = sb_elf_open(exe, err, sizeof(err));
	CHECK(e && sb_elf_func_by_name(e, "marker_fn", &mv, NULL) == 0 &&
	      sb_elf_vaddr_to_offset(e, mv, &off) == 0, "marker_fn in self");
	if ((fd = open(copy, O_RDONLY | O_CLOEXEC)) >= 0)
		a = mmap(NULL, off + 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	CHECK(m && e && a != MAP_FAILED && unlink(copy) == 0, "map the copy, delete it");
	if (!m || !e || a == MAP_FAILED)
		goto out;
	CHECK(sb_maps_refresh(m, getpid()) == 0 &&
	      sb_maps_resolve(m, (uintptr_t)a + off, &bin, &vaddr) == 0 && vaddr == mv,
	      "deleted copy: resolves (bin %d vaddr 0x%llx)", bin, (unsigned long long)vaddr);
	snprintf(pre, sizeof(pre), "/proc/%d/map_files/", getpid());
	CHECK(bin >= 0 && !strcmp(sb_maps_binary_name(m, bin), copy) &&
	      sb_maps_binary_deleted(m, bin) &&
	      !strncmp(sb_maps_binary_path(m, bin), pre, strlen(pre)),
	      "deleted copy: named '%s', opened at '%s'", sb_maps_binary_name(m, bin),
	      sb_maps_binary_path(m, bin));
	{
		char buf[4096];
		const char *base = bin >= 0 ? sb_path_base(sb_maps_binary_path(m, bin), buf,
							   sizeof(buf)) : "";

		CHECK(!strcmp(base, "deleted copy"), "deleted copy: known by its name (%s)", base);
		base = sb_path_base("/proc/self/exe", buf, sizeof(buf));
		CHECK(!strcmp(base, base_name(exe)), "/proc/self/exe: known as %s", base);
		base = sb_path_base("/usr/lib/x86_64-linux-gnu/libc.so.6", buf, sizeof(buf));
		CHECK(!strcmp(base, "libc.so.6"), "a plain path: its last component (%s)", base);
	}
	munmap(a, off + 4096);
	a = MAP_FAILED;
	CHECK(sb_maps_refresh(m, getpid()) == 0 && (ce = sb_maps_binary_elf(m, bin)) &&
	      (fn = sb_elf_func_at(ce, mv, &start)) && !strcmp(fn, "marker_fn"),
	      "deleted copy, unmapped since: still named (%s)", fn);
	sb_maps_free(m);

	/* Mapped, deleted, another file at its path: that one is not it. */
	m = sb_maps_alloc();
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s' && truncate -s 4096 '%s'", exe, copy, copy);
	if ((a = mmap(NULL, off + 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0)) == MAP_FAILED ||
	    system(cmd) != 0) {
		CHECK(0, "map again, another file at the path");
		goto out;
	}
	CHECK(m && sb_maps_refresh(m, getpid()) == 0 &&
	      sb_maps_resolve(m, (uintptr_t)a + off, &bin, &vaddr) == 0 && vaddr == mv &&
	      strcmp(sb_maps_binary_path(m, bin), copy),
	      "another file at the path: the mapped one is read (%s)",
	      m ? sb_maps_binary_path(m, bin) : "");
out:
	if (a != MAP_FAILED)
		munmap(a, off + 4096);
	if (fd >= 0)
		close(fd);
	unlink(copy);
	sb_elf_close(e);
	sb_maps_free(m);
}

int main(void)
{
	char exe[512], dir[] = "/tmp/sb_procmaps_XXXXXX", cmd[256];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	CHECK(n > 0, "readlink /proc/self/exe");
	exe[n > 0 ? n : 0] = '\0';
	CHECK(marker_fn(1) == 8, "marker_fn");
	if (mkdtemp(dir)) {
		check_synthetic(exe, dir);
		check_deleted(exe, dir);
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		CHECK(system(cmd) == 0, "cleanup");
	} else {
		CHECK(0, "mkdtemp");
	}
	check_live(exe);
	check_resolve_live();
	check_unmapped_kept(exe);
	return CHECK_DONE("test_procmaps");
}
