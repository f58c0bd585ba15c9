#!/bin/sh
# `make demo`: record the bundled demo workload (a small solver whose
# block-ownership rule hands threads unequal work, plus a contended
# accumulator lock) and print the report.
cd "$(dirname "$0")/.." || exit 1
if [ "$(id -u)" != 0 ]; then
	echo "make demo records with eBPF and needs root: run 'sudo make demo'" >&2
	exit 1
fi
out=build/demo.sbp
echo "== scalebpf record -F 999 -o $out -- build/workloads/demo" >&2
# -F 999: a 2.5 s run needs more samples for its causes than the 199 Hz
# production default gives.
build/scalebpf record -F 999 -o "$out" -- build/workloads/demo || exit 1
echo >&2
echo "== scalebpf report -i $out" >&2
build/scalebpf report -i "$out"
html=build/demo.html
# the page, with the demo's sources beside its causes (the build names
# them relative to the top: --source-dir .)
if build/scalebpf report -i "$out" --format html --source-dir . -o "$html"; then
	echo >&2
	echo "== the same as one page: $html (open it in a browser)" >&2
else
	exit 1
fi
