# CHiP (issue 14): `scalebpf calibrate`, and the exact cache hit profile of
# `scalebpf cc --chip` programs against analytic curves (tests/workloads/
# chip_ws.c: every thread on an array of its own), serial (one thread: the
# paper's setting) and parallel, every line and SHARDS-sampled; verdicts
# from a calibration with known numbers.
CW=$WL/exact/chip_ws
CAL=$TMP/calibration

# The calibration: measured (quick) into a file of the test's own.
chip_calibrate_group() {
	if SCALEBPF_CALIBRATION=$CAL "$SB" calibrate --quick --max-mb 32 -q >"$TMP/cal.out" 2>&1; then
		ok "calibrate: measured"
		check "calibrate: the latency table, the effective cache and the bandwidth are shown" \
			bash -c "grep -q 'working set' '$TMP/cal.out' && grep -q 'effective' '$TMP/cal.out' &&
				 grep -q 'read bandwidth: [0-9.]* GB/s one thread' '$TMP/cal.out'"
		check "calibrate: kept, with a latency point per size" \
			bash -c "[ \$(grep -c '^latency ' '$CAL') -ge 8 ] && grep -q '^llc_effective [0-9]' '$CAL'"
		check "calibrate: a second run shows the kept one" \
			bash -c "SCALEBPF_CALIBRATION='$CAL' '$SB' calibrate | grep -q 'kept in $CAL'"
	else
		bad "calibrate: measured"
		cat "$TMP/cal.out"
	fi
	check "calibrate --show without one: exit 1, says so" bash -c \
		"SCALEBPF_CALIBRATION='$TMP/none' '$SB' calibrate --show 2>'$TMP/cal.err'; [ \$? = 1 ] && grep -q 'no calibration' '$TMP/cal.err'"
	check "calibrate --max-mb 0: refused (exit 2)" bash -c \
		"'$SB' calibrate --max-mb 0 2>/dev/null; [ \$? = 2 ]"
	check "calibrate: a damaged file is refused by --show" bash -c \
		"echo junk >'$TMP/cal.bad'; SCALEBPF_CALIBRATION='$TMP/cal.bad' '$SB' calibrate --show 2>/dev/null; [ \$? = 1 ]"
}

# chip_curve NAME TOL JQ-EXPECTED ARGS...: record chip_ws ARGS with a 4 MB
# profile (16 sizes of 256 KB; CHIP_BYTES for another), check every hit
# ratio against the expected one (a jq expression of $i = 1..16 and $e,
# the point) within TOL; TOL "mae:X": their mean absolute error <= X.
chip_curve() {
	local name=$1 tol=$2 want=$3 j=$TMP/chip_$1.json
	shift 3
	if SCALEBPF_CALIBRATION=$CAL SCALEBPF_CHIP_BYTES=${CHIP_BYTES:-4194304} \
		record_json "$j" -F 0 -- "$CW" "$@"; then
		if [ "${tol#mae:}" != "$tol" ]; then
			jqcheck "chip $name: hit ratios' mean absolute error within ${tol#mae:} of the analytic curve" "$j" \
				"(.chip | length) == 1 and ([.chip[0].hit_ratio | to_entries[] | . as \$e |
				  (\$e.key + 1) as \$i | ($want) as \$w | (\$e.value - \$w | fabs)] | add / 16) <= ${tol#mae:}"
		else
			jqcheck "chip $name: hit ratio at each of 16 sizes within $tol of the analytic curve" "$j" \
				"(.chip | length) == 1 and (.chip[0].hit_ratio | to_entries | all(. as \$e |
				  (\$e.key + 1) as \$i | ($want) as \$w | (\$e.value - \$w | fabs) <= $tol))"
		fi
		jqcheck "chip $name: mode exact, $3 thread(s) profiled, every access counted" "$j" \
			".chip[0].mode == \"exact\" and .chip[0].threads_profiled == $3 and
			 .chip[0].accesses >= ($4 * $3) and .chip[0].accesses <= ($4 * $3 + 200)"
	else
		bad "chip $name: record"
	fi
}

