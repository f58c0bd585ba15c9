/* SPDX-License-Identifier: MIT */
/* The subcommands behind scalebpf's command table. */
#ifndef SB_BUILTIN_H
#define SB_BUILTIN_H

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_cc(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_stack(int argc, char **argv);

#endif
