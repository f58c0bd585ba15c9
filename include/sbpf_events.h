/* SPDX-License-Identifier: MIT */
/*
 * Records the BPF side sends to `scalebpf record` through the ring buffer,
 * the map values both sides read or write, and the constants they share.
 * Every record starts with struct sb_rec_hdr; the consumer routes on
 * hdr.type, one handler per type (user/record/record_route.c), and
 * rejects unknown types and sizes.  Shared by bpf/record.bpf.c and
 * bpf/hwsample.bpf.c (with vmlinux.h types) and user/.
 */
#ifndef SBPF_EVENTS_H
#define SBPF_EVENTS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

enum sb_rec_type {
	SB_REC_PROBE_ENTER = 1,   /* entry uprobe on a sync/region function */
	SB_REC_PROBE_EXIT = 2,    /* its uretprobe */
	SB_REC_WAIT = 3,          /* blocking futex wait, or a spin sample */
	SB_REC_THREAD_NEW = 4,
	SB_REC_THREAD_EXIT = 5,
	SB_REC_SAMPLE = 6,        /* cpu-clock sample of a working thread */
	SB_REC_LBR = 7,           /* hardware path: LBR branch stack (hwsample.bpf.c) */
	SB_REC_LOAD = 8,          /* hardware path: PEBS load sample */
	SB_REC_EXACT = 9,         /* exact block counts from `scalebpf cc` code */
	SB_REC_SAMPLE_STACK = 10, /* a sample with a copy of its user stack */
	SB_REC_PROC = 11,         /* a followed process exec'd, was stopped after
				   * fork, or mapped libraries (dlopen) */
	SB_REC_WATCH = 12,        /* a watchpoint hit (sampled sharing) */
	SB_REC_CHIP = 13,         /* a segment's cache hit profile counters from
				   * `scalebpf cc --chip` code */
	SB_REC_REGION = 14,       /* a --region function entered or returned */
	SB_REC_TYPE_MAX
};

struct sb_rec_hdr {
	__u16 type;
	__u16 size;       /* whole record, header included */
	__u32 tid;
	__u64 ts;         /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
};

/*
 * Probe cookies: the low byte says how to read the probe, the high 32 bits
 * index the userspace probe table.
 */
#define SB_COOKIE_ARG_MASK 0x7ull    /* 0: none, 1..3: PT_REGS_PARM1..3 */
#define SB_COOKIE_SYNC 0x8ull        /* a waiting call: nested waits are its own */
/*
 * The probe has a return probe too: its calls are paired per thread
 * (sb_thread_state.open_calls), and a return whose entry was not seen is
 * dropped and counted (SB_CNT_RET_UNPAIRED).  A return probe goes in
 * before its entry (follow_plan.c), so a call made in between shows
 * only its return; an entry without its return, the other order, left a
 * pthread_join open for good and broke every join instance after it.
 */
#define SB_COOKIE_RET 0x20ull
/*
 * glibc's pthread_barrier_wait, probed at entry only (no uretprobe: its
 * return trap and record cost ~0.8 us per call, a barrier's worth at 20k
 * barriers/s/thread).  Its departure is the return of the futex call it
 * makes on the barrier's round word (a waiter's FUTEX_WAIT returning 0 or
 * EAGAIN, the last arriver's FUTEX_WAKE).  A thread that finds the round
 * complete makes no call: its departure is known at its next event (the
 * thread's next probe, a sample outside the function, a futex elsewhere,
 * its exit), stamped no earlier than the barrier's latest arrival, which
 * completed the round.  The cookie also carries where the function lies
 * around the probe (so samples tell inside from after).
 */
#define SB_COOKIE_DEPART 0x10ull
#define SB_COOKIE_FN_OFF(c) ((__u32)((c) >> 8) & 0xfff)    /* site - function start */
#define SB_COOKIE_FN_SIZE(c) ((__u32)((c) >> 20) & 0xfff)  /* function size */
#define SB_COOKIE_DEPART_MAKE(off, size) \
	(SB_COOKIE_DEPART | ((__u64)(off) << 8) | ((__u64)(size) << 20))