# SHARDS at R = 0.01 on a 32 MB profile (2 MB steps): random over 20 MB,
# 1% of its 327,680 lines, which lines depending on where the heap lands:
# sampling noise, so a fresh recording once more where it misses.
chip_shards_group() {
	CHIP_BYTES=33554432 SCALEBPF_CHIP_RATE=0.01 \
		chip_curve shards mae:0.03 '([$i * 0.1, 1] | min) * (1 - 327680 / 6000000)' \
		random 20480 1 6000000
	jqcheck "chip shards: the rate is in the profile" "$TMP/chip_shards.json" \
		"(.chip[0].rate - 0.01 | fabs) < 1e-6 and (.chip[0].confidence | test(\"SHARDS\"))"
}

chip_exact_group() {
	# random over 2.5 MB: C / W, less each line's first touch (cold)
	chip_curve random-serial 0.02 '([$i * 0.1, 1] | min) * (1 - 40960 / 2000000)' \
		random 2560 1 2000000
	chip_curve random-2 0.02 '([$i * 0.1, 1] | min) * (1 - 40960 / 2000000)' \
		random 2560 2 2000000
	# a chase over 2.4 MB, 12 rounds: 0 below it, 11/12 from 2.5 MB; at
	# 2.25 MB the sets that got 9 of the 9.4 lines each holds hit while a
	# fully associative LRU misses (test_chip bounds it: one size's
	# worth), so that size is left out here
	chip_curve chase 0.03 'if $i == 9 then $e.value elif $i < 9 then 0 else 11 / 12 end' \
		chase 2400 1 460800
	# 8-byte stride: 7 of 8
	chip_curve stream 0.001 '7 / 8' stream 4 1 2000000
	# Fig. 5: once 2 MB holds the hot 1 MB and what streams past, 15 of 16
	chip_curve micro 0.03 'if $i >= 8 then 15 / 16 else $e.value end' micro 1024 1 2000000
	if SCALEBPF_CALIBRATION=$CAL record_json "$TMP/chip_opt.json" -F 0 --chip-rate 0.05 \
		--chip-bytes 8388608 -- "$CW" random 4096 1 1000000; then
		jqcheck "chip: record --chip-rate and --chip-bytes shape the profile" "$TMP/chip_opt.json" \
			"(.chip[0].rate - 0.05 | fabs) < 1e-6 and .chip[0].cache_sizes[15] == 8388608"
	else
		bad "chip: record --chip-rate"
	fi
	expect_fail "chip: --chip-rate with -p is refused (the program read its environment)" \
		"environment" "$SB" record --chip-rate 0.1 -p $$
	expect_fail "chip: --chip-rate 0 is refused" "chip-rate" "$SB" record --chip-rate 0 -- /bin/true
	check "chip: the text report has the Cache view with its curve" bash -c \
		"'$SB' report -i '$TMP/chip_random-2.sbp' | grep -A6 '^Cache:' | grep -q 'hit ratio by cache size'"
}

# --no-counts: the cache profile alone, no block counts (the call per
# block costs as much as SHARDS): the same accesses and curve as --chip.
chip_nocounts_group() {
	local j=$TMP/chip_nocounts.json
	# (the runtime sits beside build/scalebpf, not the ASan binary)
	if ! SCALEBPF_RT=$TOP/build/libscalebpf-rt.a "$SB" cc --chip --no-counts -O2 -pthread \
		"$TOP/tests/workloads/chip_ws.c" \
		-o "$TMP/chip_ws_nc" 2>"$TMP/nc.err"; then
		bad "chip --no-counts: build"
		cat "$TMP/nc.err"
		return
	fi
	if SCALEBPF_CALIBRATION=$CAL SCALEBPF_CHIP_BYTES=4194304 \
		record_json "$j" -F 0 -- "$TMP/chip_ws_nc" stream 4 1 2000000; then
		jqcheck "chip --no-counts: 7 of 8 at every size, every access counted, no block counts" "$j" \
			"(.chip[0].hit_ratio | all((. - 7 / 8 | fabs) <= 0.001)) and .chip[0].mode == \"exact\" and
			 .chip[0].accesses >= 2000000 and .chip[0].accesses <= 2000200 and
			 .meta.exact_blocks == \"0\" and .meta.exact_batches == \"0\""
	else
		bad "chip --no-counts: record"
	fi
	expect_fail "cc --no-counts alone is refused (nothing to instrument)" "nothing to instrument" \
		"$SB" cc --no-counts -O2 "$TOP/tests/workloads/chip_ws.c" -o "$TMP/nc_none"
}

