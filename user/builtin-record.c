// SPDX-License-Identifier: MIT
/*
 * scalebpf record: attach to a process (or start one), time every thread's
 * work and waits per parallel-section instance, write a profile.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "builtin.h"
#include "opt_parse.h"
#include "record/clock.h"
#include "hw/pmu.h"
#include "binary/procmaps.h"
#include "record/record_bpf.h"
#include "record/record_session.h"
#include "record/record_footprint.h"
#include "record/record_reuse.h"
#include "record/record_watch.h"
#include "record/rec_timing.h"
#include "record/link_closer.h"
#include "record/target.h"

static volatile sig_atomic_t stop_signal, nsignals;
/* The last signal came from the kernel: a terminal's Ctrl-C (or hangup)
 * goes to its whole foreground process group, the command included. */
static volatile sig_atomic_t from_tty;
static sig_atomic_t nforwarded;   /* nsignals when the last was passed on */

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	stop_signal = sig;
	from_tty = si && si->si_code == SI_KERNEL;
	nsignals++;
}

/* Longer would overflow the nanosecond clock arithmetic (1e9 s: 31 years). */
#define SB_MAX_DURATION_S 1e9

/* A bad option value: what was wrong and what is accepted; exit code 2,
 * as for any usage error. */
static int opt_fail(const char *opt, const char *arg, int err, const char *want)
{
	fprintf(stderr, "scalebpf record: invalid %s '%s': %s (%s)\n", opt, arg,
		sb_opt_why(err), want);
	return 2;
}

