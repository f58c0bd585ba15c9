# The target's binaries as the target sees them (issue 10): a program run
# from a private mount namespace (unshare -m, a tmpfs or a bind mount at
# a path that here is empty or another program), a program deleted
# while it runs, and a library deleted while it runs.  Its path names nothing here, or the wrong file: it is
# read, and probed, through /proc/PID.  condvar_barrier's barrier is a
# function of the executable itself, so its probes going in (on the
# target's inode) shows as a user_barrier section at its source line;
# worker i does (i + 1) units: 4 threads, imbalance 37.5%.

PR=$TMP/procroot
mkdir -p "$PR/ns"

# pr_wait_exe PID PATH: until PID runs PATH (as it names it), 5 s at most.
pr_wait_exe() {
	for _ in $(seq 250); do
		case $(readlink "/proc/$1/exe" 2>/dev/null) in "$2"*) return 0 ;; esac
		sleep 0.02
	done
	return 1
}

# pr_stop PID: the long-running target ends.
pr_stop() {
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

PR_LOC=$(site user_barrier condvar_barrier.c)
PR_SEL=$(section_at "$PR_LOC" user_barrier)

if ! unshare -m --propagation private true 2>/dev/null; then
	echo "skip procroot: unshare -m does not work here"
else

# --- launched: the command makes a namespace, mounts a tmpfs over an
# empty folder, copies the program there, runs it briefly, then execs it
# for the real run: followed, its probes go on the tmpfs file before it
# runs, every barrier counted.  The second run is planned anew: the
# first's plan leads through the first process, gone by then.
ns_launch_group() {
	local cc=$1 j=$PR/launch_$1.json
	if ! record_json "$j" -- unshare -m --propagation private sh -c \
		'mount -t tmpfs sbtest "$1" && cp "$2" "$1/cb" && "$1/cb" 4 3 300 && exec "$1/cb" 4 20 3000' \
		sh "$PR/ns" "$(wl "$cc" condvar_barrier)"; then
		bad "procroot: launched in a mount namespace ($cc): record"
		return
	fi
	jqcheck "procroot: launched in a mount namespace ($cc): barrier at $PR_LOC, 20 instances, 4 threads" "$j" \
		"$PR_SEL != null and ($PR_SEL).instances == 20 and ($PR_SEL).threads == 4"
	jqcheck "procroot: launched in a mount namespace ($cc): imbalance within 5 points of 37.5" "$j" \
		"(($PR_SEL).imbalance_pct - 37.5 | fabs) <= 5"
	jqcheck "procroot: launched in a mount namespace ($cc): named as it ran, every probe in" "$j" \
		".meta.executable == \"$PR/ns/cb\" and .meta.follow_attach_errors == \"0\""
}
for cc in gcc clang; do
	wl_built "$cc" condvar_barrier &&
		timed_group "procroot: launched in a mount namespace ($cc)" ns_launch_group "$cc"
done

# --- -p: here the path is another program (barrier_loop, no such
# barrier); in the target's namespace a bind mount puts condvar_barrier
# there.  Reading the path here probes and names the wrong file.
ns_pid_group() {
	local j=$PR/pid_ns.json pid
	cp "$(wl gcc barrier_loop)" "$PR/shadow"
	unshare -m --propagation private sh -c 'mount --bind "$1" "$2" && exec "$2" 4 100000 1000' \
		sh "$(wl gcc condvar_barrier)" "$PR/shadow" &
	pid=$!
	if ! pr_wait_exe "$pid" "$PR/shadow" || ! record_json "$j" -d 1 -p "$pid"; then
		bad "procroot: -p, a bind mount in its namespace: record"
		pr_stop "$pid"
		return
	fi
	pr_stop "$pid"
	jqcheck "procroot: -p, a bind mount in its namespace: barrier at $PR_LOC, 4 threads, >= 5 instances" "$j" \
		"$PR_SEL != null and ($PR_SEL).threads == 4 and ($PR_SEL).instances >= 5"
	jqcheck "procroot: -p, a bind mount in its namespace: imbalance within 5 points of 37.5" "$j" \
		"(($PR_SEL).imbalance_pct - 37.5 | fabs) <= 5"
}
wl_built gcc condvar_barrier && wl_built gcc barrier_loop &&
	timed_group "procroot: -p in a mount namespace" ns_pid_group

# --- a library only the namespace has, loaded with dlopen: located and
# probed through /proc/PID/root before its barrier runs (follow.sh's
# plugin, with its own mutex + condvar barrier, built as users build).
ns_dlopen_group() {
	local j=$PR/dlopen_ns.json loc sel
	loc=$(site lib_barrier ../integration/follow_lib.c)
	loc=follow_lib.c:${loc#*:}
	sel=$(section_at "$loc" user_barrier)
	if ! record_json "$j" -- unshare -m --propagation private sh -c \
		'mount -t tmpfs sbtest "$1" && cp "$2" "$3" "$1/" && exec "$1/pr_dlmain" "$1/libpr_ubar.so" 4 20 3000' \
		sh "$PR/ns" "$PR/pr_dlmain" "$PR/libpr_ubar.so"; then
		bad "procroot: dlopen of a library in a mount namespace: record"
		return
	fi
	jqcheck "procroot: dlopen of a library in a mount namespace: barrier at $loc, 20 instances, 4 threads" "$j" \
		"$sel != null and ($sel).instances == 20 and ($sel).threads == 4"
	jqcheck "procroot: dlopen of a library in a mount namespace: named as loaded, every probe in" "$j" \
		".meta.libraries_late == \"$PR/ns/libpr_ubar.so\" and .meta.follow_attach_errors == \"0\""
}
if gcc -O2 -g -pthread -I"$TOP/tests/workloads" "$TOP/tests/integration/follow_dlmain.c" \
	-o "$PR/pr_dlmain" -ldl 2>"$PR/build.err" &&
	gcc -O2 -g -pthread -I"$TOP/tests/workloads" -fPIC -shared -DUSER_BARRIER \
	"$TOP/tests/integration/follow_lib.c" -o "$PR/libpr_ubar.so" 2>>"$PR/build.err"; then
	timed_group "procroot: dlopen in a mount namespace" ns_dlopen_group
else
	bad "procroot: build follow_dlmain, follow_lib with gcc"
	cat "$PR/build.err"
fi

fi

# --- -p on a program deleted while it runs: read through /proc/PID/exe
# and map_files; located by source line, not "rebuild with -g".
deleted_group() {
	local cc=$1 j=$PR/deleted_$1.json bin=$PR/deleted_$1 pid
	cp "$(wl "$cc" condvar_barrier)" "$bin"
	"$bin" 4 100000 1000 &
	pid=$!
	pr_wait_exe "$pid" "$bin"
	rm -f "$bin"
	if ! record_json "$j" -d 1 -p "$pid"; then
		bad "procroot: -p, deleted while running ($cc): record"
		pr_stop "$pid"
		return
	fi
	pr_stop "$pid"
	"$SB" report -i "${j%.json}.sbp" >"${j%.json}.txt"
	jqcheck "procroot: -p, deleted while running ($cc): barrier at $PR_LOC, 4 threads, >= 5 instances" "$j" \
		"$PR_SEL != null and ($PR_SEL).threads == 4 and ($PR_SEL).instances >= 5"
	jqcheck "procroot: -p, deleted while running ($cc): named as it ran, deleted" "$j" \
		".meta.executable == \"$bin (deleted)\""
	check "procroot: -p, deleted while running ($cc): no advice to rebuild with -g" \
		bash -c "! grep -q 'rebuild the program with -g' '${j%.json}.txt'"
}
for cc in gcc clang; do
	wl_built "$cc" condvar_barrier &&
		timed_group "procroot: -p, deleted while running ($cc)" deleted_group "$cc"
done

# --- -p on an OpenMP program whose libgomp was deleted while it runs (an
# upgrade under a long-running program): its probes go on the mapped,
# deleted file through /proc/PID/map_files, found by its name.
deleted_lib_group() {
	local j=$PR/deleted_lib.json bin gomp pid sel
	bin=$(wl gcc omp_imbalance)
	gomp=$(ldd "$bin" | awk '/libgomp/ { print $3 }')
	sel=$(section_at "$(site omp_barrier omp_imbalance.c)" omp_barrier)
	mkdir -p "$PR/lib"
	if [ -z "$gomp" ] || ! cp "$gomp" "$PR/lib/"; then
		bad "procroot: -p, libgomp deleted while running: no libgomp to copy"
		return
	fi
	OMP_NUM_THREADS=4 LD_LIBRARY_PATH=$PR/lib "$bin" 100000 1000 &
	pid=$!
	pr_wait_exe "$pid" "$bin"
	sleep 0.2   # its libraries are mapped
	rm -f "$PR/lib/${gomp##*/}"
	if ! record_json "$j" -d 1 -p "$pid"; then
		bad "procroot: -p, libgomp deleted while running: record"
		pr_stop "$pid"
		return
	fi
	pr_stop "$pid"
	jqcheck "procroot: -p, libgomp deleted while running: omp_barrier section, 4 threads, >= 5 instances" "$j" \
		"$sel != null and ($sel).threads == 4 and ($sel).instances >= 5"
}
wl_built gcc omp_imbalance && timed_group "procroot: -p, libgomp deleted while running" deleted_lib_group
