// SPDX-License-Identifier: MIT
/*
 * record_watch.c - watchpoint windows for sampled sharing (record_watch.h).
 *
 * Why one-shot: a watched word in a hot loop is written millions of times
 * a second and every hit is a ~6 us trap here; PERF_EVENT_IOC_REFRESH 1
 * (the BPF program returning 1 lets the event count) disables the event at
 * its first hit, so an arm costs the target at most one trap.  A fired
 * event is closed, never re-enabled: on kernel 6.18 re-enabling a fired
 * one-shot breakpoint restores the debug register but leaves the event
 * stopped, and the thread then traps on every access unrecorded
 * (../shared/notes/platform.md).  Every window's events are closed at its
 * end; the next window opens new ones.
 *
 * The budget: a token bucket of `rate` arms per second (an arm is one
 * event: one word in one thread).  The traps cost the target at most rate
 * x ~10 us a second, but a thread holding a breakpoint also reloads the
 * debug registers at every context switch (in a VM that may trap to the
 * hypervisor; the cause is not measured, the cost is): on an
 * OpenMP loop with 21,000 barriers a second (threads switch constantly)
 * that measured 1.8% of the target's time per 100 arms/s, hence the
 * default of 100, which decided every planted variable within 70 ms in
 * the precision tests (tests/integration/sharing_sampled.sh).  Slots
 * another tool holds (ENOSPC: a debugger, perf's breakpoints) are counted
 * and said; a window none could be armed in does not count.
 */
#include "record_watch.h"

#include <errno.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "binary/memop.h"
#include "binary/procmaps.h"
#include "hw/lbr_pebs.h"
#include "profile/profile.h"
#include "record_bpf.h"
#include "records.h"

#define MAX_ARMS (SB_COSAMPLE_THREADS * SB_COSAMPLE_WORDS)
#define MAX_PROCS 4

/* A followed process's lines and threads.  Apart per process: forked
 * workers have the same addresses, and one's writes are not another's
 * sharing. */
struct watch_proc {
	int pid;
	struct sb_cosample *cs;
	uint32_t recent[SB_COSAMPLE_THREADS];   /* threads sampled lately */
	uint32_t nrecent, next_recent;
};

struct sb_watch {
	unsigned rate;
	struct watch_proc procs[MAX_PROCS];
	uint32_t nprocs, next_proc;
	uint64_t procs_untracked;      /* accesses of processes past MAX_PROCS */
	struct watch_proc *win;        /* the open window's process */
	struct sb_memop_ctx *memop;
	struct sb_memop_ahead *ahead;
	double tokens;
	uint64_t last_refill;
	bool open;                     /* a window is armed */
	struct sb_cosample_probe probe;
	uint64_t win_end;
	int fds[MAX_ARMS];
	uint32_t nfds;
	const struct sb_maps *maps;    /* the maps runtime_bins and the */
	int maps_pid;                  /* decoders are of, and its binaries */
	size_t nbins;
	bool runtime_bins[256];        /* per binary index: threading runtime */
	/* what happened */
	uint64_t arms, enospc, gone, failed, undecoded, ahead_accesses;
	unsigned early_failures;       /* before any arm worked */
	int first_errno;                /* of the first arm that failed */
	char disabled[160];            /* why no more watchpoints are armed */
};

struct sb_watch *sb_watch_alloc(unsigned rate, char *err, size_t len)
{
	struct sb_watch *w;

	if (rate > 100000) {
		snprintf(err, len, "--watch-rate %u: at most 100000 arms a second", rate);
		return NULL;
	}
	if (!(w = calloc(1, sizeof(*w)))) {
		snprintf(err, len, "out of memory");
		return NULL;
	}
	w->rate = rate;
	w->memop = sb_memop_ctx_new(0);
	w->ahead = sb_memop_ahead_new();
	if (!w->memop || !w->ahead) {
		snprintf(err, len, "out of memory");
		sb_watch_free(w);
		return NULL;
	}
	w->tokens = rate ? MAX_ARMS / 2 : 0;   /* a first window at once */
	if (!rate)
		snprintf(w->disabled, sizeof(w->disabled), "--watch-rate 0");
	return w;
}