static int parse_opts(struct sb_rec *r, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "output", required_argument, NULL, 'o' },
		{ "duration", required_argument, NULL, 'd' },
		{ "barrier", required_argument, NULL, 'b' },
		{ "no-auto-barrier", no_argument, NULL, 'A' },
		{ "freq", required_argument, NULL, 'F' },
		{ "max-instances", required_argument, NULL, 'M' },
		{ "single-joins", no_argument, NULL, 'J' },
		{ "ringbuf-mb", required_argument, NULL, 'R' },
		{ "events", required_argument, NULL, 'E' },
		{ "unwind", required_argument, NULL, 'U' },
		{ "watch-rate", required_argument, NULL, 'W' },
		{ "chip-rate", required_argument, NULL, 'c' },
		{ "chip-bytes", required_argument, NULL, 'C' },
		{ "region", required_argument, NULL, 'r' },
		{ "chip", no_argument, NULL, 'K' },
		{ "chip-probes", required_argument, NULL, 'P' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "sample-duty", required_argument, NULL, 'D' },
		{ "rotate", required_argument, NULL, 'T' },
		{ "keep", required_argument, NULL, 'k' },
		{ "max-bytes", required_argument, NULL, 'B' },
		{ "push", required_argument, NULL, 'H' },
		{ "push-app", required_argument, NULL, 'a' },
		{ "push-wait", required_argument, NULL, 'w' },
		{ "follow", no_argument, NULL, 'f' },
		{ "no-follow", no_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *chip_rate = NULL, *chip_bytes = NULL;
	double rate;
	uint64_t v;
	int c, ret;

	r->output = "scalebpf.data";
	r->auto_barrier = true;
	r->sample_hz = 199;
	r->max_instances = 10000;
	r->ringbuf_mb = 16;
	r->watch_rate = SB_WATCH_DEFAULT_RATE;
	r->push_wait_ms = 10000;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+p:o:d:b:F:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if ((ret = sb_opt_u64(optarg, 1, INT_MAX, &v)))
				return opt_fail("-p", optarg, ret, "a PID, 1..2147483647");
			r->pid = (int)v;
			break;
		case 'o':
			r->output = optarg;
			break;
		case 'd':
			if ((ret = sb_opt_double(optarg, 0, SB_MAX_DURATION_S, &r->duration_s)))
				return opt_fail("-d", optarg, ret, "seconds, > 0 and at most 1e9");
			break;
		case 'b':
			if (r->nbarriers < SB_REC_MAX_BARRIERS)
				r->barriers[r->nbarriers++] = optarg;
			break;
		case 'A':
			r->auto_barrier = false;
			break;
		case 'K':
			if (!r->chip_probes)
				r->chip_probes = SB_FPROBE_DEFAULT_RATE;
			break;
		case 'P':
			if ((ret = sb_opt_u64(optarg, 0, 10000, &v)))
				return opt_fail("--chip-probes", optarg, ret, "probes per second, 0..10000");
			r->chip_probes = (unsigned)v;
			break;
		case 'r':
			if (r->nregions == SB_REC_MAX_REGIONS) {
				sb_rec_fail(r, "--region %s: at most %d regions", optarg,
					    SB_REC_MAX_REGIONS);
				return 2;
			}
			if (!*optarg) {
				sb_rec_fail(r, "--region needs a function name");
				return 2;
			}
			r->region_funcs[r->nregions++] = optarg;
			break;
		case 'F':
			if ((ret = sb_opt_u64(optarg, 0, 10000, &v)))
				return opt_fail("-F", optarg, ret, "0..10000 Hz");
			r->sample_hz = (unsigned)v;
			break;
		case 'M':
			if ((ret = sb_opt_u64(optarg, 0, 1000000000, &r->max_instances)))
				return opt_fail("--max-instances", optarg, ret, "0..1000000000");
			break;
		case 'J':
			r->single_joins = true;
			break;
		case 'R':
			if ((ret = sb_opt_u64(optarg, 1, 1024, &v)) || (v & (v - 1)))
				return opt_fail("--ringbuf-mb", optarg, ret ? ret : -ERANGE,
						"a power of two, 1..1024");
			r->ringbuf_mb = (unsigned long)v;
			break;
		case 'E':
			if ((r->events_req = sb_events_parse(optarg)) < 0) {
				sb_rec_fail(r, "invalid --events '%s' (auto, hw or sw)", optarg);
				return 2;
			}
			break;
		case 'U':
			if (strcmp(optarg, "cfi") && strcmp(optarg, "fp")) {
				sb_rec_fail(r, "invalid --unwind '%s' (cfi or fp)", optarg);
				return 2;
			}
			r->unwind_fp = !strcmp(optarg, "fp");
			break;
		case 'W':
			if ((ret = sb_opt_u64(optarg, 0, 100000, &v)))
				return opt_fail("--watch-rate", optarg, ret, "0..100000 arms a second");
			r->watch_rate = (unsigned)v;
			break;
		case 'c':
			if ((ret = sb_opt_double(optarg, 0, 1, &rate)))
				return opt_fail("--chip-rate", optarg, ret, "a rate in (0, 1]");
			chip_rate = optarg;
			break;
		case 'C':
			if ((ret = sb_opt_u64(optarg, 1024, 1ull << 38, &v)))
				return opt_fail("--chip-bytes", optarg, ret, "1024..2^38 bytes");
			chip_bytes = optarg;
			break;
		case 'q':
			r->quiet = true;
			break;
		case 'H':
		case 'a':
		case 'w':
			if ((ret = sb_rec_push_option(r, c, optarg)))
				return ret;
			break;
		case 'D':
			if ((ret = sb_rec_duty_option(r, optarg)))
				return ret;
			break;
		case 'T':
		case 'k':
		case 'B':
			if ((ret = sb_rec_rotate_option(r, c, optarg)))
				return ret;
			break;
		case 'f':
		case 'N':
			r->follow = c == 'f';
			r->follow_set = true;
			break;
		case 'h':
			fputs(sb_record_usage, stdout);
			exit(0);
		default:
			fputs(sb_record_usage, stderr);
			return 2;
		}
	}
	r->cmd = argv + optind;
	r->ncmd = argc - optind;
	if (!r->follow_set)
		r->follow = r->ncmd > 0;
	r->follow_image = r->follow || !r->follow_set;
	if ((r->pid > 0) == (r->ncmd > 0)) {
		fprintf(stderr, "scalebpf record: give either -p PID or -- CMD [ARGS...]\n\n%s",
			sb_record_usage);
		return 2;
	}
	/* a probe goes to a thread a sample just saw running */
	if (r->chip_probes && !r->sample_hz) {
		sb_rec_fail(r, "--chip needs cpu-clock samples to find running threads: -F 0 "
			    "turns them off");
		return 2;
	}
	/* A `scalebpf cc --chip` program reads its profile's shape from its
	 * environment when it starts: only a command record starts gets it. */
	if ((chip_rate || chip_bytes) && r->pid > 0) {
		sb_rec_fail(r, "--chip-rate and --chip-bytes shape the profile of a program record "
			    "starts (-- CMD); a running one read SCALEBPF_CHIP_RATE and "
			    "SCALEBPF_CHIP_BYTES from its environment when it started");
		return 2;
	}
	if ((chip_rate && setenv("SCALEBPF_CHIP_RATE", chip_rate, 1)) ||
	    (chip_bytes && setenv("SCALEBPF_CHIP_BYTES", chip_bytes, 1))) {
		sb_rec_fail(r, "cannot set the environment: %s", strerror(errno));
		return 1;
	}
	return 0;
}

static void install_signals(void)
{
	struct sigaction sa = { .sa_sigaction = on_signal, .sa_flags = SA_SIGINFO };

	/* Each blocks the others while it runs: a nested one would pair
	 * its signal number with the other's from_tty. */
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGINT);
	sigaddset(&sa.sa_mask, SIGTERM);
	sigaddset(&sa.sa_mask, SIGHUP);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* Reaps the command, 0 when it still runs. */
