// SPDX-License-Identifier: MIT
/*
 * elfopen.c - sb_elf_open()/sb_elf_close(): the binary from elfsym.c
 * plus, for x86-64, the instruction decoder from elfinsn.c.  Living
 * above both keeps elfsym.c from calling back into elfinsn.c.
 */
#include "elfsym_priv.h"

struct sb_elf *sb_elf_open(const char *path, char *err, size_t errlen)
{
	unsigned machine = 0;
	struct sb_elf *e = sb_elf_load(path, &machine, err, errlen);

	/* Only x86-64 code is decoded; other machines get the fallbacks. */
	if (e)
		sb_elf_set_insn(e, sb_insn_open(machine));
	return e;
}

struct sb_elf *sb_elf_open_fd(int fd, const char *path, char *err, size_t errlen)
{
	unsigned machine = 0;
	struct sb_elf *e = sb_elf_load_fd(fd, path, &machine, err, errlen);

	if (e)
		sb_elf_set_insn(e, sb_insn_open(machine));
	return e;
}

void sb_elf_close(struct sb_elf *e)
{
	if (!e)
		return;
	sb_insn_close(sb_elf_insn(e));
	sb_elf_unload(e);
}
