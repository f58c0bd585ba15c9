# A binary whose .gnu_debuglink names a FIFO next to it (or whose debug
# file is a symlink to /dev/zero): record and report must not block
# opening or CRC-reading it; the debug file is only missing (no lines).
DF=$TMP/debuglink_fifo
mkdir -p "$DF"
cat >"$DF/prog.c" <<'CEOF'
#include <pthread.h>
static void *work(void *a) { volatile unsigned long s = 0; for (unsigned long i = 0; i < 20000000UL; i++) s += i; return a; }
int main(void) { pthread_t t[2]; for (int i = 0; i < 2; i++) pthread_create(&t[i], 0, work, 0); for (int i = 0; i < 2; i++) pthread_join(t[i], 0); return 0; }
CEOF
if gcc -O2 -g -pthread -o "$DF/prog" "$DF/prog.c" &&
   objcopy --only-keep-debug "$DF/prog" "$DF/x.debug" &&
   objcopy --strip-debug --add-gnu-debuglink="$DF/x.debug" "$DF/prog"; then
	for kind in fifo devzero; do
		rm -f "$DF/x.debug" "$DF/run.sbp"
		if [ $kind = fifo ]; then mkfifo "$DF/x.debug"; else ln -s /dev/zero "$DF/x.debug"; fi
		(cd "$DF" && timeout -k 3 20 "$SB" record -o run.sbp -- ./prog >"$DF/rec.out" 2>&1)
		check "debuglink $kind: record finishes" test $? -eq 0
		timeout -k 3 20 "$SB" report -i "$DF/run.sbp" >"$DF/rep.out" 2>&1
		check "debuglink $kind: report finishes" test $? -eq 0
	done
else
	bad "debuglink_fifo: cannot build the test program"
fi
