/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A simulated physical LTO library for tests and benchmarks: a changer with
 * slots, mail slots and drives, and drives with a timing model in real time.
 *
 * A drive streams at a speed it matches to the rate data arrives, between
 * about a third of the generation's native rate and the native rate (LTO
 * speed matching); the host writes into the drive's buffer and waits only
 * when it is full. When the buffer runs dry while writing, the tape stops and
 * must reposition before it can write again: a back-hitch, costing
 * backhitch_ms. Loads and locates cost their modelled time too. Data goes to
 * a file per tape in data_dir (or, without data_dir, only lengths and a
 * checksum are kept, so reads return an error). Faults can be injected.
 *
 * Threads: calls for different drives may run at the same time on different
 * threads; the changer's calls (inventory, move) and the calls for one drive
 * are serialized inside the simulator. phys_error() is the library's one
 * text, so a caller that runs drives on several threads reads it as a hint.
 */
#ifndef VTL_MIGRATOR_PHYS_SIM_H
#define VTL_MIGRATOR_PHYS_SIM_H

#include "migrator/phys.h"

/* Element addresses of the simulated changer. */
#define PHYS_SIM_TRANSPORT 1
#define PHYS_SIM_DRIVE0 256
#define PHYS_SIM_IE0 768
#define PHYS_SIM_SLOT0 1024

struct phys_sim_config {
	unsigned generation;     /* LTO generation 5..10: native rate and capacity */
	unsigned drives;         /* 1..PHYS_MAX_DRIVES */
	unsigned slots;          /* storage slots */
	unsigned mail_slots;
	unsigned tapes;          /* tapes in the first slots, barcodes <prefix>NNN L<gen> */
	const char *prefix;      /* 3 characters, e.g. "PHY" (default) */
	uint64_t capacity;       /* bytes per tape; 0: the generation's native capacity */
	uint64_t buffer;         /* drive buffer bytes; 0: 1 GiB */
	double rate_mbs;         /* native rate in MB/s; 0: the generation's */
	unsigned backhitch_ms;   /* the cost of one stop and reposition */
	unsigned load_ms;        /* a load (move into a drive) */
	unsigned locate_ms;      /* a locate or space that moves the tape */
	const char *data_dir;    /* tape files and the library's state; NULL: keep only lengths and checksums */
};

/* Faults a test can inject into a drive. */
struct phys_sim_fault {
	uint64_t write_error_at; /* a WRITE fails with MEDIUM ERROR once the tape holds this many bytes (0: never) */
	bool offline;            /* every command fails with NOT READY */
	bool read_error;         /* every READ fails with MEDIUM ERROR, unrecovered read error */
};

/* Counters of one simulated drive since its last load. */
struct phys_sim_stats {
	uint64_t backhitches;    /* stops because the buffer ran dry while writing, or filled while reading */
	uint64_t flushes;        /* stops because a filemark flushed the buffer */
	uint64_t written;        /* bytes written */
	double speed_mbs;        /* the speed the drive matched to */
	double busy_s;           /* seconds the tape moved while writing */
};

/* Opens a simulated library (its state and tapes come back from data_dir when there). */
int phys_sim_open(const struct phys_sim_config *cfg, struct phys_lib **out, char *err, size_t errlen);

/* Sets the faults of drive d. */
void phys_sim_inject(struct phys_lib *l, unsigned d, const struct phys_sim_fault *f);

/* The counters of drive d. */
void phys_sim_stats(struct phys_lib *l, unsigned d, struct phys_sim_stats *st);

/* The native rate (MB/s) and capacity (bytes) of LTO generation gen; 0 when unknown. */
double phys_sim_native_rate(unsigned gen);
uint64_t phys_sim_native_capacity(unsigned gen);

/* The lowest speed (MB/s) a real full-height drive of LTO generation gen matches without stopping: IBM's
 * published figure, or a third of native when none was found (*estimated true then); 0 when gen is unknown. */
double phys_lto_min_matched_mbs(unsigned gen, bool *estimated);

#endif
