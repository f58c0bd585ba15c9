# tests/bench_sharing.sh - sourced by tests/bench.sh (its tmpdir, die,
# run_timed, median, meta, PAIRS, SCALEBPF and WORKLOADS).
# Sampled sharing (issue 13): what it costs, side by side in one run:
# plain, record --watch-rate 0 (samples only: candidates, no watchpoint)
# and record at the default (100 arms/s), medians of PAIRS interleaved
# rounds, by the workload's own timer (the target's time: the recorder's
# start-up and write are not overhead on it) and for the whole command.
# Goals: <= 1.05x the plain run on the sharing workloads, <= 1.02x where
# there is none (the default's target time over the plain run's); the
# watchpoints' own part (default over --watch-rate 0) is printed too, and
# the time from the start to the first confirmed verdict.  cyclic has an
# OpenMP barrier every ~45 us (21,000 a second), split a parallel region
# every ~0.25 ms: there the recording's own probes (rate 0) are most of it.
echo
echo "sampled sharing (median of $PAIRS interleaved rounds; target: the workload's own timer)"
printf '  %-30s %7s %7s %7s %11s %11s %11s %8s %s\n' workload plain "rate 0" default \
	"target/pln" "watch part" "whole/pln" "verdict" "reported"
for spec in "share packed 4 300 10000000|sharing" "share_omp cyclic 4 100000 24000|sharing" \
	    "share_omp split 16 1000000 600|sharing" "share padded 4 300 10000000|none" "share readonly 4 300 10000000|none"; do
	cmd=${spec%|*} kind=${spec#*|}
	# shellcheck disable=SC2086
	set -- $cmd
	prog=$1
	shift
	[ -x "$WORKLOADS/$prog" ] || continue
	lp="" l0="" ld="" wp="" wd="" fv="" rep=""
	i=0
	while [ "$i" -lt "$PAIRS" ]; do
		for tool in plain rate0 default; do
			case $tool in
			plain) OMP_NUM_THREADS=4 run_timed "$WORKLOADS/$prog" "$@"
			       lp="$lp $elapsed" wp="$wp $total" ;;
			rate0) OMP_NUM_THREADS=4 run_timed "$SCALEBPF" record -q --watch-rate 0 \
				-o "$tmpdir/ss.sbp" -- "$WORKLOADS/$prog" "$@"
			       l0="$l0 $elapsed" ;;
			default) OMP_NUM_THREADS=4 run_timed "$SCALEBPF" record -q \
				-o "$tmpdir/ss.sbp" -- "$WORKLOADS/$prog" "$@"
				ld="$ld $elapsed" wd="$wd $total"
				v=$(meta "$tmpdir/ss.sbp" coherence_sampled_first_verdict_ms)
				fv="$fv ${v:-none}"
				rep=$(meta "$tmpdir/ss.sbp" coherence_sampled_reported) ;;
			esac
		done
		i=$((i + 1))
	done
	# shellcheck disable=SC2086
	mp=$(median $lp) m0=$(median $l0) md=$(median $ld) mwp=$(median $wp) mwd=$(median $wd)
	# shellcheck disable=SC2086
	v=$(printf '%s\n' $fv | grep -v none | sort -n |
	    awk '{ a[NR] = $1 } END { print NR ? a[int((NR + 1) / 2)] " ms" : "none" }')
	awk -v w="$prog $1 ($kind)" -v p="$mp" -v z="$m0" -v d="$md" -v wp="$mwp" -v wd="$mwd" \
	    -v v="$v" -v r="$rep" 'BEGIN {
		printf "  %-30s %7.3f %7.3f %7.3f %11.3f %11.3f %11.3f %8s %s lines\n", w, p, z, d,
		       (p > 0 ? d / p : 0), (z > 0 ? d / z : 0), (wp > 0 ? wd / wp : 0), v, r }'
done
echo "  goals: target/pln <= 1.05 on sharing, <= 1.02 on none (whole/pln adds record's start and write)"
