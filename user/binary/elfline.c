// SPDX-License-Identifier: MIT
/*
 * Line-table rows beyond sb_elf_srcline's one line per address
 * (elfsym.h): the empty statement rows a compiler leaves at an address.
 */
#include "elfsym_priv.h"

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <string.h>

unsigned sb_elf_ghost_line(struct sb_elf *e, uint64_t vaddr)
{
	Dwarf_Lines *lines;
	size_t n, lo = 0, hi;
	unsigned first = 0, last = 0;
	const char *ffile = NULL, *lfile = NULL;
	bool stmt = false;
	Dwarf_Die cu;

	if (!sb_elf_cu_at(e, vaddr, &cu) || dwarf_getsrclines(&cu, &lines, &n) || !n)
		return 0;
	/* rows are sorted by address: the first at vaddr by bisection */
	hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		Dwarf_Addr a = 0;

		dwarf_lineaddr(dwarf_onesrcline(lines, mid), &a);
		if (a < vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < n; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Addr a = 0;
		bool end = false;
		int lno = 0;

		if (dwarf_lineaddr(l, &a) || a != vaddr)
			break;
		/* the end of a sequence that stops where this one starts */
		if (!dwarf_lineendsequence(l, &end) && end)
			continue;
		if (dwarf_lineno(l, &lno) || lno <= 0)
			break;
		if (!first) {
			first = (unsigned)lno;
			ffile = dwarf_linesrc(l, NULL, NULL);
			dwarf_linebeginstatement(l, &stmt);
		}
		last = (unsigned)lno;
		lfile = dwarf_linesrc(l, NULL, NULL);
	}
	/* one file: an inlined callee's rows share its call's address */
	if (!ffile || !lfile || strcmp(ffile, lfile))
		return 0;
	return stmt && first != last ? first : 0;
}