#define SB_DEPART_OBJ_BYTES 32   /* sizeof(pthread_barrier_t): its futex words */
#define SB_DEPART_SLOTS 1024     /* latest arrival per barrier, by hash */
#define SB_COOKIE_ID(c) ((__u32)((c) >> 32))
#define SB_COOKIE_MAKE(id, flags) (((__u64)(id) << 32) | (flags))

struct sb_rec_probe {
	struct sb_rec_hdr hdr;
	__u32 probe;      /* index into the probe table */
	__u32 depth;      /* sync nesting depth after this event */
	__u64 arg;        /* enter: the argument the cookie names; exit: return value */
	__u64 ret_addr;   /* enter: return address found at [sp] (the call site) */
	__u64 oncpu_ns;   /* the thread's on-CPU time so far, at this event */
	__u64 ip;         /* the probed instruction (entry) */
};

#define SB_STACK_WORDS 40

enum sb_wait_source {
	SB_WAIT_FUTEX = 1,
	SB_WAIT_SPIN_SAMPLE = 2,
};

struct sb_rec_wait {
	struct sb_rec_hdr hdr;   /* ts: when the wait ended (or the sample) */
	__u32 source;            /* enum sb_wait_source */
	__u32 op;                /* futex command */
	__u64 uaddr;             /* futex word; 0 for samples */
	__u64 dur_ns;            /* blocked time, or the sample period */
	__u64 ip;                /* user IP */
	__u64 sp;                /* user stack pointer the words start at */
	__u32 nwords;            /* valid words in stack[] */
	__u32 pad;
	__u64 stack[SB_STACK_WORDS];
};

struct sb_rec_thread {
	struct sb_rec_hdr hdr;
	__u32 parent_tid;        /* THREAD_NEW: the creating thread */
	__u32 tgid;              /* the thread's process: == tid and not the
				  * creator's for a forked process */
	__u64 oncpu_ns;          /* THREAD_EXIT: final on-CPU time */
	char comm[16];
};

/*
 * Following (launchers, forks, dlopen): what the BPF side tells about a
 * followed process.  In launch mode the process is stopped (SIGSTOP from
 * BPF, taken on its return to user) before it runs a user instruction of
 * what is new, so userspace attaches the probes of the new image or
 * libraries first, then sends SIGCONT (user/record/follow.c).
 */
enum sb_proc_kind {
	SB_PROC_EXEC = 1,        /* a new image; hdr.tid is the tgid now */
	SB_PROC_FORKED = 2,      /* a followed fork child at its first return
				  * to user (stopped in launch mode) */
	SB_PROC_DLOPEN = 3,      /* ld.so's r_brk hook, RT_CONSISTENT: libraries
				  * were mapped (or unmapped) */
};

struct sb_rec_proc {
	struct sb_rec_hdr hdr;
	__u32 kind;              /* enum sb_proc_kind */
	__u32 tgid;
	__u32 old_tid;           /* EXEC: the thread that called execve */
	__u32 stopped;           /* 1: SIGSTOP was sent, SIGCONT is owed */
	__u64 oncpu_ns;          /* EXEC: on-CPU time of the old image's thread */
	char comm[16];
};

#define SB_MAX_FOLLOWED 1024
#define SB_FOLLOW_PENDING_STOP 1u   /* stop at the first return to user */

/* The value of the `followed` map (bpf/target.bpf.h): tgid -> this. */
struct sb_follow {
	__u32 flags;
	__u32 pad;
};

/* User registers of a sample, in x86 encoding order, for decoding the
 * memory operand of the sampled instruction (user/binary/memop.c). */
enum sb_reg {
	SB_REG_RAX, SB_REG_RCX, SB_REG_RDX, SB_REG_RBX,
	SB_REG_RSP, SB_REG_RBP, SB_REG_RSI, SB_REG_RDI,
	SB_REG_R8, SB_REG_R9, SB_REG_R10, SB_REG_R11,
	SB_REG_R12, SB_REG_R13, SB_REG_R14, SB_REG_R15,
	SB_NREGS
};

#define SB_SAMPLE_FRAMES 16