# Verdicts from a calibration with known numbers: the file measured above,
# its effective cache set to 4 MB, shared by both CPUs, and its bandwidth
# to 1 byte/s (every region is bandwidth-bound from 2 threads) or to 1
# EB/s (cache-bound is then impossible: it needs 1% of the machine's
# bandwidth more than linear); or one cache per CPU (no division).
chip_verdict_group() {
	local j=$TMP/chip_verdict.json
	[ -s "$CAL" ] || { bad "chip verdict: no calibration to edit"; return; }
	sed -e 's/^llc_effective .*/llc_effective 4194304/' -e 's/^bandwidth_all .*/bandwidth_all 1/' \
		-e 's/^llc_effective_shared_by .*/llc_effective_shared_by 2/' "$CAL" >"$TMP/cal.slow"
	sed -e 's/^llc_effective .*/llc_effective 4194304/' \
		-e 's/^llc_effective_shared_by .*/llc_effective_shared_by 2/' \
		-e 's/^bandwidth_all .*/bandwidth_all 1000000000000000000/' "$CAL" >"$TMP/cal.fast"
	sed -e 's/^llc_effective .*/llc_effective 4194304/' \
		-e 's/^llc_effective_shared_by .*/llc_effective_shared_by 1/' "$CAL" >"$TMP/cal.private"
	if SCALEBPF_CALIBRATION=$TMP/cal.slow SCALEBPF_CHIP_BYTES=4194304 \
		record_json "$j" -F 0 -- "$CW" random 2560 1 2000000; then
		jqcheck "chip verdict: the recording's calibration is in the profile" "$j" \
			".chip[0].machine.llc_effective_bytes == 4194304 and .chip[0].machine.bandwidth == 1"
		jqcheck "chip verdict: 1 byte/s of memory: bandwidth-bound from 2 threads" "$j" \
			".chip[0].verdict == \"bandwidth-bound\" and .chip[0].verdict_from_threads == 2"
		jqcheck "chip verdict: 2 threads each get 2 MB: the bandwidth they need exceeds linear" "$j" \
			".chip[0].bandwidth[\"2\"] > 1.5 * .chip[0].bandwidth_linear[\"2\"]"
	else
		bad "chip verdict: record"
	fi
	j=$TMP/chip_verdict_private.json
	if SCALEBPF_CALIBRATION=$TMP/cal.private SCALEBPF_CHIP_BYTES=4194304 \
		record_json "$j" -F 0 -- "$CW" random 2560 1 2000000; then
		jqcheck "chip verdict: a cache per CPU (measured): 2 threads keep 4 MB each, linear" "$j" \
			"(.chip[0].bandwidth[\"2\"] - .chip[0].bandwidth_linear[\"2\"] | fabs) <= 1 and
			 (.chip[0].slowdown[\"2\"] - 1 | fabs) < 1e-9"
	else
		bad "chip verdict: record (private)"
	fi
	j=$TMP/chip_verdict_fast.json
	if SCALEBPF_CALIBRATION=$TMP/cal.fast SCALEBPF_CHIP_BYTES=4194304 \
		record_json "$j" -F 0 -- "$CW" random 2560 1 2000000; then
		jqcheck "chip verdict: unbounded memory: scales" "$j" ".chip[0].verdict == \"scales\""
	else
		bad "chip verdict: record (fast)"
	fi
}

# --times: the plain build's recording gives the sections' times.
chip_times_group() {
	local plain=$TMP/chip_plain.json j=$TMP/chip_times.json
	if record_json "$plain" -- "$WL/chip_ws" random 2560 2 2000000; then
		"$SB" report -i "$TMP/chip_random-2.sbp" --times "${plain%.json}.sbp" --format json >"$j"
		jqcheck "chip --times: the section's busy time is the plain recording's" "$j" \
			".chip[0].time_from == \"plain recording\" and .chip[0].busy_ns == ($(jq \
			 '[.sections[] | select(.kind == "join")][0].per_thread | map(.busy_ns) | add' \
			 "$plain"))"
		check "chip --times: the text says where the times came from" bash -c \
			"'$SB' report -i '$TMP/chip_random-2.sbp' --times '${plain%.json}.sbp' | grep -q '1 of 1 regions. from'"
	else
		bad "chip --times: record the plain build"
	fi
	expect_fail "chip --times: a profile that cannot be read is refused" "times" \
		"$SB" report -i "$TMP/chip_random-2.sbp" --times "$TMP/none.sbp"
}

# --region: a serial program's two phases (tests/workloads/chip_phases.c,
# each a function of random reads over an array of its own) as regions
# of their own, each against its analytic curve, and the whole run; in
# threads; the plain build's times by name; a name that is no function.
chip_region_group() {
	local j=$TMP/chip_region.json e=$WL/exact/chip_phases n=2000000
	local fn='[.chip[] | select(.kind == "function" and .region == $f)][0]'
	if SCALEBPF_CALIBRATION=$CAL SCALEBPF_CHIP_BYTES=4194304 record_json "$j" -F 0 \
		--region phase_small --region phase_large -- "$e" 896 2816 "$n"; then
		# W = 896 KB and 2816 KB, 256 KB steps: C / W, less each line's
		# first touch (W off the steps: where C = W exactly, the
		# CacheSets' hashing of an array whose ends are not aligned to
		# its blocks puts 5 lines in some 4-deep sets, 0.91 for 0.99)
		for spec in "phase_small 3.5 14336" "phase_large 11 45056"; do
			set -- $spec
			jqcheck "chip region $1: hit ratio at each of 16 sizes within 0.02 of C / W" "$j" \
				"\"$1\" as \$f | $fn | .hit_ratio | to_entries | all(. as \$e |
				 (\$e.key + 1) as \$i | (([\$i / $2, 1] | min) * (1 - $3 / $n)) as \$w |
				 (\$e.value - \$w | fabs) <= 0.02)"
			jqcheck "chip region $1: a function, exact, 1 thread, its own accesses only" "$j" \
				"\"$1\" as \$f | $fn | .mode == \"exact\" and .threads_profiled == 1 and
				 .accesses >= $n and .accesses <= $n + 100 and .busy_ns > 0"
		done
		jqcheck "chip region: a serial program's whole run is a region, both phases in it" "$j" \
			"[.chip[] | select(.kind == \"run\")] | length == 1 and .[0].accesses >= 2 * $n"
		check "chip region: the text lists each function's calls" bash -c \
			"'$SB' report -i '${j%.json}.sbp' | grep -q '^  phase_large: 1 call, '"
	else
		bad "chip region: record"
	fi
	j=$TMP/chip_region_mt.json
	if SCALEBPF_CALIBRATION=$CAL SCALEBPF_CHIP_BYTES=4194304 record_json "$j" -F 0 \
		--region phase_small -- "$e" 1024 3072 500000 3; then
		jqcheck "chip region in 3 threads: each thread's calls, summed" "$j" \
			"\"phase_small\" as \$f | $fn | .threads_profiled == 3 and
			 .accesses >= 1500000 and .accesses <= 1500300"
	else
		bad "chip region in threads: record"
	fi
	if record_json "$TMP/chip_region_plain.json" --region phase_small --region phase_large \
		-- "$WL/clang/chip_phases" 1024 3072 "$n"; then
		"$SB" report -i "$TMP/chip_region.sbp" --times "$TMP/chip_region_plain.sbp" \
			--format json >"$TMP/chip_region_times.json"
		jqcheck "chip region --times: a function's time is the plain build's, by name" \
			"$TMP/chip_region_times.json" \
			"\"phase_large\" as \$f | $fn | .time_from == \"plain recording\" and
			 .busy_ns == ($(jq -r '.meta.chip_region_1_busy_ns' "$TMP/chip_region_plain.json"))"
	else
		bad "chip region: record the plain build"
	fi
	# -p: the serial program began before the attach, and says where its
	# counters are only now and then (every 256 segments: it never would
	# again); phase_large, entered after the attach, is read through the
	# thread's TLS.  (n: phase_small outlasts a slow attach, ~2 s.)
	j=$TMP/chip_region_p.json
	SCALEBPF_CALIBRATION=$CAL SCALEBPF_CHIP_BYTES=4194304 "$e" 896 2816 50000000 &
	local w=$!
	sleep 0.3
	if record_json "$j" -F 0 --region phase_large -p "$w"; then
		wait "$w"
		jqcheck "chip region -p: a function entered after the attach, read through TLS" "$j" \
			"\"phase_large\" as \$f | $fn | .mode == \"exact\" and .threads_profiled == 1 and
			 .accesses >= 50000000 and .accesses <= 50000100 and
			 (.hit_ratio | to_entries | all(. as \$e | (\$e.key + 1) as \$i |
			  (([\$i / 11, 1] | min) - \$e.value | fabs) <= 0.02))"
	else
		wait "$w"
		bad "chip region -p: record"
	fi
	expect_fail "chip region: a name that is no function is refused" "no such function" \
		"$SB" record -q -o "$TMP/chip_region_bad.sbp" --region no_such_phase -- "$e" 1 1 1
	check "chip region: ... with that message alone (not 'cannot read the executable')" \
		bash -c "! grep -q 'cannot read' '$TMP/ef.err'"
}

# record --chip (experimental): footprint probes on a plain build,
# random reads over 2 MB for ~3 s: the footprint windows of 5 ms and
# more show is the array (all its granules are read within 1 ms; their
# mean within 30%: each window's own error is ~12% with ~250 probes, the
# program's other memory adds a little), shorter windows show less, and
# there is no hit ratio.
chip_sampled_group() {
	local j=$TMP/chip_sampled.json
	if SCALEBPF_CALIBRATION=$CAL record_json "$j" --chip-probes 300 -- "$WL/clang/chip_ws" \
		random 2048 1 600000000; then
		jqcheck "chip sampled: one whole-run row, sampled, no hit ratio, its probes counted" "$j" \
			"(.chip | length) == 1 and .chip[0].mode == \"sampled\" and .chip[0].kind == \"run\" and
			 .chip[0].hit_ratio == null and (.meta.chip_fp_probes | tonumber) >= 500"
		jqcheck "chip sampled: windows of 5 ms and more show the 2 MB array, within 30%" "$j" \
			"[.chip[0].footprint[] | select(.window_ns >= 4000000) | .bytes] | length >= 2 and
			 (add / length) >= 0.7 * 2097152 and (add / length) <= 1.3 * 2097152" ||
			echo "     footprint (window ns, bytes): $(jq -c '[.chip[0].footprint[] |
				[.window_ns, .bytes]]' "$j")"
		jqcheck "chip sampled: the windows ascend, the shortest shows less than the longest" "$j" \
			"(.chip[0].footprint | map(.window_ns) | . == sort) and
			 .chip[0].footprint[0].bytes < .chip[0].footprint[-1].bytes"
	else
		bad "chip sampled: record"
	fi
	expect_fail "chip sampled: --chip without samples (-F 0) is refused" "needs cpu-clock samples" \
		"$SB" record -q -F 0 --chip -o "$TMP/chip_nosamples.sbp" -- "$WL/clang/chip_ws" random 64 1 1
}

