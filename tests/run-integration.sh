#!/bin/bash
# End-to-end tests of `scalebpf record` + `report` on workloads with known
# truth (tests/workloads/).  Needs root and BPF: on CI (root) they run.
set -u
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ]; then
	echo "integration tests need root (BPF); run 'sudo make check'"
	echo "0 passed, 1 failed"
	exit 1
fi

analytic_imbalance() {  # 1 - (N+1)/(2N), in %
	awk -v n="$1" 'BEGIN { printf "%.4f", 100 * (1 - (n + 1) / (2 * n)) }' 
}

# --- pthread barrier, work 1:2:3:4 and, oversubscribed, 1:...:8 ---------
# The gcc build's profiles are $TMP/barrier<N>.json (used further on).
barrier_group() {
	local cc=$1 n=$2 j=$TMP/barrier$2.json loc sel want
	[ "$cc" = gcc ] || j=$TMP/barrier$2_$cc.json
	loc=$(site barrier barrier_ratio.c)
	sel=$(section_at "$loc" barrier)
	want=$(analytic_imbalance $n)
	if record_json "$j" -- "$(wl $cc barrier_ratio)" $n 40 $((12000 / n)); then
		jqcheck "barrier $n threads ($cc): section at $loc" "$j" "$sel != null and ($sel).instances == 40 and ($sel).threads == $n"
		ratio_check "barrier $n threads ($cc): busy ratio 1:..:$n within 10%" "$j" "$sel" $n 0.10
		jqcheck "barrier $n threads ($cc): imbalance within 5 points of $want" "$j" "(($sel).imbalance_pct - $want | fabs) <= 5"
		jqcheck "barrier $n threads ($cc): barrier waits counted" "$j" "[.waits[] | select(.primitive == \"barrier\")][0].count >= 40 * ($n - 1)"
		# entry probe only: each of the 40 x n calls departs once, at its
		# futex return or (round found complete) at the thread's next event
		jqcheck "barrier $n threads ($cc): every call departed once (no uretprobe)" "$j" "(.meta.barrier_departs_futex | tonumber) + (.meta.barrier_departs_later | tonumber) == 40 * $n"
	else
		bad "barrier $n threads ($cc): record"
	fi
}
timed_group "barrier 4 threads (gcc)" barrier_group gcc 4
timed_group "barrier 8 threads (gcc)" barrier_group gcc 8
wl_built clang barrier_ratio && timed_group "barrier 4 threads (clang)" barrier_group clang 4

# --- a stripped executable: still recorded, at address level, with a warning
cp "$WL/barrier_ratio" "$TMP/barrier_stripped"
strip --strip-all "$TMP/barrier_stripped"
j=$TMP/stripped.json
if record_json "$j" -- "$TMP/barrier_stripped" 4 20 2000; then
	jqcheck "stripped binary: section found, located by address" "$j" '(.sections | length) >= 1 and (.sections[0].location | test("^barrier_stripped\\+0x[0-9a-f]+$")) and .sections[0].instances == 20'
	jqcheck "stripped binary: the profile says so" "$j" '.meta.notes | test("stripped")'
	check "stripped binary: the report warns" bash -c "'$SB' report -i '$TMP/stripped.sbp' | grep -q 'WARNING:.*no source line'"
else
	bad "stripped binary: record"
fi

# --- a kernel without BTF cannot build the BPF side: clear message -------
if make -s -C "$TOP" BUILD="$TMP/nobtf" VMLINUX_BTF=/nonexistent "$TMP/nobtf/vmlinux.h" >"$TMP/nobtf.out" 2>&1; then
	bad "build without BTF should fail"
else
	check "build without BTF fails saying why" grep -q "no BTF" "$TMP/nobtf.out"
fi

# --- JSON contract ------------------------------------------------------
j=$TMP/barrier4.json
jqcheck "json: sections sorted by lost_ns descending" "$j" '[.sections[].lost_ns] as $l | $l == ($l | sort | reverse)'
jqcheck "json: section fields" "$j" 'all(.sections[]; has("location") and has("kind") and has("instances") and has("threads") and has("imbalance_pct") and has("lost_ns") and (.per_thread | all(has("tid") and has("busy_ns") and has("wait_ns"))))'
jqcheck "json: waits fields" "$j" '(.waits | length) > 0 and all(.waits[]; has("primitive") and has("wait_ns") and has("count"))'
jqcheck "json: locks is an array" "$j" '.locks | type == "array"'
jqcheck "json: meta names tool, kernel and event sources" "$j" '.meta.tool != null and .meta.kernel != null and (.meta.event_sources | test("sched_switch"))'
jqcheck "json: no drops on the test workload (default sampling rate)" "$j" '.meta.drops_probe == "0" and .meta.drops_wait == "0" and .meta.drops_sample == "0" and .meta.drops_thread == "0"'

