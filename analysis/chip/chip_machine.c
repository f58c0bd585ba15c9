// SPDX-License-Identifier: MIT
/* The machine model's effective cache capacity (chip.h). */
#include "chip.h"

uint64_t sb_chip_effective_capacity(const uint64_t *ws_bytes, const double *latency_ns,
				    size_t n)
{
	double dram;

	if (n < 3)
		return 0;
	dram = latency_ns[n - 1];
	for (size_t i = 0; i < n; i++)
		if (latency_ns[i] > dram / 2)
			return i ? ws_bytes[i - 1] : 0;
	return ws_bytes[n - 1];
}
