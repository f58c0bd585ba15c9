# `record --sample-duty ON/PERIOD` (issue 17): the cpu-clock samplers run
# ON seconds of every PERIOD, sections and waits always.  Truth: the same
# program recorded without it gives the sampling rate while on; with
# 1/2, the samples are that rate times the time on (25%), the time on is
# about half the run, and the barrier's 150 rounds and its 37.5%
# imbalance are all there.
duty_group() {
	local d=$TMP/duty w sel
	w=$(wl gcc barrier_ratio)
	sel=$(section_at "$(site barrier barrier_ratio.c)" barrier)
	mkdir -p "$d"
	if ! record_json "$d/plain.json" -- "$w" 4 150 3000 ||
	   ! record_json "$d/duty.json" --sample-duty 1/2 -- "$w" 4 150 3000; then
		bad "sample-duty: record"
		return
	fi
	jqcheck "sample-duty 1/2: the profile says so, on about half the run" "$d/duty.json" \
		'.meta.sample_duty == "1 s of every 2 s" and ((.meta.samples_on_ns | tonumber) / (.meta.duration_ns | tonumber)) as $f | $f >= 0.4 and $f <= 0.7'
	exq "sample-duty 1/2: samples = the plain run's rate x the time on (25%)" "$d/duty.json" "$d/plain.json" \
		'((($r[0].meta.samples | tonumber) / ($r[0].meta.duration_ns | tonumber)) * (.meta.samples_on_ns | tonumber)) as $want | (((.meta.samples | tonumber) - $want) / $want | fabs) <= 0.25'
	jqcheck "sample-duty 1/2: every barrier round, imbalance 37.5 +- 5 (sections always on)" "$d/duty.json" \
		"($sel).instances == 150 and (($sel).imbalance_pct - 37.5 | fabs) <= 5"
	jqcheck "no --sample-duty: always" "$d/plain.json" '.meta.sample_duty == "always"'
}
timed_group "sample-duty" duty_group

for arg in 5/2 abc 0/1 1 2/0; do
	"$SB" record --sample-duty "$arg" -o "$TMP/d.sbp" -- /bin/true >"$TMP/duty.bad" 2>&1
	rc=$?
	check "--sample-duty $arg: exit 2, saying so (rc=$rc)" bash -c "[ $rc -eq 2 ] && grep -q 'invalid --sample-duty' '$TMP/duty.bad'"
done
