#!/bin/sh
# Installs the Debian packages scalebpf builds and tests with, when missing.
# Called by the Makefile (stamp build/.deps-ok) so that a fresh Debian 12
# machine needs only `make demo` / `make check`.
set -e
# libclang-rt-14-dev: clang's ASan/UBSan runtimes for the sanitizer builds of
# clang-built workloads, and libFuzzer's (-fsanitize=fuzzer) for the profile
# reader's fuzz target (tests/fuzz/, run by make check and make fuzz); only a
# Recommends of clang, so --no-install-recommends below would leave it out.
# g++: the C++ test workloads (tests/workloads/*.cc); libstdc++-12-dev:
# -lstdc++ for __cxa_demangle (C++ names), also a dependency of clang-14.
# procps (pgrep) and strace: the integration tests find a launcher's child
# with pgrep and count the report's opens with strace; a minimal Debian 12
# root has neither, and a missing pgrep made a check pass without looking.
# protobuf-compiler and python3-protobuf: the tests decode `report --format
# pprof` against profile.proto with Google's own protobuf runtime;
# chromium: they render `report --format html` in a real browser.
# libcurl4-openssl-dev: `record --push` posts profiles over HTTP(S).
DEFAULT_PKGS="clang llvm libbpf-dev bpftool libelf-dev libdw-dev zlib1g-dev libcapstone-dev
libgsl-dev libhwloc-dev libpfm4-dev libomp-dev jq pkg-config make gcc
libclang-rt-14-dev g++ libstdc++-12-dev procps strace protobuf-compiler python3-protobuf
chromium libcurl4-openssl-dev"
# Arguments: other packages instead (.ci/install-bench-deps.sh).
PKGS=${*:-$DEFAULT_PKGS}
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "scalebpf: installing missing Debian packages:$missing" >&2
if [ "$(id -u)" != 0 ]; then
	hint="sudo sh $0 $*"
	[ $# -eq 0 ] && hint="sudo make deps"
	echo "error: packages missing ($missing) and not root: run '$hint' or install them" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >&2
