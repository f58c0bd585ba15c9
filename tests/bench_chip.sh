# tests/bench_chip.sh - sourced by tests/bench.sh (its tmpdir, die,
# run_timed, median, PAIRS, SCALEBPF and WORKLOADS).
# CHiP (issue 14), side by side in one run, by the loop's own CPU time
# (CHIP_WS_CPU_FILE: this host's memory latency drifts by 2-5x between
# minutes, and two vCPUs often share 1.2 host CPUs, which wall time shows):
# chip_ws (one thread) built plain (clang), with
# `scalebpf cc` (exact block counts), with `cc --chip` (every load through
# the cache hit profile), with --chip at SHARDS R = 0.01, and with that and
# --no-counts (the cache profile alone, no call per block); unrecorded
# (what the instrumentation costs).  Each round runs all five back to
# back; a variant's ratio is the median over PAIRS rounds of its time over
# that round's plain run (drift between rounds cancels), with the range;
# on random reads (a plain build overlaps them) and an 8-byte stream.
# Goals: --chip <= 10x the plain run (the paper's Pin tool: ~10x),
# SHARDS <= 3x.  And the profile's memory per thread (§IV-D: ~2 MB for
# 16 MB mapped) at this machine's default size.
echo
cw_plain=$WORKLOADS/clang/chip_ws cw_exact=$WORKLOADS/exact/chip_ws
# chip_cpu VAR BIN ARGS...: the loop's CPU time (ns) of one run into VAR
chip_cpu() {
	local var=$1
	shift
	rm -f "$tmpdir/cpu"
	CHIP_WS_CPU_FILE=$tmpdir/cpu "$@" >"$tmpdir/run.log" 2>&1 || die "failed: $*"
	[ -s "$tmpdir/cpu" ] || die "no loop time from: $*"
	eval "$var=\$(cat \"\$tmpdir/cpu\")"
}
# chip_ratio LIST: "median (min-max)" of a list of ratios x 1000
chip_ratio() {
	# shellcheck disable=SC2086
	printf '%s\n' $1 | sort -n | awk '{ v[NR] = $1 } END {
		printf "%.2fx (%.2f-%.2f)", (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) / 1000,
		       v[1] / 1000, v[NR] / 1000 }'
}
if [ -x "$cw_plain" ] && [ -x "$cw_exact" ]; then
	"$SCALEBPF" cc -O2 -pthread tests/workloads/chip_ws.c -o "$tmpdir/chip_counts" 2>/dev/null ||
		die "scalebpf cc of chip_ws failed"
	"$SCALEBPF" cc --chip --no-counts -O2 -pthread tests/workloads/chip_ws.c -o "$tmpdir/chip_only" 2>/dev/null ||
		die "scalebpf cc --chip --no-counts of chip_ws failed"
	# random: independent loads a plain build overlaps (its worst case:
	# a call before each load limits how many are in flight) over 6 MB
	# (DRAM here) and 256 KB (in cache); stream: 8-byte strides, mostly hits
	for spec in "random 6144 1 20000000" "random 256 1 20000000" "stream 4 1 50000000"; do
		echo
		echo "CHiP, exact (chip_ws $spec; median of $PAIRS rounds of the loop's CPU time, unrecorded)"
		cp_="" rc_="" rh_="" rs_="" ro_=""
		i=0
		# shellcheck disable=SC2086
		while [ "$i" -lt "$PAIRS" ]; do
			chip_cpu p "$cw_plain" $spec
			chip_cpu c "$tmpdir/chip_counts" $spec
			SCALEBPF_CHIP_BYTES=16777216 chip_cpu h "$cw_exact" $spec
			SCALEBPF_CHIP_BYTES=16777216 SCALEBPF_CHIP_RATE=0.01 chip_cpu s "$cw_exact" $spec
			SCALEBPF_CHIP_BYTES=16777216 SCALEBPF_CHIP_RATE=0.01 chip_cpu o "$tmpdir/chip_only" $spec
			cp_="$cp_ $p"
			rc_="$rc_ $((c * 1000 / p))" rh_="$rh_ $((h * 1000 / p))"
			rs_="$rs_ $((s * 1000 / p))" ro_="$ro_ $((o * 1000 / p))"
			i=$((i + 1))
		done
		# shellcheck disable=SC2086
		printf '  plain %s s of loop CPU (median); scalebpf cc (block counts) %s; --chip %s; --chip at R = 0.01 %s; that with --no-counts %s\n' \
			"$(median $cp_)" "$(chip_ratio "$rc_")" "$(chip_ratio "$rh_")" \
			"$(chip_ratio "$rs_")" "$(chip_ratio "$ro_")"
	done
	echo "  goals: --chip <= 10x, SHARDS <= 3x the plain run (the cache profile alone: --no-counts)"
	build/tests/test_chip --memory 2>/dev/null | grep '^chip memory:' ||
		die "test_chip --memory failed"
else
	echo
	echo "CHiP: skipped: $cw_plain or $cw_exact not built"
fi

