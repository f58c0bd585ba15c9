// SPDX-License-Identifier: MIT
#include "records.h"

#include <string.h>

#include "binary/elfsym.h"
#include "util/idmap.h"
#include "binary/procmaps.h"
#include "sbpf_events.h"

static const struct { const char *name; uint16_t prim; } prim_names[] = {
	{ "pthread_mutex_lock", SB_PRIM_MUTEX },
	{ "pthread_mutex_timedlock", SB_PRIM_MUTEX },
	{ "pthread_mutex_clocklock", SB_PRIM_MUTEX },
	{ "pthread_cond_wait", SB_PRIM_COND },
	{ "pthread_cond_timedwait", SB_PRIM_COND },
	{ "pthread_cond_clockwait", SB_PRIM_COND },
	{ "sem_wait", SB_PRIM_SEM },
	{ "sem_timedwait", SB_PRIM_SEM },
	{ "sem_clockwait", SB_PRIM_SEM },
	{ "pthread_rwlock_rdlock", SB_PRIM_RWLOCK },
	{ "pthread_rwlock_wrlock", SB_PRIM_RWLOCK },
	{ "pthread_rwlock_timedrdlock", SB_PRIM_RWLOCK },
	{ "pthread_rwlock_timedwrlock", SB_PRIM_RWLOCK },
	{ "pthread_rwlock_clockrdlock", SB_PRIM_RWLOCK },
	{ "pthread_rwlock_clockwrlock", SB_PRIM_RWLOCK },
	{ "pthread_spin_lock", SB_PRIM_SPIN },
	{ "pthread_barrier_wait", SB_PRIM_BARRIER },
	{ "pthread_join", SB_PRIM_JOIN },
	{ "GOMP_critical_start", SB_PRIM_OMP_CRITICAL },
	{ "GOMP_critical_name_start", SB_PRIM_OMP_CRITICAL },
	{ "GOMP_atomic_start", SB_PRIM_OMP_CRITICAL },
	{ "omp_set_lock", SB_PRIM_OMP_LOCK },
	{ "omp_set_nest_lock", SB_PRIM_OMP_LOCK },
	{ "GOMP_barrier", SB_PRIM_OMP_BARRIER },
	{ "GOMP_loop_end", SB_PRIM_OMP_BARRIER },
	{ "__kmpc_critical", SB_PRIM_OMP_CRITICAL },
	{ "__kmpc_critical_with_hint", SB_PRIM_OMP_CRITICAL },
	{ "__kmpc_set_lock", SB_PRIM_OMP_LOCK },
	{ "__kmpc_set_nest_lock", SB_PRIM_OMP_LOCK },
	{ "__kmpc_barrier", SB_PRIM_OMP_BARRIER },
};

uint16_t sb_prim_of_function(const char *name)
{
	if (!name)
		return SB_PRIM_MAX;
	for (size_t i = 0; i < sizeof(prim_names) / sizeof(prim_names[0]); i++)
		if (!strcmp(name, prim_names[i].name))
			return prim_names[i].prim;
	return SB_PRIM_MAX;
}

enum bin_class { BIN_USER, BIN_LIBC, BIN_OMP };

static enum bin_class classify_binary(const char *path)
{
	static const char *const libc[] = { "libc.so", "libpthread.so", "ld-linux",
					    "libstdc++.so", NULL };
	static const char *const omp[] = { "libgomp.so", "libomp.so", "libiomp5.so", NULL };
	const char *base = path ? strrchr(path, '/') : NULL;

	base = base ? base + 1 : (path ? path : "");
	for (int i = 0; libc[i]; i++)
		if (!strncmp(base, libc[i], strlen(libc[i])))
			return BIN_LIBC;
	for (int i = 0; omp[i]; i++)
		if (!strncmp(base, omp[i], strlen(omp[i])))
			return BIN_OMP;
	return BIN_USER;
}

/* Words cached as unknown may be known once the maps were re-read, by
 * anyone sharing them. */
