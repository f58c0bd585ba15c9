# tests/bench_production.sh - sourced by tests/bench.sh (its tmpdir, die,
# SCALEBPF).
# Production mode (issue 17), side by side in one run:
#   1. the recorder beside a long-running program for BENCH_PROD_S seconds
#      (default 600: the issue's 10 minutes) with --rotate BENCH_ROTATE_S
#      (default 60): its resident size every 10 s (first, last, most: the
#      budget is the most), its CPU time over the wall time, the profiles
#      and their bytes.  The program makes and ends 8 threads a round
#      (thread_churn: the tables that would grow) with a barrier each.
#   2. what recording costs the program: a fixed amount of work
#      (barrier_ratio 4 threads, ~4 s) plain, recorded, and recorded with
#      --sample-duty 1/6 (10/60's share, on a run shorter than 10 s), each
#      the median of 3, as ratios to plain.
echo
prod_s=${BENCH_PROD_S:-600}
rot_s=${BENCH_ROTATE_S:-60}
pdir=$tmpdir/production
mkdir -p "$pdir"
build/workloads/thread_churn 100000000 8 20000 barrier >/dev/null 2>&1 &
churn=$!
sleep 1
"$SCALEBPF" record -q -p $churn --rotate "$rot_s" -d "$prod_s" -o "$pdir/dir" 2>"$pdir/err" &
rec=$!
first=0 last=0 most=0 t=0
while kill -0 $rec 2>/dev/null; do
	rss=$(awk '/^VmRSS:/ { print $2 }' /proc/$rec/status 2>/dev/null)
	cpu=$(awk '{ print $14 + $15 }' /proc/$rec/stat 2>/dev/null)
	if [ -n "$rss" ]; then
		[ $first -ne 0 ] || [ $t -lt 20 ] || first=$rss
		last=$rss
		[ "$rss" -le $most ] || most=$rss
		lastcpu=$cpu
	fi
	sleep 10
	t=$((t + 10))
done
wait $rec
kill $churn 2>/dev/null
wait $churn 2>/dev/null
tck=$(getconf CLK_TCK)
printf 'production (issue 17): %d s beside thread_churn, --rotate %d: recorder RSS %d MB at 20 s, %d MB at the end, %d MB most; CPU %.1f%% of a core; %d profiles, %s\n' \
	"$prod_s" "$rot_s" $((first / 1024)) $((last / 1024)) $((most / 1024)) \
	"$(awk -v c="${lastcpu:-0}" -v h="$tck" -v s="$prod_s" 'BEGIN { print 100 * c / h / s }')" \
	"$(ls "$pdir/dir" 2>/dev/null | wc -l)" "$(du -sh "$pdir/dir" 2>/dev/null | cut -f1)"

# 2. the program's cost, medians of 3
prod_run() {   # prod_run [record args]: the wall ns of one fixed run
	local t0 t1
	t0=$(date +%s%N)
	if [ $# -eq 0 ]; then
		build/workloads/barrier_ratio 4 300 4000 >/dev/null 2>&1
	else
		"$SCALEBPF" record -q "$@" -o "$pdir/run.sbp" -- build/workloads/barrier_ratio 4 300 4000 \
			>/dev/null 2>&1
	fi
	t1=$(date +%s%N)
	echo $((t1 - t0))
}
prod_median() {
	local a b c
	a=$(prod_run "$@")
	b=$(prod_run "$@")
	c=$(prod_run "$@")
	printf '%s\n%s\n%s\n' "$a" "$b" "$c" | sort -n | sed -n 2p
}
plain=$(prod_median)
recd=$(prod_median -F 199)
duty=$(prod_median --sample-duty 1/6)
awk -v p="$plain" -v r="$recd" -v d="$duty" 'BEGIN {
	printf "production (issue 17): the program recorded / plain: %.3fx always sampling, %.3fx with --sample-duty 1/6 (plain %.2f s, median of 3)\n", r / p, d / p, p / 1e9 }'
