// SPDX-License-Identifier: MIT
/*
 * elfsym.c - one binary's symbols, segments, build-id and source lines
 * (libelf + libdw).  Instruction-level checks are in elfinsn.c, which
 * calls down into this file; elfopen.c puts the two together.
 */
#include "elfsym_priv.h"
#include "fileopen.h"

#include "util/search.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct sym {
	uint64_t start, size;
	const char *name;       /* bare name, without "@VERSION" */
	const char *ver;        /* version name, or NULL */
	unsigned char bind;
	bool hidden;            /* non-default version (name@VER) */
	bool owned;             /* name was split out of "name@VER": free it */
};

struct seg { uint64_t vaddr, memsz, off, filesz; };

struct sb_elf {
	char *path, *build_id;
	char *dbg_path;         /* the separate debug file found, or NULL */
	int fd, dbg_fd;         /* dbg_fd: that file, open, or -1 */
	Elf *elf, *dbg_elf;
	const uint8_t *raw;     /* whole file, mmapped by libelf */
	size_t rawsize;
	bool dyn, has_symtab, has_debug, dw_tried;
	bool dbg_tried;         /* looked for the debug file (once: its CRC) */
	bool dbg_used;          /* dw is the debug file's */
	struct seg *segs;
	size_t nsegs;
	struct sym *syms;       /* sorted by start, best alias first */
	size_t nsyms;
	struct sb_insn *insn;   /* decoder (elfinsn.c, set by elfopen.c), or NULL */
	Dwarf *dw;              /* opened on the first sb_elf_srcline() */
};

static int sym_rank(const struct sym *s)
{
	return (s->size > 0) * 8 + (s->bind != STB_LOCAL) * 4 +
	       (s->name[0] != '_') * 2 + !s->hidden;
}

/* Sort by address; among aliases the preferred name comes first. */
static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (sym_rank(x) != sym_rank(y))
		return sym_rank(y) - sym_rank(x);
	return strcmp(x->name, y->name);
}

/* .symtab spells versions into the name ("f@V", "f@@V"): split it so
 * lookups by bare name work the same as for .dynsym. */
static int split_versioned(struct sym *s)
{
	const char *at = strchr(s->name, '@');
	char *copy;

	if (!at || at == s->name)
		return 0;
	if (!(copy = strdup(s->name)))
		return -1;
	copy[at - s->name] = '\0';
	s->hidden = at[1] != '@';
	s->ver = copy + (at - s->name) + (s->hidden ? 1 : 2);
	s->name = copy;
	s->owned = true;
	return 0;
}

/* Version index -> name, from SHT_GNU_verdef; NULL where unknown. */
static const char **read_verdefs(Elf *elf, Elf_Scn *scn, size_t *n)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	const char **names;
	size_t off = 0;
	GElf_Shdr sh;

	if (!gelf_getshdr(scn, &sh) || !d)
		return NULL;
	*n = sh.sh_info + 2;
	if (!(names = calloc(*n, sizeof(*names))))
		return NULL;
	for (unsigned i = 0; i < sh.sh_info; i++) {
		GElf_Verdef vd;
		GElf_Verdaux va;

		if (!gelf_getverdef(d, off, &vd) ||
		    !gelf_getverdaux(d, off + vd.vd_aux, &va))
			break;
		if (vd.vd_ndx < *n)
			names[vd.vd_ndx] = elf_strptr(elf, sh.sh_link, va.vda_name);
		if (!vd.vd_next)
			break;
		off += vd.vd_next;
	}
	return names;
}

/* First section of a type (and sh_link, unless link is -1). */
static Elf_Scn *find_scn(Elf *elf, GElf_Word type, GElf_Word link, size_t *nent)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == type &&
		    (link == (GElf_Word)-1 || sh.sh_link == link)) {
			if (nent)
				*nent = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
			return scn;
		}
	return NULL;
}

/* Appends the defined function symbols of a symbol table; e->syms has
 * room for all entries.  .dynsym versions come from .gnu.version (bit
 * 15 = hidden old version "@") and .gnu.version_d (the names). */
