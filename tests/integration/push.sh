# `record --push URL` (issue 17) against a local stand-in for the stores
# (tests/tools/push_stub.py): what arrives is decoded with Google's
# protobuf runtime (tests/tools/pprof_totals.py) and its wait per
# primitive compared with the JSON report of the profile written.
#   - Pyroscope: POST /ingest, name APP{host,comm,pid}, from/until, the
#     pprof as the multipart part "profile";
#   - Parca: POST /profiles/writeraw, labels __name__, comm, host, pid, the
#     pprof in base64;
#   - a store that answers 503 twice: the third attempt lands (backoff 1 s,
#     2 s), said with its attempts;
#   - a store that is down: the recording and its file are whole, exit 0,
#     the warning says what was not pushed, within --push-wait;
#   - a store that comes up late: retried until it is there;
#   - with --rotate: one pprof per interval arrives, though the store
#     refused the first two;
#   - bad URLs and --push-wait values refused before anything records.
PS_PY=/usr/bin/python3
[ -x "$PS_PY" ] || PS_PY=python3

# a port nobody listens on now
free_port() {
	"$PS_PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# stub_up DIR PORT [ARGS]: the stand-in, listening before it returns
stub_up() {
	local dir=$1 port=$2
	shift 2
	mkdir -p "$dir"
	"$PS_PY" "$TOP/tests/tools/push_stub.py" --port "$port" --out "$dir" "$@" >"$dir/log" 2>&1 &
	STUB_PID=$!
	for _ in $(seq 50); do
		grep -q listening "$dir/log" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

stub_down() {
	kill "$STUB_PID" 2>/dev/null
	wait "$STUB_PID" 2>/dev/null
}

# sent_waits DESC PPROF JSON: the pprof a store received decodes, and its
# wait per primitive is the profile's (its JSON report)
sent_waits() {
	if "$PS_PY" "$TOP/tests/tools/pprof_totals.py" "$d/pb" "$2" >"$2.pt" 2>"$d/pt.err"; then
		exq "$1: the pprof sent has the profile's wait per primitive" "$2.pt" "$3" \
			'.problems == [] and ([.by_label.wait.primitive | to_entries[] | [.key, .value]] | sort) == ([$r[0].waits[] | [.primitive, .wait_ns]] | sort)'
	else
		bad "$1: the pprof sent decodes"
		cat "$d/pt.err"
	fi
}

push_group() {
	local d=$TMP/push port rc t0 t1 wl
	wl=$(wl gcc barrier_ratio)
	mkdir -p "$d/pb"
	if ! protoc --python_out="$d/pb" -I "$TOP/tests/tools" "$TOP/tests/tools/profile.proto" 2>"$d/protoc.err"; then
		bad "push: protoc cannot compile profile.proto"
		return
	fi

	# Pyroscope
	port=$(free_port)
	if stub_up "$d/pyro" "$port"; then
		"$SB" record --push "http://127.0.0.1:$port" -o "$d/pyro.sbp" -- "$wl" 4 20 2000 \
			>/dev/null 2>"$d/pyro.err"
		rc=$?
		stub_down
		"$SB" report -i "$d/pyro.sbp" --format json >"$d/pyro.json" 2>/dev/null
		check "push pyroscope: recorded (rc=$rc), one request, understood" bash -c \
			"[ $rc -eq 0 ] && [ -f '$d/pyro/0.json' ] && [ ! -f '$d/pyro/1.json' ] && jq -e '.ok and .answered == 200' '$d/pyro/0.json' >/dev/null"
		local pid
		pid=$(jq -r .meta.pid "$d/pyro.json" 2>/dev/null)
		jqcheck "push pyroscope: /ingest, name barrier_ratio{host,comm,pid $pid}, from <= until, format pprof" "$d/pyro/0.json" \
			".path == \"/ingest\" and (.query.name | test(\"^barrier_ratio[{]host=[^,]+,comm=barrier_ratio,pid=$pid[}]\$\")) and (.query.from | tonumber) <= (.query.until | tonumber) and .query.format == \"pprof\""
		sent_waits "push pyroscope" "$d/pyro/0.pb.gz" "$d/pyro.json"
		check "push pyroscope: said on stderr" grep -q "pushed 1 profile to http://127.0.0.1:$port (1 attempt)" "$d/pyro.err"
	else
		bad "push: the stand-in store did not start"
		cat "$d/pyro/log"
	fi

	# Parca, with an application name
	port=$(free_port)
	if stub_up "$d/parca" "$port"; then
		"$SB" record -q --push "http://127.0.0.1:$port/profiles/writeraw" --push-app mysvc \
			-o "$d/parca.sbp" -- "$wl" 4 20 2000 >/dev/null 2>&1
		rc=$?
		stub_down
		"$SB" report -i "$d/parca.sbp" --format json >"$d/parca.json" 2>/dev/null
		jqcheck "push parca: /profiles/writeraw, labels __name__=mysvc, comm, host, pid (rc=$rc)" "$d/parca/0.json" \
			'.ok and .path == "/profiles/writeraw" and .labels.__name__ == "mysvc" and .labels.comm == "barrier_ratio" and (.labels.host | length) > 0 and (.labels.pid | test("^[0-9]+$"))'
		sent_waits "push parca" "$d/parca/0.pb.gz" "$d/parca.json"
	fi

	# a store that is busy twice: retried with backoff
	port=$(free_port)
	if stub_up "$d/busy" "$port" --fail-first 2; then
		t0=$(date +%s%N)
		"$SB" record --push "http://127.0.0.1:$port" -o "$d/busy.sbp" -- "$wl" 4 20 2000 \
			>/dev/null 2>"$d/busy.err"
		rc=$?
		t1=$(date +%s%N)
		stub_down
		check "push to a store answering 503 twice: the third attempt lands (rc=$rc)" bash -c \
			"[ $rc -eq 0 ] && jq -e '.answered == 503' '$d/busy/0.json' '$d/busy/1.json' >/dev/null && jq -e '.answered == 200' '$d/busy/2.json' >/dev/null && [ ! -f '$d/busy/3.json' ]"
		check "push to a busy store: said with its attempts" grep -q "pushed 1 profile to .* (3 attempts)" "$d/busy.err"
	fi

	# a store that is down
	port=$(free_port)
	t0=$(date +%s%N)
	"$SB" record --push "http://127.0.0.1:$port" --push-wait 2 -o "$d/down.sbp" -- "$wl" 4 20 2000 \
		>/dev/null 2>"$d/down.err"
	rc=$?
	t1=$(date +%s%N)
	check "push to a store that is down: exit 0, the profile whole (rc=$rc)" bash -c \
		"[ $rc -eq 0 ] && '$SB' report -i '$d/down.sbp' --format json | jq -e '.sections | length > 0' >/dev/null"
	check "push to a store that is down: the warning says 0 of 1 pushed and why" \
		grep -q "warning: --push: 0 of 1 profiles pushed .* 1 not .*the last: .*onnect" "$d/down.err"
	check "push to a store that is down: the wait is bounded ($(( (t1 - t0) / 1000000 )) ms, --push-wait 2)" \
		test $(( (t1 - t0) / 1000000 )) -lt 20000

	# a store that comes up late (2.5 s after the recording starts)
	port=$(free_port)
	( sleep 2.5; exec "$PS_PY" "$TOP/tests/tools/push_stub.py" --port "$port" --out "$d/late" >/dev/null 2>&1 ) &
	local late=$!
	mkdir -p "$d/late"
	"$SB" record --push "http://127.0.0.1:$port" --push-wait 15 -o "$d/late.sbp" -- "$wl" 4 10 1000 \
		>/dev/null 2>"$d/late.err"
	rc=$?
	pkill -f "push_stub.py --port $port" 2>/dev/null
	wait "$late" 2>/dev/null
	check "push to a store that comes up late: retried until it lands (rc=$rc)" bash -c \
		"[ $rc -eq 0 ] && jq -e '.ok and .answered == 200' '$d/late/0.json' >/dev/null && grep -q 'pushed 1 profile' '$d/late.err'"

	# a rotation: a pprof per interval, through a store that fails twice
	port=$(free_port)
	if stub_up "$d/rot" "$port" --fail-first 2; then
		"$SB" record -q --rotate 1 -o "$d/rotdir" --push "http://127.0.0.1:$port" --push-wait 20 \
			-- "$wl" 4 150 3000 >/dev/null 2>"$d/rot.err"
		rc=$?
		stub_down
		local files got
		files=$(ls "$d/rotdir" | wc -l)
		got=$(cat "$d/rot"/*.json 2>/dev/null | jq -s '[.[] | select(.ok and .answered == 200)] | length')
		check "push with --rotate: every interval's pprof arrives, after 2 refusals ($got of $files, rc=$rc)" \
			bash -c "[ $rc -eq 0 ] && [ $files -ge 3 ] && [ '$got' = $files ]"
	fi

	# bad input, refused before recording
	"$SB" record --push ftp://example.org -o "$d/bad.sbp" -- /bin/true >"$d/bad1" 2>&1
	rc=$?
	check "push: an ftp:// URL is refused (rc=$rc)" bash -c "[ $rc -eq 2 ] && grep -q 'not an http:// or https:// URL' '$d/bad1' && [ ! -e '$d/bad.sbp' ]"
	"$SB" record --push http://127.0.0.1:9/upload -o "$d/bad.sbp" -- /bin/true >"$d/bad2" 2>&1
	rc=$?
	check "push: a path that is no store's is refused (rc=$rc)" bash -c "[ $rc -eq 2 ] && grep -q 'neither Pyroscope' '$d/bad2'"
	"$SB" record --push http://127.0.0.1:9 --push-wait -1 -o "$d/bad.sbp" -- /bin/true >"$d/bad3" 2>&1
	rc=$?
	check "push: --push-wait -1 is refused (rc=$rc)" bash -c "[ $rc -eq 2 ] && grep -q 'invalid --push-wait' '$d/bad3'"
}
push_group
