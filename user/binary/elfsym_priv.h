/* SPDX-License-Identifier: MIT */
/*
 * Private to elfsym.c, elfinsn.c, elfopen.c, elfdebug.c, elfline.c and unwind.c (which
 * reads the libelf handle for the CFI).  elfsym.c owns struct
 * sb_elf (the libelf handle, symbols, segments) and lends the handle;
 * elfinsn.c owns the instruction decoder state (capstone handle,
 * call-target caches) and reads code and symbols through elfsym.h.
 * elfopen.c is sb_elf_open()/sb_elf_close(): it loads the binary, then
 * attaches the decoder, so calls go one way (elfopen -> elfinsn ->
 * elfsym) and neither of the two sees the other's struct layout.
 */
#ifndef SB_ELFSYM_PRIV_H
#define SB_ELFSYM_PRIV_H

#include <elfutils/libdw.h>
#include <libelf.h>
#include <stdbool.h>

#include "elfsym.h"

struct sb_insn;

/* elfsym.c: the binary without a decoder; *machine is its e_machine.
 * NULL on failure, with the message of sb_elf_open() in err. */
struct sb_elf *sb_elf_load(const char *path, unsigned *machine, char *err, size_t errlen);
/* The same from fd, an open regular file that becomes the sb_elf's
 * (closed with it, or on failure); path names it (messages, debuglink). */
struct sb_elf *sb_elf_load_fd(int fd, const char *path, unsigned *machine, char *err,
			      size_t errlen);
/* Frees what sb_elf_load() made (not the decoder). */
void sb_elf_unload(struct sb_elf *e);

/* elfinsn.c: decoder state for a binary of that e_machine: NULL when it
 * is not x86-64 or capstone cannot start (callers then use their
 * fallbacks). */
struct sb_insn *sb_insn_open(unsigned machine);
void sb_insn_close(struct sb_insn *x);

/* elfsym.c: the compile unit of the binary's DWARF (or its debug file's)
 * that covers vaddr, opening the DWARF on first use; false when none. */
bool sb_elf_cu_at(struct sb_elf *e, uint64_t vaddr, Dwarf_Die *cu);
/* elfsym.c: the binary's (or its debug file's) DWARF, opened on first
 * use; NULL without. */
Dwarf *sb_elf_dwarf(struct sb_elf *e);

/* Largest binary or debug file opened (fileopen.h): well above any real
 * one, it only stops a huge or endless file from being mapped. */
#define SB_ELF_MAX_SIZE (16ULL << 30)
#define SB_DEBUG_MAX_SIZE SB_ELF_MAX_SIZE

/* elfdebug.c: the binary's separate debug file (by build ID, then
 * .gnu_debuglink), opened (a regular file, CRC checked unless it is
 * hint's, elfsym.h): its fd, its path in out; -ENOENT when there is none. */
int sb_elf_debug_open(Elf *elf, const char *path, const char *build_id,
		      const struct sb_elf_debug_hint *hint, char *out, size_t len);

/* Accessors into struct sb_elf, for elfinsn.c and elfopen.c. */
Elf *sb_elf_libelf(const struct sb_elf *e);
struct sb_insn *sb_elf_insn(const struct sb_elf *e);
void sb_elf_set_insn(struct sb_elf *e, struct sb_insn *x);

#endif
