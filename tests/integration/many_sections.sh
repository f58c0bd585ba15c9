# Many sections (issue 11): `many_sections 2 50 2000`, 50 barrier call
# sites passed 2000 times each by 2 threads, 100,000 instances (the size
# the profile write after exit is measured at in make bench).  Truth: each
# SECTION(k) line of the workload is one barrier section of exactly 2000
# instances of 2 threads, all of them kept (--max-instances is 10000).

many_sections_group() {
	local bin=$1 cc=$2 j=$TMP/many_sections_$2.json want
	# the lines of SECTION(0) .. SECTION(49), as report locations
	want=$(grep -n '^SECTION([0-9]*)$' "$TOP/tests/workloads/many_sections.c" | head -50 |
		cut -d: -f1 | jq -R 'tonumber | "many_sections.c:\(.)"' | jq -sc 'sort')
	if record_json "$j" -- "$bin" 2 50 2000; then
		jqcheck "many sections ($cc): 50 barrier sections, one per SECTION line" "$j" \
			"[.sections[] | select(.kind == \"barrier\") | .location] | sort == $want"
		jqcheck "many sections ($cc): every one 2000 instances of 2 threads" "$j" \
			'[.sections[] | select(.kind == "barrier") | [.instances, .threads]] | unique == [[2000, 2]]'
		jqcheck "many sections ($cc): 100,000 barrier instances + the join, all stored, none partial" "$j" \
			'.meta.instances == "100001" and .meta.instances_stored == "100001" and .meta.instances_partial == "0" and .meta.instances_unfinished == "0"'
		jqcheck "many sections ($cc): nothing dropped" "$j" \
			'.meta.drops_probe == "0" and .meta.drops_wait == "0" and .meta.drops_thread == "0"'
	else
		bad "many sections ($cc): record"
	fi
}
timed_group "many sections (gcc)" many_sections_group "$WL/many_sections" gcc
wl_built clang many_sections && timed_group "many sections (clang)" many_sections_group "$(wl clang many_sections)" clang
