/* SPDX-License-Identifier: MIT */
/*
 * Private to elfsym.c and elfinsn.c.  elfsym.c owns struct sb_elf (the
 * libelf handle, symbols, segments) and lends the handle; elfinsn.c owns
 * the instruction decoder state (capstone handle, call-target caches),
 * which sb_elf_open() and sb_elf_close() create and free through these
 * hooks.  Neither file sees the other's struct layout.
 */
#ifndef SB_ELFSYM_PRIV_H
#define SB_ELFSYM_PRIV_H

#include <libelf.h>

#include "elfsym.h"

struct sb_insn;

/* Decoder state for a binary of that e_machine: NULL when it is not
 * x86-64 or capstone cannot start (callers then use their fallbacks). */
struct sb_insn *sb_insn_open(unsigned machine);
void sb_insn_close(struct sb_insn *x);

/* Accessors into struct sb_elf, for elfinsn.c. */
Elf *sb_elf_libelf(const struct sb_elf *e);
struct sb_insn *sb_elf_insn(const struct sb_elf *e);

#endif