static int load_syms(struct sb_elf *e, Elf_Scn *scn, size_t n)
{
	Elf_Data *d = elf_getdata(scn, NULL), *vsd = NULL;
	const char **vnames = NULL;
	size_t nv = 0;
	GElf_Shdr sh;
	int ret = 0;

	if (!gelf_getshdr(scn, &sh) || !d)
		return 0;
	if (sh.sh_type == SHT_DYNSYM) {
		Elf_Scn *vs = find_scn(e->elf, SHT_GNU_versym, elf_ndxscn(scn), NULL);
		Elf_Scn *vdef = find_scn(e->elf, SHT_GNU_verdef, (GElf_Word)-1, NULL);

		vsd = vs ? elf_getdata(vs, NULL) : NULL;
		vnames = vdef ? read_verdefs(e->elf, vdef, &nv) : NULL;
	}
	for (size_t i = 1; i < n && ret == 0; i++) {
		struct sym s = { 0 };
		GElf_Versym v;
		GElf_Sym gs;

		if (!gelf_getsym(d, i, &gs) || gs.st_shndx == SHN_UNDEF ||
		    (GELF_ST_TYPE(gs.st_info) != STT_FUNC &&
		     GELF_ST_TYPE(gs.st_info) != STT_GNU_IFUNC))
			continue;
		s.name = elf_strptr(e->elf, sh.sh_link, gs.st_name);
		if (!s.name || !s.name[0])
			continue;
		s.start = gs.st_value;
		s.size = gs.st_size;
		s.bind = GELF_ST_BIND(gs.st_info);
		if (vsd && gelf_getversym(vsd, i, &v)) {
			s.hidden = v & 0x8000;
			if ((v & 0x7fff) < nv)
				s.ver = vnames[v & 0x7fff];
		}
		ret = split_versioned(&s);
		if (ret == 0)
			e->syms[e->nsyms++] = s;
	}
	free(vnames);
	return ret;
}

static int load_all_syms(struct sb_elf *e)
{
	size_t ns = 0, nd = 0;
	Elf_Scn *st = find_scn(e->elf, SHT_SYMTAB, (GElf_Word)-1, &ns);
	Elf_Scn *dy = find_scn(e->elf, SHT_DYNSYM, (GElf_Word)-1, &nd);

	e->has_symtab = st != NULL;
	if (!(e->syms = calloc(ns + nd + 1, sizeof(*e->syms))))
		return -1;
	if ((st && load_syms(e, st, ns)) || (dy && load_syms(e, dy, nd)))
		return -1;
	qsort(e->syms, e->nsyms, sizeof(*e->syms), sym_cmp);
	return 0;
}

static int load_segs(struct sb_elf *e)
{
	size_t n;

	if (elf_getphdrnum(e->elf, &n) || !(e->segs = calloc(n + 1, sizeof(*e->segs))))
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e->elf, i, &ph) && ph.p_type == PT_LOAD)
			e->segs[e->nsegs++] = (struct seg){ ph.p_vaddr, ph.p_memsz,
							    ph.p_offset, ph.p_filesz };
	}
	return 0;
}

static bool has_section(Elf *elf, const char *a, const char *b)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *nm;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		nm = elf_strptr(elf, shstrndx, sh.sh_name);
		if (nm && (!strcmp(nm, a) || !strcmp(nm, b)))
			return true;
	}
	return false;
}

static int load_build_id(struct sb_elf *e)
{
	const void *p;
	ssize_t n = dwelf_elf_gnu_build_id(e->elf, &p);

	if (n <= 0)
		return 0;
	if (!(e->build_id = malloc(2 * n + 1)))
		return -1;
	for (ssize_t i = 0; i < n; i++)
		sprintf(e->build_id + 2 * i, "%02x", ((const uint8_t *)p)[i]);
	return 0;
}

struct sb_elf *sb_elf_load(const char *path, unsigned *machine, char *err, size_t errlen)
{
	/* Not a plain open(): a path leading to a FIFO or a device would
	 * block or never end (fileopen.h). */
	int fd = sb_open_regular(path, SB_ELF_MAX_SIZE, err, errlen);