void sb_watch_free(struct sb_watch *w)
{
	if (!w)
		return;
	for (uint32_t i = 0; i < w->nfds; i++)
		close(w->fds[i]);
	for (uint32_t i = 0; i < w->nprocs; i++)
		sb_cosample_free(w->procs[i].cs);
	sb_memop_ctx_free(w->memop);
	sb_memop_ahead_free(w->ahead);
	free(w);
}

/* Which binaries of maps are the threading runtime's (records.h): their
 * references to a line are to a lock word, a barrier or the runtime's own
 * state, sync costs the wait analyses report, not the program's data.
 * Redone when the maps gain binaries.  Another process image's maps (pid
 * or object) also make the decoders start afresh: their caches keep
 * sb_elf pointers, which live as long as the maps that opened them
 * (memop.h).  A refresh of the same maps keeps them. */
static void maps_seen(struct sb_watch *w, struct sb_maps *maps, int pid)
{
	size_t nb;

	if (!maps)
		return;
	nb = sb_maps_nbinaries(maps);
	if (maps != w->maps || pid != w->maps_pid) {
		w->maps = maps;
		w->maps_pid = pid;
		sb_memop_ctx_free(w->memop);
		sb_memop_ahead_free(w->ahead);
		w->memop = sb_memop_ctx_new(0);
		w->ahead = sb_memop_ahead_new();
	} else if (nb == w->nbins) {
		return;
	}
	w->nbins = nb;
	memset(w->runtime_bins, 0, sizeof(w->runtime_bins));
	for (size_t b = 0; b < nb && b < sizeof(w->runtime_bins); b++)
		w->runtime_bins[b] = sb_records_is_runtime(sb_maps_binary_name(maps, (int)b));
}

/* bin of the maps maps_seen was last given. */
static bool runtime_bin(const struct sb_watch *w, int bin)
{
	return bin >= 0 && (size_t)bin < sizeof(w->runtime_bins) && w->runtime_bins[bin];
}

/* A binary's static data: in one of its file mappings (.data), or in the
 * anonymous pages right after its last one (.bss past the file's end). */
static bool static_data(struct sb_maps *maps, uint64_t addr)
{
	size_t n = maps ? sb_maps_count(maps) : 0;

	for (size_t i = 0; i < n; i++) {
		const struct sb_mapping *m = sb_maps_get(maps, i);
		const struct sb_mapping *next = i + 1 < n ? sb_maps_get(maps, i + 1) : NULL;

		if (addr < m->start)
			return false;   /* in address order */
		if (addr < m->end)
			return !m->exec;
		if ((!next || next->bin != m->bin) && addr < m->end + (1u << 20) &&
		    (!next || addr < next->start))
			return true;
	}
	return false;
}

/* pid's tracking, made on its first access (add); NULL when MAX_PROCS
 * processes have theirs (counted) or memory is short. */
static struct watch_proc *proc_of(struct sb_watch *w, int pid, bool add)
{
	struct sb_cosample_opts o;
	struct watch_proc *pr;
	char err[128];

	for (uint32_t i = 0; i < w->nprocs; i++)
		if (w->procs[i].pid == pid)
			return &w->procs[i];
	if (!add)
		return NULL;
	if (w->nprocs == MAX_PROCS) {
		w->procs_untracked++;
		return NULL;
	}
	sb_cosample_opts_default(&o);
	pr = &w->procs[w->nprocs];
	memset(pr, 0, sizeof(*pr));
	if (!(pr->cs = sb_cosample_alloc(&o, err, sizeof(err)))) {
		w->procs_untracked++;
		return NULL;
	}
	pr->pid = pid;
	w->nprocs++;
	return pr;
}

/* The threads seen working lately: a window also watches those the
 * samples did not see on its line (a third writer). */
