// SPDX-License-Identifier: MIT
/*
 * Which sampled blocks are no LIME events (causes_priv.h), the sampled
 * path's counterpart of causes_exact.c's hw_event_of().  A cause is shown
 * where a reader acts: a line of the program.  A cpu-clock sample counts
 * for its own block and for every call site on its stack (a call site's
 * block holds its callees' time), so time spent elsewhere is already
 * counted where the program chose to spend it; these blocks would only
 * compete with that choice, and being deeper, win ties wrongly.
 *
 * Library code.  A block of a library (any binary but the profile's
 * executable) is the library's work, done because the program called it:
 * those samples are the program's call's (qsort's merge loop is no place
 * to act; the call, or the loop that repeats it, is).  A library's blocks
 * also hold every sample of the threads it starts (libgomp's, libc's
 * start_thread: an outer frame), which follows whatever the threads do.
 * A program that keeps its own work in its own shared library has it
 * shown at its calls into it.
 *
 * Enclosing frames.  Some threads' stacks have program frames below the
 * section's code: the main thread's _start and main's call into the
 * OpenMP runtime that runs the parallel region on it.  Such a frame holds
 * all of that thread's samples and none of the other threads', so it
 * follows "is the main thread" (which busy time often does: the master
 * does the region's serial parts) and is no decision in the section.  A
 * block is one when, for every thread whose stacks hold it, it holds
 * about all that thread's samples in the section (ENCLOSES of the largest
 * block count, the thread's outermost frame; a few unwinds stop short of
 * it), and some thread with samples never has it.  A call a thread's own
 * decision makes (the root's extra work) shares its thread's time with
 * the code every thread runs, so it holds clearly less; a thread that
 * does nothing in the section but one call has that call taken for its
 * frame, and the callee's blocks, which hold the same samples, stand in.
 */
#include "causes_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* share of a thread's samples an enclosing frame holds (unwinds that stop
 * short of _start lose a few: the recorder counts them, unwind_stop_*) */
#define ENCLOSES 0.95

/* Binary bin is a library: not the profile's executable (when the
 * profile names none, a shared object by its name, lib*.so[.N]). */
static bool library_bin(const struct sb_profile *p, int32_t bin)
{
	const char *exe = sb_profile_meta_get(p, "executable"), *path, *base, *so;

	if (bin < 0 || (size_t)bin >= p->nbinaries || !(path = p->binaries[bin].path))
		return false;
	if (exe && *exe)
		return strcmp(exe, path) != 0;
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	so = strstr(base, ".so");
	return so && (so[3] == '\0' || so[3] == '.');
}

/* Section s's samples per (event, thread): sum[e * nt + k], thread k of
 * tids (first seen first). */
static double *thread_sums(const struct sb_profile *p, uint32_t s, uint32_t *tids,
			   uint32_t *ntp)
{
	uint32_t nt = 0, col[SB_CAUSES_MAX_THREADS];
	double *sum;

	for (uint32_t i = 0; i < p->ninstances; i++) {
		const struct sb_instance *in = &p->instances[i];

		if (in->section != s)
			continue;
		sb_causes_columns(in, tids, nt, col);
		for (uint32_t t = 0; t < in->nthreads && t < SB_CAUSES_MAX_THREADS; t++)
			if (col[t] >= nt && nt < SB_CAUSES_MAX_THREADS)
				tids[nt++] = in->per_thread[t].tid;
	}
	sum = calloc((p->nevents ? p->nevents : 1) * (nt ? nt : 1), sizeof(*sum));
	if (!sum)
		return NULL;
	for (size_t v = 0; v < p->nvectors; v++) {
		const struct sb_vector *x = &p->vectors[v];
		const struct sb_instance *in = &p->instances[x->instance];

		if (in->section != s || p->events[x->event].kind != SB_EVK_BLOCK_SAMPLES)
			continue;
		sb_causes_columns(in, tids, nt, col);
		for (uint32_t t = 0; t < x->nthreads && t < in->nthreads &&
				     t < SB_CAUSES_MAX_THREADS; t++)
			if (col[t] < nt)
				sum[(size_t)x->event * nt + col[t]] += (double)x->counts[t];
	}
	*ntp = nt;
	return sum;
}

/* Marks the enclosing frames (see the header) among the program's blocks:
 * call sites (a frame is a call on the stack) in the main thread only. */
static void enclosing(const struct sb_profile *p, const struct sb_causes_graph *g,
		      const double *sum, const uint32_t *tids, uint32_t nt, const uint8_t *lib,
		      uint8_t *skip)
{
	double *most = calloc(nt ? nt : 1, sizeof(*most));
	const char *pid = sb_profile_meta_get(p, "pid");
	uint32_t main_tid = pid ? (uint32_t)strtoul(pid, NULL, 10) : 0;

	if (!most)
		return;
	for (size_t e = 0; e < p->nevents; e++)
		for (uint32_t k = 0; k < nt; k++)
			if (sum[e * nt + k] > most[k])
				most[k] = sum[e * nt + k];
	for (size_t e = 0; e < p->nevents; e++) {
		bool holds = false, frame = true, absent = false;

		long b = sb_causes_event_block(p, g, &p->events[e]);

		if (skip[e] || lib[e] || b < 0 || !sb_cfg_ends_in_call(g->merged, (uint32_t)b))
			continue;
		for (uint32_t k = 0; k < nt && frame; k++) {
			double x = sum[e * nt + k];

			if (x > 0 && tids[k] != main_tid) {
				frame = false;
			} else if (x > 0) {
				holds = true;
				frame = x >= ENCLOSES * most[k];
			} else if (most[k] > 0) {
				absent = true;
			}
		}
		if (holds && frame && absent)
			skip[e] = 1;
	}
	free(most);
}

int sb_causes_sample_skips(const struct sb_profile *p, const struct sb_causes_graph *g,
			   uint32_t s, uint8_t *skip)
{
	uint32_t tids[SB_CAUSES_MAX_THREADS], nt = 0;
	uint8_t *lib = calloc(p->nevents ? p->nevents : 1, 1);
	double *sum = lib ? thread_sums(p, s, tids, &nt) : NULL;

	if (!sum) {
		free(lib);
		return -ENOMEM;
	}
	for (size_t e = 0; e < p->nevents; e++)
		lib[e] = p->events[e].kind == SB_EVK_BLOCK_SAMPLES &&
			 library_bin(p, p->events[e].binary);
	enclosing(p, g, sum, tids, nt, lib, skip);
	for (size_t e = 0; e < p->nevents; e++)
		skip[e] |= lib[e];
	free(sum);
	free(lib);
	return 0;
}
