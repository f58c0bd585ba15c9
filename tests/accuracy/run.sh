#!/bin/bash
# tests/accuracy/run.sh — scalebpf's generated planted-cause accuracy suite.
#
#   run.sh [-n COUNT] [-s SEED] [--mode exact|sampled|both] [-k] [-o DIR]
#          [--first INDEX] [--set VAR=VALUE]... [--min-present P]
#          [--min-exact-top1 P] [--min-sampled-top1 P] [--min-sampled-top3 P]
#          [--max-wrong P] [--rescore FROM]
#
# Generates COUNT programs from SEED (default: a new seed from /dev/urandom,
# printed, so a run can be repeated with -s), each with one planted cause
# whose lines the generator knows (tests/accuracy/gen.c); builds each as a
# user would (plain: gcc or clang; exact mode: `scalebpf cc`), records it
# (launched directly, through env, through a sh script, or attached with
# -p), reads the JSON report and scores the causes of the planted section
# (found by its closing sync line): top-1, top-3, confidently wrong (a wrong
# top cause not marked as low evidence).  Prints tables per mode and per
# variable, then every miss with what was reported instead.
#
# Exit status: 1 when a program fails to build or record (infrastructure),
# or a --min/--max threshold is not met; accuracy alone never fails a run.
# Needs root (BPF), bash, jq, awk, gcc, clang.  --set fixes a generator
# variable for every program (e.g. --set rt=pbar).
#
# --rescore FROM: nothing is generated, built or recorded; the recordings
# kept in FROM (a -k run's directory) are reported again by this build and
# scored into OUT, with FROM's seed and programs: an analysis change is
# measured on the very same recordings in a minute, not a new run's.
# -n/--first still choose the indexes (default: all of FROM's).
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
SB=${SCALEBPF:-$TOP/build/scalebpf}
case $SB in /*) ;; *) SB=$PWD/$SB ;; esac
COUNT=60 SEED= MODE=both KEEP=0 OUT= FIRST=0 FROM= COUNT_SET=0
SETS=() MIN_PRESENT= MIN_ET1= MIN_ST1= MIN_ST3= MAX_WRONG=
while [ $# -gt 0 ]; do
	case $1 in
	-n) COUNT=$2; COUNT_SET=1; shift ;;
	-s) SEED=$2; shift ;;
	--mode) MODE=$2; shift ;;
	-k) KEEP=1 ;;
	-o) OUT=$2; KEEP=1; shift ;;
	--first) FIRST=$2; shift ;;
	--set) SETS+=("$2"); shift ;;
	--min-present) MIN_PRESENT=$2; shift ;;
	--min-exact-top1) MIN_ET1=$2; shift ;;
	--min-sampled-top1) MIN_ST1=$2; shift ;;
	--min-sampled-top3) MIN_ST3=$2; shift ;;
	--max-wrong) MAX_WRONG=$2; shift ;;
	--rescore) FROM=$2; shift ;;
	-h|--help) sed -n '2,/^set -u/p' "$0" | sed 's/^# \{0,1\}//; /^set -u/d'; exit 0 ;;
	*) echo "run.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done
case $MODE in exact) MODES="exact" ;; sampled) MODES="sampled" ;; both) MODES="exact sampled" ;;
*) echo "run.sh: --mode is exact, sampled or both" >&2; exit 2 ;; esac
if [ -n "$FROM" ]; then
	[ -d "$FROM" ] && ls "$FROM"/p[0-9][0-9][0-9].meta >/dev/null 2>&1 ||
		{ echo "run.sh: --rescore $FROM: no kept programs (pNNN.meta) there" >&2; exit 2; }
	FROM=$(cd "$FROM" && pwd)
	fseed=$(sed -n 's/^seed=//p' "$(ls "$FROM"/p[0-9][0-9][0-9].meta | head -1)")
	[ -z "$SEED" ] || [ "$SEED" = "$fseed" ] ||
		{ echo "run.sh: --rescore $FROM holds seed $fseed, not -s $SEED" >&2; exit 2; }
	SEED=$fseed
	if [ $COUNT_SET = 0 ]; then
		last=$(ls "$FROM"/p[0-9][0-9][0-9].meta | sed 's/.*p0*\([0-9][0-9]*\)\.meta/\1/' | sort -n | tail -1)
		COUNT=$((last + 1 - FIRST))
	fi
fi
[ -n "$SEED" ] || SEED=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
echo "accuracy: seed $SEED, $COUNT programs (indexes $FIRST..$((FIRST + COUNT - 1))), modes: $MODES"
if [ -n "$FROM" ]; then
	echo "accuracy: rescoring the recordings kept in $FROM (nothing is recorded)"
else
	echo "accuracy: repeat with: tests/accuracy/run.sh -s $SEED -n $COUNT --mode $MODE"
fi
[ -n "$FROM" ] || [ "$(id -u)" = 0 ] || { echo "run.sh: needs root (BPF)" >&2; exit 1; }
for t in jq awk gcc clang; do
	command -v $t >/dev/null || { echo "run.sh: $t is not installed" >&2; exit 1; }
done
if [ -z "$OUT" ]; then
	OUT=$(mktemp -d /tmp/scalebpf-acc.XXXXXX)
fi
mkdir -p "$OUT" || exit 1
OUT=$(cd "$OUT" && pwd)
[ $KEEP = 1 ] || trap 'rm -rf "$OUT"' EXIT
export XDG_CACHE_HOME=$OUT/cache

# The generator: built here, so the suite needs nothing but a C compiler.
GEN=${ACC_GEN:-$OUT/gen}
case $GEN in /*) ;; *) GEN=$TOP/$GEN ;; esac
if [ -z "${ACC_GEN:-}" ]; then
	gcc -O2 -Wall -Wextra -o "$GEN" "$TOP"/tests/accuracy/*.c ||
		{ echo "run.sh: cannot build the generator" >&2; exit 1; }
fi
# clang's libomp, found as tests/workloads/workloads.mk finds it
LIBOMP=$(for f in "$(clang -print-resource-dir 2>/dev/null)/../../libomp.so" \
	/usr/lib/llvm-*/lib/libomp.so /usr/lib/x86_64-linux-gnu/libomp.so /usr/local/lib/libomp.so; do
	[ -e "$f" ] && { realpath "$f"; break; }; done)
