# On-CPU time per segment, where LIME's busy times come from.  lime_owner
# (4 threads on 2 cores, 200 barrier rounds) gives thread k 12 - 2k blocks
# of equal work per round, so busy / blocks is the same for all 800
# segments up to host noise, which only ever adds time.  A context switch
# the kernel's tracepoint never shows (a 6.18 guest drops every switch away
# from some threads and half of those away from idle) left a thread
# running while counted off CPU: one segment read 0 ns for 8 blocks
# (bpf/oncpu.bpf.h).  Time the hypervisor stole did the same: counted by
# a reading between switches, taken off at the next switch, so one segment
# read 2.3 x its work and the next 0 (CI, twice in a row).  What is left
# is the kernel's own misplaced steal, about once in 100 recordings under
# heavy steal (bpf/oncpu.bpf.h): the group's one retry covers it.  The
# report shows only sums, so a tool of the test's own prints each segment.
ONC=$TMP/oncpu
mkdir -p "$ONC"
if ! analysis_tool segment_busy "$ONC/segment_busy"; then
	bad "on-CPU time: build tests/tools/segment_busy.c"
	cat "$ONC/segment_busy.err"
else
	oncpu_segments_group() {
		local sec j=$ONC/owner.json
		sec=$(site barrier lime_owner.c)
		if record_json "$j" -- "$WL/lime_owner" 4 200 200; then
			"$ONC/segment_busy" "$ONC/owner.sbp" "$sec" |
				awk '{ k = substr($2, index($2, "-") + 1); print $3 / (12 - 2 * k) }' |
				sort -g >"$ONC/per_block"
			check "on-CPU time: lime_owner's $sec has 4 x 200 segments" \
				test "$(wc -l <"$ONC/per_block")" -eq 800
			check "on-CPU time: no segment of lime_owner is short of its work's time (busy per block >= 0.6 x the median)" \
				awk '{ v[NR] = $1 } END { m = v[int((NR + 1) / 2)]; if (m > 0) printf "     min/median %.3f, 1st percentile/median %.3f\n", v[1] / m, v[int(NR / 100) + 1] / m; exit !(NR > 0 && m > 0 && v[1] >= 0.6 * m) }' "$ONC/per_block"
			jqcheck "on-CPU time: the profile counts switches it never saw (switches_unseen)" "$j" \
				'.meta.switches_unseen | test("^[0-9]+$")'
		else
			bad "on-CPU time: lime_owner record"
		fi
	}
	timed_group "on-CPU time per segment" oncpu_segments_group
fi
