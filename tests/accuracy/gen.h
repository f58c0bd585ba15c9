/* gen.h — shared state of the planted-cause program generator (gen.c,
 * gen_emit.c, gen_work.c).  One program = one struct prog: its seeded
 * variables, the source being written (a line counter, so planted lines
 * are known as they are written), and the lines the driver scores
 * against. */
#ifndef ACC_GEN_H
#define ACC_GEN_H

#include <stdio.h>

enum cause { C_OWNER, C_ROOT, C_TRIP, C_TRI, C_SEARCH, C_CACHE, C_LOCK, C_N };
enum place { P_INLINE, P_HELPER, P_DEEP, P_TAIL, P_SHARED, P_FPTR, P_LIB, P_N };
enum rt { R_PBAR, R_CVFUNC, R_CVMACRO, R_GOMP, R_OMP, R_N };

struct prog {
	unsigned long long rng;
	char name[32];
	FILE *f;
	int line;                 /* lines written so far */
	int cause, place, rt, omp_dyn, region_per_iter, lib;
	int nt;                   /* threads */
	double secs;              /* plain run length aimed at */
	unsigned long iters, iters_exact, bu; /* instances; units per work call */
	/* names, chosen per program so programs read differently */
	const char *me, *kern, *bal, *outer, *wrap, *cvname, *chase;
	int accept[4], naccept;   /* planted lines */
	int sync[4], nsync;       /* closing sync lines of the planted section */
	char params[256];         /* cause parameters, for the metadata */
	double inst_us;           /* one instance's estimated wall time */
};

unsigned long long rnd(struct prog *p);
int pick(struct prog *p, int n);
const char *pickname(struct prog *p, const char *const *names, int n);

/* Writes one line (printf format, no '\n' in it) and counts it. */
void L(struct prog *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void accept_here(struct prog *p);   /* the next line written is planted */
void sync_here(struct prog *p);     /* the next line written closes it */

/* gen_emit.c: the work at a site (WORK of N units, by placement), the
 * helpers it needs, and the cause's code in the worker. */
void emit_helpers(struct prog *p);
void emit_work(struct prog *p, const char *ind, const char *units);
void emit_cause_globals(struct prog *p);
void emit_cause_setup(struct prog *p, const char *ind);
void emit_cause(struct prog *p, const char *ind);
void plan_cause(struct prog *p);

#endif