static void note_thread(struct watch_proc *pr, uint32_t tid)
{
	for (uint32_t i = 0; i < pr->nrecent; i++)
		if (pr->recent[i] == tid)
			return;
	if (pr->nrecent < SB_COSAMPLE_THREADS) {
		pr->recent[pr->nrecent++] = tid;
		return;
	}
	pr->recent[pr->next_recent] = tid;
	pr->next_recent = (pr->next_recent + 1) % SB_COSAMPLE_THREADS;
}

/* The look-ahead's loads (memop.h): the target's memory now, a little
 * after the sample (what a block loads to index a store is mostly a
 * constant or a loop bound).  ctx: the pid. */
static int read_target(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };

	return process_vm_readv(*(const int *)ctx, &local, 1, &remote, 1, 0) == (ssize_t)len ?
	       0 : -1;
}

/* Whether addr is in the sampled thread's own stack: from 128 bytes below
 * sp (the red zone) to the end of what the sample's stack copy found
 * mapped (stack_len, which stops where the stack's mapping ends), else
 * 4 KiB.  Not a fixed span: the next mapping up, right past a shallow
 * thread's stack top, may be a heap array. */
static bool own_stack(uint64_t addr, uint64_t sp, uint32_t stack_len)
{
	return addr + 128 >= sp && addr < sp + (stack_len ? stack_len : 4096);
}

void sb_watch_sample(struct sb_watch *w, struct sb_maps *maps, int pid,
		     const struct sb_rec_sample *rs, uint32_t stack_len, const struct sb_addr *a,
		     int bin)
{
	uint64_t sp = rs->regs[SB_REG_RSP], regs[SB_NREGS], vaddr;
	struct sb_cosample_access c = { .ts = rs->hdr.ts, .tid = rs->hdr.tid };
	struct sb_memop m[SB_MEMOP_AHEAD];
	struct watch_proc *pr = proc_of(w, pid, true);
	struct sb_elf *e;
	int n;

	if (!pr)
		return;
	maps_seen(w, maps, pid);
	note_thread(pr, rs->hdr.tid);
	if (a) {
		c.pc = a->ip;
		c.addr = a->addr;
		c.size = a->size;
		c.store = a->flags & SB_ADDR_STORE;
		c.runtime = runtime_bin(w, bin);
		c.own_stack = own_stack(a->addr, sp, stack_len);
		c.static_data = c.store && !c.own_stack && static_data(maps, a->addr);
		sb_cosample_access(pr->cs, &c);
	}
	/* what the rest of its block is about to touch (memop.h) */
	if (!w->ahead || !maps || sb_maps_resolve_live(maps, pid, rs->ip, &bin, &vaddr) ||
	    !(e = sb_maps_binary_elf(maps, bin)))
		return;
	for (int i = 0; i < SB_NREGS; i++)
		regs[i] = rs->regs[i];
	n = sb_memop_ahead_decode(w->ahead, e, vaddr, rs->ip, regs, read_target, &pid, m,
				  SB_MEMOP_AHEAD);
	c.runtime = runtime_bin(w, bin);
	c.ahead = true;
	for (int i = 0; i < n; i++) {
		uint64_t pc = rs->ip - vaddr + m[i].insn;

		if (a && pc == a->ip)   /* the sampled access itself */
			continue;
		w->ahead_accesses++;
		c.pc = pc;
		c.addr = m[i].addr;
		c.size = m[i].size;
		c.store = m[i].store;
		c.own_stack = own_stack(m[i].addr, sp, stack_len);
		c.static_data = c.store && !c.own_stack && static_data(maps, m[i].addr);
		sb_cosample_access(pr->cs, &c);
	}
}

void sb_watch_load(struct sb_watch *w, struct sb_maps *maps, int pid,
		   const struct sb_hw_load *l)
{
	struct sb_cosample_access c;
	struct watch_proc *pr;
	uint64_t vaddr;
	int bin;

	if (!sb_hw_load_access(l, &c) || !(pr = proc_of(w, pid, true)))
		return;
	maps_seen(w, maps, pid);
	if (maps && !sb_maps_resolve(maps, l->ip, &bin, &vaddr))
		c.runtime = runtime_bin(w, bin);
	/* no registers with a PEBS sample: a stack store is two threads'
	 * only where their stacks lie within a store site's span */
	c.static_data = c.store && static_data(maps, l->addr);
	sb_cosample_access(pr->cs, &c);
}