static bool child_reaped(struct sb_rec *r)
{
	int status;

	if (!r->child_exited && waitpid(r->child.pid, &status, WNOHANG) == r->child.pid) {
		r->child_exited = true;
		r->child_status = status;
		sb_tm_mark("recording: command reaped");
		/* Reaped: its pid is free for another process. */
		sb_rec_target_gone(r);
	}
	return r->child_exited;
}

/* True when recording should end; reaps a spawned child. */
static bool should_stop(struct sb_rec *r, uint64_t now)
{
	if (stop_signal) {
		if (!r->stop_reason)
			r->stop_reason = "signal";
		return true;
	}
	if (r->duration_s > 0 && now - r->start_ns >= (uint64_t)(r->duration_s * 1e9)) {
		r->stop_reason = "duration";
		return true;
	}
	if (r->spawned) {
		if (!child_reaped(r))
			return false;
		/* A followed process the command left running (a daemon, a
		 * background job) is still recorded until it exits. */
		if (r->follow && sb_follow_alive(r))
			return false;
		r->stop_reason = "target exited";
		return true;
	}
	/* By pidfd: a process that got the pid since is not the target. */
	if (!sb_pin_alive(&r->pin)) {
		sb_rec_target_gone(r);
		if (!(r->follow && sb_follow_alive(r))) {
			r->stop_reason = "target exited";
			return true;
		}
	}
	return false;
}

static int record_loop(struct sb_rec *r)
{
	uint64_t last_status = 0, last_refresh = sb_now_ns();

	while (!should_stop(r, sb_now_ns())) {
		uint64_t now = sb_now_ns(), age = now - r->start_ns;
		/* A short-lived target must not exit before its libraries
		 * were seen: its samples and sites could not be resolved. */
		/* The target's pidfd until its exit is seen (then it stays
		 * readable: followed processes are polled as before). */
		int fd = r->child_exited || r->target_gone ? -1 : r->pin.fd;
		/* the next watchpoint window may be due sooner */
		int due = sb_watch_tick(r->watch, r->bpf, now);
		int fdue = sb_fprobe_tick(r->fprobe, r->bpf, now);
		int rdue = sb_rprobe_tick(r->rprobe, r->bpf, now);
		int wait = age < 300000000ull ? 10 : 100;
		int n;

		if (fdue >= 0 && (due < 0 || fdue < due))
			due = fdue;
		if (rdue >= 0 && (due < 0 || rdue < due))
			due = rdue;
		n = sb_bpf_poll_fd(r->bpf, due >= 0 && due < wait ? due : wait, fd);

		if (n < 0 && n != -EINTR)
			return sb_rec_fail(r, "reading the ring buffer failed: %s", strerror(-n));
		now = sb_now_ns();
		/* before the flush below: an interval ends at its boundary */
		if (sb_rec_rotate_tick(r, now))
			return 1;
		sb_rec_duty_tick(r, now);
		/* Records from other CPUs may lag a little: hold back 200 ms. */
		for (size_t i = 0; i < r->fw.nprocs; i++)
			if (sb_builder_flush(r->fw.procs[i]->builder, now - 200000000ull))
				return sb_rec_fail(r, "out of memory while building sections");
		/* Libraries appear right after exec: look often at first. */
		if (now - last_refresh > (age < 300000000ull ? 10000000ull :
					  age < 2000000000ull ? 100000000ull : 1000000000ull)) {
			last_refresh = now;
			/* Not the pid of an exited target: it may be another's. */
			if (!r->spawned && !sb_pin_alive(&r->pin))
				sb_rec_target_gone(r);
			sb_follow_refresh(r);   /* every live image; spin ranges */
		}
		if (!r->quiet && now - last_status > (r->tty ? 500000000ull : 10000000000ull)) {
			last_status = now;
			sb_rec_status(r, false);
		}
	}
	return 0;
}

static const char *sig_name(int sig)
{
	return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" :
	       "a signal";
}

/* Passes a stop signal on to the command we started and to the processes
 * it started that still run (a launcher's program, its forked workers): a
 * shell may not pass it on.  Not those that ended: their pid may be
 * another's now. */
static bool forward_signal(struct sb_rec *r, int sig)
{
	/* Ctrl-C at the terminal reached the command already when it is in
	 * our process group (it is, unless it made its own): twice would be
	 * a "second Ctrl-C" to programs that count them. */
	if (from_tty && sig == SIGINT && getpgid(r->child.pid) == getpgrp())
		return false;
	/* SIGHUP: the terminal went away; the command gets it from the
	 * kernel too if it has that terminal, SIGTERM asks it to end. */
	if (sig == SIGHUP)
		sig = SIGTERM;
	kill(r->child.pid, sig);
	for (size_t i = 0; i < r->fw.nprocs; i++) {
		const struct sb_proc *p = r->fw.procs[i];

		/* Through its pidfd: the ring buffer is no longer read, so
		 * done and end_ns do not change while we wait, and a pid
		 * alive now may be an unrelated process that got it. */
		if (!p->done && !p->end_ns && p->pid != r->child.pid)
			sb_pin_signal(&p->pin, sig);
	}
	return true;
}

