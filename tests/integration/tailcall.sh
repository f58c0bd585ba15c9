# Sync calls reached through tail calls (gcc/clang -O2 emit `jmp`): the
# function that jumped leaves no frame, and a pending uretprobe on it (an
# OpenMP outlined function) leaves the "[uprobes]" trampoline in the
# return slot.  Sections must still sit at the program's own line.

# tail_barrier: phase() (called in a loop) and the SPLASH-style start
# routine slave_start() (run by main and by pthread_create'd threads)
# both end in `jmp pthread_barrier_wait`.
tail_pthread_group() {
	local cc=$1 bin="tail_barrier ($1)" j=$TMP/tail_barrier_$1.json psel lsel
	psel=$(section_at "$(site tail_phase tail_barrier.c)" barrier)
	lsel=$(section_at "$(site tail_last tail_barrier.c)" barrier)
	if record_json "$j" -- "$(wl $cc tail_barrier)" 4 30 3000; then
		jqcheck "$bin: tail-called barrier in a helper: section at $(site tail_phase tail_barrier.c), 30 instances, 4 threads" "$j" "$psel != null and ($psel).instances == 30 and ($psel).threads == 4"
		ratio_check "$bin: helper barrier busy ratio 1:2:3:4 within 10%" "$j" "$psel" 4 0.10
		jqcheck "$bin: helper barrier imbalance 37.5 +- 5" "$j" "(($psel).imbalance_pct - 37.5 | fabs) <= 5"
		jqcheck "$bin: start routine's last barrier at $(site tail_last tail_barrier.c) for all 4 threads (main's call and start_thread's)" "$j" "$lsel != null and ($lsel).instances == 1 and ($lsel).threads == 4"
		jqcheck "$bin: no barrier section in the C runtime" "$j" '[.sections[] | select(.kind == "barrier" and (.location | test("tail_barrier.c:") | not))] | length == 0'
	else
		bad "$bin: record"
	fi
}
for cc in gcc clang; do
	wl_built $cc tail_barrier || continue
	timed_group "tail_barrier ($cc)" tail_pthread_group $cc
done

# --barrier phase: phase() itself is probed (entry + return), so the
# pthread_barrier_wait it jumps to finds the uretprobe trampoline in its
# return slot.
for cc in gcc clang; do
	wl_built $cc tail_barrier || continue
	bin="tail_barrier ($cc)"
	loc=$(site tail_phase tail_barrier.c)
	j=$TMP/tail_barrier_${cc}_probed.json
	if record_json "$j" --barrier phase -- "$(wl $cc tail_barrier)" 4 10 500; then
		jqcheck "$bin --barrier phase: the barrier it jumps to is at $loc, 10 instances" "$j" "$(section_at "$loc" barrier) | . != null and .instances == 10 and .threads == 4"
		jqcheck "$bin --barrier phase: no trampoline address, none unresolved" "$j" '([.sections[].location | select(test("^0x7ff"))] | length == 0) and .meta.sites_trampoline_lost == "0"'
	else
		bad "$bin --barrier phase: record"
	fi
done

# omp_tail: outlined functions that end in `jmp GOMP_barrier` (gcc) or
# `jmp __kmpc_barrier` (clang, explicit barrier), and are themselves
# probed (entry + return), so the barrier's return slot holds the
# uretprobe trampoline.
tail_omp_group() {
	local cc=$1 bin="omp_tail ($1)" j=$TMP/omp_tail_$1.json loc bsel
	loc=$(site omp_tail_barrier omp_tail.c)
	bsel=$(section_at "$loc" omp_barrier)
	if OMP_NUM_THREADS=4 record_json "$j" -- "$(wl $cc omp_tail)" 20 2000; then
		jqcheck "$bin: tail-jumped explicit barrier: section at $loc, 20 instances, 4 threads" "$j" "$bsel != null and ($bsel).instances == 20 and ($bsel).threads == 4"
		ratio_check "$bin: explicit barrier busy ratio 1:2:3:4 within 10%" "$j" "$bsel" 4 0.10
		jqcheck "$bin: explicit barrier imbalance 37.5 +- 5" "$j" "(($bsel).imbalance_pct - 37.5 | fabs) <= 5"
		jqcheck "$bin: omp for barrier: its own section in omp_tail.c, 20 instances, imbalance 37.5 +- 5" "$j" "[.sections[] | select(.kind == \"omp_barrier\" and .location != \"$loc\" and (.location | test(\"^omp_tail.c:\")) and .instances == 20 and .threads == 4 and ((.imbalance_pct - 37.5) | fabs) <= 5)] | length == 1"
		jqcheck "$bin: every omp barrier section is in the program's source" "$j" '[.sections[] | select(.kind == "omp_barrier")] | length == 2 and all(.location | test("^omp_tail.c:[0-9]+$"))'
		jqcheck "$bin: no trampoline left unresolved" "$j" '.meta.sites_trampoline_lost == "0"'
		check "$bin: the report does not ask to rebuild with -g" bash -c "! '$SB' report -i '${j%.json}.sbp' | grep -q 'rebuild the program with -g'"
	else
		bad "$bin: record"
	fi
}
for cc in gcc clang; do
	wl_built $cc omp_tail || continue
	timed_group "omp_tail ($cc)" tail_omp_group $cc
done
