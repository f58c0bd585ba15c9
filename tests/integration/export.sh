# `scalebpf report --format pprof|perfetto` (issue 16): exports read only
# the profile; their totals are the JSON report's.
#   - pprof: decoded with Google's protobuf runtime against profile.proto
#     (tests/tools/profile.proto, compiled here by protoc;
#     tests/tools/pprof_totals.py): the format's rules (string 0 empty,
#     ids, references), the three sample types, wait per primitive equal to
#     the report's waits, busy per thread and per section equal to its
#     sections' per-thread busy, cpu samples present.
#   - perfetto: the trace-event schema (tests/tools/trace_check.py: every
#     event's fields, B/E pairs, time order and nesting per track, flows
#     finished) and busy and wait per thread equal to the report's
#     sections' (every instance stored here).
# On programs as users build them: barrier_ratio (4 threads, gcc and
# clang -O2), mutex_loop (mutex waits), an OpenMP program (omp_cg, both
# runtimes); and a profile with nothing in it.
EX_PY=/usr/bin/python3
[ -x "$EX_PY" ] || EX_PY=python3
EX_PB=$TMP/pb
mkdir -p "$EX_PB"

ex_ready() {
	if ! protoc --python_out="$EX_PB" -I "$TOP/tests/tools" "$TOP/tests/tools/profile.proto" \
		2>"$TMP/protoc.err"; then
		bad "export: protoc cannot compile profile.proto (.ci/install-deps.sh installs protobuf-compiler)"
		cat "$TMP/protoc.err"
		return 1
	fi
	if ! "$EX_PY" -c 'import google.protobuf' 2>/dev/null; then
		bad "export: $EX_PY has no google.protobuf (python3-protobuf)"
		return 1
	fi
}