	if (fd < 0)
		return NULL;
	return sb_elf_load_fd(fd, path, machine, err, errlen);
}

struct sb_elf *sb_elf_load_fd(int fd, const char *path, unsigned *machine, char *err,
			      size_t errlen)
{
	struct sb_elf *e = calloc(1, sizeof(*e));
	GElf_Ehdr eh;

	if (!e || !(e->path = strdup(path))) {
		snprintf(err, errlen, "out of memory");
		free(e);
		close(fd);
		return NULL;
	}
	e->dbg_fd = -1;
	e->fd = fd;
	elf_version(EV_CURRENT);
	e->elf = elf_begin(e->fd, ELF_C_READ_MMAP, NULL);
	if (!e->elf || elf_kind(e->elf) != ELF_K_ELF || !gelf_getehdr(e->elf, &eh)) {
		snprintf(err, errlen, "%s: not an ELF file", path);
		goto fail;
	}
	e->raw = (const uint8_t *)elf_rawfile(e->elf, &e->rawsize);
	e->dyn = eh.e_type == ET_DYN;
	e->has_debug = has_section(e->elf, ".debug_line", ".zdebug_line");
	if (load_segs(e) || load_all_syms(e) || load_build_id(e)) {
		snprintf(err, errlen, "%s: cannot read ELF: %s", path, elf_errmsg(-1));
		goto fail;
	}
	*machine = eh.e_machine;
	return e;
fail:
	sb_elf_unload(e);
	return NULL;
}

void sb_elf_unload(struct sb_elf *e)
{
	if (!e)
		return;
	if (e->dw)
		dwarf_end(e->dw);
	if (e->dbg_elf)
		elf_end(e->dbg_elf);
	if (e->dbg_fd >= 0)
		close(e->dbg_fd);
	if (e->elf)
		elf_end(e->elf);
	if (e->fd >= 0)
		close(e->fd);
	for (size_t i = 0; i < e->nsyms; i++)
		if (e->syms[i].owned)
			free((char *)e->syms[i].name);
	free(e->syms);
	free(e->segs);
	free(e->build_id);
	free(e->dbg_path);
	free(e->path);
	free(e);
}

const char *sb_elf_path(const struct sb_elf *e) { return e->path; }
const char *sb_elf_build_id(const struct sb_elf *e) { return e->build_id; }
bool sb_elf_has_symtab(const struct sb_elf *e) { return e->has_symtab; }
bool sb_elf_has_debuginfo(const struct sb_elf *e) { return e->has_debug; }
bool sb_elf_is_dyn(const struct sb_elf *e) { return e->dyn; }
Elf *sb_elf_libelf(const struct sb_elf *e) { return e->elf; }
struct sb_insn *sb_elf_insn(const struct sb_elf *e) { return e->insn; }
void sb_elf_set_insn(struct sb_elf *e, struct sb_insn *x) { e->insn = x; }

int sb_elf_func_by_name(const struct sb_elf *e, const char *name,
			uint64_t *vaddr, uint64_t *size)
{
	/* "f@V" / "f@@V" select one version; a bare name prefers @@. */
	const char *at = strchr(name, '@');
	size_t len = at ? (size_t)(at - name) : strlen(name);
	const char *want = at ? at + 1 + (at[1] == '@') : NULL;
	const struct sym *best = NULL;

	for (size_t i = 0; i < e->nsyms; i++) {
		const struct sym *s = &e->syms[i];

		if (strncmp(s->name, name, len) || s->name[len] ||
		    (want && (!s->ver || strcmp(s->ver, want))))
			continue;
		if (!best || (!s->hidden && best->hidden) ||
		    (s->hidden == best->hidden && s->size && !best->size))
			best = s;
	}
	if (!best)
		return -1;
	if (vaddr)
		*vaddr = best->start;
	if (size)
		*size = best->size;
	return 0;
}

