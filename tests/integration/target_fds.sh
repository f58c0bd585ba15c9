# The command starts with the descriptors it was given, no more: nothing
# the recorder holds (BPF objects, /sys/kernel/btf/vmlinux that libbpf
# opens without O_CLOEXEC, pipes) may leak into it.  A leak from the BPF
# load thread depends on when it opens a file against the fork: 20 runs,
# the fork delayed by a longer search of PATH in each (an entry whose "ls"
# is a directory costs an access, a realpath and a stat, then is passed
# over), from nothing to tens of milliseconds: with the load started
# before the fork, most of them inherited the vmlinux file.

# fd_list FILE: "FD TARGET" lines of `ls -l /proc/self/fd` output in FILE,
# without ls's own descriptor for the directory it lists.
fd_list() {
	awk '$(NF-1) == "->" && $NF !~ /^\/proc\/[0-9]+\/fd$/ { print $(NF-2), $NF }' "$1"
}

target_fds_group() {
	local i want got stray=0 ran=0 slow=""
	mkdir -p "$TMP/pathdir/ls"
	/bin/ls -l /proc/self/fd >"$TMP/fds.plain" 2>/dev/null </dev/null
	want=$(fd_list "$TMP/fds.plain" | cut -d' ' -f1 | tr '\n' ' ')
	for i in $(seq 20); do
		slow+=$(printf "$TMP/pathdir:%.0s" $(seq 100))
		if ! PATH=$slow/bin:/usr/bin "$SB" record -q -o "$TMP/fds.sbp" -- ls -l /proc/self/fd \
			>"$TMP/fds.$i" 2>"$TMP/fds.err" </dev/null; then
			echo "     record failed (run $i):"
			cat "$TMP/fds.err"
			continue
		fi
		ran=$((ran + 1))
		got=$(fd_list "$TMP/fds.$i" | cut -d' ' -f1 | tr '\n' ' ')
		if [ "$got" != "$want" ]; then
			stray=$((stray + 1))
			echo "     run $i: descriptors '$got', plain '$want':"
			fd_list "$TMP/fds.$i" | sed 's/^/       /'
		fi
	done
	check "recorded command: 20 runs recorded" test "$ran" -eq 20
	check "recorded command: only the descriptors it was given, in every run ($stray of $ran had more)" \
		test "$stray" -eq 0
}
target_fds_group
