#!/bin/sh
# The layout rules of README "Architecture", checked on every `make check`:
#   - modules (a folder: analysis/<m>, user/<m>, user itself) include and
#     call each other without circles;
#   - nothing in analysis/ includes user/;
#   - no source file is over 600 lines.
# Includes come from the sources, calls from the objects' symbol tables
# (nm: which object defines what another one uses).  Usage:
#   layout.sh BUILD_DIR    (objects under BUILD_DIR/analysis, BUILD_DIR/user)
# Prints each violation and exits 1, or prints one "layout: ok" line.
build=${1:-build}
cd "$(dirname "$0")/../.." || exit 1
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0

srcs=$(find analysis user -name '*.[ch]' ! -path 'user/rt/*' | sort)

# Module of a path: its folder (user/rt is the target-side runtime, apart).
for f in $srcs; do
	n=$(wc -l < "$f")
	if [ "$n" -gt 600 ]; then
		echo "layout: $f has $n lines (the limit is 600: split it by stage)"
		fail=1
	fi
done
# The BPF side too (record.bpf.c, its bpf/*.bpf.h parts): not a module.
for f in $(find tests bpf -name '*.[ch]' | sort); do
	n=$(wc -l < "$f")
	if [ "$n" -gt 600 ]; then
		echo "layout: $f has $n lines (the limit is 600)"
		fail=1
	fi
done

# Include edges: "#include "m/x.h"" names module analysis/m or user/m; a
# bare name is the including file's own folder (or include/, no module).
for f in $srcs; do
	from=$(dirname "$f")
	sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f" | while read -r h; do
		case $h in
		*/*) m=${h%/*}
		     if [ -e "analysis/$h" ]; then echo "$from analysis/$m $f"
		     elif [ -e "user/$h" ]; then echo "$from user/$m $f"; fi ;;
		*)   [ -e "$from/$h" ] || [ -e "user/$h" ] && [ "$from" != user ] && [ ! -e "$from/$h" ] &&
			echo "$from user $f" ;;
		esac
	done
done > "$tmp/edges"
if grep -E '^analysis/[^ ]+ user' "$tmp/edges"; then
	echo "layout: the files above in analysis/ include user/ headers"
	fail=1
fi

# Call edges from the objects: defined symbols -> their object's module.
objs=$(find "$build/analysis" "$build/user" -name '*.o' 2>/dev/null | sort)
if [ -z "$objs" ]; then
	echo "layout: no objects under $build (build first)"
	exit 1
fi
for o in $objs; do
	m=$(dirname "${o#"$build"/}")
	nm --defined-only -g "$o" | awk -v m="$m" -v o="$o" 'NF == 3 { print $3, m, o }'
done | sort > "$tmp/defs"
for o in $objs; do
	m=$(dirname "${o#"$build"/}")
	nm -u "$o" | awk -v m="$m" -v o="$o" '{ print $NF, m, o }'
done | sort > "$tmp/uses"
join "$tmp/uses" "$tmp/defs" | awk '$2 != $4 { print $2, $4, $3 }' >> "$tmp/edges"

# Circles: an edge a -> b where b reaches a again.
awk '$1 != $2 { if (!(($1 " " $2) in e)) { e[$1 " " $2] = $3; out[$1] = out[$1] " " $2 } }
END {
	for (a in out) {
		delete seen; n = split(out[a], q, " "); head = 1
		for (i = 1; i <= n; i++) seen[q[i]] = 1
		while (head <= n) {
			k = split(out[q[head++]], nx, " ")
			for (j = 1; j <= k; j++)
				if (!(nx[j] in seen)) { seen[nx[j]] = 1; q[++n] = nx[j] }
		}
		for (b in seen) reach[a " " b] = 1
	}
	for (k in e) {
		split(k, p, " ")
		if ((p[2] " " p[1]) in reach)
			print "layout: circle: " p[1] " -> " p[2] " (" e[k] ") and back"
	}
}' "$tmp/edges" > "$tmp/circles"
if [ -s "$tmp/circles" ]; then
	sort -u "$tmp/circles"
	fail=1
fi
[ $fail -eq 0 ] && echo "layout: ok ($(echo "$srcs" | wc -l) files, $(cut -d' ' -f1,2 "$tmp/edges" | awk '$1 != $2' | sort -u | wc -l) module dependencies, no circles)"
exit $fail
