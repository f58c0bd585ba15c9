// SPDX-License-Identifier: MIT
/*
 * stacks.c - a sample's call chain (stacks.h).
 *
 * Cost, measured (README "Stacks without frame pointers"): the unwind
 * runs in the ring-buffer callback, once per sample, and caches each
 * pc's CFI rules, so a repeat frame is a maps lookup, a hash lookup and
 * a few loads from the copy; it is timed on every run and stored as
 * unwind_ns_per_sample, and unwind_ns_per_repeat for the unwinds whose
 * pcs were all seen before (the steady state: first sightings open a
 * binary's CFI or re-read the maps).
 *
 * SCALEBPF_UNWIND_DUMP=FILE (for the tests) writes each sample's chain,
 * one line: "tid how nframes ip ra1 ra2 ...", hexadecimal addresses; how
 * is why the unwind stopped, or "fp" for a frame-pointer chain.
 */
#include "stacks.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binary/procmaps.h"
#include "binary/unwind.h"
#include "clock.h"
#include "profile/profile.h"

struct sb_stacks {
	struct sb_maps *maps;
	int pid;
	struct sb_unwind *unwind;
	FILE *dump;
	uint64_t samples;            /* with a stack copy */
	uint64_t frames, fp_frames;  /* chain lengths: unwound, frame pointers */
	uint64_t stops[SB_UNWIND_NSTOPS];
	uint64_t spliced;            /* continued by the frame-pointer chain */
	uint64_t fp_only;            /* no CFI at the IP: FP chain whole */
	uint64_t trampolines;        /* uretprobe slots given their original */
	uint64_t bytes_max;          /* the most of a copy an unwind read */
	uint64_t bytes_hist[5];      /* complete unwinds that read <= 1, 2, 4, 8 KiB, more */
	uint64_t ns;
	uint64_t repeat_ns, repeats; /* unwinds of pcs all seen before */
};

static int resolve(void *ctx, uint64_t addr, struct sb_elf **e, uint64_t *vaddr)
{
	struct sb_stacks *s = ctx;
	int bin;

	if (addr < 4096 || sb_maps_resolve_live(s->maps, s->pid, addr, &bin, vaddr))
		return -1;
	*e = sb_maps_binary_elf(s->maps, bin);
	return *e ? 0 : -1;
}

static bool dump_started;   /* SCALEBPF_UNWIND_DUMP opened once already */

struct sb_stacks *sb_stacks_alloc(struct sb_maps *maps, int pid)
{
	struct sb_stacks *s = calloc(1, sizeof(*s));
	const char *dump = getenv("SCALEBPF_UNWIND_DUMP");

	if (!s)
		return NULL;
	s->maps = maps;
	s->pid = pid;
	s->unwind = sb_unwind_new(resolve, s);
	if (!s->unwind) {
		free(s);
		return NULL;
	}
	/* One file for the recording, emptied first: every image
	 * (launcher, exec'd program, forked children) appends to it, in
	 * append mode (a write lands at the end whichever stream makes
	 * it), a whole line a write. */
	if (dump && *dump) {
		FILE *f = dump_started ? NULL : fopen(dump, "w");

		if (f)
			fclose(f);
		dump_started = true;
		if ((s->dump = fopen(dump, "ae")))
			setvbuf(s->dump, NULL, _IOLBF, 0);
	}
	return s;
}

void sb_stacks_free(struct sb_stacks *s)
{
	if (!s)
		return;
	if (s->dump)
		fclose(s->dump);
	sb_unwind_free(s->unwind);
	free(s);
}

static size_t fp_chain(const struct sb_rec_sample *rec, uint64_t *frames, size_t max)
{
	size_t n = rec->nframes < SB_SAMPLE_FRAMES ? rec->nframes : SB_SAMPLE_FRAMES;

	n = n < max ? n : max;
	memcpy(frames, rec->frames, n * sizeof(*frames));
	return n;
}

/*
 * The frame-pointer chain is right from any frame whose code keeps frame
 * pointers on: where the CFI unwind stopped at return address ra (the
 * copy ended), the kernel's walk, which reads the whole stack, may name
 * ra too, and what follows it there are ra's callers.
 */
