# What `report -i` may be given besides a profile, and the mode of the
# profiles record writes (issue 10).  Sourced by tests/run-integration.sh.

# Non-regular files: refused at once with the kind named, exit 1.  On the
# old reader /dev/zero took 4.2 GB and 7-28 s, a FIFO hung (timeout: 124).
profile_input_refused() {
	local desc=$1 path=$2 pat=$3 rc
	timeout 10 "$SB" report -i "$path" >"$TMP/pi.out" 2>"$TMP/pi.err"
	rc=$?
	if [ $rc -eq 1 ] && grep -q "scalebpf report: cannot read profile .*$pat" "$TMP/pi.err"; then
		ok "report -i $desc: refused at once: $(head -1 "$TMP/pi.err")"
	else
		bad "report -i $desc: rc=$rc (124: hung)"
		cat "$TMP/pi.err"
	fi
}

profile_input_group() {
	mkfifo "$TMP/pi.fifo"
	ln -s /dev/zero "$TMP/pi-zero.sbp"
	profile_input_refused /dev/zero /dev/zero "character device"
	profile_input_refused "a FIFO" "$TMP/pi.fifo" "FIFO"
	# A directory is a set of profiles to merge (issue 17): one whose
	# *.sbp are a FIFO and a link to a device is refused at once, each
	# named, nothing blocks.
	mkdir -p "$TMP/pi-dir"
	mkfifo "$TMP/pi-dir/a.sbp"
	ln -s /dev/zero "$TMP/pi-dir/b.sbp"
	timeout 10 "$SB" report -i "$TMP/pi-dir" >"$TMP/pi.out" 2>"$TMP/pi.err"
	local drc=$?
	check "report -i a directory of a FIFO and a device: refused at once, each named (rc=$drc)" bash -c \
		"[ $drc -eq 1 ] && grep -q 'a.sbp: it is a FIFO' '$TMP/pi.err' &&
		 grep -q 'b.sbp: it is a character device' '$TMP/pi.err' &&
		 grep -q 'none of its 2 profiles could be read' '$TMP/pi.err'"
	profile_input_refused "a link to /dev/zero" "$TMP/pi-zero.sbp" "character device"

	# fuzz_profile's first find (tests/fuzz/regress/): a section whose busy
	# + wait overflows 64 bits drew a 2^31-character bar (2 GB of text).
	local rc out=$TMP/pi-bar.txt
	timeout 20 "$SB" report -i "$TOP/tests/fuzz/regress/bar-width-overflow" 2>&1 |
		head -c 100000 >"$out"
	rc=${PIPESTATUS[0]}
	check "report of a profile with overflowing times: exit 0, bars in their width (rc=$rc, $(wc -c <"$out") bytes)" \
		bash -c "[ $rc -eq 0 ] && [ \$(wc -c <'$out') -lt 10000 ] &&
			 grep -q '|######################################|' '$out' &&
			 ! grep -qE '\\|[#. ]{39,}' '$out'"

	# A CHIP row whose section's busy time does not fit a double's range
	# of nanoseconds (fuzz_profile, tests/fuzz/regress/): UB in a cast once.
	check "report of a CHiP row with overflowing busy time: exit 0, the Cache view" bash -c \
		"timeout 20 '$SB' report -i '$TOP/tests/fuzz/regress/chip-busy-time-overflow' >'$TMP/pi-chip.txt' 2>&1 &&
		 grep -q '^Cache:' '$TMP/pi-chip.txt'"

	# A sampled CHIP row whose last footprint window is 2^64 - 2 ns
	# (fuzz_profile in CI, tests/fuzz/regress/): its HTML chart label cast
	# a double beyond 2^64 to an integer, undefined (the ASan pass aborts).
	check "HTML report of a footprint window of 2^64 ns: exit 0, the Cache panel" bash -c \
		"timeout 20 '$SB' report -i '$TOP/tests/fuzz/regress/chip-fp-window-overflow' \
			--format html -o '$TMP/pi-fp.html' >/dev/null 2>&1 &&
		 grep -q 'footprint by time window' '$TMP/pi-fp.html'"

	# A STACK row of 4026531841 threads (fuzz_profile, tests/fuzz/regress/):
	# its bar took 12 cells a thread once.
	timeout 20 "$SB" report -i "$TOP/tests/fuzz/regress/stack-bar-threads-overflow" 2>&1 |
		head -c 100000 >"$TMP/pi-stack.txt"
	rc=${PIPESTATUS[0]}
	check "report of a speedup stack of 2^32 threads: exit 0, bars of 48 cells (rc=$rc, $(wc -c <"$TMP/pi-stack.txt") bytes)" \
		bash -c "[ $rc -eq 0 ] && [ \$(wc -c <'$TMP/pi-stack.txt') -lt 20000 ] &&
			 grep -q '^Speedup stacks' '$TMP/pi-stack.txt' &&
			 ! grep -qE '^    \\|.{50,}' '$TMP/pi-stack.txt'"

	# Profiles are private to their owner whatever the umask, as perf.data.
	(umask 000 && "$SB" record -q -o "$TMP/pi-mode.sbp" -- /bin/true) >/dev/null 2>&1
	check "record writes its profile 0600 under umask 000 (got $(stat -c %a "$TMP/pi-mode.sbp" 2>&1))" \
		test "$(stat -c %a "$TMP/pi-mode.sbp" 2>/dev/null)" = 600
}

profile_input_group
