// SPDX-License-Identifier: MIT
/*
 * test_memop: small functions compiled at test time (gcc -O2 -g, plus a
 * few hand-written asm sequences for forms compilers rarely emit).  The
 * instructions are located in objdump's AT&T listing and the expected
 * address is computed from that text, independently of capstone.  The
 * live check on a running program is test_memop_live.c.
 */
#include "check.h"
#include "memop_test.h"
#include "binary/elfsym.h"
#include "binary/memop.h"
#include "binary/procmaps.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BIAS UINT64_C(0x555555554000)   /* pretend PIE load bias */

static const char fns_src[] =
	"#include <emmintrin.h>\n"
	"struct node { struct node *next; long val; };\n"
	"#define NI __attribute__((noinline))\n"
	"NI long chase(const struct node *p, long n)\n"
	"{ long s = 0; while (n--) { s += p->val; p = p->next; } return s; }\n"
	"NI const struct node *chase2(const struct node *p) { return p->next->next; }\n"
	"NI long sum(const long *a, long n)\n"
	"{ long s = 0; for (long i = 0; i < n; i++) s += a[i]; return s; }\n"
	"NI void copy16(char *d, const char *s, long n)\n"
	"{ for (long i = 0; i + 16 <= n; i += 16)\n"
	"  _mm_storeu_si128((__m128i *)(d + i), _mm_loadu_si128((const __m128i *)(s + i))); }\n"
	"long g_counter;\n"
	"NI long bump(void) { return ++g_counter; }\n"
	"NI long alu(long a, long b) { return (a * 3) ^ (b + 7); }\n"
	"NI long *addr_of(long *a, long i) { return &a[i + 3]; }\n"
	"__thread long tls_var;\n"
	"NI long tls_get(void) { return tls_var; }\n"
	"#define F(n) \".text\\n.globl \" #n \"\\n.type \" #n \",@function\\n\" #n \":\\n\"\n"
	"#define E(n) \"ret\\n.size \" #n \", .-\" #n \"\\n\"\n"
	"asm(F(a32) \"addr32 movl (%edi,%esi,4),%eax\\n\" E(a32));\n"
	/* loop heads whose linear predecessor is a load */
	"asm(F(heads) \"mov (%rsi),%rcx\\n1: add (%rdi),%rax\\n add $8,%rdi\\n\"\n"
	" \"dec %rcx\\n jne 1b\\n mov (%rsi),%rdx\\n2: add $1,%rax\\n dec %rdx\\n jne 2b\\n\"\n"
	" E(heads));\n"
	/* each access is followed by a 1-byte nop, the sample point */
	"asm(F(vec)\n"
	" \"movups %xmm0,(%rdi,%rax,1)\\nnop\\n movdqa %xmm0,(%rdi)\\nnop\\n\"\n"
	" \"vmovdqu %ymm0,0x20(%rdi)\\nnop\\n movq %xmm0,(%rdi)\\nnop\\n\"\n"
	" \"movd %xmm0,0x4(%rdi)\\nnop\\n movntdq %xmm0,(%rdi)\\nnop\\n\"\n"
	" \"pextrd $1,%xmm0,(%rdi)\\nnop\\n movdqu 0x10(%rsi),%xmm1\\nnop\\n\"\n"
	" \"cmp %rax,(%rdi)\\nnop\\n addl $1,-0x8(%rdi,%rcx,8)\\nnop\\n\"\n"
	" \"setne (%rdi)\\nnop\\n movsb\\nnop\\n\"\n"
	" \"vpgatherdd %xmm2,(%rax,%xmm1,4),%xmm0\\nnop\\n push 8(%rsp)\\nnop\\n\"\n"
	" \"call *8(%rax)\\nnop\\n prefetcht0 (%rdi)\\nnop\\n\"\n"
	" \"movzbl (%rdi),%edi\\nnop\\n mov (%rbx),%bl\\nnop\\n\"\n"
	" \"xchg %rdx,(%r12,%r13,2)\\nnop\\n mov (%r15,%r10),%r11\\nnop\\n\"\n"
	" E(vec));\n"
	"int main(void) { return 0; }\n";

