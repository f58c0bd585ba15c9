// SPDX-License-Identifier: MIT
/*
 * elfinsn.c - x86-64 instruction checks on one binary (capstone): is an
 * address a return address, whom does that call call (through PLT stubs
 * and GOT slots to the imported symbol), and where an entry uprobe is
 * cheap.  Reads code through sb_elf_read(), symbols through elfsym.h;
 * elfopen.c creates and frees the decoder state (elfsym.c never calls
 * into this file).
 */
#include "elfsym_priv.h"

#include <capstone/capstone.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

/* GOT slot -> the symbol it is bound to (for PLT stubs and call *slot). */
struct slot {
	uint64_t addr;
	const char *name;       /* bare name */
	bool owned;             /* split out of "name@VER": free it */
};

struct range { uint64_t lo, hi; };

struct sb_insn {
	csh cs;
	bool built;             /* slots and plt filled (first callee_at) */
	struct slot *slots;     /* sorted by addr */
	size_t nslots;
	struct range plt[3];    /* .plt, .plt.sec, .plt.got */
};

#define ENDBR64_LEN 4
static const uint8_t endbr64[ENDBR64_LEN] = { 0xf3, 0x0f, 0x1e, 0xfa };

struct sb_insn *sb_insn_open(unsigned machine)
{
	struct sb_insn *x;

	if (machine != EM_X86_64 || !(x = calloc(1, sizeof(*x))))
		return NULL;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &x->cs) != CS_ERR_OK) {
		free(x);
		return NULL;
	}
	cs_option(x->cs, CS_OPT_DETAIL, CS_OPT_ON);
	return x;
}

void sb_insn_close(struct sb_insn *x)
{
	if (!x)
		return;
	for (size_t i = 0; i < x->nslots; i++)
		if (x->slots[i].owned)
			free((char *)x->slots[i].name);
	free(x->slots);
	cs_close(&x->cs);
	free(x);
}

static bool is_prefix(uint8_t b)
{
	return (b >= 0x40 && b <= 0x4f) || b == 0x2e || b == 0x3e ||
	       b == 0x64 || b == 0x65 || b == 0x67 || b == 0xf2;
}

/* Decodes into in the call instruction that ends at ret_vaddr.  Calls
 * end 2..8 bytes before the return address: e8 rel32, or ff /2 after
 * optional prefixes/REX, with modrm, SIB, disp8/disp32.  (The linker's
 * "addr32 call" is 67 e8 rel32: its last 5 bytes are the same call.)
 * The byte test is a cheap filter; capstone confirms the length.  The
 * forms compilers emit for named callees (e8 rel32, ff 15 disp32) are
 * tried first. */
static bool call_ending_at(const struct sb_elf *e, csh cs, uint64_t ret_vaddr,
			   cs_insn *in)
{
	static const uint8_t lens[] = { 5, 6, 2, 3, 4, 7, 8 };

	for (size_t i = 0; i < sizeof(lens); i++) {
		unsigned len = lens[i], k;
		uint64_t a = ret_vaddr - len;
		uint8_t b[8];
		const uint8_t *p = b;
		size_t n = len;

		if (len > ret_vaddr || sb_elf_read(e, a, b, len) != len)
			continue;
		for (k = 0; k + 1 < len && is_prefix(b[k]); k++)
			;
		if (!(len == 5 && b[0] == 0xe8) &&
		    !(b[k] == 0xff && k + 1 < len && ((b[k + 1] >> 3) & 7) == 2))
			continue;
		if (cs_disasm_iter(cs, &p, &n, &a, in) &&
		    in->id == X86_INS_CALL && in->size == len)
			return true;
	}
	return false;
}

bool sb_elf_is_return_address(const struct sb_elf *e, uint64_t ret_vaddr)
{
	struct sb_insn *x = sb_elf_insn(e);
	bool found;
	cs_insn *in;

	if (!x || !(in = cs_malloc(x->cs)))
		return false;
	found = call_ending_at(e, x->cs, ret_vaddr, in);
	cs_free(in, 1);
	return found;
}

/* ---- call targets ---- */

