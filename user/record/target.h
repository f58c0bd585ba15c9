/* SPDX-License-Identifier: MIT */
/* The process being recorded: checks, launching, its threads and libraries. */
#ifndef SB_TARGET_H
#define SB_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* 0 when PID is a live process we may trace; else -errno and a message. */
int sb_target_check_pid(int pid, char *err, size_t errlen);
/* Some thread of PID runs (its leader may have exited alone). */
bool sb_target_alive(int pid);
/* When PID's leader exited (pthread_exit) while other threads run: one
 * of those, else 0. */
int sb_target_leader_exited(int pid);
/* Thread tid of pid has not exited (a zombie leader has). */
bool sb_target_thread_live(int pid, uint32_t tid);

/*
 * A process held by identity, not by number: its pid can be another
 * process's once it exits and is reaped.  A pidfd (Linux 5.3) when the
 * kernel has them, else the start time in /proc/PID/stat.
 */
struct sb_pin {
	int pid, fd;
	unsigned long long start;   /* clock ticks after boot */
};
/* Pins the process now behind pid: 0, -ESRCH (gone) or another -errno
 * (EMFILE, ENFILE: out of descriptors). */
int sb_target_pin(int pid, struct sb_pin *pin);
/* The pinned process has not exited (pid reuse never fools it). */
bool sb_pin_alive(const struct sb_pin *pin);
/* Sends sig to the pinned process, never to one that got its pid since:
 * 0, -ESRCH once it exited, or -errno. */
int sb_pin_signal(const struct sb_pin *pin, int sig);
void sb_pin_close(struct sb_pin *pin);
/* Its state letter in /proc/PID/stat (R, S, T...), 0 when gone. */
char sb_target_state(int pid);
/* The executable behind /proc/PID/exe. */
int sb_target_exe(int pid, char *buf, size_t len);
/* Thread ids from /proc/PID/task; caller frees *tids. */
int sb_target_threads(int pid, uint32_t **tids, size_t *n);
void sb_target_comm(int pid, uint32_t tid, char *buf, size_t len);
/* The thread's on-CPU ns so far (sum_exec_runtime), 0 if unknown. */
uint64_t sb_target_runtime(int pid, uint32_t tid);

/* A child started stopped at a gate, so probes go in before it runs. */
struct sb_child {
	pid_t pid;
	int gate_fd;     /* write end: closing it lets the child exec */
	int err_fd;      /* read end: the child's exec errno, EOF on success */
};

/* Resolves argv[0] through PATH into exe (absolute) and forks the gated
 * child.  Returns 0, or -errno with a message. */
int sb_target_spawn(char *const argv[], struct sb_child *c, char *exe, size_t exelen,
		    char *err, size_t errlen);
/* Opens the gate; fails with a message when exec failed. */
int sb_target_release(struct sb_child *c, char *err, size_t errlen);
/* Kills and reaps a child that never ran. */
void sb_target_abort(struct sb_child *c);

/* Shared libraries exe will load (DT_NEEDED, resolved by its own dynamic
 * loader with --list, which runs none of the program).  cb per path. */
int sb_target_libraries(const char *exe, void (*cb)(const char *path, void *ctx), void *ctx);

/* A script's interpreter (its #! line, canonical) into interp: 0, or -1
 * when path is no script.  What runs when the script is executed. */
int sb_target_script(const char *path, char *interp, size_t len);
/* exe's dynamic loader (PT_INTERP) into buf: 0, or -1 (static). */
int sb_target_interp(const char *exe, char *buf, size_t len);

#endif
