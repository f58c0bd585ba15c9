/* SPDX-License-Identifier: MIT */
/*
 * The hardware samplers' BPF object (bpf/hwsample.bpf.c) behind
 * load/attach/stop/close, so nothing else touches its skeleton.  It writes
 * into the main ring buffer, whose fd it is given.
 */
#ifndef SB_HWSAMPLE_H
#define SB_HWSAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "pmu.h"
#include "sbpf_events.h"

struct sb_hw;

/* Open, set read-only data, share the ring buffer, load.  Needs no PMU. */
int sb_hw_load(struct sb_hw **out, int pid, int ringbuf_fd, size_t wakeup_bytes,
	       char *err, size_t errlen);
/* Whether each program passed the verifier (for the load test). */
int sb_hw_prog_fds(const struct sb_hw *h, int *lbr_fd, int *load_fd, int *store_fd);
/* Opens the LBR and PEBS load samplers on every CPU and attaches the
 * programs; load_event gets the libpfm4 event used.  0, or a negative
 * errno with err (e.g. the CPU or the hypervisor lacks LBR or PEBS).
 * The PEBS store sampler (sharing candidates) is added where the CPU has
 * one: store_event gets its event, or "none (why)". */
int sb_hw_attach(struct sb_hw *h, const struct sb_pmu *pmu, unsigned lbr_hz,
		 uint64_t load_period, uint64_t store_period, char *load_event,
		 char *store_event, size_t namelen, char *err, size_t errlen);
/* Counter totals over CPUs. */
int sb_hw_read_counters(struct sb_hw *h, uint64_t out[SB_HWCNT_MAX]);
/* Detaches the samplers; the object stays for reading counters. */
void sb_hw_stop(struct sb_hw *h);
void sb_hw_close(struct sb_hw *h);

#endif
