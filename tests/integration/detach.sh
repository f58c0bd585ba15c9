# After the target exits, recording must not take seconds to detach its
# probes.  A classic perf-event uprobe detaches under the kernel's global
# event_mutex, one tracepoint grace period after another (~50-90 ms each
# here, whatever the number of threads): an OpenMP code with a dozen
# outlined functions (omp_cg, ~28 probes) waited ~1.5 s after its exit.
# Where the kernel has uprobe_multi links (Linux >= 6.6) they are used and
# detach together; SCALEBPF_NO_UPROBE_MULTI=1 takes the classic path (the
# only one of older kernels), which must still record the same sections.

# omp_cg 20000 4: 4 outer iterations of 25 CG steps.  Region instances by
# source: 3 set-up regions once, the matrix-vector product and the dot
# product 4 * 26 times each (inlined at two call sites each), update, rho
# and direction 4 * 25 times, init, residual, z-norm and normalise 4 times:
# 3 + 2 * 104 + 3 * 100 + 4 * 4 = 527.
detach_sections() {
	local j=$1 what=$2 upd rho dir init
	upd=$(site cg_update omp_cg.c)
	rho=$(site cg_rho omp_cg.c)
	dir=$(site cg_direction omp_cg.c)
	init=$(site cg_init omp_cg.c)
	jqcheck "$what: omp_cg's regions, 527 instances in all, 2 threads each" "$j" \
		"([.sections[] | select(.kind == \"omp_region\") | .instances] | add) == 527 and
		 all(.sections[]; .threads == 2)"
	jqcheck "$what: update, rho and direction regions at their lines, 100 instances each" "$j" \
		"[.sections[] | select((.location == \"$upd\" or .location == \"$rho\" or
		  .location == \"$dir\") and .instances == 100)] | length == 3"
	jqcheck "$what: the CG init region at $init, 4 instances" "$j" \
		"$(section_at "$init" omp_region).instances == 4"
}

# kernel_has_uprobe_multi: Linux >= 6.6.
kernel_has_uprobe_multi() {
	local v maj min
	v=$(uname -r)
	maj=${v%%.*}
	min=${v#*.}
	min=${min%%[!0-9]*}
	[ "$maj" -gt 6 ] || { [ "$maj" -eq 6 ] && [ "$min" -ge 6 ]; }
}

# after_exit OUT ENV...: records omp_cg with the environment ENV, sets
# $after_ns to the time from the program's exit to the recorder's.
after_exit() {
	local out=$1 t1
	shift
	rm -f "$TMP/detach.wall"
	if ! env OMP_NUM_THREADS=2 SB_WALL_FILE="$TMP/detach.wall" "$@" \
		"$SB" record -q -o "${out%.json}.sbp" -- "$WL/omp_cg" 20000 4 \
		2>"${out%.json}.err"; then
		cat "${out%.json}.err"
		return 1
	fi
	t1=$(date +%s%N)
	"$SB" report -i "${out%.json}.sbp" --format json >"$out"
	after_ns=$((t1 - $(sed -n 2p "$TMP/detach.wall")))
}

detach_group() {
	local jm=$TMP/detach_multi.json jc=$TMP/detach_classic.json am ac
	if ! after_exit "$jm"; then
		bad "detach: record omp_cg"
		return
	fi
	am=$after_ns
	if ! after_exit "$jc" SCALEBPF_NO_UPROBE_MULTI=1; then
		bad "detach: record omp_cg with SCALEBPF_NO_UPROBE_MULTI=1"
		return
	fi
	ac=$after_ns
	detach_sections "$jm" "default probes"
	detach_sections "$jc" "perf-event probes"
	jqcheck "SCALEBPF_NO_UPROBE_MULTI=1: the profile says perf_event uprobes" "$jc" \
		'.meta.uprobe_links == "perf_event"'
	if kernel_has_uprobe_multi; then
		jqcheck "Linux >= 6.6: the profile says uprobe_multi links" "$jm" \
			'.meta.uprobe_links == "uprobe_multi"'
		# Relative, not absolute: the classic path pays a grace period
		# per probe (28 here), uprobe_multi links overlap theirs.
		check "after exit, uprobe_multi links take under half the time of per-probe uprobes ($((am / 1000000)) ms vs $((ac / 1000000)) ms)" \
			[ $((am * 2)) -lt "$ac" ]
	else
		jqcheck "Linux < 6.6: the profile says perf_event uprobes" "$jm" \
			'.meta.uprobe_links == "perf_event"'
	fi
}
timed_group "detach" detach_group
