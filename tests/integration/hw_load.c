// SPDX-License-Identifier: MIT
/*
 * Loads bpf/hwsample.bpf.c with record's loader (user/hw/hwsample.c) into a
 * ring buffer of its own, and says whether both programs passed the
 * verifier.  Attaching needs a PMU; loading does not, so this runs here.
 * Exit 0 when both loaded, 1 with the loader's message otherwise.
 */
#include <stdio.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "hw/hwsample.h"

int main(void)
{
	struct sb_hw *h = NULL;
	char err[512] = "";
	int rb, lbr = -1, load = -1, store = -1, ret;

	rb = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "sb_hw_test", 0, 0, 1 << 16, NULL);
	if (rb < 0) {
		perror("hw_load: cannot create a ring buffer");
		return 1;
	}
	ret = sb_hw_load(&h, getpid(), rb, 1 << 14, err, sizeof(err));
	if (ret || sb_hw_prog_fds(h, &lbr, &load, &store)) {
		fprintf(stderr, "hw_load: %s\n", ret ? err : "a program has no fd");
		sb_hw_close(h);
		close(rb);
		return 1;
	}
	printf("hw_load: on_lbr fd %d, on_load fd %d, on_store fd %d: all loaded\n", lbr, load,
	       store);
	sb_hw_close(h);
	close(rb);
	return 0;
}