# --- OpenMP: libgomp (gcc), and libomp (clang) when built -----------------
omp_group() {
	local cc=$1 bin="omp_imbalance ($1)" j=$TMP/omp_imbalance_$1.json bsel rsel
	bsel=$(section_at "$(site omp_barrier omp_imbalance.c)" omp_barrier)
	rsel=$(section_at "$(site omp_region omp_imbalance.c)" omp_region)
	if OMP_NUM_THREADS=4 record_json "$j" -- "$(wl $cc omp_imbalance)" 30 2000; then
		jqcheck "$bin: explicit barrier section, 30 instances" "$j" "$bsel != null and ($bsel).instances == 30 and ($bsel).threads == 4"
		ratio_check "$bin: busy ratio 1:2:3:4 within 10%" "$j" "$bsel" 4 0.10
		jqcheck "$bin: barrier imbalance 37.5 +- 5" "$j" "(($bsel).imbalance_pct - 37.5 | fabs) <= 5"
		jqcheck "$bin: region end section is balanced (< 15%)" "$j" "$rsel != null and ($rsel).instances == 30 and ($rsel).imbalance_pct < 15"
	else
		bad "$bin: record"
	fi
}
for cc in gcc clang; do
	wl_built $cc omp_imbalance || continue
	timed_group "omp_imbalance ($cc)" omp_group $cc
done

# --- mutex + condition variable barrier ----------------------------------
condvar_group() {
	local cc=$1 loc sel j=$TMP/condvar_$1.json
	loc=$(site user_barrier condvar_barrier.c)
	sel=$(section_at "$loc" user_barrier)
	if record_json "$j" --barrier sb_user_barrier -- "$(wl $cc condvar_barrier)" 4 40 2000; then
		jqcheck "--barrier ($cc): user barrier section at $loc" "$j" "$sel != null and ($sel).instances == 40"
		ratio_check "--barrier ($cc): busy ratio 1:2:3:4 within 10%" "$j" "$sel" 4 0.10
		jqcheck "--barrier ($cc): imbalance 37.5 +- 5" "$j" "(($sel).imbalance_pct - 37.5 | fabs) <= 5"
	else
		bad "--barrier ($cc): record"
	fi
}
for cc in gcc clang; do
	wl_built $cc condvar_barrier && timed_group "--barrier ($cc)" condvar_group $cc
done
loc=$(site user_barrier condvar_barrier.c)
sel=$(section_at "$loc" user_barrier)
j=$TMP/condvar_auto.json
if record_json "$j" -- "$WL/condvar_barrier" 4 20 2000; then
	jqcheck "auto-detected user barrier section at $loc" "$j" "$sel != null and ($sel).instances == 20"
	jqcheck "auto-detection is noted in the profile" "$j" '.meta.notes | test("user barrier detected: sb_user_barrier")'
	jqcheck "no auto-detection in a program with pthread barriers" "$TMP/barrier4.json" '.meta.notes | test("user barrier") | not' 
fi
check "--barrier with an unknown symbol fails clearly" \
	bash -c "! '$SB' record -q -o $TMP/x.sbp --barrier no_such_fn -- '$WL/condvar_barrier' 2 2 10 2>$TMP/nb.err && grep -q 'no such function' $TMP/nb.err"

# Without barrier detection the same program's waits are condition waits.
loc=$(site cond_wait condvar_barrier.c)
j=$TMP/condvar_plain.json
if record_json "$j" --no-auto-barrier -- "$WL/condvar_barrier" 4 20 2000; then
	jqcheck "--no-auto-barrier: no user barrier section" "$j" '[.sections[] | select(.kind == "user_barrier")] | length == 0'
	# 3 of 4 threads wait in each of the 20 rounds (the last one broadcasts).
	jqcheck "condition variable waits at $loc" "$j" "[.locks[] | select(.location == \"$loc\" and .primitive == \"cond\")][0] | . != null and .contentions >= 40 and .wait_ns > 0"
fi

