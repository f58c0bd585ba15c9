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

# --- a stripped executable: text and JSON name it module+offset alike ----
stripped_text_group() {
	local j=$TMP/strip2.json loc
	cp "$WL/barrier_ratio" "$TMP/barrier_strip2"
	strip --strip-all "$TMP/barrier_strip2"
	if record_json "$j" -- "$TMP/barrier_strip2" 2 5 200; then
		loc=$(jq -r '.sections[0].location' "$j")
		"$SB" report -i "$TMP/strip2.sbp" >"$TMP/strip2.txt"
		check "stripped binary: JSON location $loc is module+offset" \
			bash -c "[[ '$loc' =~ ^barrier_strip2\+0x[0-9a-f]+\$ ]]"
		check "stripped binary: text names the section $loc as JSON does" grep -qF -- "$loc" "$TMP/strip2.txt"
		check "stripped binary: no bare runtime address in text" \
			bash -c "! grep -qE '0x[0-9a-f]{8,} \\(barrier_strip2\\)' '$TMP/strip2.txt'"
	else
		bad "stripped binary (text): record"
	fi
}
stripped_text_group
