# The end of a recording: the profile is written when recording stops,
# whatever the command does next; the target is the process, not its PID.

# wait_for FILE PATTERN SECONDS: true once FILE has a line matching PATTERN.
wait_for() {
	local i
	for ((i = 0; i < $3 * 20; i++)); do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# wait_exit PID SECONDS: true once PID (a child of this shell) exited;
# its status is then in $wait_rc.
wait_exit() {
	local i
	for ((i = 0; i < $2 * 20; i++)); do
		if ! kill -0 "$1" 2>/dev/null; then
			wait "$1"
			wait_rc=$?
			return 0
		fi
		sleep 0.05
	done
	return 1
}

# --- record -d SEC -- CMD where CMD outlives SEC ---------------------------
# The command ignores SIGINT (SIG_IGN survives exec) and runs for minutes.
# The profile must be on disk when the duration ends, while the command
# runs; then each signal to the recorder is passed on: SIGINT (ignored by
# the command), then SIGTERM, which ends it; record exits with 128+15.
duration_group() {
	local e=$TMP/dur.err s=$TMP/dur.sbp j=$TMP/dur.json rp cpid loc
	loc=$(site barrier barrier_ratio.c)
	"$SB" record -o "$s" -d 1 -- sh -c "trap '' INT; exec '$WL/barrier_ratio' 2 1000000 2000" \
		2>"$e" &
	rp=$!
	if ! wait_for "$e" "waiting for the command" 15; then
		bad "-d 1 -- CMD: no 'waiting for the command' line"
		cat "$e"
		kill -9 "$rp"
		return
	fi
	cpid=$(sed -n 's/.*recording command, PID \([0-9]*\).*/\1/p' "$e")
	if [ -s "$s" ] && "$SB" report -i "$s" --format json >"$j" 2>/dev/null; then
		jqcheck "-d 1 -- CMD: profile written when the duration ended, the command running" \
			"$j" ".meta.stop_reason == \"duration\" and
			      $(section_at "$loc" barrier).instances > 0"
	else
		bad "-d 1 -- CMD: no profile while the command runs on"
	fi
	check "-d 1 -- CMD: the recorder says it waits and that signals are passed on" \
		grep -q "profile written; waiting for the command (PID $cpid).*passed on" "$e"
	kill -INT "$rp"
	sleep 0.5
	check "SIGINT while waiting: passed on (the command ignores it, record waits on)" \
		bash -c "kill -0 $rp && kill -0 $cpid && grep -q 'passed SIGINT on to the command' '$e'"
	kill -TERM "$rp"
	if wait_exit "$rp" 10; then
		check "SIGTERM while waiting: passed on, record exits with the command's status (143; got $wait_rc)" \
			[ "$wait_rc" -eq 143 ]
	else
		bad "SIGTERM while waiting: record still runs"
		kill -9 "$rp"
	fi
	kill -9 "$cpid" 2>/dev/null
}
duration_group

# SIGKILL of the recorder once the duration ended: nothing is lost.
sigkill_group() {
	local e=$TMP/kill.err s=$TMP/kill.sbp rp cpid
	"$SB" record -o "$s" -d 0.5 -- "$WL/barrier_ratio" 2 1000000 2000 2>"$e" &
	rp=$!
	if wait_for "$e" "waiting for the command" 15; then
		cpid=$(sed -n 's/.*recording command, PID \([0-9]*\).*/\1/p' "$e")
		kill -9 "$rp"
		wait "$rp" 2>/dev/null
		kill -9 "$cpid" 2>/dev/null
		"$SB" report -i "$s" --format json >"$TMP/kill.json"
		jqcheck "SIGKILL of record after the duration: the profile is whole" "$TMP/kill.json" \
			'.meta.stop_reason == "duration" and (.sections | length) >= 1'

	else
		bad "-d 0.5: no 'waiting for the command' line"
		kill -9 "$rp"
	fi
}
sigkill_group

# --- PID reuse: the target exits and a new process gets its PID -----------
# -p used to follow the number: the new process kept the recording going
# (until --duration), its mappings could replace the target's.  The target
# is pinned (pidfd): recording stops at its exit ("target exited"), before
# the new process ends, and nothing of the new one is in the profile.
LD=$TMP/lifecycle
mkdir -p "$LD"
if ! gcc -O2 -g -Wall -Wextra -Werror "$TOP/tests/integration/pid_reuse.c" \
	-o "$LD/pid_reuse" 2>"$LD/build.err"; then
	bad "build pid_reuse"
	cat "$LD/build.err"
fi

reuse_group() {
	local e=$LD/reuse.err s=$LD/reuse.sbp j=$LD/reuse.json rp tpid what npid t0 ms tstart
	local loc
	loc=$(site barrier barrier_ratio.c)
	# The successor runs ~30 s: longer than -d, so only the target's
	# exit can end the recording early.
	coproc PR { "$LD/pid_reuse" "$WL/barrier_ratio" 2 1000000 2000 -- \
		"$WL/join_late" 2 2000000; }
	read -r what tpid <&"${PR[0]}"
	"$SB" record -o "$s" -d 12 -p "$tpid" 2>"$e" &
	rp=$!
	if ! wait_for "$e" "recording PID" 15; then
		bad "pid reuse: record -p $tpid did not start"
		cat "$e"
		kill -9 "$rp" "$tpid" 2>/dev/null
		return
	fi
	tstart=$(date +%s%N)   # just after the recording started
	sleep 0.5   # a few barrier instances first
	t0=$(date +%s%N)
	echo go >&"${PR[1]}"
	read -r what npid <&"${PR[0]}"
	if [ "$what" != reused ]; then
		echo "skip pid reuse: no process could be given PID $tpid (taken elsewhere)"
		kill -9 "$rp" 2>/dev/null
		wait "$rp" 2>/dev/null
		return
	fi
	# Old: on until -d 12.  The write after the stop is not timed (an
	# ASan recorder takes seconds): the profile's recording time is.
	if ! wait_exit "$rp" 25; then
		bad "pid reuse: record still runs 25 s after its target exited (PID $tpid reused)"
		kill -INT "$rp"
		wait "$rp"
	fi
	check "pid reuse: record exits 0" [ "${wait_rc:-1}" -eq 0 ]
	check "pid reuse: PID $tpid now runs join_late (the successor), alive after record ended" \
		grep -q join_late "/proc/$npid/comm"
	kill -9 "$npid" 2>/dev/null
	wait "$PR_PID" 2>/dev/null
	if "$SB" report -i "$s" --format json >"$j"; then
		ms=$(jq -r "(.meta.duration_ns | tonumber) / 1e6 - ($t0 - $tstart) / 1e6 | floor" "$j")
		jqcheck "pid reuse: recording stopped $ms ms after the target's exit (< 2 s), 'target exited'" \
			"$j" ".meta.stop_reason == \"target exited\" and $ms < 2000"
		jqcheck "pid reuse: only the target's barrier, at $loc (nothing of join_late, no address)" \
			"$j" "(.sections | length) == 1 and .sections[0].location == \"$loc\" and
			      .sections[0].kind == \"barrier\" and .sections[0].threads == 2 and
			      ([.waits[] | select(.primitive == \"join\")] | length) == 0"
	else
		bad "pid reuse: no profile"
	fi
}
reuse_group

# --- a stop signal while waiting for the command: not to a reused pid ----
# After -d the ring buffer is no longer read, so the recorder never learns
# that a followed child exited.  The command (pid_reuse) kills that child
# and forks a process onto its pid; SIGTERM to the recorder is passed on
# to the command and its live followed processes: through their pidfds,
# never to the process that got the pid since (its TERM trap would write
# the hit file).
fwd_group() {
	local e=$LD/fwd.err o=$LD/fwd.out hit=$LD/fwd.hit in=$LD/fwd.in rp what npid
	rm -f "$hit" "$in" "$o"
	mkfifo "$in"
	"$SB" record -o "$LD/fwd.sbp" -d 1 -- "$LD/pid_reuse" "$(command -v sleep)" 30 -- \
		"$(command -v sh)" -c "trap 'echo hit > $hit; exit 0' TERM; for i in \$(seq 60); do sleep 0.1; done" \
		<"$in" >"$o" 2>"$e" &
	rp=$!
	exec 7>"$in"
	if ! wait_for "$e" "waiting for the command" 20; then
		bad "signal forwarding: the recording did not stop after -d 1"
		cat "$e"
		exec 7>&-
		kill -9 "$rp" 2>/dev/null
		return
	fi
	echo go >&7
	exec 7>&-
	wait_for "$o" "reused" 5
	read -r what npid < <(grep reused "$o")
	if [ "$what" != reused ]; then
		echo "skip signal forwarding: no process could be given the child's PID"
		kill -TERM "$rp"
		wait "$rp" 2>/dev/null
		return
	fi
	sleep 0.3   # the successor's trap is set
	kill -TERM "$rp"
	wait_for "$e" "passed SIGTERM on" 5
	sleep 0.5   # a trap runs after the current sleep 0.1
	check "signal forwarding: SIGTERM passed on while waiting for the command" \
		grep -q "passed SIGTERM on" "$e"
	check "signal forwarding: not to the process that got a followed child's PID ($npid)" \
		test ! -e "$hit"
	kill -9 "$npid" "$rp" 2>/dev/null
	wait "$rp" 2>/dev/null
}
fwd_group

# --- -p on a process whose main thread called pthread_exit ----------------
# Its leader is a zombie (state Z) while its workers run: their threads
# are recorded, not refused as "has exited".  /proc/PID/maps and exe are
# empty for the leader (read through a live thread), and the kernel's
# uprobe pid filter goes by the leader's address space (probes unfiltered,
# BPF keeps the target's).  Known truth: 2 workers, busy ratio 1:2, every
# instance recorded after attach of the one barrier.
leader_group() {
	local cc=$1 prog=$LD/leader_exit_$1 e=$LD/leader_$1.err j=$LD/leader_$1.json pid i loc
	loc=leader_exit.c:$(grep -n 'SITE:leader_exit_barrier' "$TOP/tests/integration/leader_exit.c" | cut -d: -f1)
	"$prog" 2 500 2000 &
	pid=$!
	for ((i = 0; i < 100; i++)); do
		[ "$(cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null)" = Z ] && break
		sleep 0.01
	done
	if ! record_json "$j" -p "$pid"; then
		bad "pthread_exit'd leader ($cc): record -p refused it"
		wait "$pid"
		return
	fi
	wait "$pid"
	jqcheck "pthread_exit'd leader ($cc): the workers' barrier at $loc, 2 threads, 100..500 instances" "$j" \
		"$(section_at "$loc" barrier) as \$s | \$s != null and \$s.threads == 2 and
		 \$s.instances >= 100 and \$s.instances <= 500"
	ratio_check "pthread_exit'd leader ($cc): busy ratio 1:2 within 10%" "$j" "$(section_at "$loc" barrier)" 2 0.10
	jqcheck "pthread_exit'd leader ($cc): stopped as the workers ended ('target exited'), said why" "$j" \
		'.meta.stop_reason == "target exited" and (.meta.notes | test("main thread of process [0-9]+ has exited"))'
}
for cc in gcc clang; do
	command -v $cc >/dev/null || { echo "skip pthread_exit'd leader ($cc): not installed"; continue; }
	if $cc -O2 -g -pthread -Wall -Wextra -Werror -I"$TOP/tests/workloads" \
		"$TOP/tests/integration/leader_exit.c" -o "$LD/leader_exit_$cc" 2>"$LD/build.err"; then
		timed_group "pthread_exit'd leader ($cc)" leader_group $cc
	else
		bad "build leader_exit with $cc"
		cat "$LD/build.err"
	fi
done
