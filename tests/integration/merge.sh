# `scalebpf report` over a directory of profiles, and `report --diff A B`
# (issue 17), against totals computed by hand from the inputs' own JSON
# reports:
#   - a directory holding one recording twice: every count doubles
#     (instances, lost time, per-thread busy by tid, waits, duration),
#     imbalance stays; an unreadable *.sbp is skipped, said and counted;
#     other files are not read;
#   - two recordings of barrier_ratio (gcc and clang -O2, different
#     processes): instances and lost time add, imbalance is the pooled
#     lost / capacity;
#   - --diff of 2 against 4 threads: imbalance 25% -> 37.5% (LIME's
#     analytic 1 - (N+1)/2N, within 5 points), the same instances;
#     --diff of a recording against the directory of it twice: lost time
#     per second the same, imbalance the same; a profile against itself:
#     nothing appears or vanishes;
#   - the merged profile through every output: HTML says it is merged,
#     pprof's wait per primitive equals the merged report's;
#   - bad input: --diff without B, a missing A, an empty directory, a
#     directory of nothing readable.
MG_PY=/usr/bin/python3
[ -x "$MG_PY" ] || MG_PY=python3

merge_group() {
	local d=$TMP/mg dir=$TMP/mg/twice two=$TMP/mg/two sel rc cl
	local loc
	loc=$(site barrier barrier_ratio.c)
	sel=$(section_at "$loc" barrier)
	mkdir -p "$dir" "$two"
	if ! record_json "$d/a4.json" -- "$(wl gcc barrier_ratio)" 4 40 3000 ||
	   ! record_json "$d/a2.json" -- "$(wl gcc barrier_ratio)" 2 40 6000; then
		bad "merge: record barrier_ratio"
		return
	fi
	cl=gcc
	wl_built clang barrier_ratio && cl=clang
	if ! record_json "$d/b4.json" -- "$(wl $cl barrier_ratio)" 4 40 3000; then
		bad "merge: record barrier_ratio ($cl)"
		return
	fi
	cp "$d/a4.sbp" "$dir/run-1.sbp"
	cp "$d/a4.sbp" "$dir/run-2.sbp"
	head -c 300 "$d/a4.sbp" >"$dir/run-3.sbp"      # cut short
	echo "not a profile" >"$dir/README.txt"
	"$SB" report -i "$dir" --format json >"$d/twice.json" 2>"$d/twice.err"
	rc=$?
	check "merge: a directory with an unreadable profile reports (rc=$rc)" test $rc -eq 0
	check "merge: the unreadable one is named on stderr" grep -q "warning: skipped.*run-3.sbp" "$d/twice.err"
	jqcheck "merge: twice: 2 profiles merged, 1 skipped, the first and the last named" "$d/twice.json" \
		'.meta.merged_profiles == "2" and .meta.merged_skipped == "1" and .meta.merged_first == "run-1.sbp" and .meta.merged_last == "run-2.sbp"'
	exq "merge: twice: the barrier section's instances and lost time double" "$d/twice.json" "$d/a4.json" \
		"($sel) as \$m | (\$r[0] | $sel) as \$a | \$m.instances == 2 * \$a.instances and \$m.lost_ns == 2 * \$a.lost_ns"
	exq "merge: twice: imbalance as in one (within 0.001 points)" "$d/twice.json" "$d/a4.json" \
		"(($sel).imbalance_pct - (\$r[0] | $sel).imbalance_pct | fabs) <= 0.001"
	exq "merge: twice: each thread's busy and wait double (same tids)" "$d/twice.json" "$d/a4.json" \
		"($sel | [.per_thread[] | [.tid, .busy_ns, .wait_ns]] | sort) == (\$r[0] | $sel | [.per_thread[] | [.tid, 2 * .busy_ns, 2 * .wait_ns]] | sort)"
	exq "merge: twice: waits per primitive double" "$d/twice.json" "$d/a4.json" \
		"([.waits[] | [.primitive, .count, .wait_ns]] | sort) == (\$r[0] | [.waits[] | [.primitive, 2 * .count, 2 * .wait_ns]] | sort)"
	exq "merge: twice: the duration adds, the start is the first's" "$d/twice.json" "$d/a4.json" \
		"(.meta.duration_ns | tonumber) == 2 * (\$r[0].meta.duration_ns | tonumber) and .meta.start_ns == \$r[0].meta.start_ns"
	exq "merge: twice: drops and records add" "$d/twice.json" "$d/a4.json" \
		"(.meta.records | tonumber) == 2 * (\$r[0].meta.records | tonumber) and .meta.drops_probe == \"0\""
	check "merge: the text report says what it merged" bash -c \
		"'$SB' report -i '$dir' 2>/dev/null | grep -q '^  merged:   2 profiles, run-1.sbp .. run-2.sbp'"

	# two processes, two builds: sums, and the pooled imbalance
	cp "$d/a4.sbp" "$two/1.sbp"
	cp "$d/b4.sbp" "$two/2.sbp"
	"$SB" report -i "$two" --format json >"$d/two.json" 2>"$d/two.err"
	jq -s '.' "$d/a4.json" "$d/b4.json" >"$d/ab.json"
	exq "merge: gcc + $cl runs: instances and lost time add" "$d/two.json" "$d/ab.json" \
		"($sel) as \$m | [\$r[0][] | $sel] as \$x | \$m.instances == (\$x[0].instances + \$x[1].instances) and \$m.lost_ns == (\$x[0].lost_ns + \$x[1].lost_ns)"
	exq "merge: gcc + $cl runs: imbalance = pooled lost / capacity (0.01 points)" "$d/two.json" "$d/ab.json" \
		"[\$r[0][] | $sel | {l: .lost_ns, c: (.lost_ns / (.imbalance_pct / 100))}] as \$x | (($sel).imbalance_pct - 100 * (\$x[0].l + \$x[1].l) / (\$x[0].c + \$x[1].c) | fabs) <= 0.01"
	jqcheck "merge: gcc + $cl runs: 8 threads (4 + 4 tids), the process ids differ" "$d/two.json" \
		"($sel).threads == 8 and (.meta.merge_differing | split(\",\") | index(\"pid\") != null)"

	# --diff
	"$SB" report --diff "$d/a2.sbp" "$d/a4.sbp" --format json >"$d/diff24.json" 2>"$d/diff.err"
	jqcheck "diff 2 -> 4 threads: the barrier matched, 40 instances each" "$d/diff24.json" \
		"[.diff.sections[] | select(.location == \"$loc\" and .kind == \"barrier\")][0] as \$s | \$s.a.instances == 40 and \$s.b.instances == 40"
	jqcheck "diff 2 -> 4 threads: imbalance 25% -> 37.5% (5 points), delta 12.5 (5)" "$d/diff24.json" \
		"[.diff.sections[] | select(.location == \"$loc\" and .kind == \"barrier\")][0] as \$s | ((\$s.a.imbalance_pct - 25) | fabs) <= 5 and ((\$s.b.imbalance_pct - 37.5) | fabs) <= 5 and ((\$s.delta.imbalance_pct - 12.5) | fabs) <= 5"
	"$SB" report --diff "$d/a4.sbp" "$dir" --format json >"$d/diffdir.json" 2>>"$d/diff.err"
	jqcheck "diff one run -> the directory of it twice: lost/s and imbalance unchanged" "$d/diffdir.json" \
		"[.diff.sections[] | select(.location == \"$loc\" and .kind == \"barrier\")][0] as \$s | (\$s.delta.lost_per_s | fabs) <= 1e-5 * \$s.a.lost_per_s + 1e-6 and (\$s.delta.imbalance_pct | fabs) <= 0.001 and \$s.b.instances == 2 * \$s.a.instances and .diff.b.merged_profiles == 2"
	"$SB" report --diff "$d/a4.sbp" "$d/a4.sbp" --format json >"$d/diffself.json" 2>>"$d/diff.err"
	jqcheck "diff of a profile with itself: no section new or gone, no cause changed, waits equal" "$d/diffself.json" \
		'(.diff.causes | length) == 0 and all(.diff.sections[]; .a != null and .b != null and .delta.lost_per_s == 0) and all(.diff.waits[]; .count_a == .count_b and .wait_ns_a == .wait_ns_b)'
	check "diff (text): the section, its imbalance change and the waits" bash -c \
		"'$SB' report --diff '$d/a2.sbp' '$d/a4.sbp' | grep -q 'barrier_ratio.c:30).*barrier.*40 -> 40' &&
		 '$SB' report --diff '$d/a2.sbp' '$d/a4.sbp' | grep -q '^  barrier '"

	# every output of a merged profile
	check "merge: the HTML report of a directory says it is merged" bash -c \
		"'$SB' report -i '$dir' --format html -o '$d/twice.html' 2>/dev/null && grep -q 'merged</span><span class=\"v\">2 profiles, run-1.sbp .. run-2.sbp' '$d/twice.html'"
	if protoc --python_out="$d" -I "$TOP/tests/tools" "$TOP/tests/tools/profile.proto" 2>/dev/null &&
	   "$SB" report -i "$dir" --format pprof -o "$d/twice.pb.gz" 2>/dev/null &&
	   "$MG_PY" "$TOP/tests/tools/pprof_totals.py" "$d" "$d/twice.pb.gz" >"$d/twice.pt" 2>"$d/pt.err"; then
		exq "merge: pprof of the directory: wait per primitive is the merged report's" "$d/twice.pt" "$d/twice.json" \
			'.problems == [] and ([.by_label.wait.primitive | to_entries[] | [.key, .value]] | sort) == ([$r[0].waits[] | [.primitive, .wait_ns]] | sort)'
	else
		bad "merge: pprof of the directory decodes"
		cat "$d/pt.err" 2>/dev/null
	fi

	# bad input
	"$SB" report --diff "$d/a4.sbp" >"$d/bad1" 2>&1
	rc=$?
	check "diff without B: exit 2, saying so (rc=$rc)" bash -c "[ $rc -eq 2 ] && grep -q 'give B too' '$d/bad1'"
	"$SB" report --diff "$d/missing.sbp" "$d/a4.sbp" >"$d/bad2" 2>&1
	rc=$?
	check "diff of a missing A: exit 1, naming it (rc=$rc)" bash -c "[ $rc -eq 1 ] && grep -q 'missing.sbp' '$d/bad2'"
	mkdir -p "$d/empty" "$d/junk"
	"$SB" report -i "$d/empty" >"$d/bad3" 2>&1
	rc=$?
	check "report of an empty directory: exit 1, saying so (rc=$rc)" bash -c "[ $rc -eq 1 ] && grep -q 'without profiles' '$d/bad3'"
	echo junk >"$d/junk/x.sbp"
	"$SB" report -i "$d/junk" >"$d/bad4" 2>&1
	rc=$?
	check "report of a directory of nothing readable: exit 1 (rc=$rc)" bash -c "[ $rc -eq 1 ] && grep -q 'none of its 1 profiles' '$d/bad4'"
}
timed_group "merge and diff" merge_group