static int resolve(struct sb_records *d, uint64_t addr, int *bin, uint64_t *vaddr)
{
	int ret = sb_maps_resolve_live(d->maps, d->pid, addr, bin, vaddr);

	if (d->maps_gen != sb_maps_generation(d->maps)) {
		d->maps_gen = sb_maps_generation(d->maps);
		sb_idmap_free(d->words);
		d->words = NULL;
		sb_idmap_free(d->sites);
		d->sites = NULL;
	}
	return ret;
}

/* What a stack word is, packed: the same return addresses come back in
 * every sample, and classifying one (maps lookup, symbol search, decoding
 * the call before it) costs far more than remembering it. */
enum {
	W_KNOWN = 1u << 0,      /* inside a mapped binary */
	W_USER = 1u << 1,
	W_OMP = 1u << 2,
	W_RET = 1u << 3,        /* preceded by a call */
	W_PRIM_SHIFT = 8,       /* the function's primitive (8 bits) */
	W_CALLEE_SHIFT = 16,    /* the called function's primitive (8 bits) */
	W_PRESENT = 1u << 30,   /* cached */
};

static uint32_t word_facts(struct sb_records *d, uint64_t w)
{
	void **slot;
	uint32_t f = 0;
	struct sb_elf *e;
	uint64_t vaddr;
	int bin;

	slot = d->words ? sb_idmap_slot(d->words, w, 0, false) : NULL;
	if (slot)
		return (uint32_t)(uintptr_t)*slot;
	/* resolve() may refresh the maps and drop the cache: insert after. */
	if (w >= 4096 && !resolve(d, w, &bin, &vaddr) && (e = sb_maps_binary_elf(d->maps, bin))) {
		enum bin_class cls = classify_binary(sb_maps_binary_name(d->maps, bin));

		f |= W_KNOWN;
		f |= cls == BIN_USER ? W_USER : cls == BIN_OMP ? W_OMP : 0;
		f |= sb_elf_is_return_address(e, vaddr) ? W_RET : 0;
		f |= (uint32_t)(sb_prim_of_function(sb_elf_func_at(e, vaddr, NULL)) & 0xff)
		     << W_PRIM_SHIFT;
		if (cls == BIN_USER && (f & W_RET))
			f |= (uint32_t)(sb_prim_of_function(sb_elf_callee_at(e, vaddr)) & 0xff)
			     << W_CALLEE_SHIFT;
	}
	if (!d->words)
		d->words = sb_idmap_alloc();
	slot = d->words ? sb_idmap_slot(d->words, w, 0, true) : NULL;
	if (slot)
		*slot = (void *)(uintptr_t)(f | W_PRESENT);
	return f | W_PRESENT;
}

static void scan_stack(struct sb_records *d, const struct sb_rec_wait *r,
		       uint16_t *prim, uint64_t *site)
{
	bool saw_omp = false;
	uint32_t n = r->nwords < SB_STACK_WORDS ? r->nwords : SB_STACK_WORDS;

	*prim = SB_PRIM_MAX;
	*site = 0;
	for (int32_t i = -1; i < (int32_t)n; i++) {
		uint64_t w = i < 0 ? r->ip : r->stack[i];
		uint32_t f = word_facts(d, w);
		uint16_t p = (f >> W_PRIM_SHIFT) & 0xff;

		if (!(f & W_KNOWN))
			continue;
		if (!(f & W_USER)) {
			saw_omp |= !!(f & W_OMP);
			/* Only a real return address (or the IP) counts as a frame. */
			if (*prim == SB_PRIM_MAX && p != (SB_PRIM_MAX & 0xff) &&
			    (i < 0 || (f & W_RET)))
				*prim = p;
			continue;
		}
		if (i < 0) {             /* the program's own futex call */
			*site = w;
			break;
		}
		if (f & W_RET) {
			*site = w - 1;   /* inside the call instruction */
			/* Runtimes that tail-jump to a hidden slow path leave no
			 * frame naming the primitive: ask what the program called. */
			if (*prim == SB_PRIM_MAX && ((f >> W_CALLEE_SHIFT) & 0xff) !=
			    (SB_PRIM_MAX & 0xff))
				*prim = (f >> W_CALLEE_SHIFT) & 0xff;
			break;
		}
	}
	if (*prim == SB_PRIM_MAX)
		*prim = saw_omp ? SB_PRIM_OMP_IDLE : SB_PRIM_OTHER;
}

