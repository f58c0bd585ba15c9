# The output path is checked before anything is recorded (issue 10): an
# -o that cannot be written fails at once with a clear message, and the
# command never runs, instead of recording the whole run and losing it.
output_group() {
	local o=$1 why=$2 ran=$TMP/output_ran
	rm -f "$ran"
	expect_fail "record -o '$o' ($why): clear error before recording" \
		"cannot write profile.*nothing recorded" "$SB" record -q -o "$o" -- touch "$ran"
	check "record -o '$o' ($why): the command never ran" test ! -e "$ran"
}
output_group "" "empty"
output_group /proc/scalebpf-test.sbp "in /proc"
output_group "$TMP" "a directory"
output_group "$TMP/no/such/dir/x.sbp" "no such directory"
mkdir -p "$TMP/ro"
if mount -t tmpfs -o ro tmpfs "$TMP/ro" 2>/dev/null; then
	output_group "$TMP/ro/x.sbp" "read-only filesystem"
	umount "$TMP/ro"
fi
rm -f "$TMP/output_ok.sbp"
check "record -o in a writable directory still records" \
	"$SB" record -q -o "$TMP/output_ok.sbp" -- true
check "the temporary file of the check is not left behind" \
	bash -c "[ \$(ls -A '$TMP' | grep -c '^\.output_ok\|output_ok.sbp\..*') = 0 ]"
