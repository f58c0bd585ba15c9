# Sync calls reached through tail calls (gcc/clang -O2 emit `jmp`): the
# function that jumped leaves no frame, and a pending uretprobe on it (an
# OpenMP outlined function) leaves the "[uprobes]" trampoline in the
# return slot.  Sections must still sit at the program's own line.

# tail_barrier: phase() (called in a loop) and the SPLASH-style start
# routine slave_start() (run by main and by pthread_create'd threads)
# both end in `jmp pthread_barrier_wait`.
tail_pthread_group() {
	local bin=$1 j=$TMP/$1.json psel lsel
	psel=$(section_at "$(site tail_phase tail_barrier.c)" barrier)
	lsel=$(section_at "$(site tail_last tail_barrier.c)" barrier)
	if record_json "$j" -- "$WL/$bin" 4 30 3000; then
		jqcheck "$bin: tail-called barrier in a helper: section at $(site tail_phase tail_barrier.c), 30 instances, 4 threads" "$j" "$psel != null and ($psel).instances == 30 and ($psel).threads == 4"
		ratio_check "$bin: helper barrier busy ratio 1:2:3:4 within 10%" "$j" "$psel" 4 0.10
		jqcheck "$bin: helper barrier imbalance 37.5 +- 5" "$j" "(($psel).imbalance_pct - 37.5 | fabs) <= 5"
		jqcheck "$bin: start routine's last barrier at $(site tail_last tail_barrier.c) for all 4 threads (main's call and start_thread's)" "$j" "$lsel != null and ($lsel).instances == 1 and ($lsel).threads == 4"
		jqcheck "$bin: no barrier section in the C runtime" "$j" '[.sections[] | select(.kind == "barrier" and (.location | test("tail_barrier.c:") | not))] | length == 0'
	else
		bad "$bin: record"
	fi
}
for bin in tail_barrier tail_barrier_clang; do
	[ -x "$WL/$bin" ] || { echo "skip $bin: not built (no clang)"; continue; }
	timed_group "$bin" tail_pthread_group $bin
done

# --barrier phase: phase() itself is probed (entry + return), so the
# pthread_barrier_wait it jumps to finds the uretprobe trampoline in its
# return slot.
for bin in tail_barrier tail_barrier_clang; do
	[ -x "$WL/$bin" ] || continue
	loc=$(site tail_phase tail_barrier.c)
	j=$TMP/${bin}_probed.json
	if record_json "$j" --barrier phase -- "$WL/$bin" 4 10 500; then
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
	local bin=$1 j=$TMP/$1.json loc bsel
	loc=$(site omp_tail_barrier omp_tail.c)
	bsel=$(section_at "$loc" omp_barrier)
	if OMP_NUM_THREADS=4 record_json "$j" -- "$WL/$bin" 20 2000; then
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
for bin in omp_tail omp_tail_libomp; do
	[ -x "$WL/$bin" ] || { echo "skip $bin: not built (no clang/libomp)"; continue; }
	timed_group "$bin" tail_omp_group $bin
done
