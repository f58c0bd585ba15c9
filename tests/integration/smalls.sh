# Smaller report defects (issue 9): where a join section is placed, how
# locations read in text and JSON, telling duplicated call sites apart,
# debug-file notes, --counts columns.

# --- join: every worker exits before main reaches pthread_join -----------
# Each of the two phases' join section is at its own pthread_join line,
# never "0x0 (?)" nor the other phase's line.
join_late_group() {
	local bin=$1 cc=$2 j=$TMP/join_late_$2.json s1 s2 l1 l2
	l1=$(site join1 join_late.c)
	l2=$(site join2 join_late.c)
	s1=$(section_at "$l1" join)
	s2=$(section_at "$l2" join)
	if record_json "$j" -- "$bin" 3 20000; then
		jqcheck "join after the workers exited ($cc): phase 1 section at $l1" "$j" "$s1 != null and ($s1).instances == 1 and ($s1).threads == 3"
		jqcheck "join after the workers exited ($cc): phase 2 section at $l2" "$j" "$s2 != null and ($s2).instances == 1 and ($s2).threads == 3"
		jqcheck "join after the workers exited ($cc): no join section without a function" "$j" '[.sections[] | select(.kind == "join" and .function == null)] | length == 0'
		ratio_check "join after the workers exited ($cc): busy ratio 1:2:3 within 10%" "$j" "$s1" 3 0.10
	else
		bad "join_late ($cc): record"
	fi
}
# Built as every workload is (no frame pointers), with gcc and clang.
timed_group "join after the workers exited (gcc)" join_late_group "$WL/join_late" gcc
wl_built clang join_late && timed_group "join after the workers exited (clang)" join_late_group "$(wl clang join_late)" clang

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

