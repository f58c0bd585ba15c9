#!/bin/sh
# tests/bench.sh — recording overhead of `scalebpf record` (`make bench`).
# POSIX sh (make runs it with `sh`).
#
# For each benchmark workload, runs the plain command and the same command
# under `scalebpf record -q -o FILE --`, interleaved (plain, recorded,
# plain, recorded, ...; BENCH_PAIRS pairs), times every run end to end
# (date +%s%N, nanoseconds; CLOCK_REALTIME, which is only slewed, never
# stepped, by a running NTP client) and prints the medians and their ratio next to
# the overhead goal.  It is a benchmark, not a test: a ratio above its goal
# never fails it, but a command that fails (non-zero exit) does.
#
# Environment (defaults in brackets):
#   SCALEBPF             recorder binary                  [build/scalebpf]
#   WORKLOADS            directory of the workload binaries [build/workloads]
#   BENCH_PAIRS          plain/recorded pairs per benchmark [5]
#   BENCH_MUTEX_N        mutex_loop lock/unlock pairs per thread [120000000]
#   BENCH_BARRIER_N      barrier_loop iterations          [15000]
#   BENCH_BARRIER_UNITS  barrier_loop sb_work units per iteration [35]
#   BENCH_OMP_N          omp_regions regions              [1500]
#   BENCH_OMP_UNITS      omp_regions sb_work units per region [780]
#   BENCH_ADDR_MSTEPS    addr_mix pointer-chase steps, millions [8]
#   BENCH_ADDR_PASSES    addr_mix passes over the 64 MiB stream [12]
#   BENCH_EXACT_ITERS    exact mode: lime_owner iterations [400]
#   BENCH_EXACT_UNITS    exact mode: lime_owner sb_work units [200]
#   BENCH_EXACT_ACCESSES exact mode: lime_cache loads per iteration, 4 threads
#                        (working sets 16 KiB to 8 MiB) [2000000]
#   BENCH_CG_ROWS        omp_cg matrix rows               [100000]
#   BENCH_CG_OUTER       omp_cg outer iterations (25 CG steps each) [20]
# The defaults give ~1-2 s per plain run on the 2-core development VM
# (one sb_work unit ~= 1.3 us): mutex_loop ~1.4 s; barrier_loop ~1.5 s at
# ~10,000 barriers per second per thread (35 units ~= 45 us of work plus
# ~55 us per barrier round on that VM); omp_regions ~1.6 s of ~1 ms
# regions (780 units).

set -u

cd "$(dirname "$0")/.." || exit 1

SCALEBPF=${SCALEBPF:-build/scalebpf}
WORKLOADS=${WORKLOADS:-build/workloads}
PAIRS=${BENCH_PAIRS:-5}
MUTEX_N=${BENCH_MUTEX_N:-120000000}
BARRIER_N=${BENCH_BARRIER_N:-15000}
BARRIER_UNITS=${BENCH_BARRIER_UNITS:-35}
OMP_N=${BENCH_OMP_N:-1500}
OMP_UNITS=${BENCH_OMP_UNITS:-780}
ADDR_MSTEPS=${BENCH_ADDR_MSTEPS:-8}
ADDR_PASSES=${BENCH_ADDR_PASSES:-12}
EXACT_ITERS=${BENCH_EXACT_ITERS:-400}
EXACT_UNITS=${BENCH_EXACT_UNITS:-200}
EXACT_ACCESSES=${BENCH_EXACT_ACCESSES:-2000000}
CG_ROWS=${BENCH_CG_ROWS:-100000}
CG_OUTER=${BENCH_CG_OUTER:-20}
THREADS=2
BENCH_RECORDED=""

die() {
	echo "bench: $*" >&2
	exit 1
}

case $PAIRS in
'' | *[!0-9]* | 0) die "BENCH_PAIRS must be a positive integer" ;;
esac
[ -x "$SCALEBPF" ] || die "$SCALEBPF not found or not executable (run make first)"
for w in mutex_loop barrier_loop omp_regions addr_mix omp_cg; do
	[ -x "$WORKLOADS/$w" ] || die "$WORKLOADS/$w not found (run make workloads)"
