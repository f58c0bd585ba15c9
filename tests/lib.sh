# Shared helpers for scalebpf's shell test suites (sourced, bash).
# Every check counts; the suite ends with "N passed, N failed".

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SB=${SCALEBPF:-$TOP/build/scalebpf}
# Absolute: a test may run the recorder from its own directory (cd).
case $SB in /*) ;; *) SB=$PWD/$SB ;; esac
WL=$TOP/build/workloads
PASS=0
FAIL=0
RETRIES=0
TMP=$(mktemp -d /tmp/scalebpf-test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
export XDG_CACHE_HOME=$TMP/cache   # recorder caches per run, not ~/.cache

ok() { PASS=$((PASS + 1)); echo "ok   $*"; }
bad() { FAIL=$((FAIL + 1)); echo "FAIL $*"; }

# check DESC CMD...: passes when CMD succeeds.
check() {
	local desc=$1
	shift
	if "$@"; then ok "$desc"; else bad "$desc"; fi
}

# expect_fail DESC PATTERN CMD...: passes when CMD fails and its stderr
# matches PATTERN (case-insensitive): a clear message, a non-zero exit.
expect_fail() {
	local desc=$1 pat=$2
	shift 2
	if "$@" >"$TMP/ef.out" 2>"$TMP/ef.err"; then
		bad "$desc (exit 0)"
	elif grep -qi -- "$pat" "$TMP/ef.err"; then
		ok "$desc"
	else
		bad "$desc: message lacks '$pat':"
		cat "$TMP/ef.err"
	fi
}

# jqcheck DESC FILE FILTER: passes when FILTER holds on FILE; returns
# non-zero when it failed, for a caller that prints more then.
jqcheck() {
	local desc=$1 file=$2 filter=$3
	# jq -e succeeds on empty input: a missing report must fail instead.
	if [ ! -s "$file" ]; then
		bad "$desc (no JSON: $file is empty or missing)"
		return 1
	fi
	if jq -e "$filter" "$file" >/dev/null 2>"$TMP/jq.err"; then
		ok "$desc"
	else
		bad "$desc"
		echo "     filter: $filter"
		cat "$TMP/jq.err" 2>/dev/null
		return 1
	fi
}

# site NAME FILE: "file.c:LINE" of the line marked /* SITE:NAME */.
site() {
	local line
	line=$(grep -nF "/* SITE:$1 */" "$TOP/tests/workloads/$2" | head -1 | cut -d: -f1)
	echo "$2:$line"
}

# Every workload is built as users build programs (-O2 -g, no frame
# pointers; tests/workloads/workloads.mk) twice: with gcc/g++ (OpenMP:
# libgomp) in $WL, with clang/clang++ (OpenMP: libomp) in $WL/clang.
# wl CC NAME: workload NAME as built by CC (gcc or clang).
wl() {
	case $1 in
	gcc) echo "$WL/$2" ;;
	clang) echo "$WL/clang/$2" ;;
	*) echo "wl: unknown compiler '$1'" >&2; return 1 ;;
	esac
}

# analysis_tool NAME OUT: builds tests/tools/NAME.c, a test's own reader of
# profiles, against build/analysis/ objects into OUT; its compiler's
# messages go to OUT.err.
analysis_tool() {
	${CC:-cc} -O2 -g -std=gnu11 -D_GNU_SOURCE -I"$TOP/analysis" \
		"$TOP/tests/tools/$1.c" "$TOP"/build/analysis/*/*.o \
		-lgsl -lgslcblas -lm -o "$2" 2>"$2.err"
}

# wl_built CC NAME: true when that build exists.  Missing, it is a
# failure when CC is installed (make workloads builds every program with
# it; .ci/install-deps.sh installs clang's libomp too), a skip, said,
# only when CC is not installed.
wl_built() {
	[ -x "$(wl "$1" "$2")" ] && return 0
	if command -v "$1" >/dev/null; then
		bad "$2 ($1): $(wl "$1" "$2") not built, though $1 is installed" \
		    "(make workloads; clang's OpenMP needs libomp: .ci/install-deps.sh)"
	else
		echo "skip $2 ($1): $1 is not installed"
	fi
	return 1
}

# exq DESC FILE REPORT FILTER: FILTER on FILE holds, with the JSON
# report REPORT as $r[0]
exq() {
	local desc=$1 file=$2 rep=$3 filter=$4
	if [ -s "$file" ] && jq -e --slurpfile r "$rep" "$filter" "$file" >/dev/null 2>"$TMP/jq.err"; then
		ok "$desc"
	else
		bad "$desc"
		cat "$TMP/jq.err" 2>/dev/null
		return 1
	fi
}

# record_json OUT.json ARGS...: record, then the JSON report; the record's
# stderr is kept in OUT.err.
record_json() {
	local out=$1
	shift
	if ! "$SB" record -q -o "${out%.json}.sbp" "$@" 2>"${out%.json}.err"; then
		echo "     record failed: $*"
		cat "${out%.json}.err"
		return 1
	fi
	"$SB" report -i "${out%.json}.sbp" --format json >"$out"
}

# section_at FILE LOCATION KIND: jq expression selecting that section.
section_at() {
	echo "[.sections[] | select(.location == \"$1\" and .kind == \"$2\")][0]"
}

# ratio_check DESC JSON SECTION_EXPR N TOL: per-thread busy, sorted, is
# 1:2:...:N within TOL (relative) of the first.
ratio_check() {
	local desc=$1 json=$2 sel=$3 n=$4 tol=$5
	jqcheck "$desc" "$json" "($sel | [.per_thread[].busy_ns] | sort) as \$b |
		(\$b | length) == $n and
		all(range(0; $n); . as \$i |
		    ((\$b[\$i] / \$b[0]) / (\$i + 1) - 1 | fabs) <= $tol)" && return 0
	echo "     busy ms, sorted: $(jq -c "[$sel | .per_thread[].busy_ns / 1e6 |
		. * 100 | round / 100] | sort" "$json" 2>/dev/null)"
	return 1
}

# timed_group DESC FN ARGS...: runs FN (a recording and its timing checks)
# and, if any check failed, once more on a fresh recording, counting only
# the second attempt.  Busy-time ratios are exact on a quiet machine, but a
# burst of noise on a shared VM host can slow one thread of one run; the
# first attempt's failures stay in the log, and the retry is counted.
timed_group() {
	local desc=$1 p=$PASS f=$FAIL
	shift
	"$@"
	if [ "$FAIL" -gt "$f" ]; then
		echo "note: retrying '$desc' once on a fresh recording (timing checks meet host noise)"
		RETRIES=$((RETRIES + 1))
		PASS=$p
		FAIL=$f
		"$@"
	fi
}

finish() {
	[ "$RETRIES" -eq 0 ] || echo "note: $RETRIES recording group(s) needed a second attempt"
	echo "$PASS passed, $FAIL failed"
	[ "$FAIL" -eq 0 ]
}
