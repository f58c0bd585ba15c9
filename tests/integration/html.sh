# `scalebpf report --format html` (issue 16): one page that opens offline.
#   - a parser's check (tests/tools/html_check.py): every tag closed in
#     order, no id twice, nothing fetched from elsewhere;
#   - the demo's page (`make demo`'s recording, its sources under --source-dir):
#     a section entry per section of the JSON report, the planted cause's
#     line (demo.c, SITE:demo_cause) and its source text, every panel
#     there (or "not recorded");
#   - a real browser (Debian's chromium, headless): no console message,
#     the rendered DOM has the same entries, screenshots at 1280 px and at
#     a phone's 390 px in build/ (the CI's artifacts), and at 390 px the
#     page is no wider than the screen (a probe script added to a copy);
#   - a crafted profile's strings (markup in a function name) come out as
#     text; a profile with nothing in it still makes a valid page.
HT_PY=/usr/bin/python3
[ -x "$HT_PY" ] || HT_PY=python3
HT_CHROME=$(command -v chromium || command -v chromium-browser || true)

# PAGE OUT: the page as Chromium renders it (its DOM) into OUT; its
# messages into OUT.err
ht_dom() {
	timeout 120 "$HT_CHROME" --headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars \
		--enable-logging=stderr --v=0 --window-size="${3:-1280},2400" \
		--virtual-time-budget=2000 --dump-dom "file://$1" >"$2" 2>"$2.err"
}

ht_group() {
	local j=$TMP/ht_demo.json page=$TMP/ht_demo.html chk=$TMP/ht_demo.check.json n line w
	if ! record_json "$j" -F 999 -- "$(wl gcc demo)"; then
		bad "html: record the demo"
		return
	fi
	line=$(site demo_cause demo.c)
	if ! "$SB" report -i "${j%.json}.sbp" --format html --source-dir "$TOP" -o "$page" \
		2>"$TMP/ht.err"; then
		bad "html: report --format html"
		cat "$TMP/ht.err"
		return
	fi
	"$HT_PY" "$TOP/tests/tools/html_check.py" "$page" >"$chk"
	jqcheck "html: the page parses: every tag closed in order, ids once, nothing fetched" \
		"$chk" '.problems == []' || jq -c .problems "$chk"
	n=$(jq '.sections | length' "$j")
	jqcheck "html: a section entry per section of the report ($n)" "$chk" ".sections == $n"
	jqcheck "html: the planted cause's line ($line) and its source text" "$chk" \
		".text | contains(\"$line\") and contains(\"block_owner(bi, bj) == w->idx\")"
	jqcheck "html: every panel, each with data or 'not recorded'" "$chk" \
		'[.text | (contains("Parallel sections"), contains("Waits by primitive"),
		  contains("Contended locks"), contains("Sampled data addresses"),
		  contains("Data shared between caches"), contains("Cache (CHiP)"),
		  contains("Speedup stacks"), contains("not recorded"))] | all'
	if [ -z "$HT_CHROME" ]; then
		bad "html: no chromium to render the page (.ci/install-deps.sh installs it)"
		return
	fi
	if ht_dom "$page" "$TMP/ht_dom.html"; then
		check "html, chromium: no console message (errors, warnings, logs)" \
			bash -c "! grep -q CONSOLE '$TMP/ht_dom.html.err'"
		check "html, chromium: the rendered page has the $n section entries" \
			test "$(grep -o '<details class="sec"' "$TMP/ht_dom.html" | wc -l)" = "$n"
	else
		bad "html, chromium: the page did not render"
		tail -5 "$TMP/ht_dom.html.err"
	fi
	# a phone's 390 px: Chromium's window is 500 px at least, so the page
	# goes in a frame of 390 (a wrapper page, a probe that reads its width)
	cat >"$TMP/ht_phone.html" <<EOF
<!DOCTYPE html><html><body style="margin:0"><iframe id="f" src="file://$page"
style="width:390px;height:2400px;border:0"></iframe><script>
document.getElementById("f").addEventListener("load", function () {
var d = this.contentDocument; document.body.insertAdjacentHTML("beforeend",
"<pre id=probe>" + (d ? d.documentElement.scrollWidth : "none") + "</pre>"); });
</script></body></html>
EOF
	mkdir -p "$TOP/build"
	for w in 1280 390; do
		local shot=$page
		[ "$w" = 390 ] && shot=$TMP/ht_phone.html
		rm -f "$TOP/build/html-report-$w.png"
		timeout 120 "$HT_CHROME" --headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars \
			--allow-file-access-from-files --window-size="$((w < 500 ? 500 : w)),2400" \
			--virtual-time-budget=2000 --screenshot="$TOP/build/html-report-$w.png" \
			"file://$shot" >/dev/null 2>&1
		check "html, chromium: a screenshot at $w px (build/html-report-$w.png)" \
			bash -c "head -c 8 '$TOP/build/html-report-$w.png' 2>/dev/null | grep -q PNG"
	done
	if timeout 120 "$HT_CHROME" --headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars \
		--allow-file-access-from-files --window-size=800,2400 --virtual-time-budget=3000 \
		--dump-dom "file://$TMP/ht_phone.html" >"$TMP/ht_phone_dom.html" 2>/dev/null; then
		w=$(sed -n 's|.*<pre id="probe">\([0-9]*\)</pre>.*|\1|p' "$TMP/ht_phone_dom.html")
		check "html, chromium at a phone's 390 px: the page is ${w:-?} px wide, no wider" \
			test "${w:-9999}" -le 390
	else
		bad "html, chromium: the phone page did not render"
	fi
}