done

tmpdir=$(mktemp -d "${TMPDIR:-/tmp}/scalebpf-bench.XXXXXX") ||
	die "cannot create a temporary directory"
cleanup() {
	rm -rf "$tmpdir"
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT
trap 'cleanup; exit 143' TERM

# run_timed CMD ARGS... : runs the command with its output in a log,
# sets $elapsed to the workload's own wall time in ns (it writes it to
# $SB_WALL_FILE at exit: the recorder's start-up and teardown are not
# overhead on the target) and $total to the whole command's; exits the
# script if it fails; $after is the time from the workload's exit to the
# command's.
run_timed() {
	rm -f "$tmpdir/wall"
	t0=$(date +%s%N)
	SB_WALL_FILE="$tmpdir/wall" "$@" >"$tmpdir/run.log" 2>&1
	rc=$?
	t1=$(date +%s%N)
	total=$((t1 - t0))
	if [ "$rc" -ne 0 ]; then
		echo "bench: command failed (exit status $rc): $*" >&2
		tail -n 20 "$tmpdir/run.log" | sed 's/^/bench: | /' >&2
		exit 1
	fi
	[ -s "$tmpdir/wall" ] || die "the workload did not report its wall time: $*"
	elapsed=$(sed -n 1p "$tmpdir/wall")
	exited=$(sed -n 2p "$tmpdir/wall")
	[ -n "$exited" ] || die "the workload did not report its exit time (make workloads): $*"
	after=$((t1 - exited))   # from the workload's exit
}

# median NS... : prints the median in seconds
median() {
	printf '%s\n' "$@" | sort -n | awk '
		{ v[NR] = $1 }
		END {
			if (NR % 2) m = v[(NR + 1) / 2]
			else m = (v[NR / 2] + v[NR / 2 + 1]) / 2
			printf "%.3f", m / 1e9
		}'
}

# spread NS... : prints (max - min) / median in percent (run-to-run noise)
spread() {
	printf '%s\n' "$@" | sort -n | awk '
		{ v[NR] = $1 }
		END {
			if (NR % 2) m = v[(NR + 1) / 2]
			else m = (v[NR / 2] + v[NR / 2 + 1]) / 2
			printf "%.0f%%", (m > 0 ? (v[NR] - v[1]) / m * 100 : 0)
		}'
}

secs() {
	awk -v n="$1" 'BEGIN { printf "%.3f", n / 1e9 }'
}

: >"$tmpdir/results"

# bench NAME GOAL ENV CMD ARGS...
#   ENV: space-separated VAR=VALUE assignments for the command ("" if none)
# With BENCH_RECORDED set to another binary, that one is recorded instead
# of CMD (exact mode: the `scalebpf cc` build against the plain one).
bench() {
	name=$1 goal=$2 benv=$3
	shift 3
	cmd=$1
	rec_cmd=${BENCH_RECORDED:-$1}
	shift

	echo "bench: $name: ${benv:+$benv }$cmd $*${BENCH_RECORDED:+ (recorded: $BENCH_RECORDED)}" >&2
	plain="" recorded="" fixed="" i=1
	while [ "$i" -le "$PAIRS" ]; do
		# shellcheck disable=SC2086 # $benv is a list of assignments
		run_timed env $benv "$cmd" "$@"
		plain="$plain $elapsed"
		p=$elapsed
		rm -f "$tmpdir/bench.sbp"
		# shellcheck disable=SC2086
		run_timed env $benv "$SCALEBPF" record -q \
			-o "$tmpdir/bench.sbp" -- "$rec_cmd" "$@"
		recorded="$recorded $elapsed"
		fixed="$fixed $((total - elapsed))"
		echo "bench:   pair $i/$PAIRS: plain $(secs "$p") s," \
			"recorded $(secs "$elapsed") s" >&2
		i=$((i + 1))
	done
	# shellcheck disable=SC2086 # word splitting of the time lists
	mp=$(median $plain)
	# shellcheck disable=SC2086
	mr=$(median $recorded)
	# shellcheck disable=SC2086
	sp=$(spread $plain)
	# shellcheck disable=SC2086
	sr=$(spread $recorded)
	# shellcheck disable=SC2086
	mf=$(median $fixed)
	awk -v name="$name" -v p="$mp" -v r="$mr" -v g="$goal" \
	    -v sp="$sp" -v sr="$sr" -v f="$mf" 'BEGIN {
		x = (p > 0 ? r / p : 0)
		printf "%-14s %10.3f %13.3f %8.3f %9s  %-10s %5s /%5s %10.3f\n",
		       name, p, r, x, "<= " g,
		       (x <= g + 0.0005 ? "ok" : "above goal"), sp, sr, f
	}' >>"$tmpdir/results"
	if [ "$name" = barrier_loop ]; then
		awk -v n="$BARRIER_N" -v s="$mp" 'BEGIN {
			printf "  (barrier_loop plain: %.0f barriers/s per thread)\n",
			       (s > 0 ? n / s : 0) }' >>"$tmpdir/results"
	fi
}

