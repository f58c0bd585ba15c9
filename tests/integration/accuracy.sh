# The generated planted-cause suite's fixed-seed subset (tests/accuracy/;
# `make accuracy` runs it in full): a few generated programs, each built as
# users build (plain and `scalebpf cc`), recorded as users launch (directly,
# env, a sh script, -p) and reported; the planted section must be found in
# every one.  Accuracy is asserted only where the analysis already meets it
# (the last field: e1/e3 = the planted line is the exact mode's top / in its
# top 3 causes, s3 = in the sampled mode's top 3, hw = the exact top cause
# is `hardware`); the rest is printed.  (tri:omp sampled names the work's
# inner line, p002.c:61, not the triangular bound: a miss make accuracy counts.)
# Sourced by tests/run-integration.sh.
ACC_SEED=20261125
ACC_CASES="
owner:pbar:helper:direct:e1,s3
root:cvfunc:tail:env:e1,s3
tri:omp:inline:sh:e1
cache:gomp:inline:pid:e1,hw,s3
trip:cvmacro:fptr:direct:e1,s3
"

# acc_row DIR MODE COLUMN: that column of the mode's row of DIR/results.tsv
acc_row() {
	awk -F'\t' -v m="$2" -v c="$3" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next }
		$2 == m { print $k }' "$1/results.tsv"
}

accuracy_case() {
	local k=$1 spec=$2 d=$TMP/acc$1 cause rt place launch want m
	IFS=: read -r cause rt place launch want <<<"$spec"
	spec=$cause:$rt:$place:$launch
	if SCALEBPF=$SB bash "$TOP/tests/accuracy/run.sh" -s $ACC_SEED --first "$k" -n 1 -o "$d" \
		--set cause="$cause" --set rt="$rt" --set place="$place" --set launch="$launch" \
		--set secs=1 >"$d.log" 2>&1; then
		ok "accuracy $spec: built, recorded and reported in both modes"
	else
		bad "accuracy $spec: build, record or report failed"
		grep -A5 INFRA "$d.log"
	fi
	for m in exact sampled; do
		echo "     $spec ($m): top-1 $(acc_row "$d" $m top1), top-3 $(acc_row "$d" $m top3); reported: $(acc_row "$d" $m reported)"
		if [ "$(acc_row "$d" $m present)" = 1 ]; then
			ok "accuracy $spec ($m): the planted section is in the report"
		else
			bad "accuracy $spec ($m): no planted section; reported: $(acc_row "$d" $m reported)"
		fi
	done
	case ,$want, in *,e1,*) check "accuracy $spec (exact): the planted line is the top cause" \
		test "$(acc_row "$d" exact top1)" = 1 ;; esac
	case ,$want, in *,e3,*) check "accuracy $spec (exact): the planted line is among the top 3" \
		test "$(acc_row "$d" exact top3)" = 1 ;; esac
	case ,$want, in *,s3,*) check "accuracy $spec (sampled): the planted line is among the top 3" \
		test "$(acc_row "$d" sampled top3)" = 1 ;; esac
	case ,$want, in *,hw,*) check "accuracy $spec (exact): the top cause is a hardware cause" \
		test "$(acc_row "$d" exact kind1)" = hardware ;; esac
	# libgomp's region section, fork to the first barrier, is about a
	# microsecond a run: if it has too few samples, the advice must say
	# it is too short to sample, never ask for a day more of recording
	# (the old report asked for 1523005 s).  A run whose attach caught
	# more of it may still be told a sane "record N s longer".
	case $rt in gomp) check "accuracy $spec (sampled): the region's fork section is never told to record a day longer" \
		bash -c "'$SB' report -i '$d/$(printf p%03d "$k").sampled.sbp' | awk '/^section #[0-9]+ \\(omp_region/ { f = 1; next } /^section #/ { f = 0 } f && /not enough samples: record/ { for (i = 1; i < NF; i++) if (\$(i + 1) == \"s\" && \$i + 0 > 86400) bad = 1 } END { exit bad }'" ;; esac
}
acc_k=0
for acc_spec in $ACC_CASES; do
	accuracy_case $acc_k "$acc_spec"
	acc_k=$((acc_k + 1))
done
