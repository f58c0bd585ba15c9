/* SPDX-License-Identifier: MIT */
/*
 * ELF and DWARF access for one binary: symbols (.symtab, then .dynsym),
 * address <-> file offset, build-id, and source lines through libdw.
 * Addresses here are the binary's own virtual addresses (st_value space);
 * procmaps.h converts runtime addresses to them.
 */
#ifndef SB_ELFSYM_H
#define SB_ELFSYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sb_elf;

/* NULL on failure, with a message in err ("cannot open ...", "not an ELF file"). */
struct sb_elf *sb_elf_open(const char *path, char *err, size_t errlen);
/* The same from fd, an open regular file (fileopen.h) it takes over (closed
 * with the sb_elf, or now on failure); path names it in messages and is
 * where its .gnu_debuglink is looked for. */
struct sb_elf *sb_elf_open_fd(int fd, const char *path, char *err, size_t errlen);
void sb_elf_close(struct sb_elf *e);

const char *sb_elf_path(const struct sb_elf *e);
/* Lowercase hex of NT_GNU_BUILD_ID, NULL when absent. */
const char *sb_elf_build_id(const struct sb_elf *e);
/* True when the file has a .symtab. */
bool sb_elf_has_symtab(const struct sb_elf *e);
/* True when the file has DWARF line information (.debug_line). */
bool sb_elf_has_debuginfo(const struct sb_elf *e);
/* True when source lines can be read: the file's own DWARF or a separate
 * debug file's (opens the DWARF). */
bool sb_elf_has_lines(struct sb_elf *e);
/* The separate debug file whose DWARF is used (by build ID under
 * /usr/lib/debug/.build-id/, or .gnu_debuglink), NULL when none is. */
const char *sb_elf_debug_file(struct sb_elf *e);

struct stat;
/* A debug file known to match the binary (symcache.h: the one an entry
 * was made from) and its identity then.  A .gnu_debuglink candidate at
 * that path whose open file still has that identity is taken without
 * being read whole for the link's CRC: it is the file checked before. */
struct sb_elf_debug_hint {
	const char *path;
	uint64_t size, mtime_ns, dev, ino;
};
/* The separate debug file the binary's lines would come from (the one
 * sb_elf_debug_file() names once its DWARF is open), without opening its
 * DWARF: looked for on the first call (hint may be NULL) and kept open
 * for the DWARF; st, when not NULL, gets that open file's fstat.  NULL
 * when there is none (or the binary has DWARF of its own: then it is not
 * used, but may still be found). */
const char *sb_elf_debug_find(struct sb_elf *e, const struct sb_elf_debug_hint *hint,
			      struct stat *st);
/* ET_DYN (PIE or shared object) versus ET_EXEC. */
bool sb_elf_is_dyn(const struct sb_elf *e);

/*
 * A function symbol by exact name.  Versioned .dynsym entries
 * ("omp_set_lock@@OMP_3.0", "pthread_cond_wait@GLIBC_2.2.5" as libelf
 * shows them through the version sections) match the bare name; the
 * default version (@@) wins over older ones.  Returns 0, or -1 if absent.
 */
int sb_elf_func_by_name(const struct sb_elf *e, const char *name,
			uint64_t *vaddr, uint64_t *size);

/* True when .dynsym has an undefined (imported) symbol of that name. */
bool sb_elf_imports(const struct sb_elf *e, const char *name);

/* Calls cb for every function symbol (STT_FUNC/STT_GNU_IFUNC, size > 0)
 * whose name contains substr; each address once.  Returns the count. */
typedef void (*sb_elf_func_cb)(const char *name, uint64_t vaddr, uint64_t size, void *arg);
int sb_elf_funcs_matching(const struct sb_elf *e, const char *substr,
			  sb_elf_func_cb cb, void *arg);

/* elfdata.c: the data object (STT_OBJECT, .symtab then .dynsym) whose
 * [start, start + size) holds vaddr, the smallest when several do: its
 * name into name; false when none does. */
bool sb_elf_data_at(const struct sb_elf *e, uint64_t vaddr, char *name, size_t len,
		    uint64_t *start, uint64_t *size);

/* elfdata.c: where the thread-local variable `name` of an executable
 * lies from a thread's thread pointer (x86-64's fs base), in every
 * thread: the executable's TLS block is the first of the static ones,
 * right below the thread pointer (TLS variant II), at a distance of its
 * size rounded up to its alignment.  -ENOENT without such a variable or
 * TLS segment, -EINVAL for a shared object (its block is placed at load
 * time). */
int sb_elf_tls_offset(const struct sb_elf *e, const char *name, int64_t *off);

/* elfdata.c: which part of the variable at start bytes [off, off + len)
 * of it are, from its DWARF type: "[3]", "[0..3]", ".count", "[2].x";
 * false (buf "") when the debug info does not say. */
