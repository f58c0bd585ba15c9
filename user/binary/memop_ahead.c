// SPDX-License-Identifier: MIT
/*
 * memop_ahead.c - the accesses a sampled basic block is about to make
 * (memop.h, "Look-ahead").  Decoding forward from the sampled IP needs no
 * function sweep: the IP is an instruction boundary and x86 decodes
 * forward.  Each IP's instructions are decoded once and remembered
 * (which operand, which registers it needs, whether one before it wrote
 * them); a repeat sample only computes base + index * scale + disp.
 */
#include "memop.h"
#include "memop_priv.h"
#include "elfsym.h"

#include <stdlib.h>
#include <string.h>

#define MEMO_BITS 10

struct ahead_insn {
	uint64_t vaddr;
	uint16_t len;
	uint8_t size;
	bool store;
	unsigned addr_size;
	x86_op_mem mem;
};

struct ahead_memo {
	const struct sb_elf *e;        /* NULL: empty */
	uint64_t vaddr;
	int n;                         /* -1: no code */
	struct ahead_insn k[SB_MEMOP_AHEAD];
};

struct sb_memop_ahead {
	csh cs;
	cs_insn *in;
	struct ahead_memo *memo;
};

struct sb_memop_ahead *sb_memop_ahead_new(void)
{
	struct sb_memop_ahead *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	if (!(a->memo = calloc((size_t)1 << MEMO_BITS, sizeof(*a->memo))) ||
	    cs_open(CS_ARCH_X86, CS_MODE_64, &a->cs) != CS_ERR_OK) {
		free(a->memo);
		free(a);
		return NULL;
	}
	cs_option(a->cs, CS_OPT_DETAIL, CS_OPT_ON);
	if (!(a->in = cs_malloc(a->cs))) {
		sb_memop_ahead_free(a);
		return NULL;
	}
	return a;
}

void sb_memop_ahead_free(struct sb_memop_ahead *a)
{
	if (!a)
		return;
	if (a->in)
		cs_free(a->in, 1);
	cs_close(&a->cs);
	free(a->memo);
	free(a);
}

void sb_memop_ahead_forget(struct sb_memop_ahead *a, const struct sb_elf *e)
{
	for (size_t i = 0; a && i < ((size_t)1 << MEMO_BITS); i++)
		if (a->memo[i].e == e)
			a->memo[i].e = NULL;
}

/* The block's accesses whose addresses the registers at its start give. */
static void scan(struct sb_memop_ahead *a, const struct sb_elf *e, uint64_t vaddr,
		 struct ahead_memo *mo)
{
	uint32_t clobbered = 0;
	uint8_t buf[16 * SB_MEMOP_AHEAD];
	size_t n = sb_elf_read(e, vaddr, buf, sizeof(buf));
	const uint8_t *p = buf;
	uint64_t at = vaddr;

	mo->n = n ? 0 : -1;
	for (int i = 0; i < SB_MEMOP_AHEAD && n && cs_disasm_iter(a->cs, &p, &n, &at, a->in);
	     i++) {
		uint32_t written, needs;
		bool store;
		int op = sb_memop_insn_access(a->cs, a->in, &store, &written, &needs);

		if (op >= 0 && !(needs & clobbered)) {
			struct ahead_insn *k = &mo->k[mo->n++];

			k->vaddr = a->in->address;
			k->len = a->in->size;
			k->size = a->in->detail->x86.operands[op].size;
			k->store = store;
			k->addr_size = a->in->detail->x86.addr_size;
			k->mem = a->in->detail->x86.operands[op].mem;
		}
		clobbered |= written;
		if (sb_memop_insn_ends_block(a->in))
			break;
	}
}

int sb_memop_ahead_decode(struct sb_memop_ahead *a, struct sb_elf *e, uint64_t sample_vaddr,
			  uint64_t runtime_ip, const uint64_t *regs, struct sb_memop *out,
			  int max)
{
	uint64_t h = ((sample_vaddr * 0x9e3779b97f4a7c15ull) ^ (uintptr_t)e) >> (64 - MEMO_BITS);
	struct ahead_memo *mo = &a->memo[h];
	int n = 0;

	if (mo->e != e || mo->vaddr != sample_vaddr) {
		mo->e = e;
		mo->vaddr = sample_vaddr;
		scan(a, e, sample_vaddr, mo);
	}
	for (int i = 0; i < mo->n && n < max; i++) {
		const struct ahead_insn *k = &mo->k[i];
		struct sb_memop *m = &out[n];

		memset(m, 0, sizeof(*m));
		if (sb_memop_effective(k->addr_size, &k->mem, runtime_ip - sample_vaddr + k->vaddr +
				       k->len, regs, &m->addr) != SB_MEMOP_OK)
			continue;
		m->insn = k->vaddr;
		m->size = k->size;
		m->store = k->store;
		n++;
	}
	return mo->n < 0 ? -1 : n;
}
