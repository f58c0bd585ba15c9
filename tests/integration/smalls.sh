# Smaller report defects (issue 9): where a join section is placed, how
# locations read in text and JSON, telling duplicated call sites apart,
# debug-file notes, --counts columns.

# --- join: every worker exits before main reaches pthread_join -----------
# Each of the two phases' join section is at its own pthread_join line,
# never "0x0 (?)" nor the other phase's line.
join_late_group() {
	local j=$TMP/join_late.json s1 s2 l1 l2
	l1=$(site join1 join_late.c)
	l2=$(site join2 join_late.c)
	s1=$(section_at "$l1" join)
	s2=$(section_at "$l2" join)
	if record_json "$j" -- "$WL/join_late" 3 2000; then
		jqcheck "join after the workers exited: phase 1 section at $l1" "$j" "$s1 != null and ($s1).instances == 1 and ($s1).threads == 3"
		jqcheck "join after the workers exited: phase 2 section at $l2" "$j" "$s2 != null and ($s2).instances == 1 and ($s2).threads == 3"
		jqcheck "join after the workers exited: no join section without a function" "$j" '[.sections[] | select(.kind == "join" and .function == null)] | length == 0'
		ratio_check "join after the workers exited: busy ratio 1:2:3 within 10%" "$j" "$s1" 3 0.10
	else
		bad "join_late: record"
	fi
}
timed_group "join after the workers exited" join_late_group