bench mutex_loop 1.02 "" \
	"$WORKLOADS/mutex_loop" "$THREADS" "$MUTEX_N"
bench barrier_loop 1.10 "" \
	"$WORKLOADS/barrier_loop" "$THREADS" "$BARRIER_N" "$BARRIER_UNITS"
bench omp_regions 1.05 "OMP_NUM_THREADS=$THREADS" \
	"$WORKLOADS/omp_regions" "$OMP_N" "$OMP_UNITS"
# memory-bound: a 64 MiB pointer chase and a 64 MiB stream (addr_mix)
bench addr_mix 1.03 "" \
	"$WORKLOADS/addr_mix" "$ADDR_MSTEPS" "$ADDR_PASSES"
# exact mode (`scalebpf cc`, every block counted, recorded) against the
# plain clang build ($WORKLOADS/clang/, from `make workloads`; `scalebpf cc`
# adds frame pointers, the plain build has none): compute-bound (sb_work:
# one block per ~4-cycle iteration, the worst case) and memory-bound
# (lime_cache's chase)
if [ -x "$WORKLOADS/exact/lime_owner" ] && [ -x "$WORKLOADS/clang/lime_owner" ]; then
	BENCH_RECORDED="$WORKLOADS/exact/lime_owner"
	bench exact:owner 10 "" \
		"$WORKLOADS/clang/lime_owner" "$THREADS" "$EXACT_ITERS" "$EXACT_UNITS"
	BENCH_RECORDED="$WORKLOADS/exact/lime_cache"
	bench exact:cache 10 "" \
		"$WORKLOADS/clang/lime_cache" 4 10 "$EXACT_ACCESSES"
	BENCH_RECORDED=
else
	echo "bench: exact-mode or clang builds missing (make workloads workloads-exact): exact mode not measured" >&2
fi

echo
echo "scalebpf recording overhead: median of $PAIRS interleaved runs, the workload's own wall time"
echo "(exact:* rows: the 'scalebpf cc' build recorded against the plain clang build: exact mode's slowdown)"
printf '%-14s %10s %13s %8s %9s  %-10s %s %s\n' \
	benchmark "plain [s]" "recorded [s]" ratio goal "" "spread plain/rec." "record start+stop [s]"
cat "$tmpdir/results"
echo "(informational: a ratio above its goal does not fail the benchmark;"
echo " spread = (max - min) / median of the runs: run-to-run noise)"

