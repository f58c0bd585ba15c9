#!/bin/sh
# Runs each unit test binary given (plain and ASan/UBSan builds), sums
# their "N passed, M failed" lines.
pass=0
fail=0
for t in "$@"; do
	out=$(ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 "$t" 2>&1)
	rc=$?
	line=$(printf '%s\n' "$out" | grep -E '^[a-z_]+: [0-9]+ passed, [0-9]+ failed$' | tail -1)
	p=$(printf '%s' "$line" | sed -E 's/.*: ([0-9]+) passed.*/\1/')
	f=$(printf '%s' "$line" | sed -E 's/.* ([0-9]+) failed/\1/')
	if [ -z "$line" ] || [ $rc -ne 0 ] && [ "${f:-0}" -eq 0 ]; then
		f=$((${f:-0} + 1))   # crashed or sanitizer abort
	fi
	pass=$((pass + ${p:-0}))
	fail=$((fail + ${f:-0}))
	if [ $rc -ne 0 ]; then
		printf '%s\n' "$out" | tail -30
		echo "FAIL $t (exit $rc)"
	else
		echo "ok   $t: $line"
	fi
done
echo "unit: $pass passed, $fail failed"
[ $fail -eq 0 ]