/* What sampling at the nop after each access of vec must give. */
static const struct { int status; bool store; uint8_t size; } vec_want[] = {
	{ SB_MEMOP_OK, true, 16 }, { SB_MEMOP_OK, true, 16 },
	{ SB_MEMOP_OK, true, 32 }, { SB_MEMOP_OK, true, 8 },
	{ SB_MEMOP_OK, true, 4 }, { SB_MEMOP_OK, true, 16 },
	{ SB_MEMOP_OK, true, 4 }, { SB_MEMOP_OK, false, 16 },
	{ SB_MEMOP_OK, false, 8 }, { SB_MEMOP_OK, true, 4 },
	{ SB_MEMOP_OK, true, 1 }, { SB_MEMOP_CLOBBERED, true, 1 },
	{ SB_MEMOP_UNSUPPORTED, false, 4 }, { SB_MEMOP_CLOBBERED, false, 8 },
	{ SB_MEMOP_NONE, false, 0 }, { SB_MEMOP_NONE, false, 0 },
	{ SB_MEMOP_CLOBBERED, false, 1 }, { SB_MEMOP_CLOBBERED, false, 1 },
	{ SB_MEMOP_OK, true, 8 }, { SB_MEMOP_OK, false, 8 },
};

static const char *const r64[SB_NREGS] = {
	"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15" };
static const char *const r32[SB_NREGS] = {
	"eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi",
	"r8d", "r9d", "r10d", "r11d", "r12d", "r13d", "r14d", "r15d" };

static int reg_named(const char *s, size_t len, bool *is32)
{
	for (int i = 0; i < SB_NREGS; i++) {
		*is32 = false;
		if (strlen(r64[i]) == len && !strncmp(s, r64[i], len))
			return i;
		*is32 = true;
		if (strlen(r32[i]) == len && !strncmp(s, r32[i], len))
			return i;
	}
	return -1;
}

/* The address of the AT&T memory operand "disp(%base,%index,scale)" in
 * text; false when there is none (or it is RIP-relative). */
static bool att_addr(const char *text, const uint64_t *regs, uint64_t *addr)
{
	const char *open = strchr(text, '('), *d = open, *q;
	char part[3][16] = { "", "", "" };
	uint64_t a;
	bool is32 = false, w;
	int k = 0;

	if (!open || strstr(text, "%rip"))
		return false;
	while (d > text && d[-1] != ' ' && d[-1] != ',' && d[-1] != '*')
		d--;
	a = (uint64_t)strtoll(d, NULL, 0);
	for (q = open + 1; *q && *q != ')' && k < 3; q++) {
		if (*q == ',') {
			k++;
			continue;
		}
		if (*q != '%' && strlen(part[k]) < 15)
			strncat(part[k], q, 1);
	}
	if (part[0][0]) {
		int b = reg_named(part[0], strlen(part[0]), &w);

		if (b < 0)
			return false;
		a += regs[b];
		is32 |= w;
	}
	if (part[1][0]) {
		int x = reg_named(part[1], strlen(part[1]), &w);

		if (x < 0)      /* a vector index (VSIB) */
			return false;
		a += regs[x] * (uint64_t)(part[2][0] ? atoi(part[2]) : 1);
		is32 |= w;
	}
	*addr = is32 ? (uint32_t)a : a;
	return true;
}

static void fill_regs(uint64_t *regs)
{
	for (int i = 0; i < SB_NREGS; i++)
		regs[i] = 0x7f0000100000ULL + 0x10000ULL * (uint64_t)i + 0x40ULL * (uint64_t)i;
}

/* Decodes a sample at vaddr (runtime BIAS + vaddr). */
static int dec(struct sb_memop_ctx *c, struct sb_elf *e, uint64_t vaddr,
	       const uint64_t *regs, uint64_t fs, struct sb_memop *m)
{
	return sb_memop_decode(c, e, vaddr, BIAS + vaddr, regs, fs, m);
}

#define EXPECT(st, m, want_st, want_insn, want_prev, what)                    \
	CHECK((st) == (want_st) && (m).insn == (want_insn) &&                 \
	      (m).previous == (want_prev),                                    \
	      "%s: status %s insn %#" PRIx64 " prev %d", what,                \
	      sb_memop_status_name(st), (m).insn, (m).previous)

