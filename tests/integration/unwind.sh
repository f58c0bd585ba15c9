# Stacks without frame pointers (issue 9): programs built as users build
# them (gcc and clang -O2, no frame-pointer flags) keep their callers
# through the stack copy each sample carries, unwound with .eh_frame.
# tests/integration/unwind.c is built here, into $TMP.

# callers_share NM OUT DUMP: "<samples in leaf> <with the right caller>".
# Thread t calls leaf() only through caller_t (OUT: "T tid t", "base
# <runtime address of main>"); DUMP is SCALEBPF_UNWIND_DUMP's per-sample
# chains ("tid how n ip ra1 ...").
callers_share() {
	local nmf=$1 out=$2 dump=$3 base=0 leaf n=0 ok=0 tid how nf ip ra rest t a s ty name k v w
	declare -A A S I
	while read -r a s ty name; do
		[ -n "$name" ] || continue
		A[$name]=$((16#$a))
		S[$name]=$((16#$s))
	done <"$nmf"
	while read -r k v w; do
		case $k in
		base) base=$((v - A[main])) ;;
		T) I[$v]=$w ;;
		esac
	done <"$out"
	leaf=$((A[leaf] + base))
	while read -r tid how nf ip ra rest; do
		[ -n "${I[$tid]:-}" ] && [ -n "$ip" ] || continue
		ip=$((16#$ip))
		((ip >= leaf && ip < leaf + S[leaf])) || continue
		n=$((n + 1))
		t=caller_${I[$tid]}
		[ "$nf" -ge 2 ] || continue
		ra=$((16#$ra - 1 - base))   # inside the call instruction
		((ra >= A[$t] && ra < A[$t] + S[$t])) && ok=$((ok + 1))
	done <"$dump"
	echo "$n $ok"
}

unwind_callers_group() {
	local cc=$1 bin=$TMP/unwind_$1 j=$TMP/unwind_callers_$1.json r n ok fpn fpok
	nm -S --defined-only "$bin" >"$TMP/unwind_$cc.nm"
	if ! SCALEBPF_UNWIND_DUMP=$TMP/unwind_$cc.dump record_json "$j" -F 999 -- "$bin" callers 4 1.5 >"$TMP/unwind_$cc.out"; then
		bad "unwind callers ($cc): record"
		return
	fi
	read -r n ok < <(callers_share "$TMP/unwind_$cc.nm" "$TMP/unwind_$cc.out" "$TMP/unwind_$cc.dump")
	check "unwind callers ($cc): $n samples in the frameless leaf (>= 300)" test "$n" -ge 300
	check "unwind callers ($cc): $ok of $n leaf samples name their thread's caller (>= 99%)" \
		test $((ok * 100)) -ge $((n * 99)) -a "$n" -gt 0
	jqcheck "unwind callers ($cc): every unwind's end is counted" "$j" \
		'.meta | (.unwind_samples | tonumber) > 0 and ([.unwind_stop_outermost, .unwind_stop_full, .unwind_stop_truncated, .unwind_stop_no_cfi, .unwind_stop_bad, .unwind_stop_trampoline] | map(tonumber) | add) == (.unwind_samples | tonumber)'
	# The frame-pointer chain stands in for the unwind only where the IP
	# has no CFI: in frameless code it names callers at random.
	jqcheck "unwind callers ($cc): whole frame-pointer chains only for IPs without CFI" "$j" \
		'.meta | (.unwind_fp_only | tonumber) <= (.unwind_stop_no_cfi | tonumber)'
	# Not all: the first samples after exec run in ld.so before the
	# recorder has read the new image's mappings (<= 1% here).
	jqcheck "unwind callers ($cc): >= 95% of the unwinds reach the outermost frame" "$j" \
		'.meta | (.unwind_stop_outermost | tonumber) * 100 >= (.unwind_samples | tonumber) * 95'
	echo "     unwind ($cc): depth $(jq -r '.meta.unwind_depth_mean' "$j") frames (frame pointers: $(jq -r '.meta.unwind_fp_depth_mean' "$j")), $(jq -r '.meta.unwind_ns_per_sample' "$j") ns per sample, copy used <= $(jq -r '.meta.unwind_stack_bytes_max' "$j") bytes"
	# The defect: the frame-pointer walk alone names the wrong caller.
	if SCALEBPF_UNWIND_DUMP=$TMP/unwind_fp_$cc.dump record_json "$TMP/unwind_fp_$cc.json" --unwind fp -F 999 -- "$bin" callers 4 1 >"$TMP/unwind_fp_$cc.out"; then
		read -r fpn fpok < <(callers_share "$TMP/unwind_$cc.nm" "$TMP/unwind_fp_$cc.out" "$TMP/unwind_fp_$cc.dump")
		check "unwind callers ($cc): --unwind fp names the caller in $fpok of $fpn leaf samples (< 50%: the program has no frame pointers)" \
			test $((fpok * 2)) -lt "$fpn"
		jqcheck "unwind callers ($cc): --unwind fp says so in the profile" "$TMP/unwind_fp_$cc.json" '.meta.unwind == "frame pointers"'
	else
		bad "unwind callers ($cc): record --unwind fp"
	fi
}

# The planted cause behind a frameless helper every path shares: the
# caller's decision, not the helper's loop (cause: the helper called from
# both paths; cause2: two levels, shared() -> leaf(), shared() called
# from both paths).
unwind_cause_group() {
	local cc=$1 mode=$2 bin=$TMP/unwind_$1 j=$TMP/unwind_$2_$1.json loc sec bsite=barrier
	[ "$mode" = cause2 ] && bsite=barrier2
	loc=$(site "$mode" ../integration/unwind.c)
	loc=unwind.c:${loc#*:}
	sec=$(site $bsite ../integration/unwind.c)
	sec=unwind.c:${sec#*:}
	if record_json "$j" -F 999 -- "$bin" "$mode" 300 1000; then
		jqcheck "unwind $mode ($cc): top cause of the $sec section is the decision at $loc" "$j" \
			"[.causes[] | select(.section == \"$sec\")] | .[0] | .location == \"$loc\" and .rank == 1 and .score > 0.5" ||
			# what was named instead, and the evidence: a first attempt
			# fails now and then in full runs, never alone
			jq -c "[.causes[] | select(.section == \"$sec\")][:3], [.evidence[] | select(.section == \"$sec\")]" "$j" | sed 's/^/     /'
		jqcheck "unwind $mode ($cc): the helpers are no cause" "$j" \
			'[.causes[] | select(.function == "leaf" or .function == "shared")] | length == 0'
	else
		bad "unwind $mode ($cc): record"
	fi
}

for cc in gcc clang; do
	if ! command -v $cc >/dev/null || ! $cc -O2 -g -pthread "$TOP/tests/integration/unwind.c" -o "$TMP/unwind_$cc"; then
		[ $cc = gcc ] && bad "unwind: build with $cc" || echo "skip unwind ($cc): no $cc"
		continue
	fi
	check "unwind ($cc): the helper is frameless (no push %rbp)" \
		bash -c "! objdump -d --no-show-raw-insn --disassemble=leaf '$TMP/unwind_$cc' | grep -q 'push.*%rbp'"
	unwind_callers_group $cc
	timed_group "unwind cause ($cc)" unwind_cause_group $cc cause
	timed_group "unwind cause2 ($cc)" unwind_cause_group $cc cause2
done

# Through a launcher: env's image and the program's share the one dump
# file, appending whole lines (the second image used to truncate it and
# write over the first's lines).
unwind_env_group() {
	local bin=$TMP/unwind_gcc j=$TMP/unwind_env.json d=$TMP/unwind_env.dump n ok bad
	if ! SCALEBPF_UNWIND_DUMP=$d record_json "$j" -F 999 -- env "$bin" callers 4 1 >"$TMP/unwind_env.out"; then
		bad "unwind through env: record"
		return
	fi
	bad=$(awk 'NF != $3 + 3 || $1 !~ /^[0-9]+$/ { b++ } END { print b + 0 }' "$d")
	check "unwind through env: every line of the dump whole ($bad malformed)" test "$bad" -eq 0
	read -r n ok < <(callers_share "$TMP/unwind_gcc.nm" "$TMP/unwind_env.out" "$d")
	check "unwind through env: $ok of $n leaf samples name their thread's caller (>= 99%, n >= 200)" \
		test $((ok * 100)) -ge $((n * 99)) -a "$n" -ge 200
}
[ -x "$TMP/unwind_gcc" ] && unwind_env_group

# OpenMP outlined functions run under a pending uretprobe (the region
# probe): the stack copy holds the "[uprobes]" trampoline in their return
# slot, which the unwinder must replace by the kernel's original, never
# stop at or emit.
unwind_omp_group() {
	local j=$TMP/unwind_omp.json
	# gcc builds it (libgomp comes with gcc): missing is a failure.
	[ -x "$WL/omp_imbalance" ] || { bad "unwind omp: $WL/omp_imbalance not built (make workloads)"; return; }
	if OMP_NUM_THREADS=2 record_json "$j" -F 999 -- "$WL/omp_imbalance" 20 2000; then
		jqcheck "unwind omp: trampoline slots given their original return address, none lost" "$j" \
			'.meta | (.unwind_trampolines | tonumber) > 0 and (.unwind_stop_trampoline | tonumber) == 0'
		jqcheck "unwind omp: >= 95% of the unwinds complete through libgomp" "$j" \
			'.meta | (.unwind_stop_outermost | tonumber) * 100 >= (.unwind_samples | tonumber) * 95'
	else
		bad "unwind omp: record"
	fi
}
unwind_omp_group