/* Every record's event starts as its time and thread. */
static void event_of(const struct sb_rec_hdr *h, uint16_t kind, struct sb_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->ts = h->ts;
	ev->tid = h->tid;
	ev->kind = kind;
}

/* User addresses fit in 47 bits: the top bit marks a start routine. */
#define START_TAG (1ull << 63)

/* A per-thread value (0: none); set with 0 removes it. */
static uint64_t tid_get(struct sb_idmap *m, uint32_t tid)
{
	void **slot = m ? sb_idmap_slot(m, tid, 0, false) : NULL;

	return slot ? (uint64_t)(uintptr_t)*slot : 0;
}

static void tid_set(struct sb_idmap **m, uint32_t tid, uint64_t v)
{
	void **slot;

	if (!v) {
		if (*m)
			sb_idmap_remove(*m, tid, 0);
		return;
	}
	if (!*m)
		*m = sb_idmap_alloc();
	slot = *m ? sb_idmap_slot(*m, tid, 0, true) : NULL;
	if (slot)
		*slot = (void *)(uintptr_t)v;
}

/* The binary's ELF of the runtime address a, a's vaddr there and whether
 * the binary is a runtime (libc, libgomp...); false when unknown. */
static bool code_at(struct sb_records *d, uint64_t a, struct sb_elf **e, uint64_t *vaddr,
		    bool *runtime)
{
	int bin;

	if (a < 4096 || resolve(d, a, &bin, vaddr) || !(*e = sb_maps_binary_elf(d->maps, bin)))
		return false;
	*runtime = sb_records_is_runtime(sb_maps_binary_name(d->maps, bin));
	return true;
}

/*
 * Whether callee is fn itself as the program calls it: fn, or the
 * `ld --wrap=fn` interposer __wrap_fn, to which the linker redirected the
 * program's calls of fn (exact mode's runtime wraps the sync functions
 * so); a wrapper then reaching fn by a tail jump is no caller of its own.
 */
static bool calls_probed(const char *callee, const char *fn)
{
	return callee && (!strcmp(callee, fn) ||
			  (!strncmp(callee, "__wrap_", 7) && !strcmp(callee + 7, fn)));
}

/*
 * Where the program called the probed function fn (runtime address) that
 * returns to ret.  Normally the call just before ret.  A tail call leaves
 * no frame of its own: the function that jumped to fn (from) is found as
 * the program function the call before ret entered (SPLASH's
 * "SlaveStart() { ...; BARRIER(); }" called from main), or, when ret is in
 * a runtime (libgomp calling an outlined function), as the outlined
 * function the thread runs.  The site is then that function's one jump to
 * fn, or its entry when the jump is not unique.
 */
static uint64_t find_call_site(struct sb_records *d, const struct sb_probe *p, uint64_t fn,
			       uint64_t ret, uint64_t task)
{
	uint64_t vaddr, entry, from = 0, jmp;
	const char *callee;
	struct sb_elf *e;
	bool runtime;

	if (code_at(d, ret, &e, &vaddr, &runtime) && !runtime) {
		callee = sb_elf_callee_at(e, vaddr);
		entry = sb_elf_direct_callee_at(e, vaddr);
		if (!entry || calls_probed(callee, p->func) || ret - vaddr + entry == fn)
			return ret - 1;   /* inside the call instruction */
		from = ret - vaddr + entry;
	} else if (task) {
		from = task & ~START_TAG;
	}
	if (!from)   /* a runtime's own call (or unknown): where it returns */
		return ret > 1 ? ret - 1 : 0;
	if (!code_at(d, from, &e, &vaddr, &runtime) || runtime)
		return (task & START_TAG) || runtime ? (ret > 1 ? ret - 1 : 0) : from;
	jmp = sb_elf_tail_jump_to(e, vaddr, p->func);
	if (jmp)
		return from - vaddr + jmp;
	/* A start routine that does not jump there was not the caller. */
	return task & START_TAG ? (ret > 1 ? ret - 1 : 0) : from;
}