# NAME SBP: the exports of a recorded profile against its JSON report
ex_group() {
	local name=$1 sbp=$2 j=$TMP/ex_$1.json pb=$TMP/ex_$1.pb.gz tr=$TMP/ex_$1.trace.json
	local pt=$TMP/ex_$1.pprof.json tc=$TMP/ex_$1.check.json
	"$SB" report -i "$sbp" --format json >"$j" || { bad "export $name: json report"; return; }
	if "$SB" report -i "$sbp" --format pprof -o "$pb" 2>"$TMP/ex.err" &&
		"$EX_PY" "$TOP/tests/tools/pprof_totals.py" "$EX_PB" "$pb" >"$pt" 2>"$TMP/ex.err"; then
		jqcheck "export $name, pprof: decodes with no rule broken; sample types wait/ns, busy/ns, samples/count" \
			"$pt" '.problems == [] and .sample_types == ["wait/nanoseconds", "busy/nanoseconds", "samples/count"]' ||
			jq -c .problems "$pt"
		# wait per primitive: the report's waits
		exq "export $name, pprof: wait per primitive = the report's waits" "$pt" "$j" \
			'(.by_label.wait.primitive // {}) as $w |
			 ([$r[0].waits[] | select(.wait_ns > 0)] | map({(.primitive): .wait_ns}) | add // {}) as $want |
			 ($w | with_entries(select(.value > 0))) == $want' ||
			echo "     pprof $(jq -c '.by_label.wait.primitive' "$pt"); report $(jq -c '[.waits[] | {(.primitive): .wait_ns}] | add' "$j")"
		exq "export $name, pprof: busy per thread = the report's sections' per-thread busy" "$pt" "$j" \
			'(.by_label.busy.thread // {}) == ([$r[0].sections[].per_thread[] | select(.busy_ns > 0)] |
			  group_by(.tid) | map({(.[0].tid | tostring): (map(.busy_ns) | add)}) | add // {})'
		exq "export $name, pprof: busy per section = the report's, section by section" "$pt" "$j" \
			'((.by_label.busy.section // {}) | [.[]] | sort) ==
			 ([$r[0].sections[] | [.per_thread[].busy_ns] | add] | map(select(. > 0)) | sort)'
		jqcheck "export $name, pprof: cpu samples at located code" "$pt" \
			'.totals.samples > 0 and .locations > 0 and (.functions | length) > 0'
	else
		bad "export $name: pprof"
		cat "$TMP/ex.err"
	fi
	if "$SB" report -i "$sbp" --format perfetto -o "$tr" 2>"$TMP/ex.err" &&
		"$EX_PY" "$TOP/tests/tools/trace_check.py" "$tr" >"$tc" 2>"$TMP/ex.err"; then
		jqcheck "export $name, perfetto: the schema holds (fields, B/E and b/e pairs, time order and nesting per track, flows)" \
			"$tc" '.problems == [] and .slices > 0 and .tracks >= 1' || jq -c .problems "$tc"
		exq "export $name, perfetto: every instance on the timeline, on its section's track" \
			"$tc" "$j" '.metadata.instances == .metadata.instances_stored and
			 .async_slices == .metadata.instances_stored and
			 .metadata.instances == ([$r[0].sections[].instances] | add // 0)'
		exq "export $name, perfetto: busy and wait per thread = the report's sections' per thread" \
			"$tc" "$j" \
			'([$r[0].sections[].per_thread[]] | group_by(.tid)) as $g |
			 (.busy | with_entries(select(.value > 0))) ==
			 ($g | map(select((map(.busy_ns) | add) > 0) | {(.[0].tid | tostring): (map(.busy_ns) | add)}) | add // {}) and
			 (.wait | with_entries(select(.value > 0))) ==
			 ($g | map(select((map(.wait_ns) | add) > 0) | {(.[0].tid | tostring): (map(.wait_ns) | add)}) | add // {})'
	else
		bad "export $name: perfetto"
		cat "$TMP/ex.err"
	fi
}

ex_cli_group() {
	local sbp=$1
	expect_fail "export: an unknown format is named with the known ones" "pprof or perfetto" \
		"$SB" report -i "$sbp" --format svg -o "$TMP/x"
	expect_fail "export: a directory that does not exist" "cannot write" \
		"$SB" report -i "$sbp" --format pprof -o "$TMP/nodir/x.pb.gz"
	expect_fail "export: not with a listing" "not with" \
		"$SB" report -i "$sbp" --format perfetto --addresses -o "$TMP/x"
	check "export: a failed export leaves no file behind" \
		test -z "$(ls "$TMP"/nodir* "$TMP"/x* 2>/dev/null)"
	"$SB" report -i "$sbp" --format json -o "$TMP/ex_o.json" >"$TMP/ex_stdout" 2>&1
	check "export: -o writes the JSON report there, nothing on standard output" \
		bash -c "jq -e .sections '$TMP/ex_o.json' >/dev/null && [ ! -s '$TMP/ex_stdout' ]"
}

if ex_ready; then
	if record_json "$TMP/exr_barrier.json" -- "$(wl gcc barrier_ratio)" 4 30 3000; then
		ex_group barrier_gcc "$TMP/exr_barrier.sbp"
		ex_cli_group "$TMP/exr_barrier.sbp"
	else
		bad "export: record barrier_ratio"
	fi
	if wl_built clang barrier_ratio &&
		record_json "$TMP/exr_barrier_clang.json" -- "$(wl clang barrier_ratio)" 4 30 3000; then
		ex_group barrier_clang "$TMP/exr_barrier_clang.sbp"
	fi
	if record_json "$TMP/exr_mutex.json" -- "$(wl gcc mutex_loop)" 4 1000000; then
		ex_group mutex "$TMP/exr_mutex.sbp"
	else
		bad "export: record mutex_loop"
	fi
	for cc in gcc clang; do
		wl_built "$cc" omp_cg || continue
		if OMP_NUM_THREADS=2 record_json "$TMP/exr_omp_$cc.json" -- "$(wl "$cc" omp_cg)" 20000 4; then
			ex_group "omp_$cc" "$TMP/exr_omp_$cc.sbp"
		else
			bad "export: record omp_cg ($cc)"
		fi
	done
	# a crafted profile's strings (invalid UTF-8, control characters):
	# pprof's strings must be UTF-8 for its readers (Python's protobuf
	# refuses others), the trace must stay JSON
	if ${CC:-cc} -O2 -std=gnu11 -D_GNU_SOURCE -I"$TOP/analysis" -x c - -x none \
		"$TOP"/build/analysis/*/*.o -lgsl -lgslcblas -lm -o "$TMP/ex_craft" \
		2>"$TMP/ex_craft.err" <<'EOF'
#include "profile/profile.h"
int main(int argc, char **argv)
{
	struct sb_profile *p = sb_profile_alloc();
	struct sb_thread_time t[2] = { { 1, 100, 900, 1000 }, { 2, 900, 100, 1000 } };
	struct sb_loc l = { .addr = 0x401000, .binary = -1, .line = 7,
			    .function = "f\xff\xfe\x1b[31m\"quoted\"", .file = "x\xc3.c" };
	struct sb_section s = { .kind = SB_SECT_BARRIER, .loc = 0, .ninstances = 1,
				.nthreads = 2, .per_thread = t, .lost_ns = 800 };
	struct sb_instance in = { .section = 0, .start_ns = 10, .end_ns = 1010,
				  .nthreads = 2, .per_thread = t };
	struct sb_thread th = { .tid = 1, .comm = "c\xff\n", .start_ns = 0, .end_ns = 2000 };
	struct sb_wait w = { .prim = SB_PRIM_BARRIER, .loc = 0, .count = 2, .wait_ns = 1000 };
	(void)argc;
	sb_profile_add_thread(p, &th);
	sb_profile_add_loc(p, &l);
	sb_profile_add_section(p, &s);
	sb_profile_add_instance(p, &in);
	sb_profile_add_wait(p, &w);
	return sb_profile_write(p, argv[1], 0, 0) ? 1 : 0;
}
EOF
	then
		if "$TMP/ex_craft" "$TMP/ex_craft.sbp" &&
			"$SB" report -i "$TMP/ex_craft.sbp" --format pprof -o "$TMP/ex_craft.pb.gz" &&
			"$SB" report -i "$TMP/ex_craft.sbp" --format perfetto -o "$TMP/ex_craft.json"; then
			"$EX_PY" "$TOP/tests/tools/pprof_totals.py" "$EX_PB" "$TMP/ex_craft.pb.gz" \
				>"$TMP/ex_craft.pt" 2>"$TMP/ex_craft.pterr"
			jqcheck "export: a crafted profile's strings: its pprof decodes (UTF-8 strings)" \
				"$TMP/ex_craft.pt" '.problems == [] and .totals.busy == 1000' ||
				cat "$TMP/ex_craft.pterr"
			"$EX_PY" "$TOP/tests/tools/trace_check.py" "$TMP/ex_craft.json" \
				>"$TMP/ex_craft.tc" 2>"$TMP/ex_craft.tcerr"
			jqcheck "export: a crafted profile's strings: its trace is UTF-8 JSON, the schema holds" \
				"$TMP/ex_craft.tc" '.problems == []' || cat "$TMP/ex_craft.tcerr"
		else
			bad "export: the crafted profile's exports"
		fi
	else
		bad "export: build the crafted profile's writer"
		cat "$TMP/ex_craft.err"
	fi
	# nothing recorded: valid, empty exports
	if "$SB" record -q -o "$TMP/exr_true.sbp" -- /bin/true 2>"$TMP/exr_true.err" &&
		"$SB" report -i "$TMP/exr_true.sbp" --format pprof -o "$TMP/ex_true.pb.gz" &&
		"$SB" report -i "$TMP/exr_true.sbp" --format perfetto -o "$TMP/ex_true.trace.json"; then
		check "export: an empty profile's pprof decodes" bash -c \
			"set -o pipefail; '$EX_PY' '$TOP/tests/tools/pprof_totals.py' '$EX_PB' '$TMP/ex_true.pb.gz' | jq -e '.problems == []' >/dev/null"
		check "export: an empty profile's trace is valid" bash -c \
			"set -o pipefail; '$EX_PY' '$TOP/tests/tools/trace_check.py' '$TMP/ex_true.trace.json' | jq -e '.problems == []' >/dev/null"
	else
		bad "export: a profile with nothing in it"
		cat "$TMP/exr_true.err"
	fi
fi
