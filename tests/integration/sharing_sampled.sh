# Sampled sharing (issue 13, record mode): candidates from sampled data
# addresses, confirmed by hardware watchpoints, on programs built as users
# build them (gcc and clang, -O2, no frame-pointer flags), each planting
# one kind of sharing (tests/workloads/share.c, share_omp.c):
#   packed    partial[]: false sharing        padded    nothing
#   mutex     hist[] under a mutex: true      flag      stage[]: true, across regions
#   readonly  nothing                          cyclic    an OpenMP row split element by
#   critical  hist[] in omp critical: true              element: false (heap)
# Each is recorded SB_SHARING_RUNS times (default 2) per compiler.  A
# reported variable is right when it is the planted one with the planted
# kind; anything else reported is wrong.  Precision (right / reported) and
# recall (planted found / planted) over all runs must be >= 0.9 (when the
# first runs fall short, as many again are recorded and the goal holds over
# all of them: a sequential sample, never a retry that forgets), and the
# padded and read-only programs must never get a report.  The table is
# printed.  (share_omp's split mode, big static chunks whose border lines
# are a few of many, costs too little time to be sampled: exact mode,
# sharing.sh, covers it.)
SS_RUNS=${SB_SHARING_RUNS:-2}
SS_TABLE=$TMP/sharing_sampled.tsv

# ss_case NAME PLANTED KIND SCOPE OMP_THREADS PROGRAM ARGS...: PLANTED "-"
# for none; "heap" matches the unnamed heap ranges.
ss_case() {
	local name=$1 want=$2 kind=$3 scope=$4 omp=$5 cc dir j i got
	shift 5
	for cc in gcc clang; do
		dir=$WL
		[ $cc = clang ] && dir=$WL/clang
		if [ ! -x "$dir/$1" ]; then
			bad "sharing sampled $name ($cc): $dir/$1 not built"
			continue
		fi
		for i in $(seq "$SS_FIRST" $((SS_FIRST + SS_RUNS - 1))); do
			j=$TMP/ss_${name}_${cc}_$i.json
			if ! OMP_NUM_THREADS=$omp record_json "$j" -- "$dir/$@"; then
				bad "sharing sampled $name ($cc): record"
				continue
			fi
			got=$(jq -r '[.sharing[] | select(.mode == "sampled") |
				(if (.variable | startswith("heap or anonymous")) then "heap" else .variable end)
				+ ":" + .kind + ":" + .scope] | join("|")' "$j")
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$cc" "$i" "$want" "$kind" "$scope" \
				"${got:--}" >>"$SS_TABLE"
		done
	done
}

ss_cases() {
	ss_case packed partial false in_region 4 share packed 4 100 10000000
	ss_case padded - - - 4 share padded 4 100 10000000
	ss_case mutex hist true in_region 4 share mutex 4 20 1000000
	ss_case flag stage true across_region 4 share flag 4 400 5000000
	ss_case readonly - - - 4 share readonly 4 100 10000000
	ss_case cyclic heap false in_region 4 share_omp cyclic 4 100000 8000
	# libomp's critical at 4 threads on 2 cores takes 40 times longer
	# than at 2 (it spins, yields and sleeps in turn): 2 threads
	ss_case critical hist true in_region 2 share_omp critical 500 20000
}

# ss_score: over the whole table, ss_rep reported variables, ss_right of
# them the planted one with its kind (once a run), ss_planted planted,
# ss_found found, ss_scope found with the planted scope.
ss_score() {
	awk -F'\t' '
		{ n = split($7, v, "|"); found = 0
		  for (k = 1; k <= n; k++) {
			if (v[k] == "-") continue
			split(v[k], f, ":"); rep++
			# the planted one counts once: a second group of it
			# (two heap ranges) is reported, never right
			if (!found && f[1] == $4 && f[2] == $5) { right++; found = 1; scope += (f[3] == $6) }
		  }
		  if ($4 != "-") { planted++; recall += found } }
		END { printf "%d %d %d %d %d\n", rep, right, planted, recall, scope }' "$SS_TABLE" \
		>"$TMP/ss_score"
	read -r ss_rep ss_right ss_planted ss_found ss_scope <"$TMP/ss_score"
}

