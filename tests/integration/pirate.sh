# The Cache Pirate and the profiled-thread framework (issue 15, speedup
# stacks §3 and §6.1; pirate/), on programs as users build them.
#   - The framework (build/libscalebpf-profiled.so, preloaded) on the
#     paper's L1 micro-benchmark, gcc and clang -O2, 2 and 3 threads (more
#     than this machine's CPUs): the program still right, and the profiled
#     thread alone for its share: the run's wall time is the threads' work
#     one after the other, the profiled one's alone time its 1/T part; it
#     ran alone once per barrier round and once more; its time is kept at
#     the barrier's call site and the join's.
#   - Programs it cannot control are let go, never hung: a condition-
#     variable barrier (the profiled thread blocks outside a pthread
#     barrier: given up, with why), barriers of thread subsets
#     (pf_subsets.c: a held thread is ahead of the profiled one, which
#     waits for it) and OpenMP under both runtimes.
#   - The pirate's residency check on this machine's own memory: a set of
#     half the calibrated cache holds, one of four times it does not.
#   - `scalebpf stack` with the real pirate: run where the calibration
#     finds a last-level cache shared by CPUs; elsewhere the log says
#     "skipped: no shared cache", the automatic choice is checked to be
#     the virtual pirate, and the real one is run as asked (--pirate real)
#     on the L1 benchmark, whose truth is known anyway: no cache component,
#     the pirate's speedup the perfect one within 10%.
PF_LIB=$TOP/build/libscalebpf-profiled.so
PF_CAL=$TMP/calibration
[ -s "$PF_CAL" ] || SCALEBPF_CALIBRATION=$PF_CAL "$SB" calibrate --quick --max-mb 32 -q \
	>/dev/null 2>&1
pf_cal() {  # KEY: the calibration's value
	awk -v k="$1" '$1 == k { print $2 }' "$PF_CAL"
}

# pf_run STATS CMD...: CMD under the framework; its wall time in ms on
# stdout, its exit status returned.
pf_run() {
	local stats=$1 t0 t1 rc
	shift
	rm -f "$stats"
	t0=$(date +%s%N)
	SCALEBPF_PROFILED_OUT=$stats LD_PRELOAD=$PF_LIB timeout 300 "$@" >/dev/null 2>"$stats.err"
	rc=$?
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
	return $rc
}
pf_get() {  # STATS KEY
	awk -F= -v k="$2" '$1 == k { print $2; exit }' "$1"
}

# CC T: stack_ub tiny, 12 rounds, under the framework
pf_alone_group() {
	local cc=$1 t=$2 s=$TMP/pf_$1_$2.stats ms alone turns bar want lo hi m
	if ! ms=$(pf_run "$s" "$(wl "$cc" stack_ub)" tiny 1 "$t" 12 12000 800); then
		bad "framework ($cc, $t threads): the program failed under it"
		cat "$s.err"
		return
	fi
	alone=$(($(pf_get "$s" alone_ns) / 1000000))
	turns=$(pf_get "$s" turns)
	bar=$(grep -c '^site=' "$s")
	check "framework ($cc, $t threads): one profiled thread, never given up" \
		test "$(pf_get "$s" tids | tr ',' '\n' | grep -c .)" = 1 -a "$(pf_get "$s" abandoned)" = 0
	check "framework ($cc, $t threads): alone once per barrier round and once more (13, got $turns)" \
		test "$turns" = 13
	check "framework ($cc, $t threads): its time kept at the barrier's site and the join's ($bar sites)" \
		test "$bar" = 2
	# serialized: the profiled thread's 1/T of the work alone, then the
	# other T - 1 together on up to m = min(T - 1, CPUs) CPUs: alone is
	# m / (m + T - 1) of the wall time, within 20%
	m=$(nproc)
	[ "$m" -lt $((t - 1)) ] || m=$((t - 1))
	want=$((ms * m / (m + t - 1)))
	lo=$((want * 80 / 100))
	hi=$((want * 120 / 100))
	check "framework ($cc, $t threads): alone ${alone} ms, ${want} of the serialized run's ${ms} ms within 20%" \
		test "$alone" -ge "$lo" -a "$alone" -le "$hi"
}

