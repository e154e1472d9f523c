/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Host ingest first: the rule by which the hosts' traffic and the copies'
 * pool reads share the disk pool (docs/migrator.md, "Host ingest first").
 * vtld tells the migrator about once a second how many MB/s its hosts move
 * through the drives (the `ingest` hint); while they move any, the copies
 * together read at most a budget, shared among them so that each keeps at
 * least its floor. A report older than INGEST_STALE_MS counts as none: a
 * vtld that stopped or died does not hold the copies back. No clock inside:
 * callers pass the time.
 *
 * The budget is either what is left of a constant [migrator] pool_rate
 * (pool_rate - hosts), or, with pool_rate = auto, what the probe below
 * finds: the pool's rate moves (a virtual disk's by 4x within minutes), so
 * no constant holds.
 *
 * The floor. A tape drive matches its speed to the data only down to its
 * lowest matched speed; fed slower it stops and repositions (back-hitches),
 * which wears drive and tape and is slower than finishing the copy at full
 * speed. So a copy's floor is never below its drive's lowest matched speed
 * (phys_lto_min_matched_mbs, or the simulated drive's own model) with
 * INGEST_FLOOR_MARGIN above it, nor below the operator's [migrator]
 * copy_floor. When the floors together exceed the
 * budget, every running copy keeps its floor and the hosts lose that much:
 * a running copy is never stopped by the rule (a stopped copy starts again
 * from its start: what it wrote is lost, and its drive's load and locate are
 * paid twice); the operator's means to give the hosts more are fewer drives
 * ([migrator] drives) or a window rate.
 *
 * The probe (pool_rate = auto), an AIMD loop on the copies' total budget B
 * driven by the hosts' rate H (vtld's report, itself a 5 s average):
 *   - it steps at most once every INGEST_AUTO_PERIOD_MS (vtld's window, so
 *     that each step sees the effect of the last one);
 *   - the reference R is the best the hosts got with the copies running:
 *     while B is at the floors R follows H (the most the rule can give the
 *     hosts); above them R = max(R, H). It does not decay with time, since a
 *     probe that grows slowly would then outrun it: a real slowdown of the
 *     hosts (less to back up) reads as drops, B comes down to the floors,
 *     and there R takes the hosts' new rate;
 *   - a drop is H < R * (1 - INGEST_AUTO_BAND): then B = B * INGEST_AUTO_CUT;
 *     H at or above R * (1 - INGEST_AUTO_HOLD): B grows by INGEST_AUTO_GROW
 *     of itself, at least INGEST_AUTO_STEP_MIN, at most INGEST_AUTO_STEP_MAX;
 *     in between (the hysteresis) B holds, so that a probe that has just
 *     begun to cost the hosts stops there rather than grow into a cut;
 *   - B never goes under the floors' sum (no oscillation to zero: the floors
 *     hold) and never more than one step above what the copies read now
 *     (a budget the copies cannot use would take many cuts to come down);
 *   - when hosts start moving data, B starts at the floors (hosts first) and
 *     probes up from there.
 */
#ifndef VTL_MIGRATOR_INGEST_H
#define VTL_MIGRATOR_INGEST_H

#include <stdatomic.h>
#include <stdint.h>

#define INGEST_STALE_MS 5000 /* vtld reports every second while hosts move data: five missed reports mean none */

#define INGEST_FLOOR_MARGIN 1.05 /* a copy is held 5 % above its drive's lowest matched speed: held exactly
				  * there, any dip of the disk or of the writer's pacing runs the drive's buffer dry */
#define INGEST_AUTO_PERIOD_MS 5000 /* vtld averages the hosts' rate over 5 s (docs/migrator.md): a step sees the last one's */
#define INGEST_AUTO_BAND 0.10      /* the hosts 10 % below their reference is a drop; less is the disk's noise */
#define INGEST_AUTO_HOLD 0.05     /* 5 to 10 % below: the budget holds (the hysteresis between growing and a cut) */
#define INGEST_AUTO_CUT 0.7        /* a drop cuts the copies' budget to 70 % (TCP CUBIC's beta, RFC 8312 4.5) */
#define INGEST_AUTO_GROW 0.125     /* no drop: the budget grows by an eighth of itself ... */
#define INGEST_AUTO_STEP_MIN (10ull * 1000000) /* ... at least 10 MB/s, so that it leaves the floors ... */
#define INGEST_AUTO_STEP_MAX (100ull * 1000000) /* ... at most 100 MB/s, so that one step never floods the disk */

/* The last report; read and written from any thread without a lock. */
struct ingest {
	_Atomic uint64_t host_bps; /* bytes/s the hosts moved when vtld last reported */
	_Atomic uint64_t at_ms;    /* when that report came (monotonic ms); 0: never */
};

/* Records vtld's report that the hosts move host_bps bytes/s, received at now_ms. */
void ingest_note(struct ingest *g, uint64_t now_ms, uint64_t host_bps);

/* The hosts' bytes/s at now_ms: the last report, or 0 when there is none or it is stale. */
uint64_t ingest_host(struct ingest *g, uint64_t now_ms);

/* The copies' budget (bytes/s, all copies together) of a constant pool_bps while hosts move host_bps:
 * what is left, 0 when nothing is. */
uint64_t ingest_left(uint64_t pool_bps, uint64_t host_bps);

/*
 * Bytes/s a copy whose floor is mine may read when n running copies with
 * floors floors[0..n-1] (mine among them) share budget_bps: the equal share
 * of what the copies above their floors leave (water filling), never under
 * mine; mine when the floors together reach the budget. Never 0.
 */
uint64_t ingest_copy_share(uint64_t budget_bps, const uint64_t *floors, unsigned n, uint64_t mine);

/* The probe of pool_rate = auto (above). Zero it to start; one thread at a time. */
struct ingest_auto {
	uint64_t budget_bps; /* the copies' total budget; 0: not started (hosts idle or no copy) */
	uint64_t ref_bps;    /* R: the hosts' reference rate */
	uint64_t next_ms;    /* when the next step may come */
	unsigned drops;      /* drops seen (for the log and status) */
};

/*
 * One step of the probe at now_ms: the hosts move host_bps (0: idle, the
 * probe rests), the copies read copies_bps together now and their floors add
 * up to floors_bps (0: no copy runs; the probe rests). Returns the copies'
 * budget, 0 when there is none (no limit from the rule).
 */
uint64_t ingest_auto_step(struct ingest_auto *a, uint64_t now_ms, uint64_t host_bps, uint64_t copies_bps,
			  uint64_t floors_bps);

#endif