struct sb_rec_sample {
	struct sb_rec_hdr hdr;
	__u64 ip;
	__u64 regs[SB_NREGS];
	__u32 nframes;           /* valid entries in frames[] */
	__u32 pad;
	/* The user call chain (frame pointers): frames[0] is the IP, then
	 * return addresses, innermost first. */
	__u64 frames[SB_SAMPLE_FRAMES];
};

/*
 * Unwinding without frame pointers (user/binary/unwind.c): a sample that
 * also carries the top SB_SAMPLE_STACK_BYTES of its user stack, from
 * regs[SB_REG_RSP] up, which userspace unwinds with the binaries' CFI
 * (.eh_frame), as `perf --call-graph dwarf` does.  The size is measured
 * (README "Stacks without frame pointers"): Debian's zstd and xz unwind
 * completely (10 frames) within 4 KiB, but bzip2 keeps large arrays on
 * its stack: with perf's default of 8 KiB 47% of its samples were
 * truncated, with 16 KiB 0.03%, at no measurable extra BPF cost (the
 * copy is a few microseconds per sample either way).  stack_len is
 * shorter where the stack mapping ends sooner (shallow stacks).
 *
 * A pending uretprobe (an OpenMP outlined function, a user barrier
 * under a region probe) replaced its function's return slot with the
 * "[uprobes]" trampoline; the kernel fixes that in the frame-pointer
 * chain but not in a raw copy, so the record carries the trampoline's
 * address and the thread's pending return instances (slot address,
 * original return address), innermost first.
 */
#define SB_SAMPLE_STACK_BYTES 16384
#define SB_SAMPLE_RETURNS 4

struct sb_rec_sample_stack {
	struct sb_rec_sample s;  /* s.hdr.type = SB_REC_SAMPLE_STACK */
	__u64 tramp;             /* the uretprobe trampoline's address, or 0 */
	__u64 ret_slot[SB_SAMPLE_RETURNS];  /* pending return instances: */
	__u64 ret_orig[SB_SAMPLE_RETURNS];  /* the slot's address, its original */
	__u32 nret;              /* valid entries of ret_slot/ret_orig */
	__u32 stack_len;         /* valid bytes of stack[] */
	__u8 stack[SB_SAMPLE_STACK_BYTES];
};

/*
 * Sampled sharing (user/record/record_watch.c): a one-shot write
 * watchpoint on a word of a candidate cache line fired in hdr.tid.  The
 * trap comes after the store: ip is the next instruction, and regs are
 * the registers after it, from which userspace decodes the store's bytes.
 */
struct sb_rec_watch {
	struct sb_rec_hdr hdr;
	__u64 ip;
	__u64 addr;              /* the watched word */
	__u64 regs[SB_NREGS];
	/* Reuse probes (user/record/record_reuse.c): the thread's retired
	 * memory operations at the trap, from its counter in the memops map
	 * (read in its own context), when flags has SB_WATCH_HAVE_MEMOPS. */
	__u64 memops;
	__u32 flags;             /* enum sb_watch_flags */
	__u32 pad;
};

enum sb_watch_flags {
	SB_WATCH_HAVE_MEMOPS = 1,
	SB_WATCH_MEMOPS_SCALED = 2,  /* the counter was multiplexed: not exact */
	SB_WATCH_MEMOPS_FAILED = 4,  /* a counter is there, its read failed */
};

/* Threads whose memory operations can be counted at once (memops map). */
#define SB_MEMOPS_SLOTS 1024