pf_letgo_group() {
	local s=$TMP/pf_cv.stats ms cc
	if ms=$(pf_run "$s" "$(wl gcc condvar_barrier)" 2 20 20000); then
		check "framework, condition-variable barrier: given up, saying why (ran ${ms} ms)" \
			grep -q '^abandoned=1' "$s"
		check "framework, condition-variable barrier: why names the block" \
			grep -q '^why=.*blocked.*outside a pthread barrier' "$s"
	else
		bad "framework, condition-variable barrier: the program failed or hung"
		cat "$s.err"
	fi
	# barriers of thread subsets: a held thread ahead of the profiled one
	s=$TMP/pf_sub.stats
	if ${CC:-cc} -O2 -g -pthread "$TOP/tests/integration/pf_subsets.c" -o "$TMP/pf_subsets" \
		2>"$TMP/pf_sub.build"; then
		if ms=$(pf_run "$s" "$TMP/pf_subsets" 5); then
			check "framework, barriers of thread subsets: given up, saying why (ran ${ms} ms)" \
				grep -q '^why=.*subsets' "$s"
		else
			bad "framework, barriers of thread subsets: the program failed or hung"
			cat "$s.err"
		fi
	else
		bad "framework: build pf_subsets.c"
		cat "$TMP/pf_sub.build"
	fi
	for cc in gcc clang; do
		wl_built "$cc" omp_cg || continue
		s=$TMP/pf_omp_$cc.stats
		if ms=$(OMP_NUM_THREADS=2 pf_run "$s" "$(wl "$cc" omp_cg)" 20000 4); then
			ok "framework, OpenMP ($cc): the program ran to its end (${ms} ms)"
		else
			bad "framework, OpenMP ($cc): the program failed or hung"
			cat "$s.err"
		fi
	done
}

# the pirate's check against this machine's calibrated latencies
pf_residency_group() {
	local llc hit miss s b held fetch
	llc=$(pf_cal llc_effective)
	miss=$(pf_cal dram_latency_ns)
	# the calibration's cache hit: its latency at half the effective size
	hit=$(awk -v h=$((llc / 2)) '$1 == "latency" && $2 <= h { v = $3 } END { print v }' "$PF_CAL")
	if [ -z "$llc" ] || [ -z "$hit" ] || [ -z "$miss" ]; then
		bad "pirate residency: no calibration ($PF_CAL)"
		return
	fi
	for b in $((llc / 2)) $((llc * 4)); do
		s=$TMP/pf_res_$b.stats
		SCALEBPF_PIRATE_BYTES=$b SCALEBPF_PIRATE_HIT_NS=$hit SCALEBPF_PIRATE_MISS_NS=$miss \
			pf_run "$s" "$(wl gcc stack_ub)" tiny 1 2 6 12000 800 >/dev/null
		fetch=$(pf_get "$s" pirate_fetch_mean)
		held=$(awk -v f="$fetch" 'BEGIN { print (f != "" && f >= 0 && f <= 0.10) ? 1 : 0 }')
		echo "     pirate of $((b >> 10)) KB: mean fetch ratio $fetch," \
			"$(pf_get "$s" pirate_load_ns) ns a load (hit $hit, DRAM $miss)," \
			"$(pf_get "$s" pirate_intervals_held) of $(pf_get "$s" pirate_intervals) intervals held"
		if [ "$b" -lt "$llc" ]; then
			check "pirate of half the cache ($((b >> 10)) KB): holds its set" test "$held" = 1
		else
			check "pirate of 4x the cache ($((b >> 10)) KB): found not holding it" test "$held" = 0
		fi
		check "pirate of $((b >> 10)) KB: warmed before each of the profiled thread's turns" \
			test "$(pf_get "$s" pirate_warmups)" = "$(pf_get "$s" turns)"
	done
}

