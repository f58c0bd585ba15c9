# Inline mutex + condvar barriers (issue 9): SPLASH's BARRIER macro has no
# function to probe, only pthread_cond_wait calls inside the program's own
# functions.  Two macro styles, written as the suites ship them:
#   condbar_splash.c  Splash-3 pthread.m4.stougie: one cond_wait, no loop;
#                     the master works too (SlaveStart); a start barrier
#                     and a step barrier on one condvar
#   condbar_parsec.c  PARSEC c.m4.null.pthread: while (Cycle == cycle)
#                     cond_wait, the last flips the cycle and broadcasts
# Built here as users build them: gcc and clang -O2 -g, no frame-pointer
# flags.  Process i does (i + 1) * UNITS units per step: busy ratio
# 1:..:N at the step barrier, imbalance 1 - (N + 1) / (2N), STEPS
# instances; 4 and 8 threads on this 2-core machine.

CB_STEPS=20
cb_build() {  # cb_build SRC CC -> path of the binary, or empty
	local out=$TMP/cb_$1_$2
	[ -x "$out" ] || "$2" -O2 -g -pthread "$TOP/tests/integration/condbar_$1.c" -o "$out" 2>"$out.err" || return 1
	echo "$out"
}
cb_site() {  # cb_site SITE FILE: FILE:LINE of /* SITE:... */ in tests/integration
	local loc
	loc=$(site "$1" "../integration/$2")
	echo "$2:${loc#*:}"
}

cb_group() {
	local style=$1 cc=$2 n=$3 bin j loc sel want units tag
	tag="inline condvar barrier, $style ($cc, $n threads)"
	if ! bin=$(cb_build "$style" "$cc"); then
		bad "$tag: build"
		return
	fi
	j=$TMP/cb_${style}_${cc}_$n.json
	loc=$(cb_site "${style}_step" "condbar_$style.c")
	sel=$(section_at "$loc" user_barrier)
	want=$(analytic_imbalance "$n")
	units=$((12000 / n))   # as barrier_group: ~2 ms a step for the least loaded
	if ! record_json "$j" -- "$bin" "$n" $CB_STEPS $units; then
		bad "$tag: record"
		return
	fi
	jqcheck "$tag: barrier section at $loc, $CB_STEPS instances, $n threads" "$j" \
		"$sel != null and ($sel).instances == $CB_STEPS and ($sel).threads == $n"
	ratio_check "$tag: busy ratio 1:..:$n within 10%" "$j" "$sel" "$n" 0.10
	jqcheck "$tag: imbalance within 4 points of $want" "$j" "(($sel).imbalance_pct - $want | fabs) <= 4"
	# The barrier's futex waits are its wait, not condvar contention.
	jqcheck "$tag: no condition variable waits left at $loc" "$j" \
		"[.locks[] | select(.location == \"$loc\" and .primitive == \"cond\")] | length == 0"
	jqcheck "$tag: the profile says how it was found" "$j" \
		'.meta.notes | test("inline barrier detected: 1 condition variable")'
	# LIME needs the section's per-thread sample vectors: the rebuilt
	# instances carry them (work 1:2:3:4 at 4 threads).  Whether LIME
	# then names a cause is a test of its own on ~80 samples: not here.
	# One key, the most sampled (the work loop): a sample also counts at
	# every call site on its stack, and only the main thread's stack has
	# the program's own callers above its worker, so a sum over keys
	# counts its samples several times.
	if [ "$n" = 4 ]; then
		"$SB" report -i "${j%.json}.sbp" --counts --format json >"${j%.json}.counts.json"
		jqcheck "$tag: per-thread sample vectors at $loc, busiest > 2 x idlest" "${j%.json}.counts.json" \
			"[.counts[] | select(.section == \"$loc\")] | max_by([.per_thread[].count] | add) |
			 [.per_thread[].count] | length == 4 and max > 2 * min"
	fi
	if [ "$style" = splash ]; then
		loc=$(cb_site splash_start condbar_splash.c)
		sel=$(section_at "$loc" user_barrier)
		jqcheck "$tag: start barrier section at $loc, 1 instance, $n threads" "$j" \
			"$sel != null and ($sel).instances == 1 and ($sel).threads == $n"
	fi
}
for cb_cc in gcc clang; do
	command -v $cb_cc >/dev/null || { echo "skip inline condvar barriers ($cb_cc): no $cb_cc"; continue; }
	for cb_style in splash parsec; do
		for cb_n in 4 8; do
			timed_group "inline condvar barrier, $cb_style ($cb_cc, $cb_n threads)" \
				cb_group $cb_style $cb_cc $cb_n
		done
	done