/* Per-CPU counters: drops are never silent. */
enum sb_counter {
	SB_CNT_DROP_PROBE = 0,   /* ring buffer full: probe records lost */
	SB_CNT_DROP_WAIT,
	SB_CNT_DROP_THREAD,
	SB_CNT_STATE_FULL,       /* thread table full: a thread not timed */
	SB_CNT_SAMPLES,          /* cpu-clock samples that hit the target */
	SB_CNT_FUTEX_WAITS,
	SB_CNT_SWITCHES,
	SB_CNT_DROP_SAMPLE,
	SB_CNT_DROP_EXACT,       /* exact-count batches lost */
	SB_CNT_EXACT_FAULT,      /* a batch the BPF side could not read */
	SB_CNT_TRAMPOLINE_LOST,  /* a uretprobe trampoline at a probe's return
				  * slot whose original was not found */
	SB_CNT_STACK_SHORT,      /* a sample's stack copy shorter than
				  * SB_SAMPLE_STACK_BYTES: the stack mapping
				  * ends sooner (normal for shallow stacks) */
	SB_CNT_STACK_FAULT,      /* a sample whose stack could not be read */
	SB_CNT_STACK_NOVMA,      /* bpf_find_vma failed: copy sized by retries */
	SB_CNT_FOLLOW_FULL,      /* a forked process not followed: map full */
	SB_CNT_DROP_PROC,        /* exec/fork/dlopen records lost */
	SB_CNT_DEPART_FUTEX,     /* SB_COOKIE_DEPART departures at a futex return */
	SB_CNT_DEPART_LATER,     /* ... found at the thread's next event */
	SB_CNT_SWITCH_UNSEEN,    /* a thread found running whose switch in
				  * sched_switch never showed (oncpu.bpf.h) */
	SB_CNT_WATCH_HITS,       /* watchpoint hits (record_watch.c) */
	SB_CNT_DROP_WATCH,       /* ... lost to a full ring buffer */
	SB_CNT_DROP_CHIP,        /* cache hit profile batches lost */
	SB_CNT_CHIP_FAULT,       /* ... the BPF side could not read */
	SB_CNT_RET_UNPAIRED,     /* a probed call's return without its entry
				  * (made while its probes went in) */
	SB_CNT_MAX
};

/*
 * Exact mode: a program built by `scalebpf cc` counts every basic block
 * per thread (clang's trace-pc-guard) and hands the counts of a finished
 * segment of work to scalebpf_exact_batch(), a function whose uprobe
 * copies the batch into the ring buffer, so exact counts travel in
 * timestamp order with the sync events that cut segments.  pc is the
 * return address of the block's coverage callback.  A batch flagged
 * SB_EXACT_LAST is flushed just after the thread's closing sync was seen
 * (an OpenMP task returned): it belongs to the segment that sync closed.
 */
#define SB_EXACT_MAGIC 0x53425845u   /* "EXBS" */
#define SB_EXACT_BATCH 64
#define SB_EXACT_LAST 0x1u

struct sb_exact_batch {
	__u32 magic;
	__u16 flags;
	__u16 n;                 /* valid entries */
	__u64 pc[SB_EXACT_BATCH];
	__u64 count[SB_EXACT_BATCH];
};

struct sb_rec_exact {
	struct sb_rec_hdr hdr;
	struct sb_exact_batch b;
};

/*
 * `scalebpf cc --chip`: at each segment end, before its exact batch, the
 * runtime passes the segment's CHiP counters (analysis/chip/chip.h) to
 * scalebpf_chip_batch(), probed like scalebpf_exact_batch: hits found at
 * each of the 16 depths of the thread's CacheSets, misses, and every
 * reference.  The structure's shape comes with each batch.
 */
#define SB_CHIP_MAGIC 0x50494843u    /* "CHIP" */
#define SB_CHIP_NDEPTH 17             /* SB_CHIP_COUNTS */

struct sb_chip_batch {
	__u32 magic;
	__u16 flags;             /* SB_EXACT_LAST */
	__u16 line;              /* bytes */
	__u64 max_bytes;         /* the largest cache mapped */
	__u32 rate_t;            /* SHARDS: T of 2^24 (2^24: every line) */
	__u32 pad;
	__u64 accesses;
	__u64 depth[SB_CHIP_NDEPTH];
};

struct sb_rec_chip {
	struct sb_rec_hdr hdr;
	struct sb_chip_batch b;
};

/*
 * `scalebpf record --region FUNC`: FUNC's entry (enter 1) and return in a
 * thread; region = the probe's index in the plan.  In a `scalebpf cc
 * --chip` program the thread's CHiP counters from its start come along
 * (counters 1; analysis/chip/chip.h's struct sb_chip_counts, whose
 * address its runtime hands to scalebpf_chip_thread()): a call's share is
 * the return's less the entry's.  counters 0: none registered; 2: the
 * read failed (SB_CNT_CHIP_FAULT).  sp: the stack pointer, at entry the
 * return address's slot, after the return 8 above it: a return matches
 * its call by it, whatever returns were lost in between.
 */
