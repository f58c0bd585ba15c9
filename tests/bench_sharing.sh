# tests/bench_sharing.sh - sourced by tests/bench.sh (its tmpdir, die,
# median, meta, PAIRS, SCALEBPF and WORKLOADS).
# Sampled sharing (issue 13): what the watchpoints cost, side by side in
# one run: plain, record --watch-rate 0 (samples only: candidates, no
# watchpoint) and record at the default (200 arms/s), whole command end to
# end, medians of PAIRS interleaved rounds; goals: <= 1.05 on the sharing
# workloads, <= 1.02 where there is none, for the watchpoints' part (the
# default over --watch-rate 0) and said for the whole recording too.  The
# time from the start to the first confirmed verdict is printed.
# ss_timed CMD...: $total, the command's wall time in ns (share_omp has
# no timer of its own); exits the bench when it fails
ss_timed() {
	t0=$(date +%s%N)
	OMP_NUM_THREADS=4 "$@" >"$tmpdir/ss.log" 2>&1 || {
		tail -n 20 "$tmpdir/ss.log" | sed 's/^/bench: | /' >&2
		die "command failed: $*"
	}
	t1=$(date +%s%N)
	total=$((t1 - t0))
}
echo
echo "sampled sharing (median of $PAIRS interleaved rounds; whole command end to end)"
printf '  %-28s %8s %8s %8s %10s %10s %8s %s\n' workload plain "rate 0" default \
	"dflt/plain" "dflt/rate0" "verdict" "reported"
for spec in "share packed 4 100 10000000|sharing" "share_omp cyclic 4 100000 8000|sharing" \
	    "share padded 4 100 10000000|none" "share readonly 4 100 10000000|none"; do
	cmd=${spec%|*} kind=${spec#*|}
	# shellcheck disable=SC2086
	set -- $cmd
	prog=$1
	shift
	[ -x "$WORKLOADS/$prog" ] || continue
	sp="" s0="" sd="" fv="" rep=""
	i=0
	while [ "$i" -lt "$PAIRS" ]; do
		for tool in plain rate0 default; do
			case $tool in
			plain) ss_timed "$WORKLOADS/$prog" "$@" ;;
			rate0) ss_timed "$SCALEBPF" record -q --watch-rate 0 -o "$tmpdir/ss.sbp" -- \
				"$WORKLOADS/$prog" "$@" ;;
			default) ss_timed "$SCALEBPF" record -q -o "$tmpdir/ss.sbp" -- \
				"$WORKLOADS/$prog" "$@" ;;
			esac
			case $tool in
			plain) sp="$sp $total" ;;
			rate0) s0="$s0 $total" ;;
			default)
				sd="$sd $total"
				v=$(meta "$tmpdir/ss.sbp" coherence_sampled_first_verdict_ms)
				fv="$fv ${v:-none}"
				rep=$(meta "$tmpdir/ss.sbp" coherence_sampled_reported)
				;;
			esac
		done
		i=$((i + 1))
	done
	# shellcheck disable=SC2086
	mp=$(median $sp) m0=$(median $s0) md=$(median $sd)
	# shellcheck disable=SC2086
	v=$(printf '%s\n' $fv | grep -v none | sort -n | awk '{ a[NR] = $1 } END { print NR ? a[int((NR + 1) / 2)] " ms" : "none" }')
	awk -v w="$prog $1 ($kind)" -v p="$mp" -v z="$m0" -v d="$md" -v v="$v" -v r="$rep" 'BEGIN {
		printf "  %-28s %8.3f %8.3f %8.3f %10.3f %10.3f %8s %s lines\n", w, p, z, d,
		       (p > 0 ? d / p : 0), (z > 0 ? d / z : 0), v, r }'
done
echo "  goals: dflt/rate0 (the watchpoints) <= 1.05 on sharing, <= 1.02 on none"