done

# --- condvars that are not barriers stay condition waits -----------------
# condbar_queue.c: a master broadcasts work to waiting workers each round
# (often all of them waiting: one broadcast releases them all) and waits
# for their signals.  No barrier; waits at both wait sites, as before.
cb_queue_group() {
	local bin j=$TMP/cb_queue.json wl dl
	if ! bin=$(cb_build queue gcc); then
		bad "condvar queue: build"
		return
	fi
	wl=$(cb_site queue_wait condbar_queue.c)
	dl=$(cb_site drain_wait condbar_queue.c)
	if ! record_json "$j" -- "$bin" 4 30 300; then
		bad "condvar queue: record"
		return
	fi
	jqcheck "condvar queue: no barrier section" "$j" '[.sections[] | select(.kind != "join")] | length == 0'
	jqcheck "condvar queue: condition waits at $wl and $dl" "$j" \
		"[.locks[] | select(.primitive == \"cond\") | .location] as \$l | (\$l | index(\"$wl\")) != null and (\$l | index(\"$dl\")) != null"
	jqcheck "condvar queue: no inline barrier note" "$j" '.meta.notes | test("inline barrier") | not'
}
cb_queue_group
# A barrier function found by its name keeps its one section: its own
# condvar is its business, not a second barrier inside it.
j=$TMP/cb_fn.json
if record_json "$j" -- "$WL/condvar_barrier" 4 20 2000; then
	jqcheck "barrier function by name: one barrier section, none at its cond_wait" "$j" \
		"[.sections[] | select(.kind == \"user_barrier\") | .location] == [\"$(site user_barrier condvar_barrier.c)\"]"
else
	bad "barrier function by name: record"
fi

# --- --barrier naming the place: FILE:LINE, a call site -------------------
# Named, the site is a barrier without the pattern test (and only it:
# --barrier turns detection off).
cb_named_group() {
	local cc=$1 bin j loc sel call spec base
	if ! bin=$(cb_build parsec "$cc"); then
		bad "--barrier FILE:LINE ($cc): build"
		return
	fi
	loc=$(cb_site parsec_step condbar_parsec.c)
	sel=$(section_at "$loc" user_barrier)
	j=$TMP/cb_named_$cc.json
	if record_json "$j" --barrier "$loc" -- "$bin" 4 $CB_STEPS 1500; then
		jqcheck "--barrier $loc ($cc): the profile names the wait found there" "$j" \
			".meta.notes | test(\"--barrier $loc: 1 condition variable wait there\") and test(\"inline barrier detected\") == false"
		jqcheck "--barrier $loc ($cc): section there, $CB_STEPS instances, 4 threads" "$j" \
			"$sel != null and ($sel).instances == $CB_STEPS and ($sel).threads == 4"
		ratio_check "--barrier $loc ($cc): busy ratio 1:2:3:4 within 10%" "$j" "$sel" 4 0.10
	else
		bad "--barrier $loc ($cc): record"
	fi
	# The call instruction's address, as objdump shows it, and the
	# return address in the JSON's BINARY+0xVADDR form.
	call=$(objdump -d --no-show-raw-insn "$bin" | awk '/call.*<pthread_cond_wait@plt>/ { sub(":", "", $1); print $1; exit }')
	base=$(basename "$bin")
	for spec in "0x$call" "$base+0x$(printf '%x' $((0x$call + 5)))"; do
		j=$TMP/cb_site_$cc.json
		if record_json "$j" --barrier "$spec" -- "$bin" 4 $CB_STEPS 1500; then
			jqcheck "--barrier $spec (call site, $cc): section at $loc, $CB_STEPS instances" "$j" \
				"$sel != null and ($sel).instances == $CB_STEPS and ($sel).threads == 4"
		else
			bad "--barrier $spec (call site, $cc): record"
		fi
	done
}
timed_group "--barrier FILE:LINE and call site (gcc)" cb_named_group gcc
command -v clang >/dev/null && timed_group "--barrier FILE:LINE and call site (clang)" cb_named_group clang