pf_stack_group() {
	local exe j ph shared
	exe=$(wl gcc stack_ub)
	j=$TMP/pf_stack.json
	ph='[.stacks[] | select(.threads == 2 and (.location | endswith(":'"$(grep -n 'pthread_barrier_wait(&barrier)' "$TOP/tests/workloads/stack_ub.c" | cut -d: -f1)"'")))][0]'
	shared=$(pf_cal llc_effective_shared_by)
	if [ "${shared:-0}" -ge 2 ]; then
		echo "     the calibration finds the last-level cache shared by $shared CPUs: the real pirate runs"
		SCALEBPF_CALIBRATION=$PF_CAL "$SB" stack -q -t 1,2 -o "$TMP/pf_auto.sbp" -- \
			"$exe" tiny 1 '{T}' 12 12000 800 2>"$TMP/pf_stack.err" &&
			"$SB" report -i "$TMP/pf_auto.sbp" --format json >"$TMP/pf_auto.json" &&
			jqcheck "stack, shared cache: the real pirate chosen, held" "$TMP/pf_auto.json" \
				"$ph.pirate.kind == \"real\" and $ph.pirate.held"
	else
		echo "skipped: no shared cache (the calibration: llc_effective_shared_by=${shared:-?}): the automatic pirate is virtual here"
		if SCALEBPF_CALIBRATION=$PF_CAL "$SB" stack -t 1,2 -o "$TMP/pf_auto.sbp" -- \
			"$exe" tiny 1 '{T}' 6 12000 800 2>"$TMP/pf_stack.err"; then
			check "stack, private cache: the automatic pirate is virtual, and it says why" \
				grep -q 'pirate: virtual (the calibration found' "$TMP/pf_stack.err"
		else
			bad "stack (auto pirate)"
			cat "$TMP/pf_stack.err"
		fi
	fi
	# asked for, here too: the mechanics, with a truth known anyway
	if SCALEBPF_CALIBRATION=$PF_CAL "$SB" stack -t 1,2 --pirate real -o "${j%.json}.sbp" -- \
		"$exe" tiny 1 '{T}' 20 20000 800 2>"$TMP/pf_stack.err" &&
		"$SB" report -i "${j%.json}.sbp" --format json >"$j"; then
		jqcheck "stack --pirate real: the barrier phase's pirate real and held, its speedup within 10% of perfect (an L1 working set: no cache to lose)" \
			"$j" "$ph.pirate.kind == \"real\" and $ph.pirate.held and
			 ($ph.speedup_pirate - 2 | fabs) <= 0.2 and $ph.components.cache <= 0.2" ||
			echo "     $(jq -c "$ph | [.speedup_pirate, .components, .pirate]" "$j")"
		jqcheck "stack --pirate real: the stack still sums to perfect - measured" "$j" \
			"all(.stacks[]; ((.components.cache // 0) + .components.memory +
			  .components.sync + .components.residual -
			  (.speedup_perfect - .speedup_measured) | fabs) < 1e-3)"
		check "stack --pirate real: the framework run said the pirate held" \
			grep -q 'the pirate held' "$TMP/pf_stack.err"
		check "stack --pirate real: the text report names the real pirate" bash -c \
			"'$SB' report -i '${j%.json}.sbp' | grep -q 'pirate: real, .* held'"
	else
		bad "stack --pirate real"
		cat "$TMP/pf_stack.err"
	fi
	# an OpenMP program: the framework lets go, the virtual pirate is used
	if wl_built gcc omp_cg; then
		if SCALEBPF_CALIBRATION=$PF_CAL "$SB" stack -t 1,2 --pirate real -o "$TMP/pf_omp.sbp" -- \
			"$(wl gcc omp_cg)" 20000 4 2>"$TMP/pf_omp.err"; then
			ok "stack --pirate real, OpenMP: the stack completes"
		else
			bad "stack --pirate real, OpenMP"
			cat "$TMP/pf_omp.err"
		fi
	fi
	expect_fail "stack --pirate sideways: refused" "auto, real or virtual" \
		"$SB" stack --pirate sideways -- /bin/true
	expect_fail "stack --pirate real without the framework library: said" "missing" \
		env SCALEBPF_CALIBRATION="$PF_CAL" SCALEBPF_PROFILED_LIB=/nonexistent.so \
		"$SB" stack --pirate real -t 1,2 -- /bin/true
}

if [ ! -r "$PF_LIB" ]; then
	bad "pirate: $PF_LIB not built (make)"
elif wl_built gcc stack_ub; then
	timed_group "framework (gcc, 2)" pf_alone_group gcc 2
	timed_group "framework (gcc, 3)" pf_alone_group gcc 3
	wl_built clang stack_ub && timed_group "framework (clang, 2)" pf_alone_group clang 2
	wl_built gcc condvar_barrier && pf_letgo_group
	timed_group "pirate residency" pf_residency_group
	timed_group "stack with the real pirate" pf_stack_group
fi
