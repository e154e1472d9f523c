/* SPDX-License-Identifier: Apache-2.0 */
#include "common/meter.h"

static unsigned newest(const struct meter *m)
{
	return (m->head + m->n - 1) % METER_SAMPLES;
}

void meter_sample(struct meter *m, uint64_t t_ms, uint64_t value)
{
	/* A counter that went back (a new cartridge loaded) or a clock that did: the old samples mean nothing. */
	if (m->n && (value < m->value[newest(m)] || t_ms < m->t_ms[newest(m)]))
		m->n = m->head = 0;
	if (m->n == METER_SAMPLES) {
		m->head = (m->head + 1) % METER_SAMPLES;
		m->n--;
	}
	unsigned at = (m->head + m->n) % METER_SAMPLES;
	m->t_ms[at] = t_ms;
	m->value[at] = value;
	m->n++;
}

double meter_rate(const struct meter *m)
{
	if (m->n < 2)
		return 0;
	unsigned last = newest(m);
	uint64_t dt = m->t_ms[last] - m->t_ms[m->head];
	if (dt == 0)
		return 0;
	return (double)(m->value[last] - m->value[m->head]) * 1000.0 / (double)dt;
}

uint64_t meter_age(const struct meter *m, uint64_t t_ms)
{
	return m->n ? t_ms - m->t_ms[newest(m)] : UINT64_MAX;
}
