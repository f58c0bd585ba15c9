# Exact-mode sharing (issue 13): ccSIM over the traces of `scalebpf cc
# --trace-mem` programs, checked against counts derived by hand for the
# piped order (every thread's run of a region, one after the other, in tid
# order; a region is the time between two barriers).  tests/workloads/
# share.c and share_omp.c plant one kind of sharing each.
SH=$WL/exact

# sharing_record NAME OUT ARGS...: record a trace build, report JSON.
sharing_record() {
	local w=$1 out=$2
	shift 2
	record_json "$out" -- "$SH/$w" "$@"
}

# var JSON MODE NAME: the jq path of one variable's sharing entry.
var() {
	echo "[.sharing[] | select(.mode == \"$1\" and .variable == \"$2\")][0]"
}

# N threads (workers, tid order after main), R rounds, each round a
# region.  Piped, thread k's first access of a round finds the line last
# written by thread k - 1 (k = 0: by thread N - 1, a round before):
#   packed:  partial[] (one line), each thread its own double:
#            invalidations R*N - 1, all false: R*(N-1) in region, R - 1
#            across; coherence misses (R-1)*N, false.
#   mutex:   hist[8] under one mutex, every thread every bucket: the same
#            counts, true; the in-region ones lock-protected.
#   flag:    stage[8] written by worker 0 in even rounds, read by the
#            other N - 1 in odd ones: every write round after the first
#            invalidates the N - 1 readers' copies (true, across regions)
#            and every read round after the first misses on them:
#            (R/2 - 1)*(N-1) of each, per line of it: clang -O2 splits the
#            static array, indexed by constants only, into 8 scalars
#            (stage.0 ... stage.7) that the linker places apart.
# Besides, main writes each worker's arguments and reads its result back:
# a few invalidations on the heap, not of the planted variables.
sharing_piped_group() {
	local n=4 r=6 j
	j=$TMP/share_packed.json
	if sharing_record share "$j" packed $n $r 1000; then
		jqcheck "sharing packed: partial[] is false sharing in region, $((r * n - 1)) invalidations, $(((r - 1) * n)) coherence misses (piped)" "$j" \
			"$(var piped partial) | .kind == \"false\" and .scope == \"in_region\" and .invalidations == $((r * n - 1)) and .coherence_misses == $(((r - 1) * n)) and .threads == $n"
		jqcheck "sharing packed: the reference is add_items' load+store, its invalidators the same store on other threads" "$j" \
			"$(var piped partial) | (.references | map(.function) | unique) == [\"add_items\"] and (.invalidators | length) >= 1 and (.invalidators | map(.pct) | add | . > 99.9 and . < 100.1)"
		jqcheck "sharing packed: every reference and invalidator has its source line (the hook call's, not the next instruction's)" "$j" \
			"$(var piped partial) | ([.references[].location, .invalidators[].location] | length > 0 and all(test(\"^share\\\\.c:[0-9]+$\")))"
		jqcheck "sharing packed: the invalidators merged by store and thread, most first" "$j" \
			"$(var piped partial).invalidators | (map([.location, .thread]) | unique | length) == length and (map(.pct) | . == (sort | reverse))"
		jqcheck "sharing packed: the line holds partial[0..$((n - 1))] (DWARF)" "$j" \
			"$(var piped partial).parts == \"[0..$((n - 1))]\""
		jqcheck "sharing packed: nothing else is shared" "$j" \
			"[.sharing[] | select(.mode == \"piped\")] | length == 1"
		jqcheck "sharing packed: interleaved order ping-pongs more than piped" "$j" \
			"$(var interleaved partial).invalidations > $(var piped partial).invalidations"
		check "sharing packed: the text report names partial, false sharing and the padding fix" bash -c \
			"'$SB' report -i '${j%.json}.sbp' | grep -A8 '^Sharing' | grep -q 'partial .*false.*in region' &&
			 '$SB' report -i '${j%.json}.sbp' | grep -q 'fix: false sharing: pad or align'"
	else
		bad "sharing packed: record"
	fi
	j=$TMP/share_padded.json
	if sharing_record share "$j" padded $n $r 1000; then
		jqcheck "sharing padded: padded[] is not reported (each double alone on its line)" "$j" \
			'([.sharing[] | select(.variable == "padded")] | length) == 0 and (.meta.coherence_references | tonumber) > 0'
	else
		bad "sharing padded: record"
	fi
	j=$TMP/share_readonly.json
	if sharing_record share "$j" readonly $n $r 1000; then
		jqcheck "sharing readonly: table[], read by all, is not reported" "$j" \
			'([.sharing[] | select(.variable == "table")] | length) == 0 and (.meta.coherence_references | tonumber) > 0'
	else
		bad "sharing readonly: record"
	fi
	j=$TMP/share_mutex.json
	if sharing_record share "$j" mutex $n $r 100; then
		jqcheck "sharing mutex: hist[] is true sharing in region, $((r * n - 1)) invalidations, $((r * (n - 1))) lock-protected, $(((r - 1) * n)) coherence misses (piped)" "$j" \
			"$(var piped hist) | .kind == \"true\" and .scope == \"in_region\" and .invalidations == $((r * n - 1)) and .in_region_true_locked == $((r * (n - 1))) and .in_region_true_unlocked == 0 and .coherence_misses == $(((r - 1) * n))"
		jqcheck "sharing mutex: interleaved, the lock changes hands at every section: far more invalidations than piped" "$j" \
			"$(var interleaved hist).invalidations > 10 * $(var piped hist).invalidations"
		jqcheck "sharing mutex: no race under the lock" "$j" '(.sharing_races | length) == 0'
		jqcheck "sharing mutex: every bucket, hist[0..7], is shared (DWARF)" "$j" \
			"$(var piped hist).parts == \"[0..7]\""
	else
		bad "sharing mutex: record"
	fi
	j=$TMP/share_flag.json
	if sharing_record share "$j" flag $n $r 10; then
		jqcheck "sharing flag: stage[] is true sharing across regions, $(((r / 2 - 1) * (n - 1))) invalidations and coherence misses per line (piped)" "$j" \
			"$(var piped stage) | .kind == \"true\" and .scope == \"across_region\" and .lines >= 1 and .invalidations == .lines * $(((r / 2 - 1) * (n - 1))) and .coherence_misses == .lines * $(((r / 2 - 1) * (n - 1)))"
	else
		bad "sharing flag: record"
	fi
}
wl_built clang share && sharing_piped_group

