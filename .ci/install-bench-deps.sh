#!/bin/sh
# Installs the Debian packages `make bench` needs beyond the build's, when
# missing.  Called by tests/bench.sh at its start; `make check` does not need
# them, so they stay out of .ci/install-deps.sh.
# linux-perf: the peers scalebpf is compared with side by side
# (`perf record -F 199 -g`, `perf sched record`).
set -e
PKGS="linux-perf"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "scalebpf: installing missing Debian packages for make bench:$missing" >&2
if [ "$(id -u)" != 0 ]; then
	echo "error: bench packages missing ($missing) and not root: run 'sudo sh .ci/install-bench-deps.sh' or install them" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >&2
