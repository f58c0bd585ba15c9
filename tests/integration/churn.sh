# Thread churn (issue 10): rounds of short threads, created and joined,
# over 12,000 threads in a few seconds, more threads than cores.  The truth
# is exact: thread_churn R N U makes R*N threads besides main and one join
# instance per round (its N exits, closed at main's pthread_join), and with
# "barrier" one barrier instance per round too.  Nothing may be lost
# silently: either the counts are exact or the report gives the number lost
# (here the ring buffer is large enough: every drop counter must be 0).

# churn_counts DESC JSON KIND SITE INSTANCES THREADS
churn_counts() {
	local desc=$1 j=$2 kind=$3 loc=$4 ni=$5 nt=$6 sel
	sel=$(section_at "$loc" "$kind")
	jqcheck "$desc: $kind section at $loc, exactly $ni instances of $nt threads" "$j" \
		"$sel != null and ($sel).instances == $ni and ($sel).threads == $nt and
		 ([.sections[] | select(.kind == \"$kind\")] | length) == 1"
}

# churn_clean DESC JSON: no loss of any kind was counted.
churn_clean() {
	jqcheck "$1: no drop, late, unmatched, unfinished, partial or unjoined event" "$2" \
		'.meta as $m | [ "drops_probe", "drops_wait", "drops_thread", "drops_sample",
		  "drops_proc", "threads_untimed", "events_late", "events_unmatched",
		  "instances_unfinished", "instances_partial", "thread_exits_unjoined",
		  "threads_unlisted", "records_unrouted" ]
		 | all(. as $k | $m[$k] == "0")'
}

# churn_threads DESC SBP N: the profile lists N threads.
churn_threads() {
	local n
	n=$("$SB" report -i "$2" | sed -n 's/.*recorded .*, \([0-9]*\) threads,.*/\1/p')
	check "$1: the profile lists $3 threads (got ${n:-none})" [ "${n:-0}" = "$3" ]
}

churn_group() {
	local cc=$1 rounds=$2 n=$3 mode=$4 j=$TMP/churn_$1_$4.json d
	d="churn $rounds x $n ($cc${mode:+, $mode})"
	wl_built "$cc" thread_churn || return 0
	if record_json "$j" -- "$(wl "$cc" thread_churn)" "$rounds" "$n" 0 $mode; then
		churn_counts "$d" "$j" join "$(site churn_join thread_churn.c)" "$rounds" \
			$((rounds * n))
		[ -z "$mode" ] || churn_counts "$d" "$j" barrier \
			"$(site churn_barrier thread_churn.c)" "$rounds" $((rounds * n))
		churn_clean "$d" "$j"
		churn_threads "$d" "${j%.json}.sbp" $((rounds * n + 1))
	else
		bad "$d: record"
	fi
}
churn_group gcc 1500 8 ""
churn_group clang 1500 8 barrier

# Tids come back: the kernel hands out a freed tid again once its pid
# counter wraps (pid_max, 32768 by default: seconds for a churning
# program on a busy machine).  Made certain here by setting the counter
# back (ns_last_pid) all through the run: the ~12,800 threads then share a
# few hundred tids, and each must still count as a thread of its own.
churn_reuse_group() {
	local j=$TMP/churn_reuse.json d="churn 200 x 64 (gcc), tids reused" base rec setter
	wl_built gcc thread_churn || return 0
	if [ ! -w /proc/sys/kernel/ns_last_pid ]; then
		echo "skip $d: /proc/sys/kernel/ns_last_pid is not writable"
		return 0
	fi
	base=$(( $(awk '{ print $5 }' /proc/loadavg) % 20000 + 1000 ))
	"$SB" record -q -o "${j%.json}.sbp" -- "$(wl gcc thread_churn)" 200 64 0 \
		2>"${j%.json}.err" &
	rec=$!
	(while :; do echo "$base" >/proc/sys/kernel/ns_last_pid; sleep 0.002; done) &
	setter=$!
	if wait "$rec"; then
		kill "$setter"
		wait "$setter" 2>/dev/null
		"$SB" report -i "${j%.json}.sbp" --format json >"$j"
		churn_counts "$d" "$j" join "$(site churn_join thread_churn.c)" 200 12800
		jqcheck "$d: reuse happened and is counted" "$j" '(.meta.tids_reused | tonumber) > 1000'
		churn_clean "$d" "$j"
		churn_threads "$d" "${j%.json}.sbp" 12801
	else
		kill "$setter"
		wait "$setter" 2>/dev/null
		bad "$d: record"
		cat "${j%.json}.err"
	fi
}
churn_reuse_group

# -p on a program in the middle of its churn: the round cut by the attach
# (children started before it, some even ended within it) is partial,
# skipped and counted; every join instance recorded has exactly its N
# threads, and the recording goes on to the end.  Before, a child started
# and ended between the attach of task_newtask and of sched_process_exit
# left a start without an exit, its creator's join never closed, and no
# join instance at all was recorded; or a round showed fewer threads.
churn_attach_group() {
	local j=$TMP/churn_attach.json d="churn -p (gcc, 4000 x 8)" w i o bg
	wl_built gcc thread_churn || return 0
	# attach 3 beside a second recording of another churn: the two share
	# the CPUs, and a probe's attach takes longer.  A pthread_join entered
	# after its entry probe went in and before its return probe did (the
	# order before) stayed open for good: this split 1 run in 3 into
	# instances of 1 to 7 threads.
	for i in 1 2 3; do
		o=""
		if [ "$i" = 3 ]; then
			"$(wl gcc thread_churn)" 6000 8 0 &
			o=$!
			sleep 0.1
			"$SB" record -q -o "$TMP/churn_other.sbp" -p "$o" 2>"$TMP/churn_other.err" &
			bg=$!
		fi
		"$(wl gcc thread_churn)" 4000 8 0 &   # ~1-2 s: outlives a slow attach
		w=$!
		sleep "0.$((i * 2))"
		if ! record_json "$j" -p "$w"; then
			bad "$d, attach $i: record"
			wait "$w"
			[ -z "$o" ] || wait "$bg" "$o"
			continue
		fi
		wait "$w"
		[ -z "$o" ] || wait "$bg" "$o"
		if ! jqcheck "$d, attach $i: every join instance has 8 threads, rounds after the attach all there" \
			"$j" "[.sections[] | select(.kind == \"join\")] as \$s | (\$s | length) == 1 and
			 \$s[0].threads == 8 * \$s[0].instances and \$s[0].instances > 100 and
			 (.meta.instances_partial | tonumber) <= 1"; then
			echo "     got: $(jq -c '[[.sections[] | select(.kind == "join") |
				{threads, instances}], .meta.instances_partial,
				.meta.probe_returns_unpaired]' "$j")"
		fi
		jqcheck "$d, attach $i: nothing else lost" "$j" \
			'.meta as $m | [ "drops_thread", "drops_probe", "events_unmatched",
			  "records_unrouted", "instances_unfinished" ] | all(. as $k | $m[$k] == "0")'
	done
}
churn_attach_group