static void check_chase_sum(struct sb_memop_ctx *c, struct sb_elf *e, const char *bin)
{
	struct insn in[MAXI];
	uint64_t regs[SB_NREGS], want;
	struct sb_memop m;
	int n, i, st;

	fill_regs(regs);
	/* pointer chase: s += p->val (loop head), p = p->next (self-clobbering) */
	n = disasm(bin, "chase", in);
	i = find(in, n, "add", "0x8(%");
	CHECK(i >= 0 && i + 2 < n, "chase: no p->val load in objdump output");
	if (i >= 0 && i + 2 < n) {
		att_addr(in[i].text, regs, &want);
		st = dec(c, e, in[i].va, regs, 0, &m);
		EXPECT(st, m, SB_MEMOP_OK, in[i].va, false, "chase: sampled load");
		CHECK(m.addr == want && m.size == 8 && !m.store, "chase: addr %#" PRIx64
		      " want %#" PRIx64 " size %u", m.addr, want, m.size);
		st = dec(c, e, in[i + 1].va, regs, 0, &m);     /* skid */
		EXPECT(st, m, SB_MEMOP_OK, in[i].va, true, "chase: skid");
		CHECK(m.addr == want, "chase skid: addr %#" PRIx64, m.addr);
		st = dec(c, e, in[i + 2].va, regs, 0, &m);     /* after p = p->next */
		EXPECT(st, m, SB_MEMOP_CLOBBERED, in[i + 1].va, true, "chase: next load");
	}
	/* p->next->next: the second load clobbers its own register; the first
	 * wrote rax but addressed through rdi, so it stays decodable */
	n = disasm(bin, "chase2", in);
	CHECK(n >= 3, "chase2: %d insns", n);
	if (n >= 3) {
		att_addr(in[0].text, regs, &want);
		st = dec(c, e, in[1].va, regs, 0, &m);
		EXPECT(st, m, SB_MEMOP_OK, in[0].va, true, "chase2: first load");
		CHECK(m.addr == want, "chase2: addr %#" PRIx64, m.addr);
		st = dec(c, e, in[2].va, regs, 0, &m);
		EXPECT(st, m, SB_MEMOP_CLOBBERED, in[1].va, true, "chase2: mov (%%rax),%%rax");
	}
	/* streaming sum: loop-head load, skid, and an ALU-only pair */
	n = disasm(bin, "sum", in);
	i = find(in, n, "add", "(%");
	CHECK(i >= 0 && i + 2 < n, "sum: no a[i] load");
	if (i >= 0 && i + 2 < n) {
		att_addr(in[i].text, regs, &want);
		st = dec(c, e, in[i].va, regs, 0, &m);
		EXPECT(st, m, SB_MEMOP_OK, in[i].va, false, "sum: loop head");
		CHECK(m.addr == want, "sum: addr %#" PRIx64, m.addr);
		st = dec(c, e, in[i + 1].va, regs, 0, &m);
		EXPECT(st, m, SB_MEMOP_OK, in[i].va, true, "sum: skid");
		CHECK(m.addr == want, "sum skid: addr %#" PRIx64, m.addr);
		CHECK(!strchr(in[i + 1].text, '(') && !strchr(in[i + 2].text, '('),
		      "sum: %s / %s", in[i + 1].text, in[i + 2].text);
		st = dec(c, e, in[i + 2].va, regs, 0, &m);
		CHECK(st == SB_MEMOP_NONE, "sum: ALU pair gave %s", sb_memop_status_name(st));
		/* mid-instruction IP: no predecessor is claimed */
		st = dec(c, e, in[i].va + 1, regs, 0, &m);
		CHECK(!m.previous, "sum: mid-insn sample used a predecessor");
	}
	/* a branch target: its own access wins over the linear predecessor's */
	n = disasm(bin, "heads", in);
	CHECK(n == 10, "heads: %d insns", n);
	if (n == 10) {
		st = dec(c, e, in[1].va, regs, 0, &m);
		EXPECT(st, m, SB_MEMOP_OK, in[1].va, false, "heads: loop-head load");
		st = dec(c, e, in[6].va, regs, 0, &m);
		EXPECT(st, m, SB_MEMOP_OK, in[5].va, true, "heads: ALU loop head");
		CHECK(m.addr == regs[SB_REG_RSI], "heads: addr %#" PRIx64, m.addr);
	}
	n = disasm(bin, "alu", in);
	CHECK(n >= 2 && dec(c, e, in[1].va, regs, 0, &m) == SB_MEMOP_NONE, "alu: not NONE");
	n = disasm(bin, "addr_of", in);   /* lea then ret: no access */
	CHECK(n >= 2 && strstr(in[0].text, "lea") &&
	      dec(c, e, in[1].va, regs, 0, &m) == SB_MEMOP_NONE, "addr_of: lea counted");
}

