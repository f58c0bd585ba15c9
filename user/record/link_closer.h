/* SPDX-License-Identifier: MIT */
/*
 * A process of our own that closes the uprobe links of processes that
 * ended.  Closing a uprobe_multi link waits for RCU grace periods (~20-60
 * ms, and links closing together queue for several): the recorder would
 * wait that long before it exits, after every run, for links that can no
 * longer fire (their process is gone).  Handed over (SCM_RIGHTS), our
 * copy closes at once; the closer pays the waits, and ends by itself
 * once the recorder's end of the socket is closed (at the latest when
 * the recorder exits, even killed).  During the recording it takes what
 * the reaper thread took (bpf_links.h: links of an ended process, or of
 * the image before an exec), each closed as soon as it comes; at the end,
 * those of processes gone.  Links of processes alive at the end are not
 * handed over: their detach is waited for (sb_bpf_stop).
 */
#ifndef SB_LINK_CLOSER_H
#define SB_LINK_CLOSER_H

#include <stdbool.h>

/* Forks the closer; before any thread and before the target is started.
 * The fork execs `scalebpf --link-closer FD` (its own short command
 * line, not the recorder's with the target's arguments, which pgrep -f
 * and pkill -f of the target would match; none of the recorder's memory;
 * cwd /; no other descriptor); if that exec fails the fork is the closer.
 * SCALEBPF_SYNC_DETACH=1: none, links are closed by the recorder as
 * before.  0 or -errno. */
int sb_closer_start(void);
/* main() of `scalebpf --link-closer FD` (not a user command: refused,
 * exit 2, unless FD is a unix SOCK_SEQPACKET socket); does not return
 * otherwise. */
int sb_closer_exec_main(int argc, char **argv);
/* Hands a link fd over and closes ours; false (fd untouched) when there
 * is no closer or it cannot take it within 200 ms (then none is handed
 * over any more).  The closer closes its copy only after ours. */
bool sb_closer_give(int fd);
/* No more links: the closer closes what it has and exits (not waited). */
void sb_closer_end(void);

#endif
