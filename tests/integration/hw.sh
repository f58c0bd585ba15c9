# Hardware path (--events auto|hw|sw).  This machine kind has no PMU, so
# the LBR/PEBS samplers cannot attach here: what runs is the fallback,
# the refusal of --events hw, the path shown in the profile and report,
# and the samplers' BPF programs passing the verifier (loading needs no
# PMU).  Their decoding is unit-tested with fixtures (test_lbr_pebs).

hw_has_pmu() {
	[ -e /sys/bus/event_source/devices/cpu ] || [ -e /sys/bus/event_source/devices/cpu_core ]
}

# The programs load through record's own loader, sharing a ring buffer.
if make -s -C "$TOP" build/tests/hw_load >"$TMP/hw_build.out" 2>&1; then
	check "hw: LBR and PEBS BPF programs pass the verifier" \
		bash -c "'$TOP/build/tests/hw_load' >'$TMP/hw_load.out' 2>&1 && grep -q 'all loaded' '$TMP/hw_load.out'"
else
	bad "hw: build of the load test"
	cat "$TMP/hw_build.out"
fi

hw_group() {
	local j=$TMP/hw_auto.json sel
	sel=$(section_at "$(site barrier barrier_ratio.c)" barrier)
	# Not quiet: the one fallback line must be there.
	if "$SB" record -o "$TMP/hw_auto.sbp" --events auto -- "$WL/barrier_ratio" 4 10 2000 \
		2>"$TMP/hw_auto.err"; then
		"$SB" report -i "$TMP/hw_auto.sbp" --format json >"$j"
		"$SB" report -i "$TMP/hw_auto.sbp" >"$TMP/hw_auto.txt"
		jqcheck "hw: --events auto still records the sections" "$j" "$sel != null and ($sel).instances == 10"
		jqcheck "hw: the profile records the requested path" "$j" '.meta.events_requested == "auto"'
		if hw_has_pmu; then
			jqcheck "hw: --events auto with a PMU records which path it took" "$j" '.meta.sampling | test("^(hardware|software)")'
		else
			check "hw: --events auto without a PMU prints exactly one fallback line" \
				test "$(grep -c 'scalebpf: hardware sampling unavailable (.*no PMU driver.*): using software sampling (cpu-clock)$' "$TMP/hw_auto.err")" -eq 1
			jqcheck "hw: the profile says software sampling, no PMU" "$j" '.meta.sampling == "software (cpu-clock); no hardware PMU" and (.meta.pmu | test("none"))'
			check "hw: report shows the path taken" \
				grep -q '^  sampling: software (cpu-clock); no hardware PMU$' "$TMP/hw_auto.txt"
		fi
	else
		bad "hw: --events auto record"
		cat "$TMP/hw_auto.err"
	fi
}
timed_group "hw: --events auto" hw_group

j=$TMP/hw_sw.json
if "$SB" record -o "$TMP/hw_sw.sbp" --events sw -- "$WL/barrier_ratio" 2 4 500 2>"$TMP/hw_sw.err"; then
	"$SB" report -i "$TMP/hw_sw.sbp" --format json >"$j"
	jqcheck "hw: --events sw is software only" "$j" '.meta.sampling == "software (cpu-clock)" and .meta.events_requested == "sw"'
	check "hw: --events sw prints no fallback line" bash -c "! grep -q 'hardware sampling' '$TMP/hw_sw.err'"
else
	bad "hw: --events sw record"
fi
"$SB" record -q -o "$TMP/hw_q.sbp" -- "$WL/barrier_ratio" 2 4 500 2>"$TMP/hw_q.err"
check "hw: -q keeps the fallback line quiet, the profile still has it" \
	bash -c "[ -s '$TMP/hw_q.sbp' ] && ! grep -q 'hardware sampling' '$TMP/hw_q.err' && '$SB' report -i '$TMP/hw_q.sbp' | grep -q '^  sampling: '"

if ! hw_has_pmu; then
	# Refused before the command starts: it must not run, no profile.
	if "$SB" record -o "$TMP/hw_hw.sbp" --events hw -- sh -c "touch '$TMP/hw_ran'" \
		>"$TMP/hw_hw.out" 2>"$TMP/hw_hw.err"; then
		bad "hw: --events hw without a PMU exits 0"
	else
		check "hw: --events hw without a PMU says why" \
			grep -q 'scalebpf record: --events hw: no hardware PMU' "$TMP/hw_hw.err"
		check "hw: --events hw leaves no profile and does not start the command" \
			test ! -e "$TMP/hw_hw.sbp" -a ! -e "$TMP/hw_ran"
	fi
fi
if "$SB" record -q -o "$TMP/hw_bad.sbp" --events pebs -- true 2>"$TMP/hw_bad.err"; then
	bad "hw: --events pebs accepted"
else
	check "hw: an unknown --events value is refused clearly" \
		grep -q "invalid --events 'pebs' (auto, hw or sw)" "$TMP/hw_bad.err"
fi
check "hw: no hardware sampler is left loaded" bash -c "! bpftool prog show 2>/dev/null | grep -qE 'on_lbr|on_load'"
