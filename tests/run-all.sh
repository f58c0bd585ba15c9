#!/bin/sh
# `make check`: unit tests (plain and ASan/UBSan builds), then the BPF
# integration tests with the plain recorder and again with the ASan/UBSan
# one; one closing "N passed, N failed" line.
cd "$(dirname "$0")/.." || exit 1
mkdir -p build
make --no-print-directory -s check-unit 2>&1 | tee build/unit.log
make --no-print-directory -s check-integration 2>&1 | tee build/integration.log
echo "== integration tests again, recorder built with ASan/UBSan"
SCALEBPF=build/asan/scalebpf bash tests/run-integration.sh 2>&1 | tee build/integration-asan.log

# The last "N passed, M failed" line of a log; none (a crash) = 1 failure.
counts() {
	line=$(grep -E '(^|[^0-9])[0-9]+ passed, [0-9]+ failed$' "$1" | tail -1)
	if [ -z "$line" ]; then
		echo "0 1"
	else
		echo "$line" | sed -E 's/^(.*[^0-9])?([0-9]+) passed, ([0-9]+) failed$/\2 \3/'
	fi
}
pass=0
fail=0
for log in build/unit.log build/integration.log build/integration-asan.log; do
	set -- $(counts "$log")
	pass=$((pass + $1))
	fail=$((fail + $2))
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
