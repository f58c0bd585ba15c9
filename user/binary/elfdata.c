// SPDX-License-Identifier: MIT
/*
 * Data symbols: which global or static variable holds a binary vaddr, for
 * naming shared cache lines (analysis/coherence/).  elfsym.c keeps only
 * function symbols, sorted for the hot paths of symbolization; variables
 * are asked for rarely (once per shared line), so this scans the symbol
 * tables each time rather than keeping another sorted copy.
 */
#include <gelf.h>
#include <stdio.h>
#include <string.h>

#include "elfsym_priv.h"

static bool scan(Elf *elf, GElf_Word type, uint64_t vaddr, char *name, size_t len,
		 uint64_t *start, uint64_t *size)
{
	Elf_Scn *scn = NULL;
	bool found = false;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym s;
			const char *nm;

			if (!gelf_getsym(d, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_OBJECT ||
			    s.st_shndx == SHN_UNDEF || !s.st_size ||
			    vaddr < s.st_value || vaddr - s.st_value >= s.st_size)
				continue;
			nm = elf_strptr(elf, sh.sh_link, s.st_name);
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
