/* many_sections NTHREADS SECTIONS INSTANCES    (profile-write benchmark)
 *
 * SECTIONS distinct parallel sections: NTHREADS worker pthreads pass, in
 * every round, each of SECTIONS barrier call sites once, with a little
 * balanced work (sb_work(2), ~2.6 us) before each.  Known truth: SECTIONS
 * barrier sections, each with exactly INSTANCES instances of NTHREADS
 * threads; `many_sections 2 50 2000` is 100,000 section instances, the
 * size the profile write after exit is measured at (tests/bench.sh).
 *
 * Every section is its own function on its own line (SECTION(k) below:
 * sections are named by call site, file:line), waiting on its own barrier
 * bars[k] (so no two functions are identical and merged by the compiler),
 * and using the wait's result after it (so the call is no tail call: the
 * site is in sec_k, not in the loop that calls it).
 * Prints nothing on stdout; exits 0 (2 on bad arguments).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

#include "work.h"

#define MAX_SECTIONS 100

static pthread_barrier_t bars[MAX_SECTIONS];
static volatile unsigned long serial[MAX_SECTIONS];
static unsigned long nsections, ninstances;

#define SECTION(k)                                                            \
	static SB_NOINLINE void sec_##k(void)                                 \
	{                                                                     \
		if (pthread_barrier_wait(&bars[k]) == PTHREAD_BARRIER_SERIAL_THREAD) \
			serial[k]++;                                          \
	}

SECTION(0)
SECTION(1)
SECTION(2)
SECTION(3)
SECTION(4)
SECTION(5)
SECTION(6)
SECTION(7)
SECTION(8)
SECTION(9)
SECTION(10)
SECTION(11)
SECTION(12)
SECTION(13)
SECTION(14)
SECTION(15)
SECTION(16)
SECTION(17)
SECTION(18)
SECTION(19)
SECTION(20)
SECTION(21)
SECTION(22)
SECTION(23)
SECTION(24)
SECTION(25)
SECTION(26)
SECTION(27)
SECTION(28)
SECTION(29)
SECTION(30)
SECTION(31)
SECTION(32)
SECTION(33)
SECTION(34)
SECTION(35)
SECTION(36)
SECTION(37)
SECTION(38)
SECTION(39)
SECTION(40)
SECTION(41)
SECTION(42)
SECTION(43)
SECTION(44)
SECTION(45)
SECTION(46)
SECTION(47)
SECTION(48)
SECTION(49)
SECTION(50)
SECTION(51)
SECTION(52)
SECTION(53)
SECTION(54)
SECTION(55)
SECTION(56)
SECTION(57)
SECTION(58)
SECTION(59)
SECTION(60)
SECTION(61)
SECTION(62)
SECTION(63)
SECTION(64)
SECTION(65)
SECTION(66)
SECTION(67)
SECTION(68)
SECTION(69)
SECTION(70)
SECTION(71)
SECTION(72)
SECTION(73)
SECTION(74)
SECTION(75)
SECTION(76)
SECTION(77)
SECTION(78)
SECTION(79)
SECTION(80)
SECTION(81)
SECTION(82)
SECTION(83)
SECTION(84)
SECTION(85)
SECTION(86)
SECTION(87)
SECTION(88)
SECTION(89)
SECTION(90)
SECTION(91)
SECTION(92)
SECTION(93)
SECTION(94)
SECTION(95)
SECTION(96)
SECTION(97)
SECTION(98)
SECTION(99)

static void (*const sections[MAX_SECTIONS])(void) = {
	sec_0, sec_1, sec_2, sec_3, sec_4, sec_5, sec_6, sec_7, sec_8, sec_9,
	sec_10, sec_11, sec_12, sec_13, sec_14, sec_15, sec_16, sec_17, sec_18, sec_19,
	sec_20, sec_21, sec_22, sec_23, sec_24, sec_25, sec_26, sec_27, sec_28, sec_29,
	sec_30, sec_31, sec_32, sec_33, sec_34, sec_35, sec_36, sec_37, sec_38, sec_39,
	sec_40, sec_41, sec_42, sec_43, sec_44, sec_45, sec_46, sec_47, sec_48, sec_49,
	sec_50, sec_51, sec_52, sec_53, sec_54, sec_55, sec_56, sec_57, sec_58, sec_59,
	sec_60, sec_61, sec_62, sec_63, sec_64, sec_65, sec_66, sec_67, sec_68, sec_69,
	sec_70, sec_71, sec_72, sec_73, sec_74, sec_75, sec_76, sec_77, sec_78, sec_79,
	sec_80, sec_81, sec_82, sec_83, sec_84, sec_85, sec_86, sec_87, sec_88, sec_89,
	sec_90, sec_91, sec_92, sec_93, sec_94, sec_95, sec_96, sec_97, sec_98, sec_99,
};

static void *worker_main(void *arg)
{
	(void)arg;
	for (unsigned long i = 0; i < ninstances; i++)
		for (unsigned long s = 0; s < nsections; s++) {
			sb_work(2);
			sections[s]();
		}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long nthreads;

	if (argc != 4 || sb_parse_ul(argv[1], 1, SB_MAX_THREADS, &nthreads) ||
	    sb_parse_ul(argv[2], 1, MAX_SECTIONS, &nsections) ||
	    sb_parse_ul(argv[3], 1, 100000000UL, &ninstances)) {
		fprintf(stderr, "usage: %s NTHREADS SECTIONS INSTANCES\n"
			"  NTHREADS 1..%lu, SECTIONS 1..%d, INSTANCES 1..100000000 "
			"(per section)\n", argv[0], SB_MAX_THREADS, MAX_SECTIONS);
		return 2;
	}
	for (unsigned long s = 0; s < nsections; s++)
		sb_barrier_init(&bars[s], nthreads);
	sb_run_threads(nthreads, worker_main, NULL, 0);
	for (unsigned long s = 0; s < nsections; s++)
		pthread_barrier_destroy(&bars[s]);
	return 0;
}
