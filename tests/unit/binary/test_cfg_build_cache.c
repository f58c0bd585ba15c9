// SPDX-License-Identifier: MIT
/*
 * test_cfg_build_cache: sb_cfg_cached() on the program of
 * cfg_build_test.h: miss then hit with the same graph, corrupt and
 * truncated files rebuilt and replaced, the default directories
 * ($XDG_CACHE_HOME, $HOME/.cache) created 0700, nothing cached without a
 * build-id, and a relocatable object refused.
 */
#include "binary/cfg_build.h"
#include "cfg_compare.h"
#include "check.h"
#include "binary/elfsym.h"
#include "cfg_build_test.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/sb_cfgb_cache_XXXXXX";

static size_t count_files(const char *d)
{
	DIR *dp = opendir(d);
	struct dirent *de;
	size_t n = 0;

	while (dp && (de = readdir(dp)))
		n += de->d_name[0] != '.';
	if (dp)
		closedir(dp);
	return n;
}

static void test_cache(const char *bin, const char *nobid)
{
	char cdir[512], file[1024], err[256];
	struct sb_elf *e = sb_elf_open(bin, err, sizeof(err)), *e2;
	struct sb_cfg *ref = sb_cfg_build(e, err, sizeof(err)), *g;
	bool hit = true;
	struct stat sbuf;

	snprintf(cdir, sizeof(cdir), "%s/cache/a/b", dir);
	snprintf(file, sizeof(file), "%s/%s" SB_CFG_CACHE_EXT, cdir, sb_elf_build_id(e));
	g = sb_cfg_cached(e, cdir, &hit, err, sizeof(err));
	CHECK(g && !hit && stat(file, &sbuf) == 0, "first call: miss, file written");
	CHECK(stat(cdir, &sbuf) == 0 && (sbuf.st_mode & 0777) == 0700, "cache dir 0700");
	sb_cfg_free(g);
	g = sb_cfg_cached(e, cdir, &hit, err, sizeof(err));
	CHECK(g && hit && same_graph(g, ref), "second call: hit, identical graph");
	sb_cfg_free(g);
	/* a flipped byte in the middle, then a truncated file: rebuilt */
	CHECK(run("printf '\\377' | dd of=%s bs=1 seek=100 conv=notrunc status=none", file) == 0,
	      "corrupt");
	g = sb_cfg_cached(e, cdir, &hit, err, sizeof(err));
	CHECK(g && !hit && same_graph(g, ref), "corrupt file: miss, rebuilt");
	sb_cfg_free(g);
	g = sb_cfg_cached(e, cdir, &hit, err, sizeof(err));
	CHECK(g && hit && same_graph(g, ref), "corrupt file was replaced");
	sb_cfg_free(g);
	CHECK(truncate(file, 10) == 0, "truncate");
	g = sb_cfg_cached(e, cdir, &hit, err, sizeof(err));
	CHECK(g && !hit && same_graph(g, ref) && stat(file, &sbuf) == 0 && sbuf.st_size > 10,
	      "truncated file: rebuilt and replaced");
	sb_cfg_free(g);
	CHECK(count_files(cdir) == 1, "no temporary files left");
	/* default directories */
	setenv("XDG_CACHE_HOME", cdir, 1);
	g = sb_cfg_cached(e, NULL, &hit, err, sizeof(err));
	snprintf(file, sizeof(file), "%s/scalebpf/cfg/%s" SB_CFG_CACHE_EXT, cdir, sb_elf_build_id(e));
	CHECK(g && !hit && stat(file, &sbuf) == 0, "$XDG_CACHE_HOME/scalebpf/cfg");
	sb_cfg_free(g);
	unsetenv("XDG_CACHE_HOME");
	snprintf(file, sizeof(file), "%s/home", dir);
	setenv("HOME", file, 1);
	g = sb_cfg_cached(e, NULL, &hit, err, sizeof(err));
	snprintf(file, sizeof(file), "%s/home/.cache/scalebpf/cfg/%s" SB_CFG_CACHE_EXT, dir, sb_elf_build_id(e));
	CHECK(g && !hit && stat(file, &sbuf) == 0, "$HOME/.cache/scalebpf/cfg");
	snprintf(file, sizeof(file), "%s/home/.cache", dir);
	CHECK(stat(file, &sbuf) == 0 && (sbuf.st_mode & 0777) == 0700, "created 0700");
	sb_cfg_free(g);
	/* no build-id: never cached */
	snprintf(cdir, sizeof(cdir), "%s/cache2", dir);
	e2 = sb_elf_open(nobid, err, sizeof(err));
	CHECK(e2 && !sb_elf_build_id(e2), "binary without build-id");
	for (int i = 0; e2 && i < 2; i++) {
		g = sb_cfg_cached(e2, cdir, &hit, err, sizeof(err));
		CHECK(g && !hit && g->nfuncs > 0 && !g->build_id, "no build-id: built, miss");
		sb_cfg_free(g);
	}
	CHECK(count_files(cdir) == 0, "no build-id: nothing written");
	/* a relocatable object is refused with a message */
	snprintf(file, sizeof(file), "%s/prog.o", dir);
	sb_elf_close(e2);
	e2 = sb_elf_open(file, err, sizeof(err));
	err[0] = '\0';
	g = e2 ? sb_cfg_build(e2, err, sizeof(err)) : NULL;
	CHECK(e2 && !g && strstr(err, "executable"), "object file refused: %s", err);
	sb_elf_close(e2);
	sb_cfg_free(ref);
	sb_elf_close(e);
}

int main(void)
{
	char bin[256], nobid[256];

	/* the build is checked by test_cfg_build; here it only has to work */
	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp");
		return CHECK_DONE("test_cfg_build_cache");
	}
	if (!write_prog_source(dir) || compile_prog(dir) != 0) {
		CHECK(0, "write and compile %s/prog.c", dir);
		run("rm -rf %s", dir);
		return CHECK_DONE("test_cfg_build_cache");
	}
	snprintf(bin, sizeof(bin), "%s/prog", dir);
	snprintf(nobid, sizeof(nobid), "%s/nobid", dir);
	test_cache(bin, nobid);
	run("rm -rf %s", dir);
	return CHECK_DONE("test_cfg_build_cache");
}