void sb_watch_hit(struct sb_watch *w, struct sb_maps *maps, int pid,
		  const struct sb_rec_watch *h)
{
	/* the hit's own line: a late hit of a closed window is not the
	 * open one's (sb_cosample_hit counts it unmatched) */
	uint64_t line = h->addr & ~63ull, word = h->addr & ~7ull, addr = word;
	uint64_t regs[SB_NREGS], vaddr;
	uint32_t size = 0;
	struct sb_memop m;
	struct watch_proc *pr = proc_of(w, pid, false);
	struct sb_elf *e;
	int bin = -1;

	if (!pr)
		return;   /* a process never sampled: no window of its */
	maps_seen(w, maps, pid);
	for (int i = 0; i < SB_NREGS; i++)
		regs[i] = h->regs[i];
	/* The trap comes after the store: memop prefers the instruction
	 * before the IP.  Its bytes are kept when they are the watched
	 * word's (a store that wrote through its own address register, or
	 * a decode of the wrong instruction, would say otherwise). */
	if (maps && w->memop && !sb_maps_resolve_live(maps, pid, h->ip, &bin, &vaddr) &&
	    (e = sb_maps_binary_elf(maps, bin)) &&
	    sb_memop_decode(w->memop, e, vaddr, h->ip, regs, 0, &m) == SB_MEMOP_OK &&
	    m.store && m.size && m.addr < word + 8 && m.addr + m.size > word) {
		addr = m.addr < word ? word : m.addr;
		size = (uint32_t)((m.addr + m.size > word + 8 ? word + 8 : m.addr + m.size) - addr);
		sb_cosample_hit(pr->cs, line, h->hdr.tid, h->hdr.ts, addr, size,
				h->ip - vaddr + m.insn, runtime_bin(w, bin));
		return;
	}
	w->undecoded++;
	sb_cosample_hit(pr->cs, line, h->hdr.tid, h->hdr.ts, addr, 0, h->ip,
			runtime_bin(w, bin));
}