# After the target exits: what recording still takes (detach the probes,
# resolve sites and samples, write the profile) on an OpenMP code with
# many regions (omp_cg: a dozen outlined functions, ~2,600 region
# instances), with the uprobes as uprobe_multi links (the default where
# the kernel has them, Linux >= 6.6) against the classic per-probe
# perf-event uprobes (SCALEBPF_NO_UPROBE_MULTI=1: the path of older
# kernels, whose detaching is serialized in the kernel, ~50-90 ms a probe
# here), interleaved.
echo "bench: after exit: OMP_NUM_THREADS=$THREADS $WORKLOADS/omp_cg $CG_ROWS $CG_OUTER" >&2
multi="" classic="" runs="" i=1
while [ "$i" -le "$PAIRS" ]; do
	for mode in multi classic; do
		rm -f "$tmpdir/cg.sbp"
		noenv=""
		[ "$mode" = classic ] && noenv="SCALEBPF_NO_UPROBE_MULTI=1"
		# shellcheck disable=SC2086 # $noenv is one assignment or none
		run_timed env OMP_NUM_THREADS="$THREADS" $noenv "$SCALEBPF" record -q \
			-o "$tmpdir/cg.sbp" -- "$WORKLOADS/omp_cg" "$CG_ROWS" "$CG_OUTER"
		if [ "$mode" = multi ]; then
			multi="$multi $after"
			runs="$runs $elapsed"
			links=$("$SCALEBPF" report -i "$tmpdir/cg.sbp" --format json |
				sed -n 's/.*"uprobe_links": *"\([^"]*\)".*/\1/p' | head -n 1)
		else
			classic="$classic $after"
		fi
	done
	echo "bench:   pair $i/$PAIRS: after exit $(secs "${multi##* }") s" \
		"(${links:-?}), $(secs "${classic##* }") s (perf-event uprobes)" >&2
	i=$((i + 1))
done
# shellcheck disable=SC2086
am=$(median $multi)
# shellcheck disable=SC2086
ac=$(median $classic)
# shellcheck disable=SC2086
ar=$(median $runs)
echo
echo "after the target exits (omp_cg: median of $PAIRS; detach, resolve, write the profile)"
awk -v m="$am" -v c="$ac" -v r="$ar" -v l="${links:-?}" 'BEGIN {
	printf "  uprobes as %s: %.3f s (%.1f%% of the recorded run, %.3f s)\n",
	       l, m, (r > 0 ? m / r * 100 : 0), r
	printf "  per-probe perf-event uprobes: %.3f s (%.1fx)\n", c, (m > 0 ? c / m : 0)
}'

# Unwinding (issue 9): samples carry 16 KiB of their user stack, unwound
# with CFI in the recorder (--unwind cfi, the default), against the
# frame-pointer walk alone (--unwind fp), side by side: plain, cfi, fp
# runs interleaved, at -F 999 so samples dominate the difference.  What a
# sample costs the target (the ratio) and the recorder (its CPU time over
# the samples, from the profile), the unwind alone, and the depth found.
mean() {   # mean N...: of the numbers
	printf '%s\n' "$@" | awk '{ s += $1 } END { print (NR ? s / NR : 0) }'
}
meta() {   # meta FILE KEY: a metadata value of a profile
	"$SCALEBPF" report -i "$1" --format json |
		sed -n "s/.*\"$2\": *\"\([^\"]*\)\".*/\1/p" | head -n 1
}
echo "bench: unwind: OMP_NUM_THREADS=$THREADS $WORKLOADS/omp_regions $OMP_N $OMP_UNITS, -F 999" >&2
# The kernel times BPF programs while this sysctl is 1 (restored after).
stats0=$(cat /proc/sys/kernel/bpf_stats_enabled 2>/dev/null || echo 0)
echo 1 >/proc/sys/kernel/bpf_stats_enabled 2>/dev/null
bcfi="" bfp="" uplain="" ucfi="" ufp="" ccpu="" fcpu="" csmp="" fsmp="" uns="" urep="" udep="" fdep="" uend="" i=1
while [ "$i" -le "$PAIRS" ]; do
	run_timed env OMP_NUM_THREADS="$THREADS" "$WORKLOADS/omp_regions" "$OMP_N" "$OMP_UNITS"
	uplain="$uplain $elapsed"
	for mode in cfi fp; do
		rm -f "$tmpdir/uw.sbp"
		run_timed env OMP_NUM_THREADS="$THREADS" "$SCALEBPF" record -q -F 999 \
			--unwind "$mode" -o "$tmpdir/uw.sbp" -- \
			"$WORKLOADS/omp_regions" "$OMP_N" "$OMP_UNITS"
		cpu=$(meta "$tmpdir/uw.sbp" recorder_cpu_ns)
		smp=$(meta "$tmpdir/uw.sbp" samples)
		if [ "$mode" = cfi ]; then
			ucfi="$ucfi $elapsed" ccpu="$ccpu $cpu" csmp="$csmp $smp"
			bcfi="$bcfi $(meta "$tmpdir/uw.sbp" bpf_sample_ns_per_run)"
			uns="$uns $(meta "$tmpdir/uw.sbp" unwind_ns_per_sample)"
			urep="$urep $(meta "$tmpdir/uw.sbp" unwind_ns_per_repeat)"
			udep=$(meta "$tmpdir/uw.sbp" unwind_depth_mean)
			fdep=$(meta "$tmpdir/uw.sbp" unwind_fp_depth_mean)
			uend="$(meta "$tmpdir/uw.sbp" unwind_stop_outermost)/$(meta "$tmpdir/uw.sbp" unwind_samples)"
		else
			ufp="$ufp $elapsed" fcpu="$fcpu $cpu" fsmp="$fsmp $smp"
			bfp="$bfp $(meta "$tmpdir/uw.sbp" bpf_sample_ns_per_run)"
		fi
	done
	echo "bench:   run $i/$PAIRS: plain $(secs "${uplain##* }") s, cfi $(secs "${ucfi##* }") s," \
		"fp $(secs "${ufp##* }") s" >&2
	i=$((i + 1))
done
echo "$stats0" >/proc/sys/kernel/bpf_stats_enabled 2>/dev/null
# shellcheck disable=SC2086
up=$(median $uplain)
# shellcheck disable=SC2086
uc=$(median $ucfi)
# shellcheck disable=SC2086
uf=$(median $ufp)
# per-sample recorder CPU: sum of CPU over the sum of samples, per mode
cpc=$(printf '%s\n' $ccpu | awk '{ s += $1 } END { print s }')
cpf=$(printf '%s\n' $fcpu | awk '{ s += $1 } END { print s }')
smc=$(printf '%s\n' $csmp | awk '{ s += $1 } END { print s }')
smf=$(printf '%s\n' $fsmp | awk '{ s += $1 } END { print s }')
echo
echo "unwinding (omp_regions, -F 999, median of $PAIRS interleaved runs; default recording is --unwind cfi)"
awk -v p="$up" -v c="$uc" -v f="$uf" -v cc="$cpc" -v cf="$cpf" -v sc="$smc" -v sf="$smf" \
    -v bc="$(mean $bcfi)" -v bf="$(mean $bfp)" -v ns="$(mean $uns)" -v rep="$(mean $urep)" -v dc="$udep" -v df="$fdep" -v e="$uend" 'BEGIN {
	printf "  target: plain %.3f s, --unwind cfi %.3f s (ratio %.3f), --unwind fp %.3f s (ratio %.3f)\n",
	       p, c, (p > 0 ? c / p : 0), f, (p > 0 ? f / p : 0)
	printf "  recorder CPU (all of it: start, symbols, profile) per sample: cfi %.1f us, fp %.1f us (%d and %d samples)\n",
	       (sc > 0 ? cc / sc / 1e3 : 0), (sf > 0 ? cf / sf / 1e3 : 0), sc, sf
	printf "  BPF sample program per run (kernel.bpf_stats_enabled): cfi %.1f us, fp %.1f us\n",
	       bc / 1e3, bf / 1e3
	printf "  the unwind alone (recorder): %.1f us per sample, %.1f us with every pc seen before\n",
	       ns / 1e3, rep / 1e3
	printf "  depth: %s frames with cfi, %s by frame pointers; unwinds complete: %s\n", dc, df, e
}'

# LIME analysis cost on a synthetic instance (goal: under 2 s here).
echo
if [ -x build/tests/test_lime_bench ]; then
	build/tests/test_lime_bench | grep '^lime bench:' || die "the LIME benchmark failed"
fi
exit 0