# OpenMP (libomp): a parallel loop over each row's columns, 4 threads of
# 250 columns: the borders at 2000, 4000 and 6000 bytes fall inside lines,
# so each row's loop has 3 lines written by two threads: 3 x ROWS false,
# in-region invalidations.  The master then sums the matrix: of those it
# had, it lost only its own border line, one coherence miss per row.  Its
# stack holds the loop's shared variables (the row pointer), which it
# writes every row and the team reads: named as its stack.
# A critical section around hist[]: one region; piped, each of the 3
# threads after the first takes the line from the one before.
sharing_omp_group() {
	local rows=5 j
	j=$TMP/share_split.json
	if OMP_NUM_THREADS=4 sharing_record share_omp "$j" split $rows 1000; then
		jqcheck "sharing omp split: the matrix's border lines are false sharing, $((3 * rows)) invalidations (piped)" "$j" \
			"[.sharing[] | select(.mode == \"piped\" and .kind == \"false\")] | length == 1 and (.[0] | .scope == \"in_region\" and .invalidations == $((3 * rows)) and .coherence_misses == $rows and .lines == $((3 * rows)) and (.variable | startswith(\"heap or anonymous\")))"
		jqcheck "sharing omp split: the row pointer on the master's stack is named as its stack" "$j" \
			"[.sharing[] | select(.mode == \"piped\" and (.variable | test(\"^the stack of thread [0-9]+\$\")))] | length == 1"
	else
		bad "sharing omp split: record"
	fi
	j=$TMP/share_crit.json
	if OMP_NUM_THREADS=4 sharing_record share_omp "$j" critical 2 50; then
		jqcheck "sharing omp critical: hist[] true in region, lock-protected, 3 invalidations (piped)" "$j" \
			"$(var piped hist) | .kind == \"true\" and .scope == \"in_region\" and .invalidations == 3 and .in_region_true_locked == 3"
		jqcheck "sharing omp critical: interleaved, the critical section ping-pongs" "$j" \
			"$(var interleaved hist).invalidations > 10 * $(var piped hist).invalidations"
	else
		bad "sharing omp critical: record"
	fi
}
wl_built clang share_omp && sharing_omp_group

# A trace build whose traces cannot be written (SCALEBPF_TRACE_DIR under
# a file): the profile is still written, and says why there is no sharing.
sharing_missing_group() {
	local j=$TMP/share_gone.json
	: >"$TMP/afile"
	if SCALEBPF_TRACE_DIR=$TMP/afile/traces record_json "$j" -- "$SH/share" packed 2 2 10; then
		jqcheck "sharing: traces not written: the profile says why nothing was simulated" "$j" \
			'.meta.coherence_error | test("afile/traces")'
		check "sharing: traces not written: the text report says it" bash -c \
			"'$SB' report -i '$TMP/share_gone.sbp' | grep -q 'not simulated'"
	else
		bad "sharing: traces not written: record"
	fi
}
wl_built clang share && sharing_missing_group
