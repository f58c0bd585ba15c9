// SPDX-License-Identifier: MIT
/* What `report -i` reads: a profile file, or a directory of them (a
 * rotating recorder's intervals) merged into one (analysis/merge/). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "merge/merge.h"
#include "report.h"

static bool profile_name(const char *name)
{
	size_t n = strlen(name);

	return name[0] != '.' && n > 4 && !strcmp(name + n - 4, ".sbp");
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The *.sbp files of dir, sorted by name (a rotating recorder names them
 * by their start, so this is time order).  -errno. */
static int list_dir(const char *dir, char ***out, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t cap = 0;
	int ret = 0;

	*n = 0;
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		if (!profile_name(e->d_name))
			continue;
		if (*n == cap) {
			char **a = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof(*a));

			if (!a) {
				ret = -ENOMEM;
				break;
			}
			names = a;
		}
		if (!(names[*n] = strdup(e->d_name))) {
			ret = -ENOMEM;
			break;
		}
		(*n)++;
	}
	closedir(d);
	if (*n)
		qsort(names, *n, sizeof(*names), by_name);
	*out = names;
	return ret;
}

int sb_report_load(const char *path, struct sb_profile **out, FILE *warn, char *err,
		   size_t errlen)
{
	struct sb_merge *m = NULL;
	struct stat st;
	char **names = NULL, file[4096];
	size_t n = 0, skipped = 0;
	int ret = -1;

	*out = NULL;
	if (stat(path, &st) || !S_ISDIR(st.st_mode))
		return sb_profile_read(path, out, err, errlen) ? -1 : 0;
	if ((ret = list_dir(path, &names, &n))) {
		snprintf(err, errlen, "%s: %s", path, strerror(-ret));
		ret = -1;
		goto out;
	}
	if (!n) {
		snprintf(err, errlen, "%s: a directory without profiles (*.sbp)", path);
		ret = -1;
		goto out;
	}
	if (!(m = sb_merge_alloc(NULL))) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		struct sb_profile *p;
		char why[512];

		snprintf(file, sizeof(file), "%s/%s", path, names[i]);
		/* one unreadable interval (a disk that filled, a copy cut
		 * short) costs that interval, said, not the rest */
		if (sb_profile_read(file, &p, why, sizeof(why))) {
			fprintf(warn, "scalebpf report: warning: skipped %s\n", why);
			skipped++;
			continue;
		}
		ret = sb_merge_add(m, p, names[i], err, errlen);
		sb_profile_free(p);
		if (ret)
			goto out;
	}
	ret = -1;
	if (skipped == n) {
		snprintf(err, errlen, "%s: none of its %zu profiles could be read", path, n);
		goto out;
	}
	if (!(*out = sb_merge_finish(m)) ||
	    sb_profile_meta_set_u64(*out, "merged_skipped", skipped) < 0 ||
	    sb_profile_meta_set(*out, "merged_directory", path) < 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	ret = 0;
out:
	if (ret) {
		sb_profile_free(*out);
		*out = NULL;
	}
	sb_merge_free(m);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return ret;
}
