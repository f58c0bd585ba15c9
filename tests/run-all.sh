#!/bin/sh
# `make check`: unit tests (plain and ASan/UBSan), then the BPF
# integration tests; one closing "N passed, N failed" line.
cd "$(dirname "$0")/.." || exit 1
mkdir -p build
make --no-print-directory -s check-unit 2>&1 | tee build/unit.log
urc=$(grep -c '^unit: [0-9]* passed, 0 failed$' build/unit.log)
make --no-print-directory -s check-integration 2>&1 | tee build/integration.log
# counts: the last "N passed, M failed" line of each log (a crash = 1 failure)
counts() {
	line=$(grep -E '[0-9]+ passed, [0-9]+ failed$' "$1" | tail -1)
	[ -n "$line" ] || { echo "0 1"; return; }
	echo "$line" | sed -E 's/^.*[^0-9]([0-9]+) passed, ([0-9]+) failed$/\1 \2/;s/^([0-9]+) passed, ([0-9]+) failed$/\1 \2/'
}
set -- $(counts build/unit.log) $(counts build/integration.log)
pass=$(($1 + $3))
fail=$(($2 + $4))
[ "$urc" -eq 1 ] || [ "$fail" -gt 0 ] || fail=1
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
