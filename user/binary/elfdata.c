// SPDX-License-Identifier: MIT
/*
 * Data symbols: which global or static variable holds a binary vaddr, for
 * naming shared cache lines (analysis/coherence/).  elfsym.c keeps only
 * function symbols, sorted for the hot paths of symbolization; variables
 * are asked for rarely (once per shared line), so this scans the symbol
 * tables each time rather than keeping another sorted copy.
 */
#include <dwarf.h>
#include <errno.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "elfsym_priv.h"

/* The sections of one type with entries, one after the other */
struct table_iter {
	Elf *elf;
	Elf_Scn *scn;
	GElf_Shdr sh;
	Elf_Data *d;
	size_t n;     /* its entries */
};

static bool next_table(struct table_iter *t, GElf_Word type)
{
	while ((t->scn = elf_nextscn(t->elf, t->scn)))
		if (gelf_getshdr(t->scn, &t->sh) && t->sh.sh_type == type && t->sh.sh_entsize &&
		    (t->d = elf_getdata(t->scn, NULL))) {
			t->n = t->sh.sh_size / t->sh.sh_entsize;
			return true;
		}
	return false;
}

static bool scan(Elf *elf, GElf_Word type, uint64_t vaddr, char *name, size_t len,
		 uint64_t *start, uint64_t *size)
{
	struct table_iter t = { .elf = elf };
	bool found = false;

	while (next_table(&t, type)) {
		for (size_t i = 0; i < t.n; i++) {
			GElf_Sym s;
			const char *nm;

			if (!gelf_getsym(t.d, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_OBJECT ||
			    s.st_shndx == SHN_UNDEF || !s.st_size ||
			    vaddr < s.st_value || vaddr - s.st_value >= s.st_size)
				continue;
			nm = elf_strptr(elf, t.sh.sh_link, s.st_name);
			if (!nm || !*nm)
				continue;
			/* The smallest covering object: a member array inside a
			 * larger one named separately is the better name. */
			if (found && s.st_size >= *size)
				continue;
			snprintf(name, len, "%s", nm);
			*start = s.st_value;
			*size = s.st_size;
			found = true;
		}
		if (found)
			return true;
	}
	return false;
}

bool sb_elf_data_at(const struct sb_elf *e, uint64_t vaddr, char *name, size_t len,
		    uint64_t *start, uint64_t *size)
{
	Elf *elf = sb_elf_libelf(e);

	if (!elf)
		return false;
	return scan(elf, SHT_SYMTAB, vaddr, name, len, start, size) ||
	       scan(elf, SHT_DYNSYM, vaddr, name, len, start, size);
}

/* ---- thread-local variables of an executable ---- */

static bool tls_symbol(Elf *elf, GElf_Word type, const char *name, uint64_t *value)
{
	struct table_iter t = { .elf = elf };

	while (next_table(&t, type))
		for (size_t i = 0; i < t.n; i++) {
			GElf_Sym s;
			const char *nm;

			if (!gelf_getsym(t.d, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_TLS ||
			    s.st_shndx == SHN_UNDEF)
				continue;
			nm = elf_strptr(elf, t.sh.sh_link, s.st_name);
			if (nm && !strcmp(nm, name)) {
				*value = s.st_value;   /* its offset in the TLS segment */
				return true;
			}
		}
	return false;
}

/* A position-independent executable (DF_1_PIE), not a shared object
 * (libc.so.6 has an interpreter too: it runs) */
static bool is_pie(Elf *elf)
{
	struct table_iter t = { .elf = elf };
	GElf_Dyn dyn;

	while (next_table(&t, SHT_DYNAMIC))
		for (size_t i = 0; i < t.n; i++)
			if (gelf_getdyn(t.d, (int)i, &dyn) && dyn.d_tag == DT_FLAGS_1)
				return dyn.d_un.d_val & DF_1_PIE;
	return false;
}

int sb_elf_tls_offset(const struct sb_elf *e, const char *name, int64_t *off)
{
	Elf *elf = sb_elf_libelf(e);
	uint64_t value, size = 0, align = 1;
	bool exe, tls = false;
	size_t nph = 0;

	if (!elf || elf_getphdrnum(elf, &nph))
		return -ENOENT;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph))
			continue;
		if (ph.p_type == PT_TLS) {
			tls = true;
			size = ph.p_memsz;
			align = ph.p_align ? ph.p_align : 1;
			/* a segment that does not start aligned moves its
			 * block (glibc's firstbyte): not a layout we know */
			if (ph.p_vaddr & (align - 1))
				return -ENOENT;
		}
	}
	exe = !sb_elf_is_dyn(e) || is_pie(elf);
	if (!tls || !(tls_symbol(elf, SHT_SYMTAB, name, &value) ||
		      tls_symbol(elf, SHT_DYNSYM, name, &value)))
		return -ENOENT;
	if (!exe)
		return -EINVAL;
	*off = (int64_t)value - (int64_t)((size + align - 1) / align * align);
	return 0;
}