bool sb_elf_data_part(struct sb_elf *e, uint64_t start, uint64_t off, uint64_t len, char *buf,
		      size_t buflen);

/* The function symbol whose [start, start+size) holds vaddr, or NULL.
 * Symbols of size 0 never match. */
const char *sb_elf_func_at(const struct sb_elf *e, uint64_t vaddr, uint64_t *start);

/* PT_LOAD translation.  Return 0, or -1 when no segment covers the value. */
int sb_elf_vaddr_to_offset(const struct sb_elf *e, uint64_t vaddr, uint64_t *off);
int sb_elf_offset_to_vaddr(const struct sb_elf *e, uint64_t off, uint64_t *vaddr);

/* Copies up to len file bytes at vaddr; returns the number copied (0 when
 * vaddr is not backed by file bytes). */
size_t sb_elf_read(const struct sb_elf *e, uint64_t vaddr, void *buf, size_t len);

/* True when the bytes just before ret_vaddr encode a call instruction,
 * i.e. ret_vaddr is a plausible return address. */
bool sb_elf_is_return_address(const struct sb_elf *e, uint64_t ret_vaddr);

/*
 * The name of the function that the call instruction ending at ret_vaddr
 * calls, following a PLT stub to its .rela.plt / .rela.dyn symbol
 * ("GOMP_critical_start"), or a direct call to a local symbol.  NULL when
 * unknown (indirect call through a register, no symbol).
 *
 * Handles call rel32 into .plt, .plt.sec (IBT) and .plt.got stubs, the
 * -fno-plt form call *slot(%rip) (GLOB_DAT / JUMP_SLOT slots), and direct
 * calls to a function symbol's entry.  Names are bare (no "@VERSION").
 * The slot table is built on the first call (not thread-safe); returned
 * strings live until sb_elf_close().
 */
const char *sb_elf_callee_at(const struct sb_elf *e, uint64_t ret_vaddr);

/* The entry vaddr of the function in this binary that the call ending at
 * ret_vaddr enters directly (call rel32 to a function symbol's entry, not
 * through a PLT stub); 0 otherwise. */
uint64_t sb_elf_direct_callee_at(const struct sb_elf *e, uint64_t ret_vaddr);

/*
 * A tail call: the vaddr of the one jmp in the function that starts at
 * func_vaddr that leaves it for callee (named as by sb_elf_callee_at).
 * 0 when there is none, more than one, or the function cannot be decoded
 * whole: only a unique jump proves where the call was made.
 */
uint64_t sb_elf_tail_jump_to(const struct sb_elf *e, uint64_t func_vaddr, const char *callee);

/* Every call instruction of the function at [start, start + size), in
 * address order: where it is, where it returns to, what it calls (as
 * sb_elf_callee_at names it; NULL unknown).  The count, or -1 when the
 * function cannot be decoded whole. */
typedef void (*sb_elf_call_cb)(uint64_t vaddr, uint64_t ret_vaddr, const char *callee,
			       void *arg);
int sb_elf_calls_in(const struct sb_elf *e, uint64_t start, uint64_t size,
		    sb_elf_call_cb cb, void *arg);

/*
 * Source location through libdw: the innermost (inlined) frame's file and
 * line, and the name of the function that contains it (DWARF name, falling
 * back to the symbol).  Strings stay valid until sb_elf_close().  Returns
 * 0 when a line was found, -1 otherwise (func may still be set).
 */
int sb_elf_srcline(struct sb_elf *e, uint64_t vaddr,
		   const char **file, unsigned *line, const char **func);

/*
 * A statement line at vaddr with no code of its own there: the first
 * line-table row at vaddr, a statement start, whose line another row at
 * the same address supersedes (sb_elf_srcline reports that last one).
 * gcc leaves such rows where it hoisted a statement out of copies of a
 * loop (`if (me == 0)` unswitched: the test carries the loop's line, and
 * each copy keeps an empty row of the `if`).  0 when there is none.
 */
unsigned sb_elf_ghost_line(struct sb_elf *e, uint64_t vaddr);

/*
 * Where to place an entry uprobe on the function at vaddr so that it is
 * cheap: the kernel emulates push/jmp/jcc/call/1-byte nop but
 * single-steps most others (~6 us here).  Walks the first instructions
 * (after endbr64) while the stack pointer is untouched, so a uretprobe at
 * the chosen site still finds the return address at [rsp], and, with
 * keep_args, while no argument register is overwritten (for probes that
 * read arguments).  Returns the chosen vaddr (the function start or +4
 * after endbr64 when nothing better is reachable) and sets *emulated to
 * whether the kernel will emulate it.
 */
uint64_t sb_elf_probe_site(const struct sb_elf *e, uint64_t vaddr,
			   uint64_t size, bool keep_args, bool *emulated);

#endif