LIBOMP_LINK="-L$(dirname "${LIBOMP:-/nonexistent/x}") -Wl,-rpath,$(dirname "${LIBOMP:-/nonexistent/x}")"

RES=$OUT/results.tsv
printf 'name\tmode\tcause\tplace\trt\tcc\topt\tpie\tsched\tlaunch\tthreads\tsecs\thz\tpresent\ttop1\ttop3\twrong\tlowev\tsamples\tverdict\tkind1\thardware\tsection_imb\treported\tunsettled\n' >"$RES"
INFRA=0

# score META MODE JSON COUNTS: one results row
score() {
	local json=$3 counts=$4
	jq -r --arg sync "$sync" --arg acc "$accept" --arg mode "$2" --slurpfile c "$counts" '
		($sync | split(" ")) as $sy | ($acc | split(" ")) as $ac |
		([.sections[] | select(.location as $l | $sy | index([$l]))] | max_by(.instances)) as $sec |
		if $sec == null then ["0","0","0","0","0","0","-","-","0","-",
			([.sections[:3][] | "\(.location)(\(.kind))"] | join(";") | if . == "" then "no sections" else "sections: " + . end), "0"]
		else
		($sec.location) as $s | ($sec.section_index // null) as $si |
		# two sections can close at one line: by index where the report has one
		def ofsec: if $si != null and has("section_index") then .section_index == $si
			else .section == $s end;
		[.causes[] | select(ofsec and ((.same_cluster // 0) == 0))] as $cs |
		([(.evidence // [])[] | select(ofsec)][0]) as $ev |
		(if $mode == "sampled" and ($ev.samples_per_thread // 0) > 0
		 then ($ev.samples_per_thread * $ev.threads | round)
		 else ([$c[0].counts[]? | select(.section == $s and .kind == "block_samples") | .per_thread[].count] | add // 0)
		 end) as $n |
		($ev.verdict // "-") as $v |
		# a top cause whose samples cannot tell it from the decisions
		# listed after it (alternative_of) is marked so: not confident
		($cs[0].settled == false) as $unsettled |
		(if $v != "-" then $v != "causes" elif $mode == "sampled" then $n < 2000 else false end
		 or $unsettled) as $low |
		(($cs[0].location // "") as $l | $ac | index([$l]) != null) as $t1 |
		([$cs[:3][] | .location as $l | $ac | index([$l]) != null] | any) as $t3 |
		["1", (if $t1 then "1" else "0" end), (if $t3 then "1" else "0" end),
		 (if ($cs | length) > 0 and ($t1 | not) and ($low | not) then "1" else "0" end),
		 (if $low then "1" else "0" end), ($n | tostring), $v, ($cs[0].kind // "-"),
		 (if $t1 and $cs[0].kind == "hardware" then "1" else "0" end),
		 ($sec.imbalance_pct | tostring),
		 ([$cs[:3][] | "\(.location)(\(.kind),\(.score))"] | join(";") | if . == "" then "no causes" else . end),
		 (if $unsettled then "1" else "0" end)]
		end | join("\t")' "$json"
}

# record_one MODE BIN ARGS...: the recording, launched as the program says
record_one() {
	local mode=$1 bin=$2 sbp=$OUT/$name.$1.sbp nt=$threads it rf=() pid rc
	it=$([ "$mode" = exact ] && echo "$iters_exact" || echo "$iters")
	if [ "$mode" = exact ]; then rf+=(-F 999); elif [ "$hz" != default ]; then rf+=(-F "$hz"); fi
	# a barrier function not named *barrier* is named with -b, as its user
	# would; inlined (no symbol: -b would fail, "no such function"), the
	# recorder's inline condvar-barrier detection is what is left
	case $barrier_fn in
	-|*barrier*) ;;
	*) if nm "$bin" 2>/dev/null | grep -q " [tT] $barrier_fn$"; then rf+=(-b "$barrier_fn")
	   else echo "note: $name $mode: $barrier_fn is inlined, not named with -b" >&2; fi ;;
	esac
	case $launch in
	direct) "$SB" record -q -o "$sbp" "${rf[@]}" -- "$bin" "$nt" "$it" ;;
	env)
		if [ "$rt" = gomp ] || [ "$rt" = omp ]; then
			"$SB" record -q -o "$sbp" "${rf[@]}" -- env OMP_NUM_THREADS="$nt" "$bin" env "$it"
		else
			"$SB" record -q -o "$sbp" "${rf[@]}" -- env ACC_THREADS="$nt" "$bin" env "$it"
		fi ;;
	sh)
		printf '#!/bin/sh\n# a wrapper as users write them\ncd "$(dirname "$0")" || exit 1\n"%s" "$@"\nst=$?\nexit $st\n' "$bin" >"$OUT/$name.run.sh"
		"$SB" record -q -o "$sbp" "${rf[@]}" -- sh "$OUT/$name.run.sh" "$nt" "$it" ;;
	pid)
		"$bin" "$nt" "$it" 500 >/dev/null &
		pid=$!
		sleep 0.1
		"$SB" record -q -o "$sbp" "${rf[@]}" -p $pid
		rc=$?
		wait $pid
		return $rc ;;
	esac
}

T0=$(date +%s)
for i in $(seq "$FIRST" $((FIRST + COUNT - 1))); do
	name=$(printf 'p%03d' "$i")
	if [ -n "$FROM" ]; then
		[ -e "$FROM/$name.meta" ] || continue
		cp "$FROM/$name.meta" "$FROM/$name.c" "$OUT/" 2>/dev/null
	else
		"$GEN" "$SEED" "$i" "$OUT" "${SETS[@]}" ||
			{ echo "run.sh: generator failed ($SEED $i)" >&2; INFRA=$((INFRA + 1)); continue; }
	fi
	# shellcheck disable=SC1090
	. "$OUT/$name.meta"
	pieflags=$([ "$pie" = pie ] && echo "-fPIE -pie" || echo "-fno-pie -no-pie")
	case $rt in
	gomp) ompf="-fopenmp" ;;
	omp) ompf="-fopenmp=libomp $LIBOMP_LINK" ;;
	*) ompf= ;;
	esac
	for mode in $MODES; do
		bin=$OUT/$name.$mode
		s0=$(date +%s.%N)
		if [ -n "$FROM" ]; then
			if [ ! -s "$FROM/$name.$mode.sbp" ]; then
				echo "note: $name $mode: no recording in $FROM, not scored" >&2
				continue
			fi
			ln -sf "$FROM/$name.$mode.sbp" "$OUT/$name.$mode.sbp"
		# shellcheck disable=SC2086
		elif [ "$mode" = exact ]; then
			# exact mode follows libomp only: OpenMP programs use it there
			exf=$([ -n "$ompf" ] && echo "-fopenmp=libomp $LIBOMP_LINK")
			# the plain build compiles (its runtime archive is beside it), even
			# when the recorder under test is another build (ASan)
			"$TOP/build/scalebpf" cc $opt -pthread $pieflags $exf "$OUT/$src" -o "$bin" 2>"$bin.build.err"
		else
			$cc $opt -g -pthread $pieflags $ompf "$OUT/$src" -o "$bin" 2>"$bin.build.err"
		fi
		if [ $? -ne 0 ]; then
			echo "INFRA $name $mode: build failed:"; head -5 "$bin.build.err"
			INFRA=$((INFRA + 1)); continue
		fi
		if [ -z "$FROM" ] && ! record_one "$mode" "$bin" >"$bin.out" 2>"$bin.rec.err" || [ ! -s "$OUT/$name.$mode.sbp" ]; then
			echo "INFRA $name $mode: record failed:"; tail -5 "$bin.rec.err"
			INFRA=$((INFRA + 1)); continue
		fi
		s1=$(date +%s.%N)
		if ! "$SB" report -i "$OUT/$name.$mode.sbp" --format json >"$bin.json" 2>"$bin.rep.err" ||
		   ! "$SB" report -i "$OUT/$name.$mode.sbp" --counts --format json >"$bin.counts.json" 2>>"$bin.rep.err"; then
			echo "INFRA $name $mode: report failed:"; tail -5 "$bin.rep.err"
			INFRA=$((INFRA + 1)); continue
		fi
		row=$(score "$OUT/$name.meta" "$mode" "$bin.json" "$bin.counts.json")
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$mode" "$cause" "$place" "$rt" \
			"$cc" "$opt" "$pie" "$sched" "$launch" "$threads" "$secs" "$hz" "$row" >>"$RES"
		printf '%s %-7s %-6s %-6s %-7s %-5s %s %-5s %2s thr %4ss rec %5.1fs: %s\n' "$name" "$mode" "$cause" "$place" "$rt" \
			"$cc" "$opt" "$pie" "$threads" "$secs" "$(awk -v a="$s0" -v b="$s1" 'BEGIN { print b - a }')" \
			"$(echo "$row" | awk -F'\t' '{ print ($1 == 0 ? "NO SECTION" : $2 == 1 ? "top1" : $3 == 1 ? "top3" : "miss") " samples=" $6 " top=" $11 }')"
	done
done
echo "accuracy: $(( $(date +%s) - T0 )) s for $COUNT programs; load: $(uptime | sed 's/.*load/load/')"
awk -f "$TOP/tests/accuracy/tables.awk" -v seed="$SEED" "$RES"
[ $KEEP = 1 ] && echo "accuracy: work directory kept: $OUT (results.tsv, pNNN.c, .meta, .sbp, .json)"

fail=0
[ $INFRA -eq 0 ] || { echo "accuracy: $INFRA build/record/report failures"; fail=1; }
pct() {  # MODE COLUMN [FILTER-COLUMN MIN]: percentage of rows with COLUMN == 1,
	# or "none" when no row qualifies (a threshold then fails: nothing was measured)
	awk -F'\t' -v m="$1" -v c="$2" -v f="${3:-0}" -v min="${4:-0}" 'NR > 1 && $2 == m && (f == 0 || $f >= min) { n++; k += $c }
		END { if (n) printf "%d", 100 * k / n; else printf "none" }' "$RES"
}
col() { awk -F'\t' -v n="$1" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == n) print i }' "$RES"; }
need() {  # DESC VALUE OP LIMIT
	[ -n "$4" ] || return 0
	if [ "$2" = none ]; then echo "accuracy: $1: no program qualified (limit $4%)"; fail=1
	elif ! [ "$2" "$3" "$4" ]; then echo "accuracy: $1 = $2% (limit $4%)"; fail=1; fi
}
for m in $MODES; do
	need "$m: planted section present" "$(pct $m "$(col present)")" -ge "$MIN_PRESENT"
	need "$m: confidently wrong" "$(pct $m "$(col wrong)")" -le "$MAX_WRONG"
done
need "exact: top-1" "$(pct exact "$(col top1)")" -ge "$MIN_ET1"
need "sampled (>= 2000 samples): top-1" "$(pct sampled "$(col top1)" "$(col samples)" 2000)" -ge "$MIN_ST1"
need "sampled (>= 2000 samples): top-3" "$(pct sampled "$(col top3)" "$(col samples)" 2000)" -ge "$MIN_ST3"
exit $fail