static void check_sse_rip_fs(struct sb_memop_ctx *c, struct sb_elf *e, const char *bin)
{
	struct insn in[MAXI];
	uint64_t regs[SB_NREGS], want, gv;
	struct sb_memop m;
	char *hash;
	int n, i, st;

	fill_regs(regs);
	n = disasm(bin, "copy16", in);
	i = find(in, n, "%xmm0,(", NULL);       /* the vector store */
	CHECK(i > 0 && i + 1 < n, "copy16: no vector store");
	if (i > 0 && i + 1 < n) {
		att_addr(in[i].text, regs, &want);
		st = dec(c, e, in[i + 1].va, regs, 0, &m);
		EXPECT(st, m, SB_MEMOP_OK, in[i].va, true, "copy16: store via skid");
		CHECK(m.store && m.size == 16 && m.addr == want, "copy16: store %d size %u "
		      "addr %#" PRIx64 " want %#" PRIx64, m.store, m.size, m.addr, want);
		/* at the store itself the previous instruction is the vector load */
		st = dec(c, e, in[i].va, regs, 0, &m);
		EXPECT(st, m, SB_MEMOP_OK, in[i - 1].va, true, "copy16: load before store");
		CHECK(!m.store && m.size == 16, "copy16: load store=%d", m.store);
	}
	/* RIP-relative: ++g_counter is a load and a store of the global */
	n = disasm(bin, "bump", in);
	i = find(in, n, "(%rip)", "g_counter");
	hash = i >= 0 ? strchr(in[i].text, '#') : NULL;
	CHECK(hash && i + 1 < n, "bump: no rip-relative access");
	if (hash && i + 1 < n) {
		int j = find(in, n, "%rax,", "(%rip)");

		gv = strtoull(hash + 1, NULL, 16);
		st = dec(c, e, in[i].va, regs, 0, &m);
		EXPECT(st, m, SB_MEMOP_OK, in[i].va, false, "bump: first insn");
		CHECK(m.addr == BIAS + gv && !m.store, "bump: addr %#" PRIx64 " want %#"
		      PRIx64, m.addr, BIAS + gv);
		CHECK(j > i && j + 1 < n, "bump: no store back");
		if (j > i && j + 1 < n) {
			st = dec(c, e, in[j + 1].va, regs, 0, &m);
			EXPECT(st, m, SB_MEMOP_OK, in[j].va, true, "bump: store");
			CHECK(m.addr == BIAS + gv && m.store, "bump store: addr %#" PRIx64,
			      m.addr);
		}
	}
	/* thread-local: needs the fs base */
	n = disasm(bin, "tls_get", in);
	i = find(in, n, "%fs:", NULL);
	CHECK(i >= 0 && i + 1 < n, "tls_get: no %%fs access");
	if (i >= 0 && i + 1 < n) {
		uint64_t off = strtoull(strstr(in[i].text, "%fs:") + 4, NULL, 0);

		st = dec(c, e, in[i + 1].va, regs, 0, &m);
		CHECK(st == SB_MEMOP_FS && m.insn == in[i].va, "tls: %s",
		      sb_memop_status_name(st));
		st = dec(c, e, in[i + 1].va, regs, 0x7f00aaaa0000ULL, &m);
		CHECK(st == SB_MEMOP_OK && m.addr == 0x7f00aaaa0000ULL + off,
		      "tls with fs base: %s %#" PRIx64, sb_memop_status_name(st), m.addr);
	}
	/* addr32: 32-bit registers, the sum wraps at 4 GB */
	n = disasm(bin, "a32", in);
	CHECK(n >= 2, "a32: %d insns", n);
	if (n >= 2) {
		regs[SB_REG_RDI] = 0xdeadbeeffffffff0ULL;
		regs[SB_REG_RSI] = 0xffffffff00000008ULL;
		att_addr(in[0].text, regs, &want);
		st = dec(c, e, in[1].va, regs, 0, &m);
		CHECK(st == SB_MEMOP_OK && m.addr == 0x10 && want == 0x10 && m.size == 4,
		      "a32: %s addr %#" PRIx64 " want %#" PRIx64,
		      sb_memop_status_name(st), m.addr, want);
	}
}

