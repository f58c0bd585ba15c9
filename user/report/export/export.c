// SPDX-License-Identifier: MIT
/* The export formats of `scalebpf report --format` (export.h). */
#include "export.h"

#include <string.h>

const struct sb_export_format *const sb_export_formats[] = { &sb_export_pprof,
							     &sb_export_perfetto, NULL };

const struct sb_export_format *sb_export_find(const char *name)
{
	for (size_t i = 0; sb_export_formats[i]; i++)
		if (!strcmp(sb_export_formats[i]->name, name))
			return sb_export_formats[i];
	return NULL;
}