static size_t splice(struct sb_stacks *s, const struct sb_rec_sample *rec, uint64_t *frames,
		     size_t n, size_t max)
{
	size_t nfp = rec->nframes < SB_SAMPLE_FRAMES ? rec->nframes : SB_SAMPLE_FRAMES;

	for (size_t k = 1; k < nfp; k++) {
		if (rec->frames[k] != frames[n - 1])
			continue;
		for (k++; k < nfp && n < max; k++)
			frames[n++] = rec->frames[k];
		s->spliced++;
		break;
	}
	return n;
}

static void dump(struct sb_stacks *s, const struct sb_rec_sample *rec, const char *how,
		 const uint64_t *frames, size_t n)
{
	if (!s->dump)
		return;
	fprintf(s->dump, "%u %s %zu", rec->hdr.tid, how, n);
	for (size_t i = 0; i < n; i++)
		fprintf(s->dump, " %" PRIx64, frames[i]);
	fputc('\n', s->dump);
}

size_t sb_stacks_chain(struct sb_stacks *s, const struct sb_rec_sample *rec, size_t size,
		       uint64_t *frames, size_t max)
{
	const struct sb_rec_sample_stack *rs = (const void *)rec;
	struct sb_unwind_input in = { 0 };
	struct sb_unwind_result res;
	uint64_t t0, dt;
	size_t n, cached;

	if (!s)
		return fp_chain(rec, frames, max);
	if (rec->hdr.type != SB_REC_SAMPLE_STACK || size < sizeof(*rs)) {
		n = fp_chain(rec, frames, max);
		dump(s, rec, "fp", frames, n);
		return n;
	}
	t0 = sb_now_ns();
	cached = sb_unwind_cached(s->unwind);
	in.ip = rec->ip;
	in.regs = (const uint64_t *)rec->regs;   /* same layout */
	in.stack = rs->stack;
	in.len = rs->stack_len < SB_SAMPLE_STACK_BYTES ? rs->stack_len : SB_SAMPLE_STACK_BYTES;
	in.tramp = rs->tramp;
	in.ret_slot = (const uint64_t *)rs->ret_slot;
	in.ret_orig = (const uint64_t *)rs->ret_orig;
	in.nret = rs->nret < SB_SAMPLE_RETURNS ? rs->nret : SB_SAMPLE_RETURNS;
	sb_unwind_run(s->unwind, &in, frames, max, &res);
	n = res.n;
	s->samples++;
	s->stops[res.stop]++;
	s->trampolines += res.trampolines;
	s->fp_frames += rec->nframes < SB_SAMPLE_FRAMES ? rec->nframes : SB_SAMPLE_FRAMES;
	if (res.bytes_used > s->bytes_max)
		s->bytes_max = res.bytes_used;
	if (res.stop == SB_UNWIND_OUTERMOST || res.stop == SB_UNWIND_FULL)
		s->bytes_hist[res.bytes_used <= 1024 ? 0 : res.bytes_used <= 2048 ? 1 :
			      res.bytes_used <= 4096 ? 2 : res.bytes_used <= 8192 ? 3 : 4]++;
	if (n == 1 && res.stop == SB_UNWIND_NO_CFI) {
		/* The IP's code has no CFI (JIT, vdso): only frame pointers
		 * can tell.  Any other early stop (no copy, a bad rule) keeps
		 * its one frame, spliced only where the chains agree: in
		 * frameless code the FP chain names callers at random. */
		n = fp_chain(rec, frames, max);
		s->fp_only++;
	} else if (res.stop != SB_UNWIND_OUTERMOST && res.stop != SB_UNWIND_FULL) {
		n = splice(s, rec, frames, n, max);
	}
	s->frames += n;
	dt = sb_now_ns() - t0;
	s->ns += dt;
	if (sb_unwind_cached(s->unwind) == cached) {
		s->repeat_ns += dt;
		s->repeats++;
	}
	dump(s, rec, sb_unwind_stop_name(res.stop), frames, n);
	return n;
}

