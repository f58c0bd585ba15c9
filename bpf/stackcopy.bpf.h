/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * What a sample carries for unwinding without frame pointers
 * (SB_REC_SAMPLE_STACK, --unwind cfi): the top of its user stack and the
 * thread's pending uretprobe return instances (trampoline slots to put
 * the original return addresses back).  Part of record.bpf.c: include
 * after count().
 */
#ifndef SB_STACKCOPY_BPF_H
#define SB_STACKCOPY_BPF_H

static long vma_end(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	*(__u64 *)data = vma->vm_end;
	return 0;
}

/*
 * The top of the user stack from sp.  A read that crosses into an
 * unmapped page fails whole (bpf_probe_read_user never faults pages in),
 * and stacks end close above their outermost frame: a thread's mapping
 * right above start_thread (its descriptor and TLS), the main thread's
 * above the environment (measured: 40% of the samples of a threaded
 * program were within 16 KiB of the end).  So the copy ends at the end of
 * sp's mapping (bpf_find_vma); where the mapping lock is busy, retry
 * smaller, down to the end of sp's own page, which is mapped.
 */
static __always_inline void copy_stack(struct sb_rec_sample_stack *r, __u64 sp)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 end = 0, len, first = 4096 - (sp & 4095);
	int k;

	/* Each sample counts once: NOVMA only when bpf_find_vma failed,
	 * SHORT (or FAULT) for the copy it ends with. */
	if (!bpf_find_vma(task, sp, vma_end, &end, 0) && end > sp) {
		len = end - sp;
		if (len >= SB_SAMPLE_STACK_BYTES)
			len = SB_SAMPLE_STACK_BYTES;
		else
			len &= SB_SAMPLE_STACK_BYTES - 1;
		r->stack_len = (__u32)len;
		if (!bpf_probe_read_user(r->stack, len, (void *)sp)) {
			if (len < SB_SAMPLE_STACK_BYTES)
				count(SB_CNT_STACK_SHORT);
			return;
		}
	} else {
		count(SB_CNT_STACK_NOVMA);
	}
	/* No mapping end (the lock was busy), or a page of it unreadable:
	 * the longest read that works, by whole pages, down to sp's own
	 * page, which is mapped. */
	for (k = SB_SAMPLE_STACK_BYTES / 4096; k >= 0; k--) {
		len = first + (__u64)k * 4096;
		if (len > SB_SAMPLE_STACK_BYTES)
			len = SB_SAMPLE_STACK_BYTES;
		len &= 2 * SB_SAMPLE_STACK_BYTES - 1;
		if (len > SB_SAMPLE_STACK_BYTES)
			continue;
		r->stack_len = (__u32)len;
		if (!bpf_probe_read_user(r->stack, len, (void *)sp)) {
			if (len < SB_SAMPLE_STACK_BYTES)
				count(SB_CNT_STACK_SHORT);
			return;
		}
	}
	r->stack_len = 0;
	count(SB_CNT_STACK_FAULT);
}

/* The pending uretprobe return instances of the thread (see real_return). */
static __always_inline void copy_returns(struct sb_rec_sample_stack *r)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct return_instance *ri;
	__u32 i;

	r->nret = 0;
	r->tramp = BPF_CORE_READ(t, mm, uprobes_state.xol_area, vaddr);
	if (!r->tramp)
		return;
	ri = BPF_CORE_READ(t, utask, return_instances);
	for (i = 0; i < SB_SAMPLE_RETURNS && ri; i++) {
		r->ret_slot[i] = BPF_CORE_READ(ri, stack);
		r->ret_orig[i] = BPF_CORE_READ(ri, orig_ret_vaddr);
		r->nret = i + 1;
		ri = BPF_CORE_READ(ri, next);
	}
}

#endif