# Rotated every second (issue 17): the rounds' join instances of all the
# intervals add up to the rounds, exactly; no loss of any kind counted in
# any interval; the recorder's thread tables drop the ended threads at
# each boundary, and the intervals still list every one of them between
# them (tids may come back here: the thread count is not the truth).
churn_rotate_group() {
	local d=$TMP/churn_rot j=$TMP/churn_rot.json rounds=5000 n=8 files
	rm -rf "$d"
	if ! "$SB" record -q --rotate 1 -o "$d" -- "$(wl gcc thread_churn)" $rounds $n 0 \
		2>"$TMP/churn_rot.err"; then
		bad "churn rotated: record"
		cat "$TMP/churn_rot.err"
		return
	fi
	files=$(ls "$d" | wc -l)
	"$SB" report -i "$d" --format json >"$j" 2>/dev/null
	check "churn $rounds x $n rotated every second: $files profiles (>= 3)" test "$files" -ge 3
	jqcheck "churn $rounds x $n rotated: the join instances add up to the $rounds rounds" "$j" \
		"[.sections[] | select(.kind == \"join\" and .location == \"$(site churn_join thread_churn.c)\")][0].instances == $rounds"
	# records_unrouted: one record of no known process was counted in 1 of
	# 2 rotated runs with the ASan recorder (0 of 3 unrotated): an open
	# question, counted and said, allowed once here and printed
	jqcheck "churn $rounds x $n rotated: no drop, late, unmatched, unfinished, partial or unjoined event; unrouted $(jq -r .meta.records_unrouted "$j" 2>/dev/null) (<= 1)" "$j" \
		'.meta as $m | ([ "drops_probe", "drops_wait", "drops_thread", "drops_sample",
		  "drops_proc", "threads_untimed", "events_late", "events_unmatched",
		  "instances_unfinished", "instances_partial", "thread_exits_unjoined",
		  "threads_unlisted" ] | all(. as $k | $m[$k] == "0")) and ($m.records_unrouted | tonumber) <= 1'
	jqcheck "churn $rounds x $n rotated: the ended threads left the recorder's tables (threads_evicted, most of $((rounds * n)))" "$j" \
		"(.meta.threads_evicted | tonumber) >= $((rounds * n / 2)) and (.meta.threads_evicted | tonumber) <= $((rounds * n))"
}
churn_rotate_group
