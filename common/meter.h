/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Throughput of a growing byte counter over the last few seconds, from
 * samples of it taken about once a second (what `vtlctl status` shows as a
 * drive's MB/s). No clock inside: callers pass the time, so tests can too.
 */
#ifndef VTL_COMMON_METER_H
#define VTL_COMMON_METER_H

#include <stdint.h>

#define METER_SAMPLES 6 /* the rate spans the last 5 intervals */

struct meter {
	uint64_t t_ms[METER_SAMPLES];
	uint64_t value[METER_SAMPLES];
	unsigned n, head; /* samples kept; index of the oldest */
};

/* Records value at time t_ms (not earlier than the last sample); a value below the last one starts afresh. */
void meter_sample(struct meter *m, uint64_t t_ms, uint64_t value);

/* Bytes per second between the oldest and newest sample kept; 0 with fewer than two samples. */
double meter_rate(const struct meter *m);

/* Milliseconds since the last sample (UINT64_MAX when there is none) at time t_ms. */
uint64_t meter_age(const struct meter *m, uint64_t t_ms);

#endif