static uint64_t call_site(struct sb_records *d, const struct sb_rec_probe *r,
			  const struct sb_probe *p)
{
	uint64_t fn = r->ip - (p->site_vaddr - p->func_vaddr), site, task, key;
	void **slot;

	/* An outlined function the thread runs, else its start routine
	 * (tagged: only a proven jump counts for it). */
	task = tid_get(d->tasks, r->hdr.tid);
	if (!task && (task = tid_get(d->starts, r->hdr.tid)))
		task |= START_TAG;
	if (r->ret_addr <= 1 && !task)
		return 0;
	key = task | (uint64_t)r->probe << 48;
	slot = d->sites ? sb_idmap_slot(d->sites, r->ret_addr, key, false) : NULL;
	if (slot)
		return (uint64_t)(uintptr_t)*slot;
	site = find_call_site(d, p, fn, r->ret_addr, task);
	/* find_call_site() may have refreshed the maps and dropped the cache. */
	if (!d->sites)
		d->sites = sb_idmap_alloc();
	slot = d->sites && site ? sb_idmap_slot(d->sites, r->ret_addr, key, true) : NULL;
	if (slot)
		*slot = (void *)(uintptr_t)site;
	return site;
}

/*
 * A condvar call, for the inline-barrier detection: its condvar, its call
 * site, whether the user named that site a barrier (prim USER_BARRIER),
 * and the entry of the function making it (dur), by which waits and
 * broadcasts of one BARRIER macro expansion are told to belong together.
 * Calls inside a probed waiting call (a barrier function's own condvar)
 * are that call's business: none.
 */
static int cond_event(struct sb_records *d, const struct sb_rec_probe *r,
		      const struct sb_probe *p, bool enter, struct sb_event *ev)
{
	uint64_t vaddr, start = 0;
	struct sb_elf *e;
	int bin;

	if (r->depth > 0)
		return 0;
	if (!enter) {
		if (p->role != SB_ROLE_COND_WAIT ||
		    !(ev->obj = tid_get(d->condwaits, r->hdr.tid)))
			return 0;
		tid_set(&d->condwaits, r->hdr.tid, 0);
		tid_set(&d->condsites, r->hdr.tid, 0);
		ev->kind = SB_EV_COND_WOKEN;
		return 1;
	}
	ev->kind = p->role == SB_ROLE_COND_WAIT ? SB_EV_COND_WAIT : SB_EV_COND_BROADCAST;
	ev->obj = r->arg;
	ev->prim = SB_PRIM_COND;
	ev->site = call_site(d, r, p);
	if (ev->site && !resolve(d, ev->site, &bin, &vaddr) &&
	    (e = sb_maps_binary_elf(d->maps, bin))) {
		if (sb_elf_func_at(e, vaddr, &start))
			ev->dur = ev->site - vaddr + start;
		if (p->role == SB_ROLE_COND_WAIT &&
		    sb_plan_site_named(d->plan, sb_maps_binary_path(d->maps, bin), vaddr))
			ev->prim = SB_PRIM_USER_BARRIER;
	}
	if (p->role == SB_ROLE_COND_WAIT) {
		tid_set(&d->condwaits, r->hdr.tid, r->arg);
		tid_set(&d->condsites, r->hdr.tid, ev->site);
	}
	return 1;
}

/*
 * A user barrier function (mutex + condvar) is a sync, like
 * pthread_barrier_wait, but `scalebpf cc` counts its blocks, and the
 * exact runtime flushes inside it (at its pthread_cond_wait or
 * broadcast).  Its branches tell the last arriver from the others: the
 * slowest thread takes the broadcast branch every instance, a perfect
 * "cause" of the imbalance it suffers.  Its range is noted at entry,
 * before any flush of the thread inside it, and its counts are dropped.
 */
static void barfn_note(struct sb_records *d, uint64_t start, uint64_t size)
{
	for (uint32_t i = 0; i < d->nbarfns; i++)
		if (d->barfns[i].start == start)
			return;
	if (d->nbarfns < SB_MAX_SPIN_RANGES)
		d->barfns[d->nbarfns++] = (struct sb_ip_range){ start, start + size };
}