# --- locks at their call sites: gcc and clang builds ---------------------
# The lock rows must name the program's planted line (a SITE comment),
# whichever compiler built it, without frame pointers.
for cc in gcc clang; do
	# semaphore used as a lock
	loc=$(site sem sem_lock.c)
	j=$TMP/sem_$cc.json
	if ! wl_built $cc sem_lock; then
		:
	elif record_json "$j" -- "$(wl $cc sem_lock)" 4 300 200; then
		jqcheck "semaphore ($cc): waits at $loc named sem" "$j" "[.locks[] | select(.location == \"$loc\" and .primitive == \"sem\")][0] | . != null and .contentions >= 10 and .wait_ns > 0"
	else
		bad "semaphore ($cc): record"
	fi

	# spin lock: waits seen only by sampling
	loc=$(site spin spin_lock.c)
	j=$TMP/spin_$cc.json
	if ! wl_built $cc spin_lock; then
		:
	elif record_json "$j" -- "$(wl $cc spin_lock)" 4 1500 300; then
		# 4 threads on 2 cores take turns on one lock held 80% of the
		# time: spinning is a large share of the on-CPU time.
		jqcheck "spin lock ($cc): sampled waits at $loc" "$j" "[.locks[] | select(.location == \"$loc\" and .primitive == \"spin\")][0] | . != null and .contentions >= 50"
		jqcheck "spin lock ($cc): spin wait is a plausible share of the run" "$j" "([.waits[] | select(.primitive == \"spin\")][0].wait_ns) as \$w | (.meta.duration_ns | tonumber) as \$d | \$w > 0.2 * \$d and \$w < 4 * \$d"
	else
		bad "spin lock ($cc): record"
	fi

	# OpenMP critical: libgomp (gcc) spins, then sleeps in a hidden slow
	# path.  Not yet for libomp (clang): __kmpc_critical is not probed,
	# its spins are in no sampled spin range, so only its rare futex
	# sleeps are seen (~20 of ~6000 contended entries, with or without
	# frame pointers alike).
	loc=$(site critical omp_critical.c)
	j=$TMP/critical_$cc.json
	if [ $cc = clang ] || ! wl_built $cc omp_critical; then
		:
	elif OMP_NUM_THREADS=4 record_json "$j" -- "$(wl $cc omp_critical)" 1500 300; then
		jqcheck "omp critical ($cc): waits at $loc named omp_critical" "$j" "[.locks[] | select(.location == \"$loc\" and .primitive == \"omp_critical\")][0] | . != null and .contentions >= 50"
		jqcheck "omp critical ($cc): wait is a plausible share of the run" "$j" "([.waits[] | select(.primitive == \"omp_critical\")][0].wait_ns) as \$w | (.meta.duration_ns | tonumber) as \$d | \$w > 0.2 * \$d and \$w < 4 * \$d"
	else
		bad "omp critical ($cc): record"
	fi

	# contended lock: its call site with a plausible wait
	loc=$(site lock contended_lock.c)
	j=$TMP/lock_$cc.json
	if ! wl_built $cc contended_lock; then
		:
	elif record_json "$j" -- "$(wl $cc contended_lock)" 4 300 200; then
		jqcheck "contended lock ($cc): call site $loc in locks" "$j" "[.locks[] | select(.location == \"$loc\" and .primitive == \"mutex\")][0] | . != null and .contentions >= 10"
		# 4 threads hold the lock ~80% of the time: waits are a large
		# part of the run, but no more than 3 waiting threads times it.
		jqcheck "contended lock ($cc): wait time plausible" "$j" "([.locks[] | select(.location == \"$loc\")][0].wait_ns) as \$w | (.meta.duration_ns | tonumber) as \$d | \$w > 0.2 * \$d and \$w < 3 * \$d"
		jqcheck "contended lock ($cc): mutex in waits by primitive" "$j" '[.waits[] | select(.primitive == "mutex")][0].count >= 10'
	else
		bad "contended lock ($cc): record"
	fi
done

# --- attach with -p to a running process that then creates threads ------
attach_group() {
	local spid j=$TMP/attach.json loc sel
	"$WL/spawner" 1500 4 30 2000 >"$TMP/spawner.out" &
	spid=$!
	sleep 0.3
	loc=$(site spawn_barrier spawner.c)
	sel=$(section_at "$loc" barrier)
	if record_json "$j" -p $spid; then
		jqcheck "-p: threads created after attach are recorded" "$j" "$sel != null and ($sel).threads == 4 and ($sel).instances == 30"
		ratio_check "-p: busy ratio 1:2:3:4 within 10%" "$j" "$sel" 4 0.10
		jqcheck "-p: stopped because the target exited" "$j" '.meta.stop_reason == "target exited"'
	else
		bad "-p: record"
	fi
	wait $spid 2>/dev/null
}
timed_group "-p attach" attach_group

