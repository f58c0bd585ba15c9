# Following (issue 9): a program started through a launcher (env, sh -c,
# a shell script, time), a program whose forked child does the work, and
# a library loaded with dlopen after start whose barrier must be probed.
# Test programs are built here as users build them: -O2 -g, no
# frame-pointer flags, gcc and clang.  Known truth everywhere: N threads,
# worker i does (i + 1) units per iteration before one barrier, so
# ITERS instances of N threads, busy ratio 1:..:N, imbalance
# 1 - (N + 1) / (2N) (37.5% for 4 threads).

FD=$TMP/follow
mkdir -p "$FD"

# follow_build NAME CC SRC [FLAGS...]: $FD/NAME, or a failed check.
follow_build() {
	local name=$1 cc=$2 src=$3
	shift 3
	if ! "$cc" -O2 -g -pthread -Wall -Wextra -Werror -I"$TOP/tests/workloads" "$@" \
		"$src" -o "$FD/$name" -ldl 2>"$FD/$name.build.err"; then
		bad "follow: build $name with $cc"
		cat "$FD/$name.build.err"
		return 1
	fi
}

FOLLOW_CCS=${CC:-gcc}
command -v clang >/dev/null && FOLLOW_CCS="$FOLLOW_CCS clang"
for cc in $FOLLOW_CCS; do
	c=${cc##*/}
	follow_build "barrier_ratio_$c" "$cc" "$TOP/tests/workloads/barrier_ratio.c"
	follow_build "follow_fork_$c" "$cc" "$TOP/tests/integration/follow_fork.c"
	follow_build "follow_dlmain_$c" "$cc" "$TOP/tests/integration/follow_dlmain.c"
	follow_build "libfollow_pbar_$c.so" "$cc" "$TOP/tests/integration/follow_lib.c" \
		-fPIC -shared
	follow_build "libfollow_ubar_$c.so" "$cc" "$TOP/tests/integration/follow_lib.c" \
		-fPIC -shared -DUSER_BARRIER
done
follow_build omp_imbalance_gcc gcc "$TOP/tests/workloads/omp_imbalance.c" -fopenmp
printf '#!/bin/sh\n# a driver script: runs its arguments, then reports\n"$@"\nstatus=$?\necho "run.sh: done ($status)" >/dev/null\nexit $status\n' >"$FD/run.sh"
chmod +x "$FD/run.sh"

# follow_sections DESC JSON LOC KIND N ITERS: the section at LOC has ITERS
# instances of N threads, busy ratio 1:..:N, imbalance as analysed.
follow_sections() {
	local desc=$1 j=$2 loc=$3 kind=$4 n=$5 iters=$6 sel want
	sel=$(section_at "$loc" "$kind")
	want=$(analytic_imbalance "$n")
	jqcheck "$desc: $kind section at $loc, $iters instances, $n threads" "$j" \
		"$sel != null and ($sel).instances == $iters and ($sel).threads == $n"
	ratio_check "$desc: busy ratio 1:..:$n within 10%" "$j" "$sel" "$n" 0.10
	jqcheck "$desc: imbalance within 5 points of $want" "$j" \
		"(($sel).imbalance_pct - $want | fabs) <= 5"
}

# --- launchers: the program they exec (or fork and exec) is the profile --
launcher_group() {
	local name=$1 c=$2 j=$FD/launch_$1_$2.json bin=$FD/barrier_ratio_$2 loc
	shift 2
	loc=$(site barrier barrier_ratio.c)
	if ! record_json "$j" -- "$@" "$bin" 4 40 3000; then
		bad "follow $name ($c): record"
		return
	fi
	follow_sections "follow $name ($c)" "$j" "$loc" barrier 4 40
	jqcheck "follow $name ($c): the profile is barrier_ratio's process, the launcher listed" "$j" \
		"(.meta.executable == \"$bin\") and (.meta.processes | test(\"barrier_ratio_$c \\\\(exec'd;[^)]*\\\\) \\\\[profile\\\\]\")) and (.meta.processes_followed | tonumber) >= 2"
	jqcheck "follow $name ($c): nothing left unfollowed, no record lost" "$j" \
		'.meta.not_followed == "" and .meta.drops_proc == "0" and .meta.follow_attach_errors == "0"'
}
for cc in $FOLLOW_CCS; do
	c=${cc##*/}
	timed_group "follow env ($c)" launcher_group env "$c" env FOO=1
	timed_group "follow sh -c ($c)" launcher_group sh_c "$c" sh -c '"$@"; exit $?' sh
	timed_group "follow script ($c)" launcher_group script "$c" "$FD/run.sh"
	if [ -x /usr/bin/time ]; then
		timed_group "follow time ($c)" launcher_group time "$c" /usr/bin/time -o "$FD/time.out"
	else
		echo "skip follow time: /usr/bin/time not installed"
	fi
done

# --- a driver script that runs many short commands before the worker:
# more process images than record keeps (256); those that ended without
# a section make room, so the worker is still followed.  A short first
# run of the program puts libc probes in the plan, so every later command
# gets ~7 uprobes: those of ended processes must be released, or ~1000
# fds pile up and, under a 1024 fd limit (set here as hard limit too),
# the worker's attaches fail (EMFILE) and its barriers go unseen.
busy_script_group() {
	local c=$1 j=$FD/busy_script_$1.json bin=$FD/barrier_ratio_$1
	if ! (ulimit -n 1024 && record_json "$j" -- sh -c \
		'"$@" 4 5 100; for i in $(seq 140); do /bin/true; done; "$@" 4 40 3000' sh "$bin"); then
		bad "follow busy script ($c): record"
		return
	fi
	follow_sections "follow busy script ($c)" "$j" "$(site barrier barrier_ratio.c)" barrier 4 40
	jqcheck "follow busy script ($c): 280+ images, those without sections unlisted, none unfollowed" "$j" \
		"(.meta.processes_followed | tonumber) >= 282 and (.meta.processes_unlisted | tonumber) >= 1 and .meta.not_followed == \"\" and .meta.executable == \"$bin\""
	jqcheck "follow busy script ($c): under ulimit -n 1024, every probe attached" "$j" \
		'.meta.follow_attach_errors == "0"'
}
c=${FOLLOW_CCS%% *}
timed_group "follow busy script" busy_script_group "${c##*/}"

# --- env OMP_NUM_THREADS=4 ./prog: the issue's own example ---------------
omp_env_group() {
	local j=$FD/omp_env.json bsel
	bsel=$(section_at "$(site omp_barrier omp_imbalance.c)" omp_barrier)
	if ! record_json "$j" -- env OMP_NUM_THREADS=4 "$FD/omp_imbalance_gcc" 30 2000; then
		bad "follow env OMP_NUM_THREADS=4: record"
		return
	fi
	jqcheck "follow env OMP_NUM_THREADS=4: omp_barrier, 30 instances, 4 threads" "$j" \
		"$bsel != null and ($bsel).instances == 30 and ($bsel).threads == 4"
	jqcheck "follow env OMP_NUM_THREADS=4: imbalance 37.5 +- 5" "$j" \
		"(($bsel).imbalance_pct - 37.5 | fabs) <= 5"
}
[ -x "$FD/omp_imbalance_gcc" ] && timed_group "follow env OMP" omp_env_group

# --- a forked child does the work; the parent only waits ----------------
fork_group() {
	local c=$1 j=$FD/fork_$1.json loc
	loc=$(site fork_barrier ../integration/follow_fork.c)
	loc=follow_fork.c:${loc#*:}
	if ! record_json "$j" -- "$FD/follow_fork_$c" 4 40 3000; then
		bad "follow fork ($c): record"
		return
	fi
	follow_sections "follow fork ($c)" "$j" "$loc" barrier 4 40
	jqcheck "follow fork ($c): the forked child (meta.pid) is the profile, its parent listed" "$j" \
		'.meta as $m | ($m.processes | test("^[0-9]+ [^ ]+ \\(started;[^)]*\\); " + $m.pid + " [^ ]+ \\(forked;[^)]*\\) \\[profile\\]$"))'
}
for cc in $FOLLOW_CCS; do
	timed_group "follow fork (${cc##*/})" fork_group "${cc##*/}"
done

# --- dlopen after start: the library's barrier is probed ----------------
dlopen_group() {
	local c=$1 kind=$2 lib=$3 j=$FD/dlopen_$3_$1.json loc
	loc=$(site lib_barrier ../integration/follow_lib.c)
	loc=follow_lib.c:${loc#*:}
	if ! record_json "$j" -- "$FD/follow_dlmain_$c" "$FD/lib${lib}_$c.so" 4 40 3000; then
		bad "follow dlopen $lib ($c): record"
		return
	fi
	follow_sections "follow dlopen $lib ($c)" "$j" "$loc" "$kind" 4 40
	jqcheck "follow dlopen $lib ($c): the library is named as loaded late, its probes counted" "$j" \
		"(.meta.libraries_late | test(\"lib${lib}_$c.so\")) and (.meta.probes_late | tonumber) >= 1"
}
for cc in $FOLLOW_CCS; do
	c=${cc##*/}
	timed_group "follow dlopen pthread barrier ($c)" dlopen_group "$c" barrier follow_pbar
	timed_group "follow dlopen user barrier ($c)" dlopen_group "$c" user_barrier follow_ubar
done

# --- an inline condvar barrier program run again after another command:
# its second image is planned from the cache and must keep its event log
# by its own plan, not by the plan of the command planned last (/bin/true
# has no condvars; e10c1f5: the 20-step run had no barrier section and
# the profile was the 3-step warm-up's).
condvar_again_group() {
	local j=$FD/condvar_again.json loc sel
	loc=$(site parsec_step ../integration/condbar_parsec.c)
	loc=condbar_parsec.c:${loc#*:}
	sel=$(section_at "$loc" user_barrier)
	if ! record_json "$j" -- sh -c '"$@" 4 3 300; /bin/true; "$@" 4 20 3000' sh "$FD/condbar_parsec"; then
		bad "follow condvar barrier run again: record"
		return
	fi
	jqcheck "follow condvar barrier run again: the 20-step run's barrier at $loc, 20 instances, 4 threads" "$j" \
		"$sel != null and ($sel).instances == 20 and ($sel).threads == 4"
}
# As condbar.sh builds it (the suites' macros are not -Wextra clean).
if gcc -O2 -g -pthread "$TOP/tests/integration/condbar_parsec.c" -o "$FD/condbar_parsec" \
	2>"$FD/condbar_parsec.build.err"; then
	timed_group "follow condvar barrier run again" condvar_again_group
else
	bad "follow: build condbar_parsec with gcc"
	cat "$FD/condbar_parsec.build.err"
fi

# --- not followed: the report says so and does not suggest --barrier ----
nofollow_group() {
	local j=$FD/nofollow.json out=$FD/nofollow.txt
	c=${FOLLOW_CCS%% *}
	c=${c##*/}
	if ! record_json "$j" --no-follow -- sh -c '"$@"; exit $?' sh "$FD/barrier_ratio_$c" 2 5 1000; then
		bad "follow --no-follow: record"
		return
	fi
	"$SB" report -i "${j%.json}.sbp" >"$out"
	jqcheck "follow --no-follow: no sections, the forked sh listed as not followed" "$j" \
		'(.sections | length) == 0 and (.meta.not_followed | test("forked; --no-follow")) and .meta.follow == "off"'
	check "follow --no-follow: the report says which processes were not followed" \
		grep -q "Processes the target started were not followed" "$out"
	check "follow --no-follow: the report does not suggest --barrier" \
		bash -c "! grep -q -- '--barrier SYMBOL' '$out'"
}
nofollow_group

# --- more processes not followed than the list holds: counted, and the
# list says how many it leaves out (60 forks of /bin/true, one of seq).
nofollow_many_group() {
	local j=$FD/nofollow_many.json
	if ! record_json "$j" --no-follow -- sh -c 'for i in $(seq 60); do /bin/true; done'; then
		bad "follow --no-follow, 61 forks: record"
		return
	fi
	jqcheck "follow --no-follow, 61 forks: all counted, the list ends with +N more" "$j" \
		'(.meta.processes_not_followed | tonumber) == 61 and (.meta.not_followed | test(", \\+[0-9]+ more$"))'
}
nofollow_many_group

# --- --no-follow and a launcher that execs: the launcher alone is
# recorded; the program's threads land in no image (before: its thread
# and its time went into the shell's image, as a section of the shell).
nofollow_exec_group() {
	local j=$FD/nofollow_exec.json c=${FOLLOW_CCS%% *}
	c=${c##*/}
	if ! record_json "$j" --no-follow -- sh -c 'exec "$@"' sh "$FD/barrier_ratio_$c" 2 5 1000; then
		bad "follow --no-follow exec: record"
		return
	fi
	jqcheck "follow --no-follow exec: the exec'd program not followed, nothing of it recorded" "$j" \
		'(.sections | length) == 0 and (.meta.not_followed | test("\\(exec; --no-follow\\)")) and (.meta.executable | test("sh$"))'
}
nofollow_exec_group

# --- Ctrl-C: the signal reaches the followed program, not just the
# launcher (a non-interactive sh dies of SIGINT and leaves its child).
signal_group() {
	local j=$FD/signal.json c=${FOLLOW_CCS%% *} rec left
	c=${c##*/}
	"$SB" record -q -o "${j%.json}.sbp" -- sh -c '"$@"; exit $?' sh \
		"$FD/barrier_ratio_$c" 4 100000 3000 2>"${j%.json}.err" &
	rec=$!
	sleep 2
	kill -INT "$rec"
	# Unforwarded, the program runs on and record waits for it.
	for _ in $(seq 50); do
		kill -0 "$rec" 2>/dev/null || break
		sleep 0.2
	done
	command -v pgrep >/dev/null || bad "follow SIGINT: pgrep (procps) is missing"
	left=$(pgrep -f "barrier_ratio_$c 4 100000 3000")
	check "follow SIGINT: the followed program got the signal too (left: ${left:-none})" \
		test -z "$left"
	[ -n "$left" ] && kill -KILL $left 2>/dev/null
	wait "$rec"
}
signal_group

# --- -p: a shell's forked child, followed asynchronously with --follow --
pid_follow_group() {
	local j=$FD/pid_follow.json c pid loc sel
	c=${FOLLOW_CCS%% *}
	c=${c##*/}
	loc=$(site barrier barrier_ratio.c)
	# The shell sleeps first: record (~0.5 s to set up) attaches before the fork.
	sh -c 'sleep 2; "$@"; exit $?' sh "$FD/barrier_ratio_$c" 4 40 3000 &
	pid=$!
	sleep 0.2
	if ! record_json "$j" --follow -p "$pid"; then
		bad "follow -p --follow: record"
		wait "$pid"
		return
	fi
	wait "$pid"
	# Probes go in while the process runs (a few tens of ms after its
	# exec): the first barriers may pass unseen, so not all 40.
	sel=$(section_at "$loc" barrier)
	jqcheck "follow -p --follow ($c): barrier section at $loc, 30..40 instances, 4 threads" "$j" \
		"$sel != null and ($sel).instances >= 30 and ($sel).instances <= 40 and ($sel).threads == 4"
	jqcheck "follow -p --follow ($c): imbalance within 5 points of 37.5" "$j" \
		"(($sel).imbalance_pct - 37.5 | fabs) <= 5"
	jqcheck "follow -p --follow: asynchronous, nothing stopped" "$j" \
		'(.meta.follow | test("asynchronously")) and .meta.follow_stops == "0"'
}
timed_group "follow -p --follow" pid_follow_group