SS_FIRST=1
: >"$SS_TABLE"
if wl_built gcc share && wl_built gcc share_omp; then
	ss_cases
	ss_score
	# Sampling can miss a planted variable in a run (no sample named its
	# line before the run ended): below the goal, as many runs again, and
	# the goal holds over all of them.
	if [ $((10 * ss_right >= 9 * ss_rep && 10 * ss_found >= 9 * ss_planted)) = 0 ]; then
		echo "note: precision or recall below 0.9 over $SS_RUNS runs: $SS_RUNS more of each, scored with them"
		SS_FIRST=$((SS_FIRST + SS_RUNS))
		ss_cases
		ss_score
	fi
	echo "     sampled sharing, $((SS_FIRST + SS_RUNS - 1)) runs each (case, compiler, run, planted, reported):"
	awk -F'\t' '{ printf "     %-9s %-5s %s  %-8s %s\n", $1, $2, $3, $4, $7 }' "$SS_TABLE"
	echo "     reported $ss_rep, right $ss_right; planted $ss_planted, found $ss_found; scope right $ss_scope"
	check "sharing sampled: precision >= 0.9 ($ss_right of $ss_rep reported variables right)" \
		test $((ss_rep > 0 && 10 * ss_right >= 9 * ss_rep)) = 1
	check "sharing sampled: recall >= 0.9 ($ss_found of $ss_planted planted variables found)" \
		test $((ss_planted > 0 && 10 * ss_found >= 9 * ss_planted)) = 1
	check "sharing sampled: the scope (in/across region) is right for >= 0.9 of those found" \
		test $((ss_found > 0 && 10 * ss_scope >= 9 * ss_found)) = 1
	check "sharing sampled: padded and read-only programs get no report, in any run" \
		test "$(awk -F'\t' '$4 == "-" && $7 != "-"' "$SS_TABLE" | wc -l)" = 0
	j=$TMP/ss_packed_gcc_1.json
	jqcheck "sharing sampled: a verdict's evidence, section, references and the time to the first one are said" "$j" \
		'([.sharing[] | select(.mode == "sampled" and .variable == "partial")][0] |
		  .evidence.samples > 0 and .evidence.confirmations >= 2 and .section > 0 and
		  (.references | map(.function) | index("add_items")) != null and .parts == "[0..3]") and
		 (.meta.coherence_sampled_first_verdict_ms | tonumber) > 0 and
		 (.meta.coherence_sampled_arms | tonumber) > 0'
	jqcheck "sharing sampled: no watchpoint hit was lost (drops_watch stored, 0)" "$j" \
		'.meta.drops_watch == "0" and (.meta.coherence_sampled_hits | tonumber) > 0'
	check "sharing sampled: the text report ranks it with its evidence and fix" bash -c \
		"'$SB' report -i '${j%.json}.sbp' | grep -A10 'sampled, confirmed by watchpoints' |
		 grep -q 'partial .*false.*in region' &&
		 '$SB' report -i '${j%.json}.sbp' | grep -q 'evidence: .* watchpoint hits confirmed'"
fi

# Watchpoints off: candidates are kept, nothing is confirmed or reported,
# and the report says why.
if wl_built gcc share; then
	j=$TMP/ss_off.json
	if record_json "$j" --watch-rate 0 -- "$WL/share" packed 4 40 10000000; then
		jqcheck "sharing sampled: --watch-rate 0 arms nothing and reports nothing" "$j" \
			'([.sharing[] | select(.mode == "sampled")] | length) == 0 and
			 .meta.coherence_sampled_arms == "0" and
			 (.meta.coherence_sampled_unconfirmed | test("watch-rate 0"))'
		check "sharing sampled: the text report says it was not confirmed" bash -c \
			"'$SB' report -i '${j%.json}.sbp' | grep -q 'not confirmed: --watch-rate 0'"
	else
		bad "sharing sampled: record --watch-rate 0"
	fi
	# every debug register taken by another tool (CPU-wide breakpoints)
	j=$TMP/ss_enospc.json
	if analysis_tool hold_breakpoints "$TMP/hold_bp"; then
		"$TMP/hold_bp" >"$TMP/hold_bp.out" &
		hold=$!
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			grep -q held "$TMP/hold_bp.out" && break
			sleep 0.2
		done
		if record_json "$j" -- "$WL/share" packed 4 40 10000000; then
			jqcheck "sharing sampled: debug registers taken (ENOSPC): counted, nothing reported, said" "$j" \
				'(.meta.coherence_sampled_enospc | tonumber) > 0 and
				 ([.sharing[] | select(.mode == "sampled")] | length) == 0 and
				 (.meta.coherence_sampled_unconfirmed | test("ENOSPC"))'
			check "sharing sampled: the text report says the slots were taken" bash -c \
				"'$SB' report -i '${j%.json}.sbp' | grep -q 'not confirmed: every debug register was taken'"
		else
			bad "sharing sampled: record with the debug registers taken"
		fi
		kill "$hold" 2>/dev/null
		wait "$hold" 2>/dev/null
	else
		bad "sharing sampled: build tests/tools/hold_breakpoints.c"
	fi
	expect_fail "sharing sampled: --watch-rate out of range is refused" "watch-rate" \
		"$SB" record --watch-rate 100001 -- /bin/true
fi
