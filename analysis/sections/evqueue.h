/* SPDX-License-Identifier: MIT */
/*
 * A min-heap of events by (timestamp, arrival order).  Several CPUs feed
 * one ring buffer, so records arrive slightly out of timestamp order;
 * holding them until a watermark and releasing them sorted restores it.
 */
#ifndef SB_EVQUEUE_H
#define SB_EVQUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sb_event;
struct sb_evqueue;

struct sb_evqueue *sb_evqueue_alloc(void);
void sb_evqueue_free(struct sb_evqueue *q);
/* Returns 0, or -1 on ENOMEM. */
int sb_evqueue_push(struct sb_evqueue *q, const struct sb_event *ev);
/* Pops the oldest event if its ts <= watermark. */
bool sb_evqueue_pop_until(struct sb_evqueue *q, uint64_t watermark, struct sb_event *out);
size_t sb_evqueue_size(const struct sb_evqueue *q);
/* Events pushed older than one already released: order could not be kept. */
uint64_t sb_evqueue_late(const struct sb_evqueue *q);

#endif
