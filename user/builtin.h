/* SPDX-License-Identifier: MIT */
/* The subcommands behind scalebpf's command table. */
#ifndef SB_BUILTIN_H
#define SB_BUILTIN_H

#include <stdint.h>

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_cc(int argc, char **argv);

/* CLOCK_MONOTONIC in ns: the clock BPF's ktime uses. */
uint64_t sb_now_ns(void);

#endif