static bool in_barfn(const struct sb_records *d, uint64_t pc)
{
	for (uint32_t i = 0; i < d->nbarfns; i++)
		if (pc >= d->barfns[i].start && pc < d->barfns[i].end)
			return true;
	return false;
}

int sb_records_probe(struct sb_records *d, const struct sb_rec_probe *r, bool enter,
		     struct sb_event *ev)
{
	const struct sb_probe *p;

	event_of(&r->hdr, 0, ev);
	if (r->probe >= d->plan->n)
		goto bad;
	p = &d->plan->probes[r->probe];
	ev->oncpu = r->oncpu_ns;
	switch (p->role) {
	case SB_ROLE_SYNC:
	case SB_ROLE_JOIN:
		if (enter && p->prim == SB_PRIM_USER_BARRIER && p->func_size)
			barfn_note(d, r->ip - (p->site_vaddr - p->func_vaddr), p->func_size);
		ev->kind = enter ? SB_EV_SYNC_ENTER : SB_EV_SYNC_EXIT;
		ev->prim = p->prim;
		ev->obj = p->fixed_obj ? p->func_vaddr : r->arg;
		break;
	case SB_ROLE_REGION:
		ev->kind = enter ? SB_EV_REGION_ENTER : SB_EV_REGION_EXIT;
		ev->obj = enter ? r->arg : 0;
		break;
	case SB_ROLE_TASK:
		ev->kind = enter ? SB_EV_TASK_ENTER : SB_EV_TASK_EXIT;
		/* The runtime address of the function, as the fork call passes it. */
		ev->obj = enter ? r->ip - (p->site_vaddr - p->func_vaddr) : 0;
		tid_set(&d->tasks, r->hdr.tid, ev->obj);
		break;
	case SB_ROLE_CREATE:
		tid_set(&d->creating, r->hdr.tid, enter ? r->arg : 0);
		return 0;
	case SB_ROLE_COND_WAIT:
	case SB_ROLE_COND_BROADCAST:
		return cond_event(d, r, p, enter, ev);
	default:
		goto bad;
	}
	/* Resolving learns new mappings while the target is alive to show them. */
	if (enter)
		ev->site = p->role == SB_ROLE_SYNC || p->role == SB_ROLE_JOIN ?
			   call_site(d, r, p) : r->ret_addr > 1 ? r->ret_addr - 1 : 0;
	if (enter && ev->site && ev->kind != SB_EV_SYNC_ENTER) {
		int bin;
		uint64_t vaddr;

		resolve(d, ev->site, &bin, &vaddr);
	}
	return 1;
bad:
	d->bad_records++;
	return -1;
}

void sb_records_wait(struct sb_records *d, const struct sb_rec_wait *w, struct sb_event *ev)
{
	uint16_t prim;

	event_of(&w->hdr, SB_EV_WAIT, ev);
	scan_stack(d, w, &prim, &ev->site);
	/* In a probed pthread_cond_wait, the uretprobe holds the slot of the
	 * return into the program (the copied stack shows its trampoline):
	 * the call site is the one its entry saw. */
	if (!ev->site)
		ev->site = tid_get(d->condsites, w->hdr.tid);
	if (!ev->site)
		d->unattributed++;
	/* A sample outside any known primitive is still spinning. */
	if (w->source == SB_WAIT_SPIN_SAMPLE && prim == SB_PRIM_OTHER)
		prim = SB_PRIM_SPIN;
	ev->prim = prim;
	ev->obj = w->uaddr;
	ev->dur = w->dur_ns;
}

void sb_records_thread_new(struct sb_records *d, const struct sb_rec_thread *t)
{
	uint64_t fn = tid_get(d->creating, t->parent_tid);

	if (fn)
		tid_set(&d->starts, t->hdr.tid, fn);
}