bool sb_elf_imports(const struct sb_elf *e, const char *name)
{
	size_t n = 0, len = strcspn(name, "@");
	Elf_Scn *scn = find_scn(e->elf, SHT_DYNSYM, (GElf_Word)-1, &n);
	Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
	GElf_Shdr sh;

	if (!d || !gelf_getshdr(scn, &sh))
		return false;
	for (size_t i = 1; i < n; i++) {
		const char *s;
		GElf_Sym gs;

		/* any version: "name" and "name@VER" both count */
		if (gelf_getsym(d, i, &gs) && gs.st_shndx == SHN_UNDEF &&
		    (s = elf_strptr(e->elf, sh.sh_link, gs.st_name)) &&
		    !strncmp(s, name, len) && (!s[len] || s[len] == '@'))
			return true;
	}
	return false;
}

int sb_elf_funcs_matching(const struct sb_elf *e, const char *substr,
			  sb_elf_func_cb cb, void *arg)
{
	const struct sym *last = NULL;
	int count = 0;

	for (size_t i = 0; i < e->nsyms; i++) {
		const struct sym *s = &e->syms[i];

		/* aliases are adjacent, so "each address once" is a compare */
		if (!s->size || (last && s->start == last->start) ||
		    !strstr(s->name, substr))
			continue;
		if (cb)
			cb(s->name, s->start, s->size, arg);
		last = s;
		count++;
	}
	return count;
}

const char *sb_elf_func_at(const struct sb_elf *e, uint64_t vaddr, uint64_t *start)
{
	const struct sym *hit = NULL;
	size_t hi = SB_SEARCH_STARTS(e->syms, e->nsyms, start, vaddr);

	/* Walk back a little: a nested or zero-sized symbol may sit between
	 * vaddr and the function covering it.  Aliases are sorted best
	 * first, so the last hit at the nearest covering start is best. */
	for (size_t i = hi; i > 0 && hi - i < 64; i--) {
		const struct sym *s = &e->syms[i - 1];

		if (hit && s->start != hit->start)
			break;
		if (s->size && vaddr - s->start < s->size)
			hit = s;
	}
	if (hit && start)
		*start = hit->start;
	return hit ? hit->name : NULL;
}

/* PT_LOAD lookup in either direction: the file-backed part first, the
 * zero-filled tail only as a fallback. */
static int seg_xlate(const struct sb_elf *e, uint64_t x, bool from_vaddr, uint64_t *out)
{
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < e->nsegs; i++) {
			const struct seg *s = &e->segs[i];
			uint64_t a = from_vaddr ? s->vaddr : s->off;

			if (x >= a && x - a < (pass ? s->memsz : s->filesz)) {
				*out = (from_vaddr ? s->off : s->vaddr) + (x - a);
				return 0;
			}
		}
	return -1;
}

int sb_elf_vaddr_to_offset(const struct sb_elf *e, uint64_t vaddr, uint64_t *off)
{
	return seg_xlate(e, vaddr, true, off);
}

int sb_elf_offset_to_vaddr(const struct sb_elf *e, uint64_t off, uint64_t *vaddr)
{
	return seg_xlate(e, off, false, vaddr);
}

size_t sb_elf_read(const struct sb_elf *e, uint64_t vaddr, void *buf, size_t len)
{
	for (size_t i = 0; i < e->nsegs; i++) {
		const struct seg *s = &e->segs[i];
		uint64_t off = s->off + (vaddr - s->vaddr), avail;

		if (vaddr < s->vaddr || vaddr - s->vaddr >= s->filesz)
			continue;
		if (!e->raw || off >= e->rawsize)
			return 0;
		avail = s->filesz - (vaddr - s->vaddr);
		if (avail > e->rawsize - off)
			avail = e->rawsize - off;
		if (len > avail)
			len = avail;
		memcpy(buf, e->raw + off, len);
		return len;
	}
	return 0;
}

/* ---- DWARF ---- */

/* The separate debug file, looked for once: finding one by
 * .gnu_debuglink reads it whole for its CRC, which neither the symcache's
 * check (symbolize.c) nor the DWARF opened after it repeats. */
static void find_debug(struct sb_elf *e, const struct sb_elf_debug_hint *hint)
{
	char p[4096];

	if (e->dbg_tried)
		return;
	e->dbg_tried = true;
	e->dbg_fd = sb_elf_debug_open(e->elf, e->path, e->build_id, hint, p, sizeof(p));
	if (e->dbg_fd < 0) {
		e->dbg_fd = -1;
		return;
	}
	if (!(e->dbg_path = strdup(p))) {   /* ENOMEM: as if there were none */
		close(e->dbg_fd);
		e->dbg_fd = -1;
	}
}