# Firefox too, where it is installed (the CI installs Chromium only: the
# page has no script, so the two differ only in layout)
ht_firefox_group() {
	local ff prof
	ff=$(command -v firefox-esr || command -v firefox || true)
	if [ -z "$ff" ]; then
		echo "skip html in Firefox: not installed (apt-get install firefox-esr to check)"
		return
	fi
	prof=$(mktemp -d "$TMP/ff.XXXXXX")
	rm -f "$TOP/build/html-report-firefox.png"
	timeout 120 "$ff" --headless --profile "$prof" --window-size=1280,2400 \
		--screenshot "$TOP/build/html-report-firefox.png" "file://$TMP/ht_demo.html" \
		>"$TMP/ff.log" 2>&1
	check "html, Firefox: a screenshot at 1280 px (build/html-report-firefox.png)" \
		bash -c "head -c 8 '$TOP/build/html-report-firefox.png' 2>/dev/null | grep -q PNG"
}

# markup in a profile's strings is text, never markup
ht_crafted_group() {
	local tool=$TMP/ht_craft
	if ! ${CC:-cc} -O2 -std=gnu11 -D_GNU_SOURCE -I"$TOP/analysis" -x c - -x none \
		"$TOP"/build/analysis/*/*.o -lgsl -lgslcblas -lm -o "$tool" 2>"$tool.err" <<'EOF'
#include "profile/profile.h"
int main(int argc, char **argv)
{
	struct sb_profile *p = sb_profile_alloc();
	struct sb_thread_time t[2] = { { 1, 100, 900, 1000 }, { 2, 900, 100, 1000 } };
	struct sb_loc l = { .addr = 0x401000, .binary = -1, .line = 7,
			    .function = "<script>alert(1)</script>", .file = "x\"'&.c" };
	struct sb_section s = { .kind = SB_SECT_BARRIER, .loc = 0, .ninstances = 1,
				.nthreads = 2, .per_thread = t, .lost_ns = 800 };
	struct sb_instance in = { .section = 0, .start_ns = 10, .end_ns = 1010,
				  .nthreads = 2, .per_thread = t };
	struct sb_thread th = { .tid = 1, .comm = "<b>x</b>", .start_ns = 0, .end_ns = 2000 };
	(void)argc;
	sb_profile_meta_set(p, "executable", "/tmp/<img src=x onerror=alert(1)>");
	sb_profile_add_thread(p, &th);
	sb_profile_add_loc(p, &l);
	sb_profile_add_section(p, &s);
	sb_profile_add_instance(p, &in);
	return sb_profile_write(p, argv[1], 0, 0) ? 1 : 0;
}
EOF
	then
		bad "html: build the crafted profile's writer"
		cat "$tool.err"
		return
	fi
	if "$tool" "$TMP/ht_craft.sbp" &&
		"$SB" report -i "$TMP/ht_craft.sbp" --format html -o "$TMP/ht_craft.html"; then
		check "html: markup in a profile's strings is text (no <script>, no <img>)" \
			bash -c "! grep -qi '<script\|<img' '$TMP/ht_craft.html' &&
				 grep -q '&lt;script&gt;alert(1)&lt;/script&gt;' '$TMP/ht_craft.html'"
		check "html: the crafted page still parses" bash -c \
			"set -o pipefail; '$HT_PY' '$TOP/tests/tools/html_check.py' '$TMP/ht_craft.html' | jq -e '.problems == [] and .sections == 1' >/dev/null"
	else
		bad "html: the crafted profile's page"
	fi
	if "$SB" record -q -o "$TMP/ht_true.sbp" -- /bin/true 2>/dev/null &&
		"$SB" report -i "$TMP/ht_true.sbp" --format html -o "$TMP/ht_true.html"; then
		check "html: a profile with nothing in it: a valid page, its panels 'not recorded'" \
			bash -c "set -o pipefail; '$HT_PY' '$TOP/tests/tools/html_check.py' '$TMP/ht_true.html' | jq -e '.problems == [] and (.text | contains(\"not recorded\"))' >/dev/null"
	else
		bad "html: an empty profile's page"
	fi
}

if wl_built gcc demo; then
	timed_group "html (demo)" ht_group
	[ -s "$TMP/ht_demo.html" ] && ht_firefox_group
fi
ht_crafted_group
