# What `report` opens and prints besides the profile (issue 10): it runs
# as root, and a profile may be crafted.  Profiles are crafted from one
# real recording by tests/tools/profile_edit.c (well formed, valid CRCs:
# only their strings lie).
#   - No file outside the recorded sources is ever printed, nothing makes
#     it hang: a source path naming a secret file, /dev/zero, a FIFO, a
#     symlink to the secret; the real source replaced by such; a binary
#     whose owner does not own the file; --source-dir with links leaving
#     it.  Each report exits 0 within a bound, shows no secret line and
#     says once why lines were omitted.
#   - Control characters, invalid UTF-8 and bidi overrides in the
#     profile's strings never reach the terminal raw (text views,
#     listings); JSON keeps the raw strings, escaped as JSON.

RI=$TMP/ri
mkdir -p "$RI/src"
# The workload's source where it can be swapped: lime_cache, built as users
# build (-O2 -g, no frame pointers), has causes with source lines.
cp "$TOP/tests/workloads/lime_cache.c" "$TOP/tests/workloads/work.h" "$RI/src/"
RI_TOOL_OK=0
if ! (cd "$RI/src" && gcc -O2 -g -pthread lime_cache.c -o lc) 2>"$RI/cc.err"; then
	bad "report input: build the workload copy"; cat "$RI/cc.err"
elif ! analysis_tool profile_edit "$RI/profile_edit"; then
	bad "report input: build tests/tools/profile_edit.c"; cat "$RI/profile_edit.err"
elif ! "$SB" record -q -F 999 -o "$RI/good.sbp" -- "$RI/src/lc" 4 40 200000 \
	2>"$RI/rec.err"; then
	bad "report input: record the workload copy"; cat "$RI/rec.err"
else
	RI_TOOL_OK=1
fi
for i in $(seq 1 300); do echo "SECRET-LINE-$i"; done >"$RI/secret"
mkfifo "$RI/fifo"
ln -s "$RI/secret" "$RI/secret_link"

# ri_report DESC PROFILE [ARGS...]: report text into $RI/out, bounded in
# time; then the checks every crafted case must pass.  With RI_ASAN=1 the
# sanitizer build runs it too (a few cases: it takes seconds each).
ri_report() {
	local desc=$1 prof=$2 rc
	shift 2
	timeout 20 "$SB" report -i "$prof" "$@" >"$RI/out" 2>"$RI/err"
	rc=$?
	check "$desc: exits 0 within 20 s (rc $rc)" test $rc -eq 0
	check "$desc: no line of the secret file is printed" \
		bash -c "! grep -q SECRET-LINE '$RI/out'"
	if [ -n "${ASB:-}" ] && [ "${RI_ASAN:-0}" = 1 ]; then
		timeout 60 "$ASB" report -i "$prof" "$@" >/dev/null 2>"$RI/asan.err"
		check "$desc: clean under ASan/UBSan" bash -c "! grep -q Sanitizer '$RI/asan.err'"
	fi
}

# ri_omitted DESC PATTERN: the reason is said once, and matches PATTERN.
ri_omitted() {
	check "$1: says once why source lines are omitted" \
		test "$(grep -c 'note: source lines not shown' "$RI/out")" = 1
	check "$1: the reason names '$2'" grep -q "note: source lines not shown.*$2" "$RI/out"
}

