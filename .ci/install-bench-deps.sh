#!/bin/sh
# Installs the Debian packages `make bench` needs beyond the build's, when
# missing.  Called by tests/bench.sh at its start; `make check` does not need
# them, so they stay out of .ci/install-deps.sh's default list.
# linux-perf: the peers scalebpf is compared with side by side
# (`perf record -F 199 -g`, `perf sched record`).
exec sh "$(dirname "$0")/install-deps.sh" linux-perf
