# tests/bench_stack.sh - sourced by tests/bench.sh (its tmpdir, die,
# PAIRS, SCALEBPF and WORKLOADS).
# Speedup stacks (issue 15): what `scalebpf stack -t 1,2` costs against
# the plain runs at the same thread counts (stack_ub tiny, ~2.5 s at one
# thread: a recording's fixed start and stop would dominate a short run),
# side by side in each round:
# the plain program at 1 and 2 threads back to back, then the stack
# (its runs: the same two, recorded, the one-thread run with --chip, and
# the profiles read and written), end to end by the clock.  The ratio is
# the median over PAIRS rounds of the stack's time over that round's two
# plain runs, with the range.  Runs: 2, the plain ones' count (the pirate
# is virtual here: no profiling runs of its own).  Goal: the profiling
# adds <= 10% (the paper's pirate: 5.5% on average).
echo
sub=$WORKLOADS/stack_ub
if [ -x "$sub" ]; then
	ratios=""
	real=""
	for _ in $(seq "$PAIRS"); do
		t0=$(date +%s%N)
		"$sub" tiny 1 1 100 20000 400 >/dev/null 2>&1 || die "stack_ub failed"
		"$sub" tiny 1 2 100 20000 400 >/dev/null 2>&1 || die "stack_ub failed"
		t1=$(date +%s%N)
		"$SCALEBPF" stack -q -t 1,2 -o "$tmpdir/stack.sbp" -- "$sub" tiny 1 '{T}' 100 20000 400 \
			>"$tmpdir/stack.log" 2>&1 || die "scalebpf stack failed: $(tail -3 "$tmpdir/stack.log")"
		t2=$(date +%s%N)
		"$SCALEBPF" stack -q -t 1,2 --pirate real -o "$tmpdir/stack_real.sbp" -- "$sub" tiny 1 '{T}' \
			100 20000 400 >"$tmpdir/stack.log" 2>&1 ||
			die "scalebpf stack --pirate real failed: $(tail -3 "$tmpdir/stack.log")"
		t3=$(date +%s%N)
		ratios="$ratios $(( (t2 - t1) * 1000 / (t1 - t0) ))"
		real="$real $(( (t3 - t2) * 1000 / (t1 - t0) ))"
	done
	# shellcheck disable=SC2086
	printf 'stack (issue 15): stack_ub tiny at 1 and 2 threads: 2 runs, as the plain ones; time %s the plain runs (goal <= 1.10x)\n' \
		"$(printf '%s\n' $ratios | sort -n | awk '{ v[NR] = $1 } END {
			printf "%.2fx (%.2f-%.2f)", (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) / 1000,
			       v[1] / 1000, v[NR] / 1000 }')"
	# shellcheck disable=SC2086
	printf 'stack (issue 15): the same with the real pirate (forced: no shared cache here): 3 runs; time %s the plain runs (its framework run serializes the threads: over the goal by design)\n' \
		"$(printf '%s\n' $real | sort -n | awk '{ v[NR] = $1 } END {
			printf "%.2fx (%.2f-%.2f)", (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) / 1000,
			       v[1] / 1000, v[NR] / 1000 }')"
else
	echo "stack: $sub not built (make workloads): skipped"
fi
