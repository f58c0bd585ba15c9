# tests/bench_export.sh - sourced by tests/bench.sh (its tmpdir, die,
# SCALEBPF).
# The report's exports (issue 16): a profile of ~1 M timeline events
# (tests/tools/synth_profile.c: 110,000 stored instances of 4 threads,
# a block-sample vector each: 990,000 slices, 330,000 release arrows,
# 110,000 counter points) rendered to each format, beside the JSON report
# of the same profile (its peer: reads the same profile, writes little)
# and the HTML page (a heat strip of 240 instances a section).
# Wall time and the largest resident size (GNU time, when installed).
# Goal: each under 2 s, memory O(output) (the profile as read is the
# floor).
echo
synth=$tmpdir/synth_profile
if ${CC:-cc} -O2 -std=gnu11 -D_GNU_SOURCE -Ianalysis tests/tools/synth_profile.c \
	build/analysis/*/*.o -lgsl -lgslcblas -lm -o "$synth" 2>"$tmpdir/synth.err" &&
	"$synth" "$tmpdir/big.sbp" 110000 4; then
	for fmt in json html pprof perfetto; do
		t0=$(date +%s%N)
		if [ -x /usr/bin/time ]; then
			/usr/bin/time -f '%M' -o "$tmpdir/rss" "$SCALEBPF" report -i "$tmpdir/big.sbp" \
				--format "$fmt" -o "$tmpdir/big.$fmt" || die "report --format $fmt failed"
		else
			"$SCALEBPF" report -i "$tmpdir/big.sbp" --format "$fmt" -o "$tmpdir/big.$fmt" ||
				die "report --format $fmt failed"
			echo "?" >"$tmpdir/rss"
		fi
		t1=$(date +%s%N)
		printf 'export (issue 16): 1 M events to %-8s %5.2f s, %s MB resident, %s MB written (goal < 2 s)\n' \
			"$fmt" "$(awk -v d=$((t1 - t0)) 'BEGIN { print d / 1e9 }')" \
			"$(awk '{ printf "%.0f", $1 / 1024 }' "$tmpdir/rss" 2>/dev/null)" \
			"$(du -m "$tmpdir/big.$fmt" | cut -f1)"
		rm -f "$tmpdir/big.$fmt"
	done
else
	echo "export: the synthetic profile could not be made: $(cat "$tmpdir/synth.err")"
fi
