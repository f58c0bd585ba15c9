# A command that lives a few milliseconds exits before the recorder's
# periodic look at its mappings: its sections must still be located in the
# program's source (the executable is mapped by exec, read right after it).
short_group() {
	local j=$TMP/short.json loc
	loc=$(site barrier barrier_ratio.c)
	if record_json "$j" -- "$WL/barrier_ratio" 2 3 10; then
		jqcheck "a ~5 ms command: its barrier section is at $loc, 3 instances" "$j" \
			"[.sections[] | select(.location == \"$loc\" and .instances == 3)] | length == 1"
	else
		bad "short command: record"
	fi
}
short_group
