# -p and the target's children (issue 10): processes it forks that are
# not recorded are said in the profile and the report, whether it forks
# them while recording (without --follow) or forked them before (a
# driver script's running stage, a pre-fork server's workers: no option
# follows those).  The work is barrier_ratio's, run by a shell.

# pc_record DESC JSON PID ARGS...: record -p PID ARGS, then the text report.
pc_record() {
	local desc=$1 j=$2 pid=$3
	shift 3
	if ! record_json "$j" -p "$pid" "$@"; then
		bad "$desc: record"
		return 1
	fi
	"$SB" report -i "${j%.json}.sbp" >"${j%.json}.txt"
}

# --- forked while recording, -p without --follow -------------------------
# The shell waits on a FIFO (read is built in: no child before the fork),
# opened for writing once record says it is recording (a fixed 1.5 s was
# too short for the ASan recorder on a loaded CI machine: the fork came
# first, and the child was running before, not forked while recording).
pid_fork_nofollow() {
	local j=$TMP/pid_fork_nofollow.json pid rec ok=0
	rm -f "$TMP/pc.fifo" "$TMP/pc.err"
	mkfifo "$TMP/pc.fifo"
	sh -c 'read _ <"$0"; "$@"; exit $?' "$TMP/pc.fifo" "$(wl gcc barrier_ratio)" 4 10 1000 &
	pid=$!
	"$SB" record -o "${j%.json}.sbp" -p "$pid" 2>"$TMP/pc.err" &
	rec=$!
	for _ in $(seq 600); do
		grep -q "recording PID $pid" "$TMP/pc.err" 2>/dev/null && break
		sleep 0.1
	done
	echo go >"$TMP/pc.fifo"
	wait "$rec" && ok=1
	wait
	if [ "$ok" != 1 ]; then
		bad "-p, a fork while recording: record"
		cat "$TMP/pc.err"
		return
	fi
	"$SB" report -i "${j%.json}.sbp" --format json >"$j"
	"$SB" report -i "${j%.json}.sbp" >"${j%.json}.txt"
	jqcheck "-p, a fork while recording: no sections, the child listed as not followed (-p without --follow)" "$j" \
		'(.sections | length) == 0 and .meta.processes_not_followed == "1" and (.meta.not_followed | test("^[0-9]+ sh \\(forked; -p without --follow\\)$"))'
	check "-p, a fork while recording: the report says it was not followed" \
		grep -q "Processes the target started were not followed: [0-9]* sh (forked; -p without --follow)" "${j%.json}.txt"
}
wl_built gcc barrier_ratio && pid_fork_nofollow

# --- forked before recording: with and without --follow ------------------
pid_running_child() {
	local opt=$1 j=$TMP/pid_running_child$1.json pid child d
	d="-p${opt:+ $opt}, a child running before"
	sh -c '"$@" & wait' sh "$(wl gcc barrier_ratio)" 4 100000 3000 &
	pid=$!
	for _ in $(seq 100); do
		child=$(pgrep -P "$pid" barrier_ratio) && break
		sleep 0.02
	done
	if [ -z "$child" ] || ! pc_record "$d" "$j" "$pid" -d 0.5 $opt; then
		[ -z "$child" ] && bad "$d: no child started"
		kill "$child" 2>/dev/null
		wait "$pid"
		return
	fi
	kill "$child" 2>/dev/null
	wait "$pid"
	jqcheck "$d: listed as not followed, running before recording" "$j" \
		".meta.processes_not_followed == \"1\" and .meta.not_followed == \"$child barrier_ratio (running before recording)\""
	check "$d: the report says it was not followed" \
		grep -q "WARNING:  processes not followed (their work is not here): $child barrier_ratio (running before recording)" "${j%.json}.txt"
}
if wl_built gcc barrier_ratio; then
	pid_running_child ""
	pid_running_child --follow
fi
