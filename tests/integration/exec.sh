# exec (issue 10): a program that runs threads with a barrier, then execs
# the next stage (tests/workloads/exec_phases.c).  Each image keeps its
# own sections, located by source line; with -t the last worker execs
# while main waits to join it (the kernel gives that thread the process
# id, and releases the old main thread: probes bound to it fired no more,
# so the new image's barriers went unseen and a join at 0x0 appeared).
# Known truth per image: ITERS instances of NTHREADS threads, imbalance
# 1 - (N + 1) / (2N): 37.5% for 4 threads; one join.

EX_LOC=$(site phase_barrier exec_phases.c)
EX_SEL=$(section_at "$EX_LOC" barrier)

# ex_images_check DESC JSON FIRST SECOND: the started image has FIRST
# instances, the exec'd one SECOND (regular expressions; barriers and join).
ex_images_check() {
	local desc=$1 j=$2 first=$3 second=$4
	jqcheck "$desc: both images listed, $first and $second instances" "$j" \
		".meta.processes | test(\"\\\\(started;[^)]*; $first instances;[^)]*\\\\)\") and test(\"\\\\(exec'd;[^)]*; $second instances;[^)]*\\\\)\")"
}

# --- -- CMD, main execs: the first image (more work) is the profile ----
exec_main_group() {
	local cc=$1 j=$TMP/exec_main_$1.json bin
	bin=$(wl "$cc" exec_phases)
	if ! record_json "$j" -- "$bin" 4 40 3000 "$bin" 2 10 3000; then
		bad "exec by main ($cc): record"
		return
	fi
	jqcheck "exec by main ($cc): the first image's barrier at $EX_LOC, 40 instances, 4 threads" "$j" \
		"$EX_SEL != null and ($EX_SEL).instances == 40 and ($EX_SEL).threads == 4"
	jqcheck "exec by main ($cc): imbalance within 5 points of 37.5" "$j" \
		"(($EX_SEL).imbalance_pct - 37.5 | fabs) <= 5"
	jqcheck "exec by main ($cc): every location has a source line" "$j" \
		'all(.sections[]; .location | test("^0x") | not)'
	ex_images_check "exec by main ($cc)" "$j" 41 11
}

# --- -- CMD, a worker execs: the exec'd image (more work) is the profile
exec_worker_group() {
	local cc=$1 j=$TMP/exec_worker_$1.json bin
	bin=$(wl "$cc" exec_phases)
	if ! record_json "$j" -- "$bin" 2 5 1000 -t "$bin" 4 40 3000; then
		bad "exec by a worker ($cc): record"
		return
	fi
	jqcheck "exec by a worker ($cc): the new image's barrier at $EX_LOC, 40 instances, 4 threads" "$j" \
		"$EX_SEL != null and ($EX_SEL).instances == 40 and ($EX_SEL).threads == 4"
	jqcheck "exec by a worker ($cc): imbalance within 5 points of 37.5" "$j" \
		"(($EX_SEL).imbalance_pct - 37.5 | fabs) <= 5"
	jqcheck "exec by a worker ($cc): every location has a source line (no join at 0x0)" "$j" \
		'all(.sections[]; .location | test("^0x") | not)'
	# The image before: 5 barriers, and its join when main was in
	# pthread_join before the exec ended it (it may not have been yet).
	ex_images_check "exec by a worker ($cc)" "$j" "[56]" 41
}

for cc in gcc clang; do
	wl_built "$cc" exec_phases || continue
	timed_group "exec by main ($cc)" exec_main_group "$cc"
	timed_group "exec by a worker ($cc)" exec_worker_group "$cc"
done

# --- -p, a worker execs after recording started: exec is followed with
# -p too, its probes attached while it runs (the first barriers of the
# new image may pass unseen, as in follow.sh's -p group).
exec_pid_group() {
	local j=$TMP/exec_pid.json bin pid
	bin=$(wl gcc exec_phases)
	# The image before lasts ~2 s: attaching takes ~0.4 s (more with the
	# ASan recorder), and the exec must come after it.
	"$bin" 2 12 60000 -t "$bin" 4 40 3000 &
	pid=$!
	sleep 0.3
	if ! record_json "$j" -p "$pid"; then
		bad "exec by a worker, -p: record"
		kill "$pid" 2>/dev/null
		wait "$pid"
		return
	fi
	wait "$pid"
	jqcheck "exec by a worker, -p: the new image's barrier at $EX_LOC, 30..40 instances, 4 threads" "$j" \
		"$EX_SEL != null and ($EX_SEL).instances >= 30 and ($EX_SEL).instances <= 40 and ($EX_SEL).threads == 4"
	jqcheck "exec by a worker, -p: the image before is listed" "$j" \
		'.meta.processes | test("\\(started;[^)]*\\); [0-9]+ [^ ]+ \\(exec.d;[^)]*\\) \\[profile\\]$")'
}
wl_built gcc exec_phases && timed_group "exec by a worker, -p" exec_pid_group
