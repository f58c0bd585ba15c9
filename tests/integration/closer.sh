# The link closer (user/record/link_closer.h): record hands the uprobe
# links of ended processes to a short-lived process of its own, started
# as `scalebpf --link-closer FD`, which closes them (waiting the kernel's
# grace periods) after record has returned.  Checked: it ends by itself
# and leaves no probe loaded, even when record is killed; its command
# line is its own (not record's, which holds the target's arguments: a
# `pgrep -f`/`pkill -f` of the target must not find it); it holds no
# descriptor or directory of record's; SCALEBPF_SYNC_DETACH=1 starts none.
#
# Other recorders may run on this machine at the same time and load
# programs of the same names (probe_enter, on_switch), so "our programs
# are gone" is not "no probe_enter in bpftool prog show".  The target is
# a wrapper (below) that, before it execs the workload, writes the ids of
# the programs and links record holds (the prog_id: and link_id: lines
# of /proc/RECORD/fdinfo, its program and link fds), bpftool's list (for
# their names) and record's children with their cwd, descriptors and
# command lines.  BPF ids are never reused, so "gone" is "none of those
# ids loaded".  A link's id goes when its last fd is closed (the probes
# are out then); its program follows a grace period later (the kernel
# defers the link's free), so "at once" is checked on links.

closer_wrap=$TMP/closer_wrap.sh
cat >"$closer_wrap" <<'EOF'
#!/bin/sh
# closer_wrap.sh DIR CMD...: notes record's programs and children in DIR
d=$1
shift
r=$PPID
echo $$ >"$d/tpid"
grep -h '^prog_id:' /proc/$r/fdinfo/* 2>/dev/null | awk '{ print $2 }' | sort -u >"$d/ids"
grep -h '^link_id:' /proc/$r/fdinfo/* 2>/dev/null | awk '{ print $2 }' | sort -u >"$d/lids"
bpftool -j prog show >"$d/progs" 2>/dev/null
for k in $(cat /proc/$r/task/*/children); do
	[ "$k" = $$ ] && continue
	printf '%s %s %s\n' "$k" "$(readlink /proc/$k/cwd)" "$(tr '\0' ' ' </proc/$k/cmdline)"
	ls -l /proc/$k/fd/ 2>/dev/null | awk 'NR > 1 { print $NF }' >"$d/fds.$k"
done >"$d/kids"
touch "$d/ready"
exec "$@"
EOF

# closer_named DIR NAME: the ids record held of programs named NAME.
closer_named() {
	jq -r --arg n "$2" '.[] | select(.name == $n) | .id' "$1/progs" | sort -u |
		comm -12 - "$1/ids"
}

# closer_loaded DIR: the ids record held that are loaded now.
closer_loaded() {
	bpftool -j prog show | jq -r '.[].id' | sort -u | comm -12 - "$1/ids"
}

# closer_links DIR: the link ids record held that exist now.
closer_links() {
	bpftool -j link show | jq -r '.[].id' | sort -u | comm -12 - "$1/lids"
}

# closer_pid DIR: the closer record started (its command line, noted).
closer_pid() {
	awk '$3 == "scalebpf" && $4 == "--link-closer" { print $1 }' "$1/kids"
}

# closer_alive PID: that process still runs as a closer.  An exited
# closer waits, a zombie, for init to reap it (here: ~1.7 s); its
# cmdline is empty then, as for pgrep -f, and it holds nothing.
closer_alive() {
	[ -n "$1" ] && tr '\0' ' ' </proc/"$1"/cmdline 2>/dev/null | grep -q -- '--link-closer'
}

# closer_within T0_NS SECONDS CMD...: CMD succeeds before T0 + SECONDS.
closer_within() {
	local end=$(($1 + $2 * 1000000000))
	shift 2
	while :; do
		"$@" && return 0
		[ "$(date +%s%N)" -lt "$end" ] || return 1
		sleep 0.05
	done
}
closer_none_loaded() { [ -z "$(closer_loaded "$1")$(closer_links "$1")" ]; }
closer_gone() { ! closer_alive "$1"; }

# The workload with its own arguments: a pgrep -f of them is ours alone.
closer_args="4 20 2003"

closer_after_return() {
	local d=$TMP/closer1 t0 cp pe
	mkdir -p "$d"
	# run from a directory of our own: the closer must not keep it
	if ! (cd "$d" && "$SB" record -q -o "$d/r.sbp" -- \
		sh "$closer_wrap" "$d" "$WL/barrier_ratio" $closer_args >"$d/out" 2>&1); then
		bad "closer: record -- barrier_ratio $closer_args"
		cat "$d/out"
		return
	fi
	t0=$(date +%s%N)
	cp=$(closer_pid "$d")
	pe=$(closer_named "$d" probe_enter)
	check "closer: record held probe_enter and on_switch (known by id)" \
		test -n "$pe" -a -n "$(closer_named "$d" on_switch)"
	check "closer: no child of record but the target has the target's arguments" \
		bash -c "! grep -e barrier_ratio -e '$closer_args' '$d/kids'"
	check "closer: started, as 'scalebpf --link-closer FD'" test -n "$cp"
	[ -n "$cp" ] || { cat "$d/kids"; return; }
	check "closer: pgrep -f of the target's command line does not find it" \
		bash -c "! pgrep -f 'barrier_ratio $closer_args' | grep -qx '$cp'"
	check "closer: its cwd is /, not record's" grep -q "^$cp / " "$d/kids"
	check "closer: holds only its socket and links, nothing of record's" \
		bash -c "! grep -v -e '^socket:' -e '^anon_inode:bpf_link' '$d/fds.$cp'"
	check "closer: within 2 s of record's return, none of record's programs or links is loaded" \
		closer_within "$t0" 2 closer_none_loaded "$d"
	check "closer: within 2 s of record's return, the closer has exited" \
		closer_within "$t0" 2 closer_gone "$cp"
}
timed_group "closer: after record returns" closer_after_return

