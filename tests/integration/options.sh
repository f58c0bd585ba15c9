# Numeric option values are taken only as written and in range: strtoul
# wrapped -F 4294967296 to 0 Hz and -p 4294967297 to PID 1, and strtod
# took nan and inf for seconds.  Every bad value is a usage error: exit 2,
# a message naming the option, nothing recorded (the command never runs).

# opt_reject DESC PATTERN CMD...: CMD exits 2 and says PATTERN.
opt_reject() {
	local desc=$1 pat=$2 rc
	shift 2
	"$@" >"$TMP/opt.out" 2>"$TMP/opt.err"
	rc=$?
	if [ "$rc" -ne 2 ]; then
		bad "$desc (exit $rc, not 2)"
		cat "$TMP/opt.err"
	elif ! grep -qi -- "$pat" "$TMP/opt.err"; then
		bad "$desc: message lacks '$pat':"
		cat "$TMP/opt.err"
	else
		ok "$desc"
	fi
}

rm -f "$TMP/ran"
for args in "-F 4294967296" "-F -1" "-F 199x" "-p 4294967297" "-p -1" "-p ' 1'" \
	    "-d nan" "-d inf" "-d -inf" "-d 0" "-d 1e400" "-d 0x10" "-d ''" \
	    "--max-instances -1" "--max-instances 18446744073709551616" \
	    "--ringbuf-mb -18446744073709551615" "--ringbuf-mb 3"; do
	opt="${args%% *}"
	eval "set -- $args"
	opt_reject "record $args: refused" "invalid $opt" \
		"$SB" record -q -o "$TMP/opt.sbp" "$@" -- touch "$TMP/ran"
done
check "record: no bad option value ran the command" test ! -e "$TMP/ran"
opt_reject "record -p 4294967297: refused (not PID 1)" "out of range" "$SB" record -q -p 4294967297
opt_reject "record --events bogus: a usage error too" "invalid --events" \
	"$SB" record -q --events bogus -- true

# report: the profile is read after the options, so any file will do.
for args in "-n -1" "-n 18446744073709551616" "-n 5x" "--top ''" \
	    "--cluster-threshold nan" "--cluster-threshold inf" "--cluster-threshold 1" \
	    "--cluster-threshold 0" "--cluster-threshold 0.5x"; do
	opt="${args%% *}"
	[ "$opt" = -n ] && opt=--top
	eval "set -- $args"
	opt_reject "report $args: refused" "invalid $opt" "$SB" report -i /nonexistent "$@"
done

# Good values are still taken (the options reach the profile).
if record_json "$TMP/optok.json" -F 99 -d 30 --max-instances 3 --ringbuf-mb 8 \
	-- "$WL/barrier_ratio" 2 5 100; then
	jqcheck "record -F 99 --max-instances 3: 5 instances, a 99 Hz profile" "$TMP/optok.json" \
		'.sections[0].instances == 5 and (.meta.event_sources | test("99 Hz"))'
else
	bad "record with valid numeric options"
fi
check "report -n 0 --cluster-threshold 0.95 reads the profile" \
	"$SB" report -i "$TMP/optok.sbp" -n 0 --cluster-threshold 0.95 >/dev/null

# `scalebpf cc -x c -`: a program on stdin.  The user's -x applies, as in
# gcc, to every input after it: the runtime archive cc appends must not be
# compiled as C.  The result is an exact-mode build (counted, wrapped).
if command -v clang >/dev/null; then
	printf '%s\n' '#include <pthread.h>' 'static void *f(void *a) { return a; }' \
		'int main(void) { pthread_t t; pthread_create(&t, 0, f, 0);' \
		'return pthread_join(t, 0); }' >"$TMP/stdin.c"
	# The runtime beside the recorder; the ASan recorder has none.
	rt=$(dirname "$SB")/libscalebpf-rt.a
	[ -e "$rt" ] || rt=$TOP/build/libscalebpf-rt.a
	for x in "-x c" "-xc"; do
		rm -f "$TMP/stdin_prog"
		# shellcheck disable=SC2086
		if env SCALEBPF_RT="$rt" "$SB" cc -O2 $x - -o "$TMP/stdin_prog" <"$TMP/stdin.c" \
			2>"$TMP/cc.err" &&
		   "$TMP/stdin_prog"; then
			check "cc $x - (stdin): an exact-mode build (counted, sync calls wrapped)" \
				bash -c "nm '$TMP/stdin_prog' | grep -q __wrap_pthread_create &&
					 nm '$TMP/stdin_prog' | grep -q __sanitizer_cov_trace_pc_guard"
		else
			bad "cc $x - (stdin): builds and runs"
			head -3 "$TMP/cc.err"
		fi
	done
else
	echo "skip cc -x c -: clang is not installed"
fi

# Permissions: the capabilities the kernel checks, not uid 0.  A non-root
# user holding CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN records (the check
# used to be geteuid() == 0); without them, a clear message naming them.
NB=$TMP/nobody
mkdir -p "$NB" && chmod 1777 "$NB" && chmod 755 "$TMP"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
if ! command -v setpriv >/dev/null; then
	echo "skip capabilities: setpriv (util-linux) is not installed"
elif ! as_nobody test -x "$SB" -a -x "$WL/barrier_ratio"; then
	echo "skip capabilities: $SB is not reachable for user nobody"
else
	expect_fail "non-root without capabilities: refused, naming the three" \
		"needs root or the capabilities CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN.*missing: CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN" \
		as_nobody "$SB" record -q -o "$NB/none.sbp" -- "$WL/barrier_ratio" 2 5 100
	expect_fail "non-root with CAP_BPF only: refused, the two missing named" \
		"missing: CAP_PERFMON, CAP_SYS_ADMIN" \
		as_nobody --inh-caps=+bpf --ambient-caps=+bpf \
		"$SB" record -q -o "$NB/bpf.sbp" -- "$WL/barrier_ratio" 2 5 100
	if as_nobody --inh-caps=+bpf,+perfmon,+sys_admin --ambient-caps=+bpf,+perfmon,+sys_admin \
		"$SB" record -q -o "$NB/caps.sbp" -- "$WL/barrier_ratio" 2 5 100 2>"$NB/caps.err"; then
		"$SB" report -i "$NB/caps.sbp" --format json >"$NB/caps.json"
		jqcheck "non-root with CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN: recorded, 5 barrier instances" \
			"$NB/caps.json" '[.sections[] | select(.kind == "barrier")][0].instances == 5'
	else
		bad "non-root with CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN: record failed"
		cat "$NB/caps.err"
	fi
fi