ri_source_group() {
	local e=$RI/profile_edit cause
	cause=$(grep -n 'SITE:cause' "$RI/src/lime_cache.c" | cut -d: -f1)
	ri_report "report of the real profile" "$RI/good.sbp"
	check "report of the real profile: shows the cause's source line (a file the binary names)" \
		grep -Eq "> +$cause \| .*SITE:cause" "$RI/out"
	check "report of the real profile: nothing omitted" \
		bash -c "! grep -q 'note: source lines not shown' '$RI/out'"

	# The binary is opened once (by O_PATH, then read through
	# /proc/self/fd): a second open by name could read a swapped file.
	strace -f -e trace=openat,open -o "$RI/strace" \
		"$SB" report -i "$RI/good.sbp" >/dev/null 2>&1
	check "report opens the recorded binary by name once ($(grep -c "\"$RI/src/lc\"" "$RI/strace"))" \
		test "$(grep -c "\"$RI/src/lc\"" "$RI/strace")" = 1
	# The right file, another line: a profile must not pick the lines.
	"$e" "$RI/good.sbp" "$RI/p_line.sbp" "line+=40"
	ri_report "source line moved by 40" "$RI/p_line.sbp"
	check "source line moved by 40: no source line shown" \
		bash -c "! grep -Eq '> +[0-9]+ \\|' '$RI/out'"
	ri_omitted "source line moved by 40" "not the source file and line"

	# Paths the profile states: never opened.
	"$e" "$RI/good.sbp" "$RI/p_secret.sbp" "file=$RI////secret"
	RI_ASAN=1 ri_report "source path = a secret file" "$RI/p_secret.sbp"
	ri_omitted "source path = a secret file" "not the source file and line"
	"$e" "$RI/good.sbp" "$RI/p_zero.sbp" "file=/dev/zero"
	ri_report "source path = /dev/zero" "$RI/p_zero.sbp"
	ri_omitted "source path = /dev/zero" "/dev/zero"
	"$e" "$RI/good.sbp" "$RI/p_fifo.sbp" "file=$RI/fifo"
	ri_report "source path = a FIFO" "$RI/p_fifo.sbp"
	ri_omitted "source path = a FIFO" "fifo"
	"$e" "$RI/good.sbp" "$RI/p_link.sbp" "file=$RI/secret_link"
	ri_report "source path = a symlink to the secret" "$RI/p_link.sbp"
	ri_omitted "source path = a symlink to the secret" "secret_link"
	"$e" "$RI/good.sbp" "$RI/p_bin.sbp" "binary=$RI/fifo"
	ri_report "binary path = a FIFO" "$RI/p_bin.sbp"
	ri_omitted "binary path = a FIFO" "not a regular file"

	# The file the binary names, swapped for something else.
	mv "$RI/src/lime_cache.c" "$RI/lime_cache.c.real"
	ln -s "$RI/secret" "$RI/src/lime_cache.c"
	ri_report "recorded source swapped for a symlink to the secret" "$RI/good.sbp"
	ri_omitted "recorded source swapped for a symlink to the secret" "symbolic link"
	rm "$RI/src/lime_cache.c"
	mkfifo "$RI/src/lime_cache.c"
	RI_ASAN=1 ri_report "recorded source swapped for a FIFO" "$RI/good.sbp"
	ri_omitted "recorded source swapped for a FIFO" "not a regular file"
	rm "$RI/src/lime_cache.c"
	if mknod "$RI/src/lime_cache.c" c 1 5 2>/dev/null; then   # /dev/zero
		ri_report "recorded source swapped for /dev/zero's device" "$RI/good.sbp"
		ri_omitted "recorded source swapped for /dev/zero's device" "not a regular file"
		rm "$RI/src/lime_cache.c"
	fi
	mv "$RI/lime_cache.c.real" "$RI/src/lime_cache.c"
	# An ELF of another user naming a file it does not own (root's):
	# shown nothing, as for a crafted ELF whose debug info names a secret.
	if chown nobody "$RI/src/lc" 2>/dev/null; then
		ri_report "binary of another owner than the source" "$RI/good.sbp"
		ri_omitted "binary of another owner than the source" "not owned by the owner"
		chown "$(id -u)" "$RI/src/lc"
	else
		echo "     skip: binary of another owner (no user nobody to give it to)"
	fi

	# --source-dir: beneath it only.
	mkdir -p "$RI/dir" "$RI/dir_ok"
	ln -s ../secret "$RI/dir/lime_cache.c"
	ln -s /dev/zero "$RI/dir/work.h"
	mkfifo "$RI/dir/secret"
	RI_ASAN=1 ri_report "--source-dir whose files link out of it" "$RI/good.sbp" --source-dir "$RI/dir"
	ri_omitted "--source-dir whose files link out of it" "outside --source-dir"
	"$e" "$RI/good.sbp" "$RI/p_dotdot.sbp" "file=../secret"
	ri_report "--source-dir, source path ../secret" "$RI/p_dotdot.sbp" --source-dir "$RI/dir"
	ri_omitted "--source-dir, source path ../secret" "secret"
	cp "$RI/src/lime_cache.c" "$RI/dir_ok/"
	ri_report "--source-dir with the sources" "$RI/good.sbp" --source-dir "$RI/dir_ok"
	check "--source-dir with the sources: shows the cause's line from there" \
		grep -Eq "> +$cause \| .*SITE:cause" "$RI/out"
	ri_report "--no-source" "$RI/good.sbp" --no-source
	check "--no-source: no source line, no note" \
		bash -c "! grep -Eq '^ +[> ] +[0-9]+ \| |note: source lines' '$RI/out'"
}

# Every text form of the report: the full report, the listings.
ri_text_all() {
	local prof=$1
	"$SB" report -i "$prof" >"$RI/t_full" 2>&1
	"$SB" report -i "$prof" --counts >"$RI/t_counts" 2>&1
	"$SB" report -i "$prof" --addresses >"$RI/t_addrs" 2>&1
	"$SB" report -i "$prof" --source-dir "$RI/dir_ok" >"$RI/t_dir" 2>&1
	cat "$RI/t_full" "$RI/t_counts" "$RI/t_addrs" "$RI/t_dir" >"$RI/t_all"
}

