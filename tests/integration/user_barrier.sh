# User (mutex + condvar) barriers found by name keep their samples.
# condvar_barrier.c, auto-detected at the default -F: per-thread sample
# vectors in its section and a LIME cause (work 1:2:3:4).
condvar_vectors_group() {
	local cc=$1 j=$TMP/condvar_vec_$1.json c=$TMP/condvar_vec_$1_counts.json loc
	loc=$(site user_barrier condvar_barrier.c)
	if ! record_json "$j" -- "$(wl $cc condvar_barrier)" 4 20 3000; then
		bad "condvar_barrier auto ($cc): record"
		return
	fi
	"$SB" report -i "${j%.json}.sbp" --counts --format json >"$c"
	jqcheck "condvar_barrier auto ($cc): per-thread sample vectors at $loc, worker-3 > 2 x worker-0" "$c" \
		"[.counts[] | select(.section == \"$loc\") | .per_thread[]] | group_by(.comm) |
		 map({key: .[0].comm, value: (map(.count) | add)}) | from_entries as \$n |
		 (\$n | length) == 4 and \$n[\"worker-3\"] > 2 * \$n[\"worker-0\"]"
	jqcheck "condvar_barrier auto ($cc): a LIME cause for its section" "$j" \
		"[.causes[] | select(.section == \"$loc\")] | length >= 1"
}
for cc in gcc clang; do
	wl_built $cc condvar_barrier &&
		timed_group "condvar barrier, auto-detected: vectors ($cc)" condvar_vectors_group $cc
done

# C++ barriers (issue 9): tests/workloads/cxx_barrier.cc, built with g++
# and clang++, has a mutex + condvar barrier parsec::parsec_barrier_wait and
# a phase function run_phases(unsigned long, parsec::parsec_barrier*) that
# does all the work between barriers.  Worker i does (i + 1) units per
# phase: busy ratio 1:2:3:4, imbalance 37.5% with 4 threads.

# Detected, not named: only the barrier is probed, never the phase function
# whose mangled name spells the barrier's type (probing it hid every
# sample of the work: "no per-thread event vectors" at 199 Hz).
cxx_auto_group() {
	local cc=$1 bin="cxx_barrier ($1)" j=$TMP/cxx_barrier_$1_auto.json loc sel c
	loc=$(site cxx_barrier cxx_barrier.cc)
	sel=$(section_at "$loc" user_barrier)
	if ! record_json "$j" -- "$(wl $cc cxx_barrier)" 4 20 3000; then
		bad "$bin auto: record"
		return
	fi
	jqcheck "$bin auto: user barrier section at $loc, 20 instances, 4 threads" "$j" \
		"$sel != null and ($sel).instances == 20 and ($sel).threads == 4"
	jqcheck "$bin auto: imbalance 37.5 +- 5" "$j" "(($sel).imbalance_pct - 37.5 | fabs) <= 5"
	jqcheck "$bin auto: parsec::parsec_barrier_wait detected, demangled" "$j" \
		'.meta.notes | test("user barrier detected: parsec::parsec_barrier_wait\\(parsec::parsec_barrier\\*\\) \\(_ZN6parsec19parsec_barrier_waitEPNS_14parsec_barrierE")'
	jqcheck "$bin auto: the phase function taking the barrier is not one" "$j" \
		'.meta.notes | test("run_phases") | not'
	c=$TMP/cxx_barrier_$1_auto_counts.json
	"$SB" report -i "${j%.json}.sbp" --counts --format json >"$c"
	# Per-thread sample vectors in the section: every worker has samples,
	# worker-3 (4 units a phase) well over twice worker-0's (1 unit).
	jqcheck "$bin auto: per-thread sample vectors, worker-3 > 2 x worker-0" "$c" \
		"[.counts[] | select(.section == \"$loc\") | .per_thread[]] | group_by(.comm) |
		 map({key: .[0].comm, value: (map(.count) | add)}) | from_entries as \$n |
		 (\$n | length) == 4 and all(\$n[]; . > 0) and \$n[\"worker-3\"] > 2 * \$n[\"worker-0\"]"
	check "$bin auto: the causes view has vectors" bash -c \
		"'$SB' report -i '${j%.json}.sbp' | grep -q 'section #1 (user_barrier' && ! '$SB' report -i '${j%.json}.sbp' | grep -q 'no per-thread event vectors'"
	# g++ -O2 keeps the phase loop apart from sb_work: LIME ranks it.
	if [ "${2:-}" = cause ]; then
		jqcheck "$bin auto: a LIME cause for the barrier section" "$j" \
			"[.causes[] | select(.section == \"$loc\")] | length >= 1"
	fi
}
timed_group "C++ barrier, auto-detected (g++)" cxx_auto_group gcc cause
if wl_built clang cxx_barrier; then
	timed_group "C++ barrier, auto-detected (clang++)" cxx_auto_group clang
fi

# --barrier by the name the source uses; stderr names the symbol probed.
cxx_named_group() {
	local j=$TMP/cxx_named.json loc sel cc sym='_ZN6parsec19parsec_barrier_waitEPNS_14parsec_barrierE'
	loc=$(site cxx_barrier cxx_barrier.cc)
	sel=$(section_at "$loc" user_barrier)
	if "$SB" record -o "$TMP/cxx_named.sbp" --barrier parsec_barrier_wait -- \
		"$WL/cxx_barrier" 4 40 2000 2>"$TMP/cxx_named.err"; then
		"$SB" report -i "$TMP/cxx_named.sbp" --format json >"$j"
		check "--barrier parsec_barrier_wait: stderr names $sym" grep -qF \
			"scalebpf: --barrier parsec_barrier_wait: probing $sym (parsec::parsec_barrier_wait(parsec::parsec_barrier*))" \
			"$TMP/cxx_named.err"
		jqcheck "--barrier parsec_barrier_wait: section at $loc, 40 instances, 4 threads" "$j" \
			"$sel != null and ($sel).instances == 40 and ($sel).threads == 4"
		ratio_check "--barrier parsec_barrier_wait: busy ratio 1:2:3:4 within 10%" "$j" "$sel" 4 0.10
		jqcheck "--barrier parsec_barrier_wait: imbalance 37.5 +- 5" "$j" \
			"(($sel).imbalance_pct - 37.5 | fabs) <= 5"
		jqcheck "--barrier parsec_barrier_wait: no auto-detection besides" "$j" \
			'(.meta.notes // "") | test("detected") | not'
	else
		bad "--barrier parsec_barrier_wait: record"
		cat "$TMP/cxx_named.err"
	fi
	cc=clang
	wl_built $cc cxx_barrier || cc=gcc
	if record_json "$TMP/cxx_q.json" --barrier 'parsec::parsec_barrier_wait' -- \
		"$(wl $cc cxx_barrier)" 3 10 500; then
		jqcheck "--barrier parsec::parsec_barrier_wait ($cc): 10 instances, 3 threads" \
			"$TMP/cxx_q.json" "$sel != null and ($sel).instances == 10 and ($sel).threads == 3"
	else
		bad "--barrier parsec::parsec_barrier_wait: record"
	fi
	check "--barrier in another namespace fails, saying so" bash -c \
		"! '$SB' record -q -o $TMP/x.sbp --barrier nosuch::parsec_barrier_wait -- '$WL/cxx_barrier' 2 2 10 2>$TMP/cxx_nb.err && grep -q 'nosuch::parsec_barrier_wait: no such function' $TMP/cxx_nb.err"
}
timed_group "C++ barrier, --barrier by name" cxx_named_group
