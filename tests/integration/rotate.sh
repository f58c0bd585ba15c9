# `record --rotate SEC -o DIR` (issue 17): a profile per interval.
# Truth: barrier_ratio runs exactly ITERS barrier rounds, so the barrier
# instances of all intervals add up to ITERS, none lost at a boundary
# and none counted twice (an instance goes to the interval where it
# ended), however the rounds fall across boundaries.  On programs as
# users run them: gcc and clang -O2, launched through env.
#   - >= 3 profiles, each readable alone, named COMM-PID-UTCSTART.sbp in
#     time order, each 1 s long but the last, starts 1 s apart;
#   - report -i DIR: ITERS barrier instances, busy 1:2:3:4 (10%), imbalance
#     37.5 (5 points), durations adding to the whole;
#   - --keep 2 leaves the newest 2 and says how many went; --max-bytes
#     smaller than one profile leaves the newest only;
#   - attached with -p for 3.5 s: 4 profiles, the imbalance right;
#   - bad input: --rotate 0, --keep without --rotate, -o a file.
rot_group() {
	local cc=$1 d=$TMP/rot_$1 iters=240 n sel loc
	loc=$(site barrier barrier_ratio.c)
	sel=$(section_at "$loc" barrier)
	rm -rf "$d"
	mkdir -p "$d"
	if ! "$SB" record -q --rotate 1 -o "$d/dir" -- env SCALEBPF_TEST=1 "$(wl "$cc" barrier_ratio)" 4 $iters 3000 \
		>"$d/out" 2>"$d/err"; then
		bad "rotate ($cc): record"
		cat "$d/err"
		return
	fi
	n=$(ls "$d/dir" | wc -l)
	check "rotate ($cc): >= 3 profiles ($n)" test "$n" -ge 3
	check "rotate ($cc): named barrier_ratio-PID-UTCSTART.sbp" bash -c \
		"ls '$d/dir' | grep -vqE '^barrier_ratio-[0-9]+-[0-9]{8}T[0-9]{6}\\.[0-9]{3}Z\\.sbp\$' && exit 1; exit 0"
	local ok=1 f prev=0 i=0 s dur
	for f in "$d/dir"/*.sbp; do
		i=$((i + 1))
		if ! "$SB" report -i "$f" --format json >"$d/one.json" 2>/dev/null; then
			ok=0
			echo "     unreadable: $f"
			continue
		fi
		s=$(jq -r '.meta.start_ns | tonumber' "$d/one.json")
		dur=$(jq -r '.meta.duration_ns | tonumber' "$d/one.json")
		if [ "$prev" -ne 0 ] && [ "$s" -ne $((prev + 1000000000)) ]; then
			ok=0
			echo "     $f starts at $s, not 1 s after $prev"
		fi
		if [ "$i" -lt "$n" ] && [ "$dur" -ne 1000000000 ]; then
			ok=0
			echo "     $f lasts $dur ns"
		fi
		prev=$s
	done
	check "rotate ($cc): every profile readable alone, 1 s apart, 1 s long but the last" test $ok -eq 1
	"$SB" report -i "$d/dir" --format json >"$d/all.json" 2>"$d/all.err"
	jqcheck "rotate ($cc): the intervals' barrier instances add up to the $iters rounds" "$d/all.json" \
		"($sel).instances == $iters and (.meta.merged_profiles | tonumber) == $n"
	ratio_check "rotate ($cc): busy 1:2:3:4 within 10% over the intervals" "$d/all.json" "$sel" 4 0.10
	jqcheck "rotate ($cc): imbalance 37.5 +- 5" "$d/all.json" "(($sel).imbalance_pct - 37.5 | fabs) <= 5"
	jqcheck "rotate ($cc): the durations add up to the recording's (+-1 s)" "$d/all.json" \
		"(.meta.duration_ns | tonumber) >= ($n - 1) * 1e9 and (.meta.duration_ns | tonumber) <= $n * 1e9"
	jqcheck "rotate ($cc): no record dropped, none late" "$d/all.json" \
		'.meta.drops_probe == "0" and .meta.drops_wait == "0" and .meta.events_late == "0"'
}
timed_group "rotate (gcc)" rot_group gcc
wl_built clang barrier_ratio && timed_group "rotate (clang)" rot_group clang

# attached to a running program (-p): intervals from the attach on
rot_attach() {
	local d=$TMP/rotp pid n sel
	sel=$(section_at "$(site barrier barrier_ratio.c)" barrier)
	rm -rf "$d"
	"$(wl gcc barrier_ratio)" 4 100000 3000 >/dev/null 2>&1 &
	pid=$!
	sleep 0.5
	"$SB" record -q -p $pid --rotate 1 -d 3.5 -o "$d" >/dev/null 2>"$TMP/rotp.err"
	kill $pid 2>/dev/null
	wait $pid 2>/dev/null
	n=$(ls "$d" 2>/dev/null | wc -l)
	"$SB" report -i "$d" --format json >"$TMP/rotp.json" 2>/dev/null
	jqcheck "rotate -p PID -d 3.5: 4 profiles ($n), the barrier's imbalance 37.5 +- 5" "$TMP/rotp.json" \
		"(.meta.merged_profiles | tonumber) == 4 and (($sel).imbalance_pct - 37.5 | fabs) <= 5 and ($sel).instances > 0"
}
timed_group "rotate -p" rot_attach

rot_bounds() {
	local d=$TMP/rotb w
	w=$(wl gcc barrier_ratio)
	rm -rf "$d"
	mkdir -p "$d"
	"$SB" record -q --rotate 1 --keep 2 -o "$d/keep" -- "$w" 4 200 3000 >/dev/null 2>&1
	check "rotate --keep 2: two profiles left ($(ls "$d/keep" 2>/dev/null | wc -l))" \
		test "$(ls "$d/keep" | wc -l)" -eq 2
	local last
	last=$(ls "$d/keep" | tail -1)
	check "rotate --keep 2: the last says how many went before it (its number - 3)" bash -c \
		"'$SB' report -i '$d/keep/$last' --format json | jq -e '(.meta.rotate_profiles_pruned | tonumber) >= 1 and (.meta.rotate_interval | tonumber) == (.meta.rotate_profiles_pruned | tonumber) + 3' >/dev/null"
	echo "not ours" >"$d/keep/zz-other.sbp"
	"$SB" record -q --rotate 1 --max-bytes 4096 -o "$d/keep" -- "$w" 4 120 3000 >/dev/null 2>&1
	check "rotate --max-bytes below one profile: the newest left, and a file it did not write" bash -c \
		"[ \$(ls '$d/keep' | grep -c '^barrier_ratio-') -eq 3 ] && [ -f '$d/keep/zz-other.sbp' ]"

	local rc
	"$SB" record --rotate 0 -o "$d/x" -- /bin/true >"$d/bad1" 2>&1
	rc=$?
	check "rotate 0: exit 2, saying so (rc=$rc)" bash -c "[ $rc -eq 2 ] && grep -q 'invalid --rotate' '$d/bad1'"
	"$SB" record --keep 3 -o "$d/x.sbp" -- /bin/true >"$d/bad2" 2>&1
	rc=$?
	check "--keep without --rotate: exit 2, saying so (rc=$rc)" bash -c \
		"[ $rc -eq 2 ] && grep -q -- '--keep and --max-bytes bound the directory of --rotate' '$d/bad2'"
	echo file >"$d/afile"
	"$SB" record --rotate 1 -o "$d/afile" -- /bin/true >"$d/bad3" 2>&1
	rc=$?
	check "rotate -o a file: exit 1, refused, the file untouched (rc=$rc)" bash -c \
		"[ $rc -eq 1 ] && grep -q 'is not a directory' '$d/bad3' && [ \"\$(cat '$d/afile')\" = file ]"
}
rot_bounds

# the README's systemd unit is one systemd accepts (where it is installed)
if command -v systemd-analyze >/dev/null 2>&1; then
	awk '/^```ini$/ { on = 1; next } on && /^```$/ { exit } on' "$TOP/README.md" |
		sed "s|/usr/local/bin/scalebpf|$SB|" >"$TMP/scalebpf-test.service"
	check "README's systemd unit: systemd-analyze verify accepts it, no key unknown" bash -c \
		"[ -s '$TMP/scalebpf-test.service' ] && systemd-analyze verify '$TMP/scalebpf-test.service' >'$TMP/unit.out' 2>&1 &&
		 ! grep -qiE 'unknown|ignoring|invalid|failed' '$TMP/unit.out' || { cat '$TMP/unit.out'; exit 1; }"
else
	echo "skipped: README's systemd unit not verified (no systemd-analyze here)"
fi