const char *sb_elf_debug_find(struct sb_elf *e, const struct sb_elf_debug_hint *hint,
			      struct stat *st)
{
	find_debug(e, hint);
	if (e->dbg_fd >= 0 && st && fstat(e->dbg_fd, st))
		return NULL;
	return e->dbg_path;
}

/* The binary's DWARF, or that of its separate debug file (elfdebug.c),
 * which shares the binary's addresses. */
static void open_dwarf(struct sb_elf *e)
{
	e->dw_tried = true;
	if (e->has_debug)
		e->dw = dwarf_begin_elf(e->elf, DWARF_C_READ, NULL);
	if (e->dw)
		return;
	find_debug(e, NULL);
	if (e->dbg_fd >= 0 && (e->dbg_elf = elf_begin(e->dbg_fd, ELF_C_READ_MMAP, NULL)))
		e->dw = dwarf_begin_elf(e->dbg_elf, DWARF_C_READ, NULL);
	e->dbg_used = e->dw != NULL;
}

Dwarf *sb_elf_dwarf(struct sb_elf *e)
{
	if (!e->dw_tried)
		open_dwarf(e);
	return e->dw;
}

const char *sb_elf_debug_file(struct sb_elf *e)
{
	if (!e->dw_tried)
		open_dwarf(e);
	return e->dbg_used ? e->dbg_path : NULL;
}

bool sb_elf_has_lines(struct sb_elf *e)
{
	return sb_elf_dwarf(e) != NULL;
}

/* Through .debug_aranges, else by scanning the CUs' ranges: clang
 * emits no .debug_aranges by default. */
static bool find_cu(struct sb_elf *e, uint64_t vaddr, Dwarf_Die *cu)
{
	Dwarf_CU *u = NULL;

	if (dwarf_addrdie(e->dw, vaddr, cu))
		return true;
	while (dwarf_get_units(e->dw, u, &u, NULL, NULL, cu, NULL) == 0)
		if (dwarf_haspc(cu, vaddr) > 0)
			return true;
	return false;
}

/* Name of the innermost function scope at vaddr; an inlined
 * subroutine's name comes through DW_AT_abstract_origin. */
static const char *dwarf_func(Dwarf_Die *cu, uint64_t vaddr)
{
	Dwarf_Die *scopes = NULL;
	const char *name = NULL;
	int n = dwarf_getscopes(cu, vaddr, &scopes);

	for (int i = 0; i < n && !name; i++) {
		int tag = dwarf_tag(&scopes[i]);
		Dwarf_Attribute a;

		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine)
			name = dwarf_formstring(dwarf_attr_integrate(&scopes[i],
								    DW_AT_name, &a));
	}
	free(scopes);
	return name;
}

bool sb_elf_cu_at(struct sb_elf *e, uint64_t vaddr, Dwarf_Die *cu)
{
	return sb_elf_dwarf(e) && find_cu(e, vaddr, cu);
}

int sb_elf_srcline(struct sb_elf *e, uint64_t vaddr,
		   const char **file, unsigned *line, const char **func)
{
	const char *f = NULL, *fn = NULL;
	int lno = 0, ret = -1;
	Dwarf_Die cu;

	if (sb_elf_dwarf(e) && find_cu(e, vaddr, &cu)) {
		Dwarf_Line *l = dwarf_getsrc_die(&cu, vaddr);

		if (l && !dwarf_lineno(l, &lno) && lno > 0 &&
		    (f = dwarf_linesrc(l, NULL, NULL)))
			ret = 0;
		fn = dwarf_func(&cu, vaddr);
	}
	if (!fn)
		fn = sb_elf_func_at(e, vaddr, NULL);
	if (file)
		*file = ret ? NULL : f;
	if (line)
		*line = ret ? 0 : (unsigned)lno;
	if (func)
		*func = fn;
	return ret;
}