/*
 * After the profile is written: the command we started runs on (the
 * duration ended first, or it ignored the stop signal).  Wait for it, and
 * pass on every SIGINT, SIGTERM or SIGHUP we get, each one, so that a
 * second Ctrl-C reaches it; SIGKILL of the recorder now loses nothing.
 * The signals are blocked but while sleeping in ppoll: none slips in
 * between a check and the sleep.
 */
static void finish_child(struct sb_rec *r)
{
	sigset_t block, old;

	if (!r->spawned || child_reaped(r))
		return;
	if (!r->quiet || stop_signal)
		fprintf(stderr, "scalebpf: recording stopped (%s)%s; waiting for the command "
			"(PID %d) to exit: Ctrl-C, SIGTERM or SIGHUP to scalebpf are passed on "
			"to it\n", r->stop_reason, r->written ? ", profile written" : "",
			r->child.pid);
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, &old);
	while (!child_reaped(r)) {
		struct pollfd pfd = { .fd = r->pin.fd, .events = POLLIN };
		/* No pidfd (Linux < 5.3): look again every 100 ms. */
		struct timespec tick = { 0, 100000000 };

		if (nsignals != nforwarded) {
			int sig = stop_signal;

			nforwarded = nsignals;
			fprintf(stderr, forward_signal(r, sig) ?
				"scalebpf: passed %s on to the command (PID %d); waiting for it "
				"to exit\n" :
				"scalebpf: the terminal sent %s to the command (PID %d) too; "
				"waiting for it to exit\n", sig_name(sig), r->child.pid);
			continue;
		}
		ppoll(&pfd, pfd.fd >= 0, pfd.fd >= 0 ? NULL : &tick, &old);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
}

static int exit_code(const struct sb_rec *r, int ret)
{
	if (ret)
		return ret;
	if (!r->spawned)
		return 0;
	if (WIFEXITED(r->child_status))
		return WEXITSTATUS(r->child_status);
	if (WIFSIGNALED(r->child_status))
		return 128 + WTERMSIG(r->child_status);
	return 1;
}

/* Each uprobe is an fd (two with its return probe): a followed program
 * with many libraries and processes needs more than a soft limit of
 * 1024.  Links of processes that end are closed (follow.h); this is for
 * those that live together. */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int cmd_record(int argc, char **argv)
{
	struct sb_rec r = { .tty = isatty(2) };
	int ret;

	sb_tm_mark("options, privileges, output, events");
	if ((ret = parse_opts(&r, argc, argv)))
		return ret;
	if ((ret = sb_rec_check_privileges(&r)))
		return ret;
	if ((ret = sb_rec_check_output(&r)))
		return ret;
	if ((ret = sb_rec_choose_events(&r)))   /* before the target starts */
		return ret;
	if ((ret = sb_rec_push_start(&r)))     /* a store's URL fails here, not after */
		return ret;
	/* Before the closer: it holds links too, under the limit it
	 * inherits. */
	raise_nofile();
	/* Before any thread and the target: links of ended processes are
	 * closed there, the recorder does not wait for their detach. */
	sb_closer_start();
	install_signals();
	ret = sb_rec_setup(&r);
	if (!ret && r.rot && r.plan.chip)
		ret = sb_rec_fail(&r, "--rotate: a `scalebpf cc --chip` program's cache profile "
				  "is of the whole run: record it without --rotate");
	if (!ret) {
		sb_tm_mark("recording");
		ret = record_loop(&r);
		sb_rec_stop(&r);
		/* A stop signal goes on to the command at once; the profile is
		 * written before anything waits for the command, which may
		 * never end (or ignore the signal). */
		nforwarded = nsignals;   /* later ones: finish_child */
		if (stop_signal && r.spawned && !r.child_exited)
			forward_signal(&r, stop_signal);
		sb_tm_mark("write");
		if (!ret)
			ret = sb_rec_write(&r);
		r.written = !ret;
		sb_tm_mark("finish child");
		finish_child(&r);
	} else if (r.spawned) {
		sb_target_abort(&r.child);
		r.spawned = false;
	}
	sb_rec_push_finish(&r);
	sb_rec_rotate_free(&r);
	sb_rec_cleanup(&r);
	sb_closer_end();
	sb_tm_report();
	return exit_code(&r, ret);
}