ri_escape_group() {
	local bad_str
	# ESC sequences (title, clear screen, OSC 8 hyperlink), BEL, CR, a
	# newline starting a fake report line, DEL, a lone byte, C1 CSI in
	# UTF-8, a right-to-left override; and a UTF-8 name that must survive.
	bad_str=$'evil\e]0;pwned\a\e[2J\e]8;;http://x\e\\\\\rFAKE\nFAKE-LINE\x7f\xff\xc2\x9b\xe2\x80\xaeé'
	"$RI/profile_edit" "$RI/good.sbp" "$RI/p_esc.sbp" "func=$bad_str" "comm=$bad_str" \
		"file=$RI/$bad_str.c" "binary=$RI/$bad_str" "meta:command=$bad_str" \
		"meta:notes=$bad_str" "meta:kernel=$bad_str" "meta:not_followed=$bad_str"
	ri_text_all "$RI/p_esc.sbp"
	check "crafted strings: no C0 control but newline/tab, no DEL in any text output" \
		bash -c "! LC_ALL=C grep -q \$'[\\x01-\\x08\\x0b-\\x1f\\x7f]' '$RI/t_all'"
	check "crafted strings: text output is valid UTF-8" \
		iconv -f UTF-8 -t UTF-8 "$RI/t_all" -o /dev/null
	check "crafted strings: no C1 control, no bidi override" \
		bash -c "! LC_ALL=C grep -q \$'\\xc2[\\x80-\\x9f]\\|\\xe2\\x80[\\xaa-\\xae]' '$RI/t_all'"
	check "crafted strings: a newline in a name starts no line" \
		bash -c "! grep -q '^FAKE-LINE' '$RI/t_all'"
	check "crafted strings: escaped, readable, UTF-8 kept (function name)" \
		grep -qF 'evil\x1b]0;pwned\x07\x1b[2J' "$RI/t_full"
	check "crafted strings: the newline shows as \\n, the bytes as \\x and \\u" \
		grep -qF '\rFAKE\nFAKE-LINE\x7f\xff\u009b\u202eé' "$RI/t_full"
	for v in t_counts t_addrs; do
		check "crafted strings: escaped in the ${v#t_} listing" grep -qF 'evil\x1b' "$RI/$v"
	done
	check "crafted strings: the header's metadata escaped" \
		grep -qF 'target:   evil\x1b]0;pwned' "$RI/t_full"
	if [ -n "${ASB:-}" ]; then
		"$ASB" report -i "$RI/p_esc.sbp" >/dev/null 2>"$RI/asan.err"
		check "crafted strings: clean under ASan/UBSan" bash -c "! grep -q Sanitizer '$RI/asan.err'"
	fi
	"$SB" report -i "$RI/p_esc.sbp" --format json >"$RI/esc.json" 2>&1
	jqcheck "crafted strings: JSON keeps them exactly (escaped as JSON)" "$RI/esc.json" \
		'(.meta.command | test("^evil\u001b]0;pwned\u0007")) and (.causes[0].function | test("\nFAKE-LINE"))'
}

if [ "$RI_TOOL_OK" = 1 ]; then
	ri_source_group
	ri_escape_group
fi

# A CFG cache entry (record's per-build-id cache, user/binary/cfg_cache.c)
# that is a link to /dev/zero cost 8.7 s and 4.2 GB, a FIFO hung: now
# refused at once, said once, rebuilt and replaced by a regular file.
ri_cfg_cache_group() {
	local bid entry what rc t0 t1 rss
	bid=$(readelf -n "$RI/src/lc" 2>/dev/null | awk '/Build ID/ { print $3 }')
	if [ -z "$bid" ]; then
		bad "CFG cache: the workload copy has no build-id"
		return
	fi
	entry=$RI/cache/scalebpf/cfg/$bid.r2.cfg   # SB_CFG_CACHE_EXT
	for what in devzero fifo; do
		rm -rf "$RI/cache"
		mkdir -p "$RI/cache/scalebpf/cfg"
		case $what in
		devzero) ln -s /dev/zero "$entry" ;;
		fifo) mkfifo "$entry" ;;
		esac
		t0=$(date +%s%N)
		XDG_CACHE_HOME=$RI/cache timeout 60 /usr/bin/time -f "%M" -o "$RI/rss" \
			"$SB" record -q -F 999 -o "$RI/c.sbp" -- "$RI/src/lc" 4 10 100000 \
			2>"$RI/c.err"
		rc=$?
		t1=$(date +%s%N)
		rss=$(tail -1 "$RI/rss" 2>/dev/null)
		echo "     CFG cache entry ($what): record took $(((t1 - t0) / 1000000)) ms," \
			"max RSS ${rss:-?} KB"
		check "CFG cache entry ($what): record exits 0 (rc $rc)" test $rc -eq 0
		check "CFG cache entry ($what): within 10 s" test $(((t1 - t0) / 1000000)) -lt 10000
		check "CFG cache entry ($what): max RSS under 400 MB (${rss:-?} KB)" \
			test "${rss:-999999999}" -lt 400000
		check "CFG cache entry ($what): said once" \
			test "$(grep -c 'CFG cache entry.*discarded.*not a regular file' "$RI/c.err")" = 1
		check "CFG cache entry ($what): replaced by a regular file" \
			bash -c "[ -f '$entry' ] && [ ! -L '$entry' ]"
	done
}

if [ "$RI_TOOL_OK" = 1 ] && [ -x /usr/bin/time ]; then
	ri_cfg_cache_group
fi