# record killed (SIGKILL) mid-run: the closer sees its socket's end and
# exits; record's links go with record's descriptors.
closer_killed() {
	local d=$TMP/closer2 rp cp tp t0 i
	mkdir -p "$d"
	"$SB" record -q -o "$d/r.sbp" -- \
		sh "$closer_wrap" "$d" "$WL/barrier_ratio" 4 100000 3000 >"$d/out" 2>&1 &
	rp=$!
	for i in $(seq 600); do
		[ -e "$d/ready" ] && break
		kill -0 "$rp" 2>/dev/null || break
		sleep 0.05
	done
	if [ ! -e "$d/ready" ]; then
		bad "closer: record -- barrier_ratio 4 100000 3000 did not start the target"
		kill -9 "$rp" 2>/dev/null
		cat "$d/out"
		return
	fi
	sleep 0.3
	cp=$(closer_pid "$d")
	tp=$(cat "$d/tpid")
	kill -9 "$rp"
	wait "$rp" 2>/dev/null
	t0=$(date +%s%N)
	# the workload (4 busy threads) is not ours to leave running
	tr '\0' ' ' </proc/"$tp"/cmdline 2>/dev/null | grep -q barrier_ratio && kill -9 "$tp"
	check "closer: started by the killed record" test -n "$cp"
	check "closer: record held probe_enter (known by id)" test -n "$(closer_named "$d" probe_enter)"
	check "closer: within 3 s of record's SIGKILL, none of its programs or links is loaded" \
		closer_within "$t0" 3 closer_none_loaded "$d"
	check "closer: within 3 s of record's SIGKILL, the closer has exited" \
		closer_within "$t0" 3 closer_gone "$cp"
}
timed_group "closer: record killed" closer_killed

# SCALEBPF_SYNC_DETACH=1: record removes every probe before it returns.
closer_sync() {
	local d=$TMP/closer3 left t0 tp
	mkdir -p "$d"
	if ! SCALEBPF_SYNC_DETACH=1 "$SB" record -q -o "$d/r.sbp" -- \
		sh "$closer_wrap" "$d" "$WL/barrier_ratio" $closer_args >"$d/out" 2>&1; then
		bad "closer: SCALEBPF_SYNC_DETACH=1 record"
		cat "$d/out"
		return
	fi
	left=$(closer_links "$d")
	t0=$(date +%s%N)
	tp=$(cat "$d/tpid")
	check "closer: SCALEBPF_SYNC_DETACH=1: record held probe_enter and links (known by id)" \
		test -n "$(closer_named "$d" probe_enter)" -a -s "$d/lids"
	check "closer: SCALEBPF_SYNC_DETACH=1: none of record's links exists when it returns${left:+ (left: $left)}" \
		test -z "$left"
	check "closer: SCALEBPF_SYNC_DETACH=1: its programs follow within a second (kernel's deferred free)" \
		closer_within "$t0" 1 closer_none_loaded "$d"
	check "closer: SCALEBPF_SYNC_DETACH=1: no closer started (record's only child is the target)" \
		bash -c "! grep -v '^$tp ' '$d/kids' | grep -q ."
}
timed_group "closer: SCALEBPF_SYNC_DETACH" closer_sync

# Not a user command: refused unless its FD is record's kind of socket.
expect_fail "closer: 'scalebpf --link-closer' without FD is refused" "not a command" \
	"$SB" --link-closer
expect_fail "closer: 'scalebpf --link-closer 3' on a file is refused" "not a command" \
	bash -c "exec '$SB' --link-closer 3 3</dev/null"
# A stream socket as fd 3: a few lines of C (no python3 on a fresh Debian).
cat >"$TMP/stream_fd3.c" <<'EOF_C'
#include <sys/socket.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	int sv[2];

	/* sv[0] closed: a closer that took the fd would see its end at once */
	if (argc < 2 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) || dup2(sv[1], 3) != 3 ||
	    close(sv[0]))
		return 2;
	execv(argv[1], (char *[]){ "scalebpf", "--link-closer", "3", 0 });
	return 2;
}
EOF_C
if gcc -O1 -o "$TMP/stream_fd3" "$TMP/stream_fd3.c"; then
	expect_fail "closer: 'scalebpf --link-closer 3' on a stream socket is refused" "not a command" \
		"$TMP/stream_fd3" "$SB"
else
	bad "closer: the stream-socket helper does not build"
fi