static void check_vec(struct sb_memop_ctx *c, struct sb_elf *e, const char *bin)
{
	const size_t nw = sizeof(vec_want) / sizeof(vec_want[0]);
	struct insn in[MAXI];
	uint64_t regs[SB_NREGS], want;
	struct sb_memop m;
	int n;

	fill_regs(regs);
	n = disasm(bin, "vec", in);
	CHECK(n == (int)(2 * nw + 1), "vec: %d insns, want %zu", n, 2 * nw + 1);
	for (size_t k = 0; n == (int)(2 * nw + 1) && k < nw; k++) {
		const struct insn *a = &in[2 * k], *nop = &in[2 * k + 1];
		int st = dec(c, e, nop->va, regs, 0, &m);
		bool has = att_addr(a->text, regs, &want);

		CHECK(st == vec_want[k].status, "vec '%s': %s", a->text,
		      sb_memop_status_name(st));
		if (vec_want[k].status == SB_MEMOP_NONE)
			continue;
		CHECK(m.insn == a->va && m.previous && m.store == vec_want[k].store &&
		      m.size == vec_want[k].size, "vec '%s': insn %#" PRIx64
		      " store %d size %u", a->text, m.insn, m.store, m.size);
		if (st == SB_MEMOP_OK && strncmp(a->text, "movsb", 5))
			CHECK(has && m.addr == want, "vec '%s': addr %#" PRIx64 " want %#"
			      PRIx64, a->text, m.addr, want);
	}
}

static void check_nocode_and_cache(struct sb_elf *e, const char *bin)
{
	static const char *const fns[] = { "chase", "sum", "bump", "copy16" };
	struct sb_memop_ctx *c = sb_memop_ctx_new(2), *big = sb_memop_ctx_new(0);
	struct sb_memop_stats st;
	uint64_t regs[SB_NREGS], v, size;
	struct insn in[MAXI];
	struct sb_memop m;
	bool same = true;

	fill_regs(regs);
	CHECK(dec(big, e, 0x10, regs, 0, &m) == SB_MEMOP_NOCODE, "ELF header: not NOCODE");
	CHECK(dec(big, e, 0x7fffffff0000ULL, regs, 0, &m) == SB_MEMOP_NOCODE,
	      "far address: not NOCODE");
	if (!sb_elf_func_by_name(e, "chase", &v, &size))    /* padding after it */
		CHECK(dec(big, e, v + size, regs, 0, &m) == SB_MEMOP_NOCODE,
		      "inter-function padding: not NOCODE");
	/* capacity 2 over 4 functions: evictions, same answers as a big cache.
	 * Each round samples other IPs: a remembered IP needs no sweep. */
	for (int round = 0; round < 3; round++)
		for (int f = 0; f < 4; f++) {
			int n = disasm(bin, fns[f], in), s1, s2;
			uint64_t a1;

			if (n < 3) {
				same = false;
				continue;
			}
			s1 = dec(c, e, in[n - 1 - round].va, regs, 0, &m);
			a1 = m.addr;
			s2 = dec(big, e, in[n - 1 - round].va, regs, 0, &m);
			same &= a1 == m.addr && s1 == s2;
		}
	CHECK(same, "small and big caches disagree");
	sb_memop_ctx_stats(c, &st);
	CHECK(st.evictions >= 8 && st.sweeps == st.evictions + 2, "small cache: "
	      "%" PRIu64 " sweeps %" PRIu64 " evictions", st.sweeps, st.evictions);
	sb_memop_ctx_stats(big, &st);
	CHECK(st.sweeps == 4, "big cache: %" PRIu64 " sweeps", st.sweeps);
	sb_memop_ctx_forget(big, e);
	dec(big, e, in[0].va, regs, 0, &m);
	sb_memop_ctx_stats(big, &st);
	CHECK(st.sweeps == 5, "forget: %" PRIu64 " sweeps", st.sweeps);
	CHECK(!strcmp(sb_memop_status_name(SB_MEMOP_CLOBBERED), "clobbered") &&
	      !strcmp(sb_memop_status_name(99), "?"), "status names");
	sb_memop_ctx_free(c);
	sb_memop_ctx_free(big);
}