int sb_watch_open(uint32_t tid, uint64_t word, bool reads)
{
	struct perf_event_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_BREAKPOINT;
	attr.size = sizeof(attr);
	attr.bp_type = reads ? HW_BREAKPOINT_RW : HW_BREAKPOINT_W;
	attr.bp_addr = word;
	attr.bp_len = HW_BREAKPOINT_LEN_8;
	attr.sample_period = 1;
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	fd = (int)syscall(__NR_perf_event_open, &attr, (pid_t)tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int sb_watch_open_granule(uint32_t tid, uint64_t granule, int fds[SB_WATCH_WORDS])
{
	for (int i = 0; i < SB_WATCH_WORDS; i++) {
		int fd = sb_watch_open(tid, granule + 8 * (uint64_t)i, true);

		if (fd < 0) {
			while (i-- > 0)
				close(fds[i]);
			return fd;
		}
		fds[i] = fd;
	}
	return 0;
}

int sb_watch_enable(int fd, int prog_fd, int traps)
{
	/* SET_BPF does not enable the event (libbpf's attach would, with
	 * no limit); REFRESH n enables it for n hits. */
	if (ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog_fd) || ioctl(fd, PERF_EVENT_IOC_REFRESH, traps))
		return -errno;
	return 0;
}

/* One watch: 0, or -errno (ENOSPC: slots taken; ESRCH: thread gone). */
static int arm(struct sb_watch *w, int prog_fd, uint32_t tid, uint64_t word)
{
	int fd = sb_watch_open(tid, word, false), ret;

	if (fd < 0)
		return fd;
	if ((ret = sb_watch_enable(fd, prog_fd, 1))) {
		close(fd);
		return ret;
	}
	w->fds[w->nfds++] = fd;
	return 0;
}

static void close_window(struct sb_watch *w, struct sb_bpf *bpf, uint64_t now)
{
	uint32_t armed = w->nfds;

	for (uint32_t i = 0; i < w->nfds; i++)
		close(w->fds[i]);
	w->nfds = 0;
	/* the window's hits, before it is judged */
	if (bpf)
		sb_bpf_poll(bpf, 0);
	sb_cosample_window_end(w->win->cs, w->probe.line, armed, now);
	w->open = false;
}

static void open_window(struct sb_watch *w, int prog_fd, uint64_t now)
{
	struct sb_cosample_probe *p = &w->probe;
	struct watch_proc *pr = NULL;

	/* the processes take turns */
	for (uint32_t i = 0; i < w->nprocs && !pr; i++) {
		uint32_t k = (w->next_proc + i) % w->nprocs;

		if (sb_cosample_next(w->procs[k].cs, now, p)) {
			pr = &w->procs[k];
			w->next_proc = k + 1;
		}
	}
	if (!pr)
		return;
	w->win = pr;
	w->open = true;
	w->win_end = now + SB_WATCH_WINDOW_NS;
	for (uint32_t i = 0; i < pr->nrecent && p->ntids < SB_COSAMPLE_THREADS; i++) {
		uint32_t k = 0;

		while (k < p->ntids && p->tids[k] != pr->recent[i])
			k++;
		if (k == p->ntids)
			p->tids[p->ntids++] = pr->recent[i];
	}
	for (uint32_t t = 0; t < p->ntids && !w->disabled[0]; t++)
		for (uint32_t k = 0; k < p->nwords; k++) {
			int e = arm(w, prog_fd, p->tids[t], p->words[k]);

			w->tokens -= 1;
			if (!e) {
				w->arms++;
				continue;
			}
			if (e == -ENOSPC) {
				w->enospc++;   /* the thread's slots are taken */
				break;
			}
			if (e == -ESRCH) {
				w->gone++;
				break;
			}
			w->failed++;
			if (!w->first_errno)
				w->first_errno = -e;
			/* no breakpoints here at all, or not allowed: one
			 * thread's failure (another user's recycled tid) is
			 * not, three before any arm worked are */
			if (!w->arms && (e == -EACCES || e == -EPERM || e == -ENOENT ||
					 e == -EOPNOTSUPP || e == -ENODEV || e == -EINVAL) &&
			    ++w->early_failures >= 3)
				snprintf(w->disabled, sizeof(w->disabled),
					 "watchpoints unavailable: %s", strerror(-e));
			break;
		}
}

int sb_watch_tick(struct sb_watch *w, struct sb_bpf *bpf, uint64_t now)
{
	int prog_fd;

	if (!w)
		return -1;
	if (w->open && now >= w->win_end)
		close_window(w, bpf, now);
	if (w->open)
		return (int)((w->win_end - now) / 1000000 + 1);
	if (w->disabled[0] || (prog_fd = sb_bpf_watch_prog_fd(bpf)) < 0)
		return -1;
	if (w->last_refill) {
		w->tokens += (double)(now - w->last_refill) * 1e-9 * w->rate;
		if (w->tokens > w->rate / 5.0 + MAX_ARMS)   /* no bursts past 200 ms worth */
			w->tokens = w->rate / 5.0 + MAX_ARMS;
	}
	w->last_refill = now;
	/* a whole window's arms must fit: the line's threads x words */
	if (w->tokens < MAX_ARMS / 2)
		return (int)((MAX_ARMS / 2 - w->tokens) * 1000.0 / w->rate) + 1;
	open_window(w, prog_fd, now);
	return w->open ? (int)(SB_WATCH_WINDOW_NS / 1000000) : 20;
}

void sb_watch_stop(struct sb_watch *w, struct sb_bpf *bpf, uint64_t now)
{
	if (w && w->open)
		close_window(w, bpf, now);
}

int sb_watch_store(struct sb_watch *w, struct sb_profile *p, int pid, uint64_t period_ns,
		   uint64_t start_ns, sb_coherence_loc_fn loc_of, sb_coherence_name_fn name_of, void *ctx)
{
	struct watch_proc *pr = proc_of(w, pid, false);
	struct sb_cosample_stats st = { 0 };
	char buf[256];

	if (pr) {
		sb_cosample_get_stats(pr->cs, &st);
		if (sb_cosample_store(pr->cs, period_ns, loc_of, name_of, ctx, p))
			return -1;
	}
	if (st.pmu_loads || st.pmu_stores)
		snprintf(buf, sizeof(buf), "hardware: sampled data addresses, PEBS loads "
			 "(%llu, %llu served by another cache) and precise stores (%llu), "
			 "write watchpoints (%u arms/s, %llu ms windows)",
			 (unsigned long long)st.pmu_loads, (unsigned long long)st.hitm_loads,
			 (unsigned long long)st.pmu_stores, w->rate, SB_WATCH_WINDOW_NS / 1000000);
	else
		snprintf(buf, sizeof(buf), "software: sampled data addresses, write watchpoints "
			 "(%u arms/s, %llu ms windows)", w->rate, SB_WATCH_WINDOW_NS / 1000000);
	sb_profile_meta_set(p, "coherence_sampled_path", buf);
	sb_profile_meta_set_u64(p, "coherence_sampled_accesses", st.accesses);
	sb_profile_meta_set_u64(p, "coherence_sampled_accesses_ahead", w->ahead_accesses);
	sb_profile_meta_set_u64(p, "coherence_sampled_candidates", st.candidates);
	sb_profile_meta_set_u64(p, "coherence_sampled_windows", st.windows);
	sb_profile_meta_set_u64(p, "coherence_sampled_windows_unarmed", st.windows_unarmed);
	sb_profile_meta_set_u64(p, "coherence_sampled_decided", st.decided);
	sb_profile_meta_set_u64(p, "coherence_sampled_reported", st.reported);
	sb_profile_meta_set_u64(p, "coherence_sampled_sync_lines", st.sync_lines);
	sb_profile_meta_set_u64(p, "coherence_sampled_hits", st.hits);
	sb_profile_meta_set_u64(p, "coherence_sampled_hits_late", st.hits_unmatched);
	sb_profile_meta_set_u64(p, "coherence_sampled_hits_undecoded", w->undecoded);
	sb_profile_meta_set_u64(p, "coherence_sampled_arms", w->arms);
	sb_profile_meta_set_u64(p, "coherence_sampled_enospc", w->enospc);
	sb_profile_meta_set_u64(p, "coherence_sampled_threads_gone", w->gone);
	sb_profile_meta_set_u64(p, "coherence_sampled_arm_failed", w->failed);
	if (w->failed)   /* the first reason, for the user to act on */
		sb_profile_meta_set(p, "coherence_sampled_arm_error", strerror(w->first_errno));
	sb_profile_meta_set_u64(p, "coherence_sampled_lines_dropped", st.lines_dropped);
	sb_profile_meta_set_u64(p, "coherence_sampled_purges", st.purges);
	sb_profile_meta_set_u64(p, "coherence_sampled_pcs_untracked", st.pcs_untracked);
	sb_profile_meta_set_u64(p, "coherence_sampled_processes", w->nprocs);
	sb_profile_meta_set_u64(p, "coherence_sampled_processes_untracked", w->procs_untracked);
	/* how long a recording takes to say something */
	if (st.first_verdict_ns > start_ns)
		sb_profile_meta_set_u64(p, "coherence_sampled_first_verdict_ms",
					(st.first_verdict_ns - start_ns) / 1000000);
	if (w->disabled[0]) {
		sb_profile_meta_set(p, "coherence_sampled_unconfirmed", w->disabled);
	} else if (w->enospc && !w->arms) {
		snprintf(buf, sizeof(buf), "every debug register was taken by another tool "
			 "(ENOSPC in %llu tries: a debugger, perf's breakpoints): no line could be "
			 "confirmed", (unsigned long long)w->enospc);
		sb_profile_meta_set(p, "coherence_sampled_unconfirmed", buf);
	} else if (w->enospc)
		sb_profile_meta_set(p, "coherence_sampled_slots",
				    "some threads' debug registers were taken by another tool "
				    "(ENOSPC): fewer lines confirmed");
	return 0;
}