# --- stop on SIGINT: the target keeps running, probes are gone ----------
"$WL/spawner" 0 2 100000 200 >/dev/null &
spid=$!
sleep 0.2
"$SB" record -q -o "$TMP/int.sbp" -p $spid 2>"$TMP/int.err" &
rpid=$!
sleep 2
kill -INT $rpid
wait $rpid
rc=$?
check "SIGINT: record exits 0 and writes the profile" test $rc -eq 0 -a -s "$TMP/int.sbp"
check "SIGINT: the target is still running" kill -0 $spid
# The kernel frees a program one RCU grace period after its last link
# is closed (asynchronously): gone within 2 s, not at the very return.
check "SIGINT: no scalebpf BPF program is left loaded (within 2 s)" bash -c "for i in \$(seq 20); do bpftool prog show 2>/dev/null | grep -qE 'probe_enter|on_switch' || exit 0; sleep 0.1; done; exit 1"
"$SB" report -i "$TMP/int.sbp" --format json >"$TMP/int.json"
jqcheck "SIGINT: profile has the barrier section" "$TMP/int.json" '.meta.stop_reason == "signal" and (.sections | length) >= 1'
timeout 20 "$SB" record -q -o "$TMP/dur.sbp" --duration 1 -p $spid 2>"$TMP/dur.err"
rc=$?
if [ $rc -eq 0 ] && [ -s "$TMP/dur.sbp" ]; then
	ok "--duration 1 with -p stops by itself"
else
	bad "--duration 1 with -p stops by itself (exit $rc)"
	tail -20 "$TMP/dur.err"
fi
kill $spid
wait $spid 2>/dev/null

# --- errors: clear message, non-zero exit --------------------------------
expect_fail "PID that does not exist" "no process with PID" "$SB" record -q -o "$TMP/e.sbp" -p 999999
expect_fail "not root" "needs root" setpriv --reuid=65534 --regid=65534 --clear-groups "$SB" record -q -o /tmp/e.sbp -p 1
"$WL/zombie_parent" 5 >"$TMP/zombie.out" &
zp=$!
sleep 0.3
expect_fail "target that has exited (zombie)" "has exited" "$SB" record -q -o "$TMP/e.sbp" -p "$(cat "$TMP/zombie.out")"
kill $zp 2>/dev/null
wait $zp 2>/dev/null
expect_fail "command not found" "command not found" "$SB" record -q -o "$TMP/e.sbp" -- /no/such/cmd
check "no profile is left behind by failed records" test ! -e "$TMP/e.sbp"
"$SB" record -q -o "$TMP/st.sbp" -- sh -c 'exit 3' 2>/dev/null
check "-- CMD: record exits with the command's status" test $? -eq 3
expect_fail "neither -p nor a command" "either -p PID" "$SB" record -q

# The target exits while probes are being attached: a short-lived process
# must give either a clear error or a complete profile, never a crash.
for i in 1 2 3; do
	sleep 0.$((i * 2)) &
	sp=$!
	"$SB" record -q -o "$TMP/race$i.sbp" -p $sp >"$TMP/race.out" 2>"$TMP/race.err"
	rc=$?
	if [ $rc -eq 0 ]; then
		check "target exiting during attach ($i): complete profile" \
			bash -c "'$SB' report -i '$TMP/race$i.sbp' -f json >/dev/null"
	else
		check "target exiting during attach ($i): clear message" \
			grep -qE "exited|no process" "$TMP/race.err"
	fi
	wait $sp 2>/dev/null
done

# --- damaged profiles: clear error, non-zero exit, no crash (ASan) -----
ASB=$TOP/build/asan/scalebpf
good=$TMP/barrier4.sbp
size=$(stat -c %s "$good")
head -c $((size / 2)) "$good" >"$TMP/trunc.sbp"
head -c $((size - 3)) "$good" >"$TMP/trunc2.sbp"
cp "$good" "$TMP/flip.sbp"
printf '\xff' | dd of="$TMP/flip.sbp" bs=1 seek=$((size / 3)) conv=notrunc status=none
printf 'not a profile at all' >"$TMP/garbage.sbp"
: >"$TMP/empty.sbp"
for f in trunc trunc2 flip garbage empty; do
	"$ASB" report -i "$TMP/$f.sbp" >/dev/null 2>"$TMP/$f.err"
	rc=$?
	if [ $rc -eq 1 ] && grep -q "scalebpf report: " "$TMP/$f.err" && ! grep -q "Sanitizer" "$TMP/$f.err"; then
		ok "damaged profile ($f): clear error, exit 1: $(head -1 "$TMP/$f.err")"
	else
		bad "damaged profile ($f): rc=$rc"
		cat "$TMP/$f.err"
	fi
done
# Each area's own groups (exact mode, hardware path, address sampling...).
for f in "$TOP"/tests/integration/*.sh; do
	[ -e "$f" ] && . "$f"
done

check "report of a good profile under ASan" bash -c "'$ASB' report -i '$good' >/dev/null 2>'$TMP/asan.err' && ! grep -q Sanitizer '$TMP/asan.err'"
expect_fail "report of a missing file" "No such file" "$SB" report -i /no/such.sbp

finish