# Sampled CHiP (record --chip, experimental): what its footprint probes
# add to a default recording, by the loop's own CPU time (this host's
# memory and CPUs vary by 1.5x from run to run in wall time).  Each round
# runs both, back to back, in an order that alternates; the ratio is the
# median of the rounds' ratios (host drift between rounds cancels), with
# their range (goal: <= 1.03).
if [ -x "$cw_plain" ]; then
	rounds=$((PAIRS * 2 + 1))
	echo
	echo "CHiP, sampled (record --chip on chip_ws random 1024 1 400000000; $rounds rounds)"
	ratios="" rd="" rc=""
	i=0
	while [ "$i" -lt "$rounds" ]; do
		order="plain chip"
		[ $((i % 2)) -eq 1 ] && order="chip plain"
		for which in $order; do
			opt=""
			[ "$which" = chip ] && opt=--chip
			# shellcheck disable=SC2086
			CHIP_WS_CPU_FILE=$tmpdir/cpu "$SCALEBPF" record -q $opt -o "$tmpdir/fp.sbp" -- \
				"$cw_plain" random 1024 1 400000000 >/dev/null 2>&1 ||
				die "record $opt of chip_ws failed"
			if [ -z "$opt" ]; then d=$(cat "$tmpdir/cpu"); else c=$(cat "$tmpdir/cpu"); fi
		done
		rd="$rd $d" rc="$rc $c"
		ratios="$ratios $(awk -v d="$d" -v c="$c" 'BEGIN { printf "%.0f", c / d * 1e9 }')"
		i=$((i + 1))
	done
	probes=$("$SCALEBPF" report -i "$tmpdir/fp.sbp" --format json | jq -r '.meta.chip_fp_probes // 0')
	# shellcheck disable=SC2086
	awk -v d="$(median $rd)" -v c="$(median $rc)" -v r="$(median $ratios)" -v n="$probes" \
	    -v lo="$(printf '%s\n' $ratios | sort -n | head -1)" -v hi="$(printf '%s\n' $ratios | sort -n | tail -1)" 'BEGIN {
		printf "  default recording %.3f s of loop CPU; with --chip %.3f s; ratio %.3fx (median of the rounds; %.3f-%.3f), %s probes in the last run; goal <= 1.03x\n",
		       d, c, r, lo / 1e9, hi / 1e9, n }'
fi

# Prediction against measurement (the issue's Fig. 5 check): chip_ws
# shuffle (a pointer chase through W's lines: each load waits) and micro
# (the paper's Fig. 5 micro-benchmark) alone and
# as two threads, each its own W; predicted from the one-thread exact
# profile with this machine's calibration (each of 2 threads gets half
# the effective cache; hits cost the cache's latency, misses DRAM's),
# measured as the loop's CPU time per load at 2 threads over 1 (CPU time:
# this VM's two vCPUs often get 1.2 host CPUs between them, which wall
# time would show as a slowdown).  Medians of 3.
if [ -x "$cw_plain" ] && [ -x "$cw_exact" ] && "$SCALEBPF" calibrate -q >"$tmpdir/cal.out" 2>&1; then
	echo
	grep -e 'last-level cache' -e 'shared by two CPUs' "$tmpdir/cal.out" | sed 's/^ */  machine: /'
	printf '  %-8s %-10s %10s %10s   %s\n' mode "working set" predicted measured "(slowdown per load, 2 threads over 1)"
	# shuffle: each load waits for the one before, as the model assumes;
	# micro (the paper's Fig. 5 itself): independent loads, which a core
	# overlaps, so a miss costs it less than the model's full DRAM latency
	for spec in "shuffle 512" "shuffle 1024" "shuffle 2048" "shuffle 4096" "shuffle 8192" \
		    "shuffle 16384" "micro 2048" "micro 4096" "micro 8192" "micro 16384"; do
		wl=${spec% *} kb=${spec#* } n=4000000
		if ! "$SCALEBPF" record -q -F 0 -o "$tmpdir/chip_pred.sbp" -- "$cw_exact" "$wl" "$kb" 1 "$n" \
			>/dev/null 2>&1; then
			echo "  $spec KB: the exact recording failed"
			continue
		fi
		pred=$("$SCALEBPF" report -i "$tmpdir/chip_pred.sbp" --format json |
		       jq -r '.chip[0].slowdown["2"] // 0')
		one="" two=""
		for r in 1 2 3; do
			for nt in 1 2; do
				CHIP_WS_CPU_FILE=$tmpdir/cpu "$cw_plain" "$wl" "$kb" "$nt" 20000000 ||
					die "chip_ws $wl $kb $nt failed"
				# per load: the threads' CPU time over their loads
				c=$(awk -v n="$nt" '{ printf "%.0f", $1 / n }' "$tmpdir/cpu")
				if [ "$nt" = 1 ]; then one="$one $c"; else two="$two $c"; fi
			done
		done
		# shellcheck disable=SC2086
		awk -v w="$wl" -v k="$kb" -v p="$pred" -v a="$(median $one)" -v b="$(median $two)" 'BEGIN {
			printf "  %-8s %-10s %9.2fx %9.2fx\n", w, k " KB", p, (a > 0 ? b / a : 0) }'
	done
	echo "  (CPU time per load; 2 vCPUs that are SMT siblings, or share a host's memory"
	echo "  bandwidth, slow each other with no cache in common: the model sees capacity only)"
fi