# record --chip's reuse probes (record_reuse.h, the PMU path) end to end
# on a machine without a PMU: SCALEBPF_REUSE_COUNTER=task-clock counts
# each thread's CPU nanoseconds instead of its memory operations, and the
# candidates come from software samples.  A chase round and round 2 MB
# reads each word once a pass, so a probe's reuse between its two traps
# is one pass of CPU time (the loop's own, CHIP_WS_CPU_FILE) and a trap's
# cost (~6 us).  Every trap's count is read by BPF in the trapping
# thread's context (none unread), and the report says what counted.
chip_reuse_group() {
	local j=$TMP/chip_reuse.json cpu=$TMP/chip_reuse.cpu pass
	rm -f "$cpu"
	if CHIP_WS_CPU_FILE=$cpu SCALEBPF_REUSE_COUNTER=task-clock SCALEBPF_CALIBRATION=$CAL \
		record_json "$j" --chip-probes 300 -- "$WL/clang/chip_ws" chase 2048 1 400000000 &&
		[ -s "$cpu" ]; then
		pass=$(( $(cat "$cpu") * 32768 / 400000000 ))
		jqcheck "chip reuse: a whole-run row of mode sampled-pmu from 100+ reuses, none unread" \
			"$j" '(.chip | length) == 1 and .chip[0].mode == "sampled-pmu" and
			 .chip[0].reuse_samples >= 100 and (.meta.chip_rdx_reuses | tonumber) >= 100 and
			 (.meta.chip_rdx_unread | tonumber) == 0' ||
			echo "     $(jq -c '[.chip[0].mode, .chip[0].reuse_samples, (.meta |
				with_entries(select(.key | startswith("chip_rdx"))))]' "$j")"
		jqcheck "chip reuse: the median reuse is a pass over 2 MB ($pass ns of CPU) and a trap" \
			"$j" "(.meta.chip_rdx_reuse_median | tonumber) as \$m |
			 \$m >= 0.8 * $pass and \$m <= 1.2 * $pass + 10000" ||
			echo "     median: $(jq -r .meta.chip_rdx_reuse_median "$j") ns"
		jqcheck "chip reuse: the report names the counter" "$j" \
			'.chip[0].confidence | test("task-clock")'
	else
		bad "chip reuse: record"
	fi
}