# A line that calls a barrier function: that function is the barrier.
j=$TMP/cb_fnline.json
cb_loc=$(site user_barrier condvar_barrier.c)
if record_json "$j" --barrier "$cb_loc" -- "$WL/condvar_barrier" 4 20 2000; then
	jqcheck "--barrier $cb_loc (calls sb_user_barrier): its section, 20 instances" "$j" \
		"$(section_at "$cb_loc" user_barrier) != null and ($(section_at "$cb_loc" user_barrier)).instances == 20"
else
	bad "--barrier $cb_loc: record"
fi
expect_fail "--barrier on a line without a wait fails clearly" "no pthread_cond_wait call" \
	"$SB" record -q -o "$TMP/x.sbp" --barrier condbar_parsec.c:1 -- "$(cb_build parsec gcc)" 2 2 10

# Through a launcher (following): env has no such line, the program does.
# A place is looked for in every image, as a function name is; one that
# no image has is an error once the recording ends.
cb_launched_group() {
	local bin j=$TMP/cb_env.json loc sel
	if ! bin=$(cb_build parsec gcc); then
		bad "--barrier FILE:LINE through env: build"
		return
	fi
	loc=$(cb_site parsec_step condbar_parsec.c)
	sel=$(section_at "$loc" user_barrier)
	if record_json "$j" --barrier "$loc" -- env "$bin" 4 $CB_STEPS 1500; then
		jqcheck "--barrier $loc through env: section there, $CB_STEPS instances, 4 threads" "$j" \
			"$sel != null and ($sel).instances == $CB_STEPS and ($sel).threads == 4"
	else
		bad "--barrier $loc through env: record"
	fi
	rm -f "$TMP/cb_env_none.sbp"
	expect_fail "--barrier on a line of no image, through env: error at the end" \
		"condbar_parsec.c:1: no pthread_cond_wait call .* in any process followed" \
		"$SB" record -q -o "$TMP/cb_env_none.sbp" --barrier condbar_parsec.c:1 -- env "$bin" 2 2 10
	check "--barrier on a line of no image, through env: the profile is still written" \
		test -s "$TMP/cb_env_none.sbp"
}
timed_group "--barrier FILE:LINE through a launcher" cb_launched_group

# A place holds at most 16 waits (probe_sites.c): more are said, not
# dropped silently.  17 cond_wait calls on one line, none reached.
cat >"$TMP/cb_many.c" <<'CEOF'
#include <pthread.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c[17];
#define W(i) if (n & (1u << i)) pthread_cond_wait(&c[i], &m);
int main(int argc, char **argv)
{
	unsigned n = (unsigned)argc - 1u;
	W(0) W(1) W(2) W(3) W(4) W(5) W(6) W(7) W(8) W(9) W(10) W(11) W(12) W(13) W(14) W(15) W(16)
	(void)argv;
	return 0;
}
CEOF
if gcc -O2 -g -pthread "$TMP/cb_many.c" -o "$TMP/cb_many" 2>"$TMP/cb_many.err"; then
	"$SB" record -o "$TMP/cb_many.sbp" --barrier cb_many.c:8 -- "$TMP/cb_many" 2>"$TMP/cb_many.log"
	check "--barrier on a line of 17 waits: 16 probed, the 17th said" \
		grep -q "cb_many.c:8: 1 more condition variable wait there not probed" "$TMP/cb_many.log"
else
	bad "--barrier on a line of 17 waits: build"
fi