int sb_stacks_store(struct sb_stacks *s, struct sb_profile *p, const uint64_t *counters,
		    char *notes, size_t len)
{
	static const char *const keys[SB_UNWIND_NSTOPS] = {
		"unwind_stop_outermost", "unwind_stop_full", "unwind_stop_truncated",
		"unwind_stop_no_cfi", "unwind_stop_bad", "unwind_stop_trampoline",
	};
	uint64_t early;
	char buf[64];
	int ret = 0;

	if (!s || !s->samples)
		return sb_profile_meta_set(p, "unwind", "frame pointers") < 0 ? -1 : 0;
	ret |= sb_profile_meta_set(p, "unwind", "cfi (stack copy), frame pointers past it") < 0;
	ret |= sb_profile_meta_set_u64(p, "unwind_samples", s->samples) < 0;
	snprintf(buf, sizeof(buf), "%.2f", (double)s->frames / (double)s->samples);
	ret |= sb_profile_meta_set(p, "unwind_depth_mean", buf) < 0;
	snprintf(buf, sizeof(buf), "%.2f", (double)s->fp_frames / (double)s->samples);
	ret |= sb_profile_meta_set(p, "unwind_fp_depth_mean", buf) < 0;
	for (int i = 0; i < SB_UNWIND_NSTOPS; i++)
		ret |= sb_profile_meta_set_u64(p, keys[i], s->stops[i]) < 0;
	ret |= sb_profile_meta_set_u64(p, "unwind_fp_spliced", s->spliced) < 0;
	ret |= sb_profile_meta_set_u64(p, "unwind_fp_only", s->fp_only) < 0;
	ret |= sb_profile_meta_set_u64(p, "unwind_trampolines", s->trampolines) < 0;
	ret |= sb_profile_meta_set_u64(p, "unwind_stack_bytes_max", s->bytes_max) < 0;
	/* How much of the copy complete unwinds needed: the size's evidence. */
	snprintf(buf, sizeof(buf), "<=1k:%" PRIu64 " <=2k:%" PRIu64 " <=4k:%" PRIu64
		 " <=8k:%" PRIu64 " >8k:%" PRIu64, s->bytes_hist[0], s->bytes_hist[1],
		 s->bytes_hist[2], s->bytes_hist[3], s->bytes_hist[4]);
	ret |= sb_profile_meta_set(p, "unwind_stack_bytes_hist", buf) < 0;
	ret |= sb_profile_meta_set_u64(p, "unwind_stack_short", counters[SB_CNT_STACK_SHORT]) < 0;
	ret |= sb_profile_meta_set_u64(p, "unwind_stack_fault", counters[SB_CNT_STACK_FAULT]) < 0;
	ret |= sb_profile_meta_set_u64(p, "unwind_stack_novma", counters[SB_CNT_STACK_NOVMA]) < 0;
	ret |= sb_profile_meta_set_u64(p, "unwind_ns_per_sample", s->ns / s->samples) < 0;
	ret |= sb_profile_meta_set_u64(p, "unwind_ns_per_repeat",
				       s->repeats ? s->repeat_ns / s->repeats : 0) < 0;
	/* Early ends are partial chains, never wrong ones: say so when they
	 * are common enough to matter.  A short run has a few anyway: the
	 * first samples after exec run in libraries mapped since the maps
	 * were last read (re-read at most every 50 ms). */
	early = s->stops[SB_UNWIND_TRUNCATED] + s->stops[SB_UNWIND_NO_CFI] +
		s->stops[SB_UNWIND_BAD] + s->stops[SB_UNWIND_TRAMPOLINE];
	if (early * 20 > s->samples && early >= 20) {
		size_t l = strlen(notes);

		snprintf(notes + l, len - l, "%s%" PRIu64 " of %" PRIu64 " sample stacks unwound "
			 "only in part (copy too short %" PRIu64 ", no CFI %" PRIu64 ", other %"
			 PRIu64 ")", l ? "; " : "", early, s->samples,
			 s->stops[SB_UNWIND_TRUNCATED], s->stops[SB_UNWIND_NO_CFI],
			 s->stops[SB_UNWIND_BAD] + s->stops[SB_UNWIND_TRAMPOLINE]);
	}
	return ret ? -1 : 0;
}