# --- a call site the compiler duplicated: two rows, told apart -----------
# The call offsets come from objdump: the calls to pthread_barrier_wait on
# the SITE line (two, inlined in both arms of a branch).
dup_site_group() {
	local bin=$1 cc=$2 j=$TMP/dup_$2.json loc sel line calls rows
	loc=$(site dup_site dup_site.c)
	line=${loc#*:}
	sel="[.sections[] | select(.location == \"$loc\" and .kind == \"barrier\")]"
	calls=$(objdump -dl --no-show-raw-insn "$bin" | awk -v l="dup_site.c:$line" '
		/^\/.*:[0-9]+/ { cur = $1; sub(/.*\//, "", cur); sub(/ .*/, "", cur) }
		/call.*<pthread_barrier_wait/ && cur == l { sub(/:$/, "", $1); print $1 }')
	check "dup_site ($cc): the compiler made two calls on $loc ($(echo $calls))" test "$(echo "$calls" | wc -w)" -eq 2
	if record_json "$j" -- "$bin" 4 20 1000 >/dev/null; then
		jqcheck "dup_site ($cc): two barrier sections at $loc, 10 instances each" "$j" "($sel | length) == 2 and all($sel[]; .instances == 10 and .threads == 4)"
		jqcheck "dup_site ($cc): one arm 1:2:3:4, the other 4:3:2:1 by thread" "$j" \
			"[$sel[] | [.per_thread | sort_by(.tid)[].busy_ns] | (.[0] < .[3])] | sort == [false, true]"
		"$SB" report -i "${j%.json}.sbp" >"$TMP/dup.txt"
		rows=$(grep -E '^ +[0-9]+ .* barrier +' "$TMP/dup.txt" | grep -oE "[a-z_]+ \(dup_site\.c:$line[^)]*\)")
		check "dup_site ($cc): text shows two different locations for $loc" test "$(echo "$rows" | sort -u | grep -c .)" -eq 2
		# Each row names the offset of its own call (return address - 1).
		check "dup_site ($cc): the rows name the two calls' offsets" bash -c '
			for c in $1; do
				hit=0
				for d in 0 1 2 3 4 5; do
					grep -qF "dup_site+0x$(printf %x $((0x$c + d))))" <<<"$2" && hit=1
				done
				[ $hit = 1 ] || exit 1
			done' _ "$calls" "$rows"
	else
		bad "dup_site ($cc): record"
	fi
}
timed_group "duplicated call site (gcc)" dup_site_group "$WL/dup_site" gcc
wl_built clang dup_site && timed_group "duplicated call site (clang)" dup_site_group "$(wl clang dup_site)" clang

# --- lines from a separate debug file: the header names that file --------
# The program's DWARF is split off (found by .gnu_debuglink); libc's comes
# from libc6-dbg (by build ID) when that is installed, else it has none.
debug_file_group() {
	local d=$TMP/dbgsplit j=$TMP/dbgsplit/split.json loc notes libc
	mkdir -p "$d/bin"
	loc=$(site split ../integration/dbg_split.c)
	loc=dbg_split.c:${loc#*:}
	if ! { gcc -O2 -g -pthread "$TOP/tests/integration/dbg_split.c" -o "$d/bin/dbg_split" &&
	       objcopy --only-keep-debug "$d/bin/dbg_split" "$d/bin/dbg_split.debug" &&
	       strip --strip-debug "$d/bin/dbg_split" &&
	       objcopy --add-gnu-debuglink="$d/bin/dbg_split.debug" "$d/bin/dbg_split"; }; then
		bad "debug file: build and split dbg_split"
		return
	fi
	check "debug file: the binary itself has no .debug_line" bash -c "! readelf -S '$d/bin/dbg_split' | grep -q debug_line"
	if ! record_json "$j" -F 999 -- "$d/bin/dbg_split"; then
		bad "debug file: record"
		return
	fi
	notes=$(jq -r '.meta.notes' "$j")
	jqcheck "debug file: the section has its source line $loc" "$j" "[.sections[] | select(.location == \"$loc\" and .kind == \"barrier\")] | length == 1"
	check "debug file: the notes name the debug file used ($notes)" \
		grep -qF "debug info from separate files: $d/bin/dbg_split ($d/bin/dbg_split.debug)" <<<"$notes"
	check "debug file: the program is not called without debug info" \
		bash -c '! grep -qE "no debug info[^;]*dbg_split" <<<"$1"' _ "$notes"
	libc=$(grep -oE '/[^ ,;()]*/libc\.so\.6' <<<"$notes" | head -1)
	# libc is named only when one of its locations was: memset's samples
	# do not map to libc's CFG blocks (sample_keys_unmapped counts them),
	# so some runs have no libc location at all.
	if [ -z "$libc" ]; then
		echo "note: debug file: no libc location in this run, its debug file unchecked"
	elif dpkg -s libc6-dbg >/dev/null 2>&1; then
		check "debug file: libc6-dbg installed, libc named with its build-id debug file" \
			grep -qE "separate files:[^;]*$libc \(/usr/lib/debug/\.build-id/[0-9a-f]{2}/[0-9a-f]+\.debug\)" <<<"$notes"
	else
		check "debug file: no libc6-dbg, libc has no debug info" grep -qE "no debug info[^;]*$libc" <<<"$notes"
	fi
	"$SB" report -i "${j%.json}.sbp" >"$d/split.txt"
	# The note need not come first: without libc6-dbg, "no debug info" does.
	check "debug file: the text header shows the note" bash -c \
		"grep '^  notes: ' '$d/split.txt' | grep -qF 'debug info from separate files: $d/bin/dbg_split'"
}
debug_file_group

# --- the symcache: a second recording of dbg_split takes its lines from
# the entry the first one wrote (<cache>/scalebpf/sym/<build-id>.sym), and
# names the same source locations.  Under strace, the hit is seen: the
# debug file is opened but never read (no CRC pass, no DWARF read()).
symcache_group() {
	local d=$TMP/dbgsplit c=$TMP/dbgsplit/symcache bid a b
	[ -x "$d/bin/dbg_split" ] || { bad "symcache: no dbg_split (debug file group)"; return; }
	bid=$(readelf -n "$d/bin/dbg_split" | awk '/Build ID/ { print $3 }')
	rm -rf "$c"
	if ! XDG_CACHE_HOME=$c record_json "$d/sc1.json" -F 999 -- "$d/bin/dbg_split"; then
		bad "symcache: first record"
		return
	fi
	check "symcache: the first recording wrote sym/$bid.sym" test -s "$c/scalebpf/sym/$bid.sym"
	if command -v strace >/dev/null; then
		# LeakSanitizer cannot run under ptrace: the ASan recorder
		# would fail at its exit (detect_leaks=0: the first run checks)
		XDG_CACHE_HOME=$c ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
			strace -f -y -e trace=read -o "$d/sc2.strace" \
			"$SB" record -q -o "$d/sc2.sbp" -F 999 -- "$d/bin/dbg_split" 2>"$d/sc2.err" &&
			"$SB" report -i "$d/sc2.sbp" --format json >"$d/sc2.json"
		check "symcache: the second recording read none of the debug file" \
			bash -c '! grep -qF "dbg_split.debug>" "$1"' _ "$d/sc2.strace"
	else
		XDG_CACHE_HOME=$c record_json "$d/sc2.json" -F 999 -- "$d/bin/dbg_split"
	fi
	a=$(jq -c '[.sections[] | [.kind, .location]] | sort' "$d/sc1.json")
	b=$(jq -c '[.sections[] | [.kind, .location]] | sort' "$d/sc2.json" 2>/dev/null)
	check "symcache: both recordings name the same section locations ($a)" \
		test -n "$a" -a "$a" = "$b"
	check "symcache: the second names its lines' debug file too" \
		grep -qF "separate files: $d/bin/dbg_split ($d/bin/dbg_split.debug)" \
		<<<"$(jq -r .meta.notes "$d/sc2.json" 2>/dev/null)"
}
symcache_group

# --- report --counts: one column per thread, headed by its tid ------------
# join_late's threads are unnamed: all carry the program's name.
counts_group() {
	local j=$TMP/counts.json c=$TMP/counts.counts.json t=$TMP/counts.txt want got
	if ! record_json "$j" -- "$WL/join_late" 3 3000; then
		bad "--counts columns: record"
		return
	fi
	"$SB" report -i "${j%.json}.sbp" --counts --format json >"$c"
	"$SB" report -i "${j%.json}.sbp" --counts >"$t"
	# Per section, its threads' tids in column order: JSON and text alike.
	want=$(jq -r '[.counts[] | [.per_thread[].tid | tostring] | join(" ")] | unique | .[]' "$c")
	got=$(grep -A1 '^section ' "$t" | grep -E '^  kind ' |
	      sed -E 's/^  kind +location +//; s/tid //g; s/ +/ /g; s/ $//' | sort -u)
	check "--counts: text columns are each section's threads by tid ($(echo $got))" \
		test -n "$want" -a "$want" = "$got"
	check "--counts: the thread names are beneath" grep -qE '^ +join_late +join_late +join_late$' "$t"
}
counts_group

# --- every wait primitive is documented; `other` is what it says ---------
# The names are those of the profile (analysis/profile/profile.c).
prims=$(sed -n '/prim_names\[SB_PRIM_MAX\]/,/^};/p' "$TOP/analysis/profile/profile.c" | grep -oE '"[a-z_]+"' | tr -d '"')
undoc=$(for p in $prims; do grep -qE "^\| [^|]*\`$p\`" "$TOP/README.md" || echo "$p"; done)
check "README's primitive table names every primitive ($(echo $prims | wc -w)${undoc:+; missing: $(echo $undoc)})" \
	test -n "$prims" -a -z "$undoc"
check "report --help explains the primitive other" bash -c "'$SB' report --help | grep -q '\`other\`: blocking futex waits'"
futex_other_group() {
	local bin=$1 cc=$2 j=$TMP/futex_$2.json
	if record_json "$j" -- "$bin" 3 300; then
		# 3 threads each wait ~300 ms on the raw futex: 0.9 s of `other`.
		jqcheck "futex_other ($cc): 3 waits of primitive other, 3 x 300 ms within 20%" "$j" \
			'[.waits[] | select(.primitive == "other")][0] | .count == 3 and ((.wait_ns / 900000000 - 1) | fabs) <= 0.2'
	else
		bad "futex_other ($cc): record"
	fi
}
timed_group "futex_other (gcc)" futex_other_group "$WL/futex_other" gcc
wl_built clang futex_other && timed_group "futex_other (clang)" futex_other_group "$(wl clang futex_other)" clang