void sb_records_thread_exit(struct sb_records *d, const struct sb_rec_thread *t,
			    struct sb_event *ev)
{
	tid_set(&d->tasks, t->hdr.tid, 0);
	tid_set(&d->starts, t->hdr.tid, 0);
	tid_set(&d->creating, t->hdr.tid, 0);
	tid_set(&d->condwaits, t->hdr.tid, 0);
	tid_set(&d->condsites, t->hdr.tid, 0);
	event_of(&t->hdr, SB_EV_THREAD_EXIT, ev);
	ev->oncpu = t->oncpu_ns;
}

void sb_records_sample(const struct sb_rec_sample *s, struct sb_event *ev)
{
	/* Per-thread sample counts by IP: nothing more while the target
	 * runs; skid correction and blocks come at the end, once per
	 * distinct IP (eventmap.c). */
	event_of(&s->hdr, SB_EV_COUNT, ev);
	ev->obj = s->ip;
	ev->dur = 1;
}

int sb_records_exact(struct sb_records *d, const struct sb_rec_exact *r, struct sb_event *ev)
{
	int n = 0;

	if (r->b.magic != SB_EXACT_MAGIC || r->b.n > SB_EXACT_BATCH) {
		d->bad_records++;
		return -1;
	}
	for (uint32_t i = 0; i < r->b.n; i++) {
		/* A block whose callback address never got published, or a
		 * count of zero, carries nothing. */
		if (!r->b.pc[i] || r->b.pc[i] >= SB_KEY_EXACT || !r->b.count[i] ||
		    in_barfn(d, r->b.pc[i]))
			continue;
		event_of(&r->hdr, r->b.flags & SB_EXACT_LAST ? SB_EV_COUNT_LAST : SB_EV_COUNT,
			 &ev[n]);
		ev[n].obj = r->b.pc[i] | SB_KEY_EXACT;
		ev[n].dur = r->b.count[i];
		/* Work done, not a sample: see SB_COUNT_DONE. */
		ev[n].prim = SB_COUNT_DONE;
		n++;
	}
	return n;
}

int sb_records_chip(struct sb_records *d, const struct sb_rec_chip *r, struct sb_event *ev)
{
	int n = 0;

	if (r->b.magic != SB_CHIP_MAGIC) {
		d->bad_records++;
		return -1;
	}
	for (uint32_t i = 0; i <= SB_KEY_CHIP_ACCESSES; i++) {
		uint64_t v = i == SB_KEY_CHIP_ACCESSES ? r->b.accesses : r->b.depth[i];

		if (!v)
			continue;
		event_of(&r->hdr, r->b.flags & SB_EXACT_LAST ? SB_EV_COUNT_LAST : SB_EV_COUNT,
			 &ev[n]);
		ev[n].obj = SB_KEY_TOTAL | i;
		ev[n].dur = v;
		ev[n].prim = SB_COUNT_DONE;   /* work done, as exact counts */
		n++;
	}
	return n;
}

void sb_records_release(struct sb_records *d)
{
	sb_idmap_free(d->words);
	d->words = NULL;
	sb_idmap_free(d->tasks);
	d->tasks = NULL;
	sb_idmap_free(d->starts);
	d->starts = NULL;
	sb_idmap_free(d->creating);
	d->creating = NULL;
	sb_idmap_free(d->sites);
	d->sites = NULL;
	sb_idmap_free(d->condwaits);
	d->condwaits = NULL;
	sb_idmap_free(d->condsites);
	d->condsites = NULL;
}

size_t sb_records_callsites(const uint64_t *frames, size_t n, uint64_t *keys, size_t max)
{
	size_t k = 0;

	/* frames[0] is the sampled IP itself; the rest are return addresses. */
	for (size_t i = 1; i < n && k < max; i++) {
		uint64_t key;
		bool dup = false;

		if (frames[i] < 4096 || frames[i] >= SB_KEY_CALLSITE)
			continue;
		key = (frames[i] - 1) | SB_KEY_CALLSITE;   /* inside the call */
		for (size_t j = 0; j < k; j++)
			dup |= keys[j] == key;   /* recursion: once per sample */
		if (!dup)
			keys[k++] = key;
	}
	return k;
}

bool sb_records_is_runtime(const char *path)
{
	return classify_binary(path) != BIN_USER;
}