static int slot_cmp(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Appends the GOT slots that one relocation section binds to a symbol:
 * JUMP_SLOT (.rela.plt) and GLOB_DAT (.rela.dyn) by their .dynsym name,
 * IRELATIVE by the ifunc resolver's symbol. */
static void add_relocs(const struct sb_elf *e, struct sb_insn *x,
		       Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf *elf = sb_elf_libelf(e);
	Elf_Scn *symscn = elf_getscn(elf, sh->sh_link);
	Elf_Data *d = elf_getdata(scn, NULL), *sd = NULL;
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;
	struct slot *grown;
	GElf_Shdr ssh;

	if (symscn && gelf_getshdr(symscn, &ssh) && ssh.sh_type == SHT_DYNSYM)
		sd = elf_getdata(symscn, NULL);
	if (!d || !n || !(grown = realloc(x->slots, (x->nslots + n) * sizeof(*grown))))
		return;
	x->slots = grown;
	for (size_t i = 0; i < n; i++) {
		struct slot s = { 0 };
		uint64_t start = 0;
		GElf_Rela r;
		GElf_Sym gs;

		if (!gelf_getrela(d, i, &r))
			continue;
		switch (GELF_R_TYPE(r.r_info)) {
		case R_X86_64_JUMP_SLOT:
		case R_X86_64_GLOB_DAT:
			if (sd && GELF_R_SYM(r.r_info) &&
			    gelf_getsym(sd, GELF_R_SYM(r.r_info), &gs))
				s.name = elf_strptr(elf, ssh.sh_link, gs.st_name);
			break;
		case R_X86_64_IRELATIVE:
			s.name = sb_elf_func_at(e, (uint64_t)r.r_addend, &start);
			if (start != (uint64_t)r.r_addend)
				s.name = NULL;
			break;
		}
		if (!s.name || !s.name[0] || s.name[0] == '@')
			continue;
		s.addr = r.r_offset;
		if (strchr(s.name, '@')) {
			if (!(s.name = strndup(s.name, strcspn(s.name, "@"))))
				continue;
			s.owned = true;
		}
		x->slots[x->nslots++] = s;
	}
}

/* On the first call: the PLT sections and the sorted GOT slot table. */
static void build_slots(const struct sb_elf *e, struct sb_insn *x)
{
	static const char *const plt_names[] = { ".plt", ".plt.sec", ".plt.got" };
	Elf *elf = sb_elf_libelf(e);
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	x->built = true;
	if (elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *nm;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_RELA && (sh.sh_flags & SHF_ALLOC)) {
			add_relocs(e, x, scn, &sh);     /* the dynamic ones */
			continue;
		}
		if (sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_EXECINSTR) ||
		    !(nm = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		for (size_t i = 0; i < 3; i++)
			if (!strcmp(nm, plt_names[i]))
				x->plt[i] = (struct range){ sh.sh_addr,
							    sh.sh_addr + sh.sh_size };
	}
	if (x->nslots)
		qsort(x->slots, x->nslots, sizeof(*x->slots), slot_cmp);
}

static bool in_plt(const struct sb_insn *x, uint64_t a)
{
	for (size_t i = 0; i < 3; i++)
		if (a >= x->plt[i].lo && a < x->plt[i].hi)
			return true;
	return false;
}

static const char *slot_name(const struct sb_insn *x, uint64_t addr)
{
	struct slot key = { .addr = addr };
	const struct slot *s = x->nslots ? bsearch(&key, x->slots, x->nslots,
						  sizeof(key), slot_cmp) : NULL;

	return s ? s->name : NULL;
}

/* The memory word an indirect jmp/call goes through: disp(%rip) or an
 * absolute disp32.  0 for register operands, base/index registers or
 * %fs/%gs (a notrack 3e prefix shows as %ds). */
static uint64_t mem_slot(const cs_insn *in)
{
	const cs_x86 *d = &in->detail->x86;
	const cs_x86_op *op = &d->operands[0];

	if (d->op_count != 1 || op->type != X86_OP_MEM ||
	    op->mem.index != X86_REG_INVALID ||
	    (op->mem.segment != X86_REG_INVALID && op->mem.segment != X86_REG_DS))
		return 0;
	if (op->mem.base == X86_REG_RIP)
		return in->address + in->size + (uint64_t)op->mem.disp;
	return op->mem.base == X86_REG_INVALID ? (uint64_t)op->mem.disp : 0;
}

/* The GOT slot of a PLT stub: [endbr64] [bnd|notrack] jmp *disp(%rip).
 * Lazy .plt entries, .plt.sec (IBT) and .plt.got all start that way. */
static uint64_t stub_slot(const struct sb_elf *e, csh cs, uint64_t a, cs_insn *in)
{
	uint8_t b[ENDBR64_LEN + 16];
	size_t n = sb_elf_read(e, a, b, sizeof(b));
	const uint8_t *p = b;

	if (n >= ENDBR64_LEN && !memcmp(b, endbr64, ENDBR64_LEN)) {
		p += ENDBR64_LEN;
		n -= ENDBR64_LEN;
		a += ENDBR64_LEN;
	}
	if (!cs_disasm_iter(cs, &p, &n, &a, in) || in->id != X86_INS_JMP)
		return 0;
	return mem_slot(in);
}

/* What a decoded call or jmp enters: *name through a PLT stub or GOT
 * slot, or the function symbol whose entry a direct branch targets (then
 * *entry is its vaddr).  Only a branch to a function's entry names it:
 * "call 1f" (get the pc) lands inside its own function.  Clobbers in. */
static void branch_target(const struct sb_elf *e, struct sb_insn *x, cs_insn *in,
			  const char **name, uint64_t *entry)
{
	const cs_x86 *d = &in->detail->x86;
	uint64_t target = 0, slot = 0, start = 0;

	*name = NULL;
	*entry = 0;
	if (d->op_count == 1 && d->operands[0].type == X86_OP_IMM)
		target = (uint64_t)d->operands[0].imm;
	else
		slot = mem_slot(in);
	if (target && in_plt(x, target)) {
		slot = stub_slot(e, x->cs, target, in);
	} else if (target) {
		*name = sb_elf_func_at(e, target, &start);
		if (start != target)
			*name = NULL;
		else
			*entry = target;
	}
	if (slot)
		*name = slot_name(x, slot);
}

const char *sb_elf_callee_at(const struct sb_elf *e, uint64_t ret_vaddr)
{
	struct sb_insn *x = sb_elf_insn(e);
	const char *name = NULL;
	uint64_t entry;
	cs_insn *in;

	if (!x || !(in = cs_malloc(x->cs)))
		return NULL;
	if (!x->built)
		build_slots(e, x);
	if (call_ending_at(e, x->cs, ret_vaddr, in))
		branch_target(e, x, in, &name, &entry);
	cs_free(in, 1);
	return name;
}

uint64_t sb_elf_direct_callee_at(const struct sb_elf *e, uint64_t ret_vaddr)
{
	struct sb_insn *x = sb_elf_insn(e);
	const char *name;
	uint64_t entry = 0;
	cs_insn *in;

	if (!x || !(in = cs_malloc(x->cs)))
		return 0;
	if (!x->built)
		build_slots(e, x);
	if (call_ending_at(e, x->cs, ret_vaddr, in))
		branch_target(e, x, in, &name, &entry);
	cs_free(in, 1);
	return entry;
}

/* Functions longer than this are not searched for their tail jumps. */
#define TAIL_SCAN_MAX (64u << 10)

uint64_t sb_elf_tail_jump_to(const struct sb_elf *e, uint64_t func_vaddr, const char *callee)
{
	struct sb_insn *x = sb_elf_insn(e);
	const char *fname = sb_elf_func_at(e, func_vaddr, NULL), *name;
	uint64_t start, size, a, entry, hit = 0;
	unsigned hits = 0;
	uint8_t *code;
	const uint8_t *p;
	size_t n;
	cs_insn *in;

	if (!x || !fname || !callee ||
	    sb_elf_func_by_name(e, fname, &start, &size) || start != func_vaddr ||
	    !size || size > TAIL_SCAN_MAX || !(code = malloc(size)))
		return 0;
	if (!x->built)
		build_slots(e, x);
	n = sb_elf_read(e, start, code, size);
	if (n != size || !(in = cs_malloc(x->cs))) {
		free(code);
		return 0;
	}
	/* Linear decoding: compilers keep jump tables out of .text on x86-64;
	 * a byte that does not decode ends the proof. */
	p = code;
	a = start;
	while (n > 0) {
		uint64_t at = a;

		if (!cs_disasm_iter(x->cs, &p, &n, &a, in)) {
			hits = 0;
			break;
		}
		if (in->id != X86_INS_JMP)
			continue;
		branch_target(e, x, in, &name, &entry);
		if (name && !strcmp(name, callee)) {
			hit = at;
			hits++;
		}
	}
	cs_free(in, 1);
	free(code);
	return hits == 1 ? hit : 0;
}

/* Every call instruction of the function [start, start + size): its
 * vaddr, the vaddr after it (its return address) and what it calls
 * (named as by sb_elf_callee_at, NULL when unknown).  Returns the number
 * of calls, or -1 when the function cannot be read or decoded whole. */
int sb_elf_calls_in(const struct sb_elf *e, uint64_t start, uint64_t size,
		    sb_elf_call_cb cb, void *arg)
{
	struct sb_insn *x = sb_elf_insn(e);
	uint64_t a = start, entry;
	const char *name;
	const uint8_t *p;
	uint8_t *code;
	int calls = 0;
	size_t n;
	cs_insn *in;

	if (!x || !size || size > TAIL_SCAN_MAX || !(code = malloc(size)))
		return -1;
	if (!x->built)
		build_slots(e, x);
	n = sb_elf_read(e, start, code, size);
	if (n != size || !(in = cs_malloc(x->cs))) {
		free(code);
		return -1;
	}
	p = code;
	while (n > 0) {
		uint64_t at = a;

		if (!cs_disasm_iter(x->cs, &p, &n, &a, in)) {
			calls = -1;
			break;
		}
		if (in->id != X86_INS_CALL)
			continue;
		branch_target(e, x, in, &name, &entry);
		cb(at, a, name, arg);
		calls++;
	}
	cs_free(in, 1);
	free(code);
	return calls;
}

/* ---- probe sites ---- */

static bool in_group(const cs_insn *in, uint8_t g)
{
	for (uint8_t i = 0; i < in->detail->groups_count; i++)
		if (in->detail->groups[i] == g)
			return true;
	return false;
}

/* The cases arch/x86/kernel/uprobes.c emulates instead of single-stepping
 * (branch_setup_xol_ops, push_setup_xol_ops), without extra prefixes. */
static bool kernel_emulates(const cs_insn *in)
{
	const uint8_t *b = in->bytes;

	switch (in->size) {
	case 1: /* push %reg, nop */
		return (b[0] >= 0x50 && b[0] <= 0x57) || b[0] == 0x90;
	case 2: /* push %r8..%r15, jmp rel8, jcc rel8 */
		return (b[0] == 0x41 && b[1] >= 0x50 && b[1] <= 0x57) ||
		       b[0] == 0xeb || (b[0] >= 0x70 && b[0] <= 0x7f);
	case 5: /* call rel32, jmp rel32 */
		return b[0] == 0xe8 || b[0] == 0xe9;
	case 6: /* jcc rel32 */
		return b[0] == 0x0f && b[1] >= 0x80 && b[1] <= 0x8f;
	}
	return false;
}

static bool is_sp(uint16_t r)
{
	return r == X86_REG_RSP || r == X86_REG_ESP || r == X86_REG_SP ||
	       r == X86_REG_SPL;
}

/* SysV argument registers (integer and vector), any width. */
static bool is_arg(uint16_t r)
{
	static const uint16_t regs[] = {
		X86_REG_RDI, X86_REG_EDI, X86_REG_DI, X86_REG_DIL, X86_REG_RSI,
		X86_REG_ESI, X86_REG_SI, X86_REG_SIL, X86_REG_RDX, X86_REG_EDX,
		X86_REG_DX, X86_REG_DL, X86_REG_DH, X86_REG_RCX, X86_REG_ECX,
		X86_REG_CX, X86_REG_CL, X86_REG_CH, X86_REG_R8, X86_REG_R8D,
		X86_REG_R8W, X86_REG_R8B, X86_REG_R9, X86_REG_R9D, X86_REG_R9W,
		X86_REG_R9B,
	};

	for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
		if (regs[i] == r)
			return true;
	return (r >= X86_REG_XMM0 && r <= X86_REG_XMM7) ||
	       (r >= X86_REG_YMM0 && r <= X86_REG_YMM7) ||
	       (r >= X86_REG_ZMM0 && r <= X86_REG_ZMM7);
}

/* May the probe move past this instruction?  Only if the stack pointer
 * is untouched (a uretprobe needs the return address at [rsp]), control
 * falls through, and (keep_args) no argument register is overwritten. */
static bool can_skip(csh cs, const cs_insn *in, bool keep_args)
{
	static const uint8_t bad_groups[] = {
		CS_GRP_JUMP, CS_GRP_CALL, CS_GRP_RET, CS_GRP_INT, CS_GRP_IRET,
		CS_GRP_PRIVILEGE, CS_GRP_BRANCH_RELATIVE,
	};
	uint8_t nr = 0, nw = 0;
	cs_regs rr, rw;

	for (size_t i = 0; i < sizeof(bad_groups); i++)
		if (in_group(in, bad_groups[i]))
			return false;
	switch (in->id) {
	case X86_INS_SYSCALL: case X86_INS_SYSENTER: case X86_INS_UD2:
	case X86_INS_HLT: case X86_INS_INT3: case X86_INS_INT:
	case X86_INS_PUSH: case X86_INS_POP: case X86_INS_LEAVE:
	case X86_INS_ENTER: case X86_INS_CPUID: case X86_INS_INVALID:
		return false;
	}
	/* rep string ops use rdi/rsi/rcx implicitly */
	if (in->detail->x86.prefix[0] == X86_PREFIX_REP ||
	    in->detail->x86.prefix[0] == X86_PREFIX_REPNE ||
	    cs_regs_access(cs, in, rr, &nr, rw, &nw) != CS_ERR_OK)
		return false;
	for (uint8_t i = 0; i < nr; i++)
		if (is_sp(rr[i]))
			return false;
	for (uint8_t i = 0; i < nw; i++)
		if (is_sp(rw[i]) || (keep_args && is_arg(rw[i])))
			return false;
	return true;
}

/* True if a direct branch in [vaddr, vaddr+size) lands in (lo, hi]: a
 * probe there would fire again on that path, not once per call. */
static bool branch_lands_in(const struct sb_elf *e, csh cs, uint64_t vaddr,
			    uint64_t size, uint64_t lo, uint64_t hi)
{
	size_t cap = size < (1u << 20) ? size : (1u << 20), n, pos = 0;
	uint8_t *buf = malloc(cap ? cap : 1);
	cs_insn *in = cs_malloc(cs);
	bool hit = !buf || !in;         /* cannot check: be conservative */

	n = hit ? 0 : sb_elf_read(e, vaddr, buf, cap);
	while (pos < n && !hit) {
		const uint8_t *p = buf + pos;
		size_t left = n - pos;
		uint64_t a = vaddr + pos;
		const cs_x86 *x = &in->detail->x86;

		if (!cs_disasm_iter(cs, &p, &left, &a, in)) {
			pos++;  /* data or padding: resynchronise */
			continue;
		}
		pos += in->size;
		if ((in_group(in, CS_GRP_JUMP) || in_group(in, CS_GRP_CALL)) &&
		    x->op_count == 1 && x->operands[0].type == X86_OP_IMM)
			hit = (uint64_t)x->operands[0].imm > lo &&
			      (uint64_t)x->operands[0].imm <= hi;
	}
	if (in)
		cs_free(in, 1);
	free(buf);
	return hit;
}

uint64_t sb_elf_probe_site(const struct sb_elf *e, uint64_t vaddr,
			   uint64_t size, bool keep_args, bool *emulated)
{
	/* Without a size only the first instruction is considered. */
	uint64_t lim = size ? size : ENDBR64_LEN + 15, base = vaddr, site, addr;
	uint8_t buf[ENDBR64_LEN + 8 * 15];
	const uint8_t *code = buf;
	struct sb_insn *x = sb_elf_insn(e);
	cs_insn *in;
	size_t n;

	*emulated = false;
	n = sb_elf_read(e, vaddr, buf, lim < sizeof(buf) ? lim : sizeof(buf));
	if (n >= ENDBR64_LEN && !memcmp(buf, endbr64, ENDBR64_LEN)) {
		base += ENDBR64_LEN;
		code += ENDBR64_LEN;
		n -= ENDBR64_LEN;
	}
	site = addr = base;
	if (!x || !(in = cs_malloc(x->cs)))
		return site;
	for (int i = 0; i < 8 && cs_disasm_iter(x->cs, &code, &n, &addr, in); i++) {
		if (kernel_emulates(in)) {
			site = in->address;
			*emulated = true;
			break;
		}
		if ((i == 0 && !size) || !can_skip(x->cs, in, keep_args))
			break;
	}
	cs_free(in, 1);
	if (site != base && branch_lands_in(e, x->cs, vaddr, size, base, site)) {
		site = base;
		*emulated = false;
	}
	return site;
}