/* ---- the part of a variable some bytes are: DWARF types ---- */

static bool die_type(Dwarf_Die *d, Dwarf_Die *t)
{
	Dwarf_Attribute a;

	return dwarf_attr_integrate(d, DW_AT_type, &a) && dwarf_formref_die(&a, t) &&
	       dwarf_peel_type(t, t) == 0;
}

/* "[i]" or "[i..j]" of an array, ".m" of a struct, nested while the
 * bytes stay in one element or member. */
static void part_of(Dwarf_Die *type, uint64_t off, uint64_t len, char *buf, size_t buflen,
		    int depth)
{
	Dwarf_Die t = *type, m, et;
	Dwarf_Word esize;
	size_t used = strlen(buf);

	if (depth > 4 || used + 24 >= buflen)
		return;
	if (dwarf_tag(&t) == DW_TAG_array_type) {
		if (!die_type(&t, &et) || dwarf_aggregate_size(&et, &esize) || !esize)
			return;
		if (off / esize == (off + len - 1) / esize) {
			snprintf(buf + used, buflen - used, "[%" PRIu64 "]", off / esize);
			part_of(&et, off % esize, len, buf, buflen, depth + 1);
		} else {
			snprintf(buf + used, buflen - used, "[%" PRIu64 "..%" PRIu64 "]", off / esize,
				 (off + len - 1) / esize);
		}
		return;
	}
	if (dwarf_tag(&t) != DW_TAG_structure_type && dwarf_tag(&t) != DW_TAG_union_type)
		return;
	if (dwarf_child(&t, &m))
		return;
	do {
		Dwarf_Attribute a;
		Dwarf_Word at = 0, msize;
		Dwarf_Die mt;
		const char *nm = dwarf_diename(&m);

		if (dwarf_tag(&m) != DW_TAG_member || !nm || !die_type(&m, &mt) ||
		    dwarf_aggregate_size(&mt, &msize))
			continue;
		if (dwarf_attr(&m, DW_AT_data_member_location, &a) && dwarf_formudata(&a, &at))
			continue;   /* a location expression: not a plain offset */
		if (off >= at && off < at + msize) {
			snprintf(buf + used, buflen - used, ".%s%s", nm,
				 off + len > at + msize ? ".." : "");
			if (off + len <= at + msize)
				part_of(&mt, off - at, len, buf, buflen, depth + 1);
			return;
		}
	} while (dwarf_siblingof(&m, &m) == 0);
}

/* The address a one-operation location names: DW_OP_addr, or DWARF 5's
 * DW_OP_addrx (clang's default), an index into .debug_addr. */
static bool op_addr(Dwarf_Attribute *a, Dwarf_Op *op, uint64_t *addr)
{
	Dwarf_Attribute r;
	Dwarf_Addr v;

	if (op->atom == DW_OP_addr) {
		*addr = op->number;
		return true;
	}
	if ((op->atom == DW_OP_addrx || op->atom == DW_OP_GNU_addr_index) &&
	    dwarf_getlocation_attr(a, op, &r) == 0 && dwarf_formaddr(&r, &v) == 0) {
		*addr = v;
		return true;
	}
	return false;
}

/* A variable DIE at the address start, among d's children (and one level
 * of functions' children: statics inside functions). */
static bool find_var(Dwarf_Die *d, uint64_t start, Dwarf_Die *out, int depth)
{
	Dwarf_Die c;

	if (dwarf_child(d, &c))
		return false;
	do {
		int tag = dwarf_tag(&c);
		Dwarf_Attribute a;
		Dwarf_Op *ops;
		size_t nops;
		uint64_t at;

		if (tag == DW_TAG_variable && dwarf_attr(&c, DW_AT_location, &a) &&
		    dwarf_getlocation(&a, &ops, &nops) == 0 && nops == 1 &&
		    op_addr(&a, &ops[0], &at) && at == start) {
			*out = c;
			return true;
		}
		if (tag == DW_TAG_subprogram && depth == 0 && find_var(&c, start, out, 1))
			return true;
	} while (dwarf_siblingof(&c, &c) == 0);
	return false;
}

bool sb_elf_data_part(struct sb_elf *e, uint64_t start, uint64_t off, uint64_t len, char *buf,
		      size_t buflen)
{
	Dwarf *dw = sb_elf_dwarf(e);
	Dwarf_Off cuoff = 0, next;
	size_t hsize;
	Dwarf_Die cu, var, type;

	if (!buflen)
		return false;
	buf[0] = 0;
	if (!dw || !len)
		return false;
	while (dwarf_nextcu(dw, cuoff, &next, &hsize, NULL, NULL, NULL) == 0) {
		if (dwarf_offdie(dw, cuoff + hsize, &cu) && find_var(&cu, start, &var, 0)) {
			if (die_type(&var, &type))
				part_of(&type, off, len, buf, buflen, 0);
			return buf[0] != 0;
		}
		cuoff = next;
	}
	return false;
}
