#!/bin/sh
# Runs the profile reader's fuzz target (tests/fuzz/fuzz_profile.c) for
# FUZZ_TIME seconds (default 30: `make check`; `make fuzz` gives 600),
# after replaying every input in tests/fuzz/regress/ (past crashes, kept
# as regression cases).  The corpus grows in build/fuzz/corpus across
# runs, seeded from build/fuzz/seeds (tests/fuzz/fuzz_seeds.c).  A crash
# leaves its input in build/fuzz/artifacts/.  Ends with the line
# "fuzz_profile: N passed, M failed" that tests/run-unit.sh sums.
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
FUZZER=$BUILD/fuzz/fuzz_profile
TIME=${FUZZ_TIME:-30}
corpus=$BUILD/fuzz/corpus
art=$BUILD/fuzz/artifacts
log=$BUILD/fuzz/fuzz.log
mkdir -p "$corpus" "$art"
pass=0
fail=0

# Leaks are findings too; a slow input (> 10 s) or one that needs more
# than 2 GB is a failure: the reader must stay bounded by the file size.
opts="-rss_limit_mb=2048 -timeout=10 -artifact_prefix=$art/"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

regress=$(ls tests/fuzz/regress/* 2>/dev/null | grep -v /README)
if [ -n "$regress" ]; then
	# shellcheck disable=SC2086
	if "$FUZZER" $opts $regress >"$log.regress" 2>&1; then
		pass=$((pass + 1))
	else
		tail -40 "$log.regress"
		echo "FAIL a regression input of tests/fuzz/regress/ fails again"
		fail=$((fail + 1))
	fi
fi

# -max_len: a little above the largest seed, so mutations stay on real
# layouts instead of growing without end.
"$FUZZER" $opts -max_total_time="$TIME" -max_len=4096 -print_final_stats=1 \
	"$corpus" "$BUILD/fuzz/seeds" >"$log" 2>&1
rc=$?
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
if [ $rc -eq 0 ]; then
	pass=$((pass + 1))
	echo "fuzz_profile: ${runs:-?} runs in ${TIME} s (${speed:-?}/s), no crash;" \
		"corpus $(ls "$corpus" | wc -l) inputs"
else
	grep -E '^==[0-9]+==|^SUMMARY|ERROR|Test unit written' "$log" | head -20
	tail -20 "$log"
	echo "FAIL fuzz_profile (exit $rc): the input is in $art/; add it to tests/fuzz/regress/"
	fail=$((fail + 1))
fi
echo "fuzz_profile: $pass passed, $fail failed"
[ $fail -eq 0 ]