/* A sampled IP's decision is remembered, never its address: the same IP
 * with other registers gives the other address; forget drops it too. */
static void check_memo(struct sb_elf *e, const char *bin)
{
	struct sb_memop_ctx *c = sb_memop_ctx_new(0);
	struct sb_memop_stats st;
	uint64_t regs[SB_NREGS], want[2];
	struct insn in[MAXI];
	struct sb_memop m[2];
	int n = disasm(bin, "sum", in), i = find(in, n, "add", "(%"), s0, s1;

	CHECK(c && i >= 0 && i + 1 < n, "memo: no a[i] load in sum");
	if (!c || i < 0 || i + 1 >= n) {
		sb_memop_ctx_free(c);
		return;
	}
	fill_regs(regs);
	att_addr(in[i].text, regs, &want[0]);
	s0 = dec(c, e, in[i + 1].va, regs, 0, &m[0]);
	for (int r = 0; r < SB_NREGS; r++)
		regs[r] += 0x1000 * (uint64_t)(r + 1);
	att_addr(in[i].text, regs, &want[1]);
	s1 = dec(c, e, in[i + 1].va, regs, 0, &m[1]);
	sb_memop_ctx_stats(c, &st);
	CHECK(s0 == SB_MEMOP_OK && s1 == SB_MEMOP_OK && want[0] != want[1] &&
	      m[0].addr == want[0] && m[1].addr == want[1] && m[1].insn == in[i].va &&
	      m[1].previous, "memo: addrs %#" PRIx64 " %#" PRIx64 " want %#" PRIx64
	      " %#" PRIx64, m[0].addr, m[1].addr, want[0], want[1]);
	CHECK(st.decodes == 2 && st.memo_hits == 1 && st.sweeps == 1, "memo: %" PRIu64
	      " decodes %" PRIu64 " hits %" PRIu64 " sweeps", st.decodes, st.memo_hits,
	      st.sweeps);
	sb_memop_ctx_forget(c, e);
	dec(c, e, in[i + 1].va, regs, 0, &m[1]);
	sb_memop_ctx_stats(c, &st);
	CHECK(st.memo_hits == 1 && st.sweeps == 2 && m[1].addr == want[1],
	      "memo after forget: %" PRIu64 " hits %" PRIu64 " sweeps", st.memo_hits,
	      st.sweeps);
	sb_memop_ctx_free(c);
}

int main(void)
{
	char dir[] = "/tmp/test_memop.XXXXXX", bin[600], err[256], cmd[700];
	struct sb_memop_ctx *c = sb_memop_ctx_new(0);
	struct sb_elf *e = NULL;

	CHECK(c != NULL, "ctx");
	if (!mkdtemp(dir) || !build(dir, "fns", fns_src, "")) {
		CHECK(0, "cannot build the test program in %s", dir);
		return CHECK_DONE("test_memop");
	}
	snprintf(bin, sizeof(bin), "%s/fns", dir);
	e = sb_elf_open(bin, err, sizeof(err));
	CHECK(e != NULL, "open %s: %s", bin, err);
	if (e && c) {
		check_chase_sum(c, e, bin);
		check_sse_rip_fs(c, e, bin);
		check_vec(c, e, bin);
		check_nocode_and_cache(e, bin);
		check_memo(e, bin);
	}
	sb_memop_ctx_free(c);
	sb_elf_close(e);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
	return CHECK_DONE("test_memop");
}