struct sb_rec_region {
	struct sb_rec_hdr hdr;
	__u32 region;
	__u16 enter;
	__u16 counters;
	__u64 sp;
	__u64 depth[SB_CHIP_NDEPTH];
	__u64 accesses;
};

/*
 * The value of record.bpf.c's `threads` map (tid -> state), which
 * userspace also seeds and reads (user/record/record_bpf.c).  On-CPU time
 * is the kernel's own sum_exec_runtime, which leaves out time stolen by
 * the hypervisor and spent in interrupts, read at every context switch;
 * between switches it advances with the clock (bpf/oncpu.bpf.h).
 */
struct sb_thread_state {
	__u64 oncpu_total;   /* on-CPU ns at the last switch, since k0 */
	__u64 last_in;       /* when it last went on CPU */
	__u64 k0;            /* sum_exec_runtime when first seen */
	__u64 fx_ts;         /* futex wait start, 0 when none */
	__u64 fx_uaddr;
	__u32 fx_op;
	__u32 on_cpu;
	__s32 sync_depth;    /* inside a probed waiting call */
	__u32 dep_probe;     /* SB_COOKIE_DEPART call open: its probe index */
	__u64 dep_obj;       /* its barrier, 0 when none is open */
	__u64 dep_ts;        /* its arrival */
	__u64 dep_oncpu;     /* on-CPU time at the arrival */
	__u64 dep_lo, dep_hi;/* the function's runtime range */
	__u64 last_out;      /* when it last left the CPU, 0 never seen */
	__u32 open_calls;    /* SB_COOKIE_RET calls entered, not returned */
};

#define SB_MAX_SPIN_RANGES 8

struct sb_ip_range {
	__u64 start, end;        /* runtime [start, end) */
};

/*
 * Hardware path (bpf/hwsample.bpf.c, user/hw/lbr_pebs.c): records of the
 * LBR and PEBS samplers, emitted into the same ring buffer.  Fixed sizes
 * keep ring-buffer reservation constant in BPF.
 */
#define SB_LBR_MAX 32            /* Intel LBR depth is 8..32 */

/* Layout of the kernel's struct perf_branch_entry: from, to, then a u64
 * of bit-fields (mispred:1 predicted:1 in_tx:1 abort:1 cycles:16 type:4
 * ...), so bpf_read_branch_records() writes straight into it. */
struct sb_branch {
	__u64 from;
	__u64 to;
	__u64 flags;
};

struct sb_rec_lbr {
	struct sb_rec_hdr hdr;
	__u64 ip;                /* the sampled IP */
	__u32 nr;                /* valid entries in br[]; br[0] is the newest */
	__u32 pad;
	struct sb_branch br[SB_LBR_MAX];
};

enum sb_load_flags {
	SB_LOAD_HAVE_ADDR = 1,   /* addr is the sampled data address */
	SB_LOAD_HAVE_WEIGHT = 2, /* weight is the load latency in cycles */
	SB_LOAD_HAVE_SRC = 4,    /* data_src is a union perf_mem_data_src */
	SB_LOAD_STORE = 8,       /* a precise store sample, not a load */
};

struct sb_rec_load {
	struct sb_rec_hdr hdr;
	__u64 ip;                /* precise IP of the load (or store) */
	__u64 addr;
	__u64 weight;
	__u64 data_src;
	__u32 flags;             /* enum sb_load_flags */
	__u32 pad;
};

/* Per-CPU counters of the hardware samplers (their own map). */
enum sb_hw_counter {
	SB_HWCNT_LBR = 0,        /* LBR samples of the target emitted */
	SB_HWCNT_LOAD,           /* PEBS load samples of the target emitted */
	SB_HWCNT_DROP_LBR,       /* ring buffer full */
	SB_HWCNT_DROP_LOAD,
	SB_HWCNT_LBR_ERR,        /* bpf_read_branch_records failed */
	SB_HWCNT_STORE,          /* PEBS store samples of the target emitted */
	SB_HWCNT_DROP_STORE,
	SB_HWCNT_MAX
};

#endif