# record --chip per section: an OpenMP program whose steps run a region of
# random reads over 256 KB, then one over 8 MB (~100 ms each,
# tests/workloads/chip_regions.c), two threads.  A probe belongs to the
# section whose instance held its thread for its whole window
# (analysis/chip/chip_probes.h): with windows of 20 ms at most, most do.
# Footprint probes (gcc, libgomp): the large region's windows of 5 ms and
# more show at least a quarter of its array (a thread's rate under the
# recorder varies with the host) and four times the small region's.
# Reuse probes on the test counter (clang, libomp): the small region's
# reuses are short, the large one's long, so at 2 MB of cache (the 8th
# size) the small one hits more, by far.  And --region functions.
chip_sections_group() {
	local j=$TMP/chip_sections.json small large
	small=$(grep -n 'SITE:small' "$TOP/tests/workloads/chip_regions.c" | cut -d: -f1)
	large=$(grep -n 'SITE:large' "$TOP/tests/workloads/chip_regions.c" | cut -d: -f1)
	local rs="[.chip[] | select(.kind == \"section\" and (.region | endswith(\"chip_regions.c:$small)\")))][0]"
	local rl="[.chip[] | select(.kind == \"section\" and (.region | endswith(\"chip_regions.c:$large)\")))][0]"
	if OMP_NUM_THREADS=2 SCALEBPF_CALIBRATION=$CAL record_json "$j" --chip-probes 300 -- \
		"$WL/chip_regions" 256 8192 15 33000000 6000000; then
		jqcheck "chip sections: a sampled row per region and the whole run's" "$j" \
			"($rs.mode == \"sampled\") and ($rl.mode == \"sampled\") and
			 ([.chip[] | select(.kind == \"run\")] | length) == 1" ||
			echo "     rows: $(jq -c '[.chip[] | [.kind, .region, .mode]]' "$j")"
		jqcheck "chip sections: 80% of the probes' windows fall inside one region" "$j" \
			'(.meta.chip_fp_section_probes | tonumber) >=
			 0.8 * ((.meta.chip_fp_probes_kept | split("/"))[0] | tonumber)'
		jqcheck "chip sections: the 8 MB region's long windows show 2 MB+, 4x the 256 KB one's" \
			"$j" "([$rl.footprint[] | select(.window_ns >= 4500000) | .bytes] | add / length) as \$l |
			 ([$rs.footprint[] | select(.window_ns >= 4500000) | .bytes] | add / length) as \$s |
			 \$l >= 2097152 and \$l >= 4 * \$s" ||
			echo "     footprints (window ns, KB): $(jq -c "[$rs, $rl] | map([.footprint[] |
				[.window_ns, (.bytes / 1024 | floor)]])" "$j")"
	else
		bad "chip sections: record"
	fi
	if OMP_NUM_THREADS=2 SCALEBPF_REUSE_COUNTER=task-clock SCALEBPF_CALIBRATION=$CAL \
		record_json "$j" --chip-probes 300 -- "$WL/clang/chip_regions" 256 8192 15 33000000 6000000
	then
		jqcheck "chip sections: reuse rows per region, 40+ reuses each" "$j" \
			"($rs.mode == \"sampled-pmu\") and ($rl.mode == \"sampled-pmu\") and
			 $rs.reuse_samples >= 40 and $rl.reuse_samples >= 40"
		jqcheck "chip sections: at 2 MB the 256 KB region hits more than the 8 MB one, by 0.3" \
			"$j" "$rs.hit_ratio[7] >= $rl.hit_ratio[7] + 0.3" ||
			echo "     hit ratios: $(jq -c "[$rs, $rl] | map(.hit_ratio)" "$j")"
	else
		bad "chip sections: record with reuse probes"
	fi
	# the paper's setting: a serial program's phases as --region
	# functions (tests/workloads/chip_phases.c, gcc -O2, one thread),
	# 256 KB then 8 MB: a probe counts for a function when its window
	# lay inside one of its calls
	local fs='[.chip[] | select(.kind == "function" and .region == "phase_small")][0]'
	local fl='[.chip[] | select(.kind == "function" and .region == "phase_large")][0]'
	if SCALEBPF_CALIBRATION=$CAL record_json "$j" --chip-probes 300 --region phase_small \
		--region phase_large -- "$WL/chip_phases" 256 8192 150000000; then
		jqcheck "chip sections: a sampled row per --region function of a serial program" \
			"$j" "($fs.mode == \"sampled\") and ($fl.mode == \"sampled\") and
			 $fs.threads_profiled == 1" ||
			echo "     rows: $(jq -c '[.chip[] | [.kind, .region, .mode]]' "$j")"
		# (~90 probes in its 0.5 s: the mean's own error is 15-20%)
		jqcheck "chip sections: phase_small's windows show its 256 KB, within 40%" "$j" \
			"([$fs.footprint[] | .bytes] | add / length) as \$s |
			 \$s >= 0.6 * 262144 and \$s <= 1.4 * 262144" ||
			echo "     footprints (window ns, KB): $(jq -c "[$fs, $fl] | map([.footprint[] |
				[.window_ns, (.bytes / 1024 | floor)]])" "$j")"
		jqcheck "chip sections: phase_large's windows of 10 ms+ show half its 8 MB or more" \
			"$j" "[$fl.footprint[] | select(.window_ns >= 9000000) | .bytes] |
			 length >= 1 and min >= 4194304"
	else
		bad "chip sections: record with --region"
	fi
}

if [ -x "$CW" ]; then
	chip_calibrate_group
	# its windows are timed: a busy host stretches the short ones, and
	# the ASan recorder wakes later (2 failures in 12 local CI runs)
	timed_group "chip sampled" chip_sampled_group
	# a pass's CPU time against probes' counts of it: host noise too
	timed_group "chip reuse" chip_reuse_group
	# footprints are timed too
	timed_group "chip sections" chip_sections_group
	chip_region_group
	chip_exact_group
	chip_nocounts_group
	timed_group "chip shards" chip_shards_group
	chip_times_group
	chip_verdict_group
else
	bad "chip: $CW not built (make workloads-exact)"
fi
