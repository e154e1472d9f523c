/* SPDX-License-Identifier: Apache-2.0 */
#include "migrator/phys_sim.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/crc32c.h"
#include "common/grow.h"
#include "common/lockorder.h"
#include "common/vtl_error.h"

#define DEFAULT_BUFFER (1ull << 30)
#define MIN_SPEED_SHARE (1.0 / 3.0)   /* LTO speed matching reaches down to about a third of native */
#define RATE_WINDOW_S 0.25            /* arrival rate is measured over windows at least this long */
#define EARLY_WARNING_SHARE 0.02      /* early warning this far (of the capacity) before the end */
#define START_SHARE 0.25              /* a stopped tape starts moving once its buffer is this full (or on a flush) */
#define FULL_SHARE 0.75               /* a buffer this full sends a speed-matched tape back to full speed */
#define REC_FILEMARK 0x80000000u      /* a tape file record header: the length, or this for a filemark */
#define REC_HDR 4
#define MB 1e6
#define STATE_FILE "library.state"

/*
 * LTO native rates (MB/s) and capacities (GB), generations 5 to 9 (LTO Program figures); LTO-10 from IBM's
 * and Spectra Logic's announcements (400 MB/s, 30 TB). min_matched: the lowest speed-matching rate (MB/s)
 * of a full-height drive on its own generation's media, from IBM's table "Speed matching", performance
 * parameters for full height drives (IBM TS4300 / Diamondback library documentation,
 * ibm.com/docs/en/STAKKZ/con_LTOdrive_speedmatching.html and
 * ibm.com/docs/en/ts4300-tape-library?topic=features-speed-matching): LTO-7 101.46 (rounded up to
 * 102), LTO-8 112.0, LTO-9 177, LTO-10 157 (L10 media). 0: no published figure was found (LTO-5 and
 * LTO-6; HP's own "data rate matching" ranges were not found either): phys_lto_min_matched_mbs then
 * estimates a third of native, as the simulated drive models it.
 */
static const struct {
	unsigned gen;
	double rate;
	uint64_t capacity_gb;
	double min_matched;
} lto[] = {{5, 140, 1500, 0},     {6, 160, 2500, 0},     {7, 300, 6000, 102},
	   {8, 360, 12000, 112}, {9, 400, 18000, 177}, {10, 400, 30000, 157}};

double phys_sim_native_rate(unsigned gen)
{
	for (size_t i = 0; i < VTL_ARRAY_SIZE(lto); i++)
		if (lto[i].gen == gen)
			return lto[i].rate;
	return 0;
}

double phys_lto_min_matched_mbs(unsigned gen, bool *estimated)
{
	*estimated = true;
	for (size_t i = 0; i < VTL_ARRAY_SIZE(lto); i++)
		if (lto[i].gen == gen) {
			*estimated = lto[i].min_matched <= 0;
			return *estimated ? lto[i].rate * MIN_SPEED_SHARE : lto[i].min_matched;
		}
	return 0;
}

uint64_t phys_sim_native_capacity(unsigned gen)
{
	for (size_t i = 0; i < VTL_ARRAY_SIZE(lto); i++)
		if (lto[i].gen == gen)
			return lto[i].capacity_gb * 1000000000ull;
	return 0;
}

struct rec {
	uint64_t off;  /* in the tape file: where its header starts */
	uint32_t len;  /* data bytes */
	bool filemark;
	uint32_t crc;  /* of the data, kept when no file does */
};

struct tape {
	char barcode[VTL_BARCODE_MAX + 1];
	struct rec *recs;
	size_t n, cap;
	uint64_t used;   /* data bytes on the tape */
	int fd;          /* the tape file, -1 without data_dir */
};

enum motion { STOPPED, REPOSITIONING, STREAMING };

/*
 * Threads: calls for different drives may run at the same time, each under
 * its drive's mu; the changer's calls (inventory, move) run one at a time
 * under changer_mu, which a move holds while it takes, one after the other,
 * the lock of each drive it empties or loads (never two drive locks at once).
 * A drive's tape (drive.tape) changes only under both; the element arrays
 * only under changer_mu; a tape's records only under the lock of the drive
 * that holds it.
 */
struct drive {
	pthread_mutex_t mu;       /* this drive's calls, one at a time */
	int tape;                 /* index in tapes, -1 when empty */
	uint64_t pos;             /* record index */
	struct phys_sim_fault fault;
	struct phys_sim_stats st;
	/* The timing model (seconds on CLOCK_MONOTONIC). */
	enum motion motion;
	bool ran_dry;             /* the last stop was the buffer running dry, not a flush */
	bool wrote;               /* data written since the load or the last move of the tape */
	double buffered;          /* bytes in the drive's buffer */
	double speed;             /* bytes/s the tape moves at while streaming */
	double t;                 /* the model is advanced up to here */
	double repos_until;
	double win_start, win_bytes, in_rate;
	/* Reading: the tape streams into the buffer ahead of the host; rclock is when the next block is off it. */
	bool reading;
	double rclock;
};

struct sim {
	struct phys_lib base;
	struct phys_sim_config cfg;
	char dir[4096];
	double native;            /* bytes/s */
	uint64_t capacity, buffer;
	pthread_mutex_t changer_mu; /* the changer's calls, one at a time */
	struct tape *tapes;
	unsigned ntapes;
	/* Elements: what tape each holds (-1: empty), in address order per type. */
	int *slot, *ie, drive_tape[PHYS_MAX_DRIVES];
	struct drive drives[PHYS_MAX_DRIVES];
};

static struct sim *sim_of(struct phys_lib *l)
{
	return (struct sim *)l;
}

static void sleep_s(double s)
{
	if (s <= 0)
		return;
	struct timespec ts = {(time_t)s, (long)((s - floor(s)) * 1e9)};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* ------------------------------------------------------------- the tapes */

static int tape_path(const struct sim *s, const char *barcode, char *out, size_t cap)
{
	int n = snprintf(out, cap, "%s/%s.tape", s->dir, barcode);
	return n > 0 && (size_t)n < cap ? VTL_OK : VTL_E_INVAL;
}

static int tape_push(struct tape *t, struct rec r)
{
	int rc = vtl_grow((void **)&t->recs, &t->cap, t->n, sizeof *t->recs);
	if (rc)
		return rc;
	t->recs[t->n++] = r;
	if (!r.filemark)
		t->used += r.len;
	return VTL_OK;
}

/* Opens (or creates) a tape's file and reads its record headers back; a torn last record is cut off. */
static int tape_open(struct sim *s, struct tape *t)
{
	t->fd = -1;
	if (!s->dir[0])
		return VTL_OK;
	char path[4200];
	if (tape_path(s, t->barcode, path, sizeof path))
		return VTL_E_INVAL;
	t->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (t->fd < 0)
		return VTL_E_IO;
	struct stat sb;
	if (fstat(t->fd, &sb) != 0)
		return VTL_E_IO;
	uint64_t off = 0, size = (uint64_t)sb.st_size;
	while (off + REC_HDR <= size) {
		uint8_t h[REC_HDR];
		if (pread(t->fd, h, REC_HDR, (off_t)off) != REC_HDR)
			return VTL_E_IO;
		uint32_t v = (uint32_t)h[0] | (uint32_t)h[1] << 8 | (uint32_t)h[2] << 16 | (uint32_t)h[3] << 24;
		struct rec r = {.off = off, .filemark = v == REC_FILEMARK, .len = v == REC_FILEMARK ? 0 : v};
		if (off + REC_HDR + r.len > size)
			break;
		int rc = tape_push(t, r);
		if (rc)
			return rc;
		off += REC_HDR + r.len;
	}
	if (off != size && ftruncate(t->fd, (off_t)off) != 0)
		return VTL_E_IO;
	return VTL_OK;
}

/* Everything from record index from on is gone, as a write in the middle of a tape makes it. */
static int tape_cut(struct tape *t, uint64_t from)
{
	if (from >= t->n)
		return VTL_OK;
	for (size_t i = from; i < t->n; i++)
		if (!t->recs[i].filemark)
			t->used -= t->recs[i].len;
	if (t->fd >= 0 && ftruncate(t->fd, (off_t)t->recs[from].off) != 0)
		return VTL_E_IO;
	t->n = from;
	return VTL_OK;
}

static uint64_t tape_end(const struct tape *t)
{
	return t->n ? t->recs[t->n - 1].off + REC_HDR + t->recs[t->n - 1].len : 0;
}

static int tape_append(struct tape *t, const void *data, uint32_t len, bool filemark)
{
	struct rec r = {.off = tape_end(t), .len = filemark ? 0 : len, .filemark = filemark};
	if (t->fd >= 0) {
		uint32_t v = filemark ? REC_FILEMARK : len;
		uint8_t h[REC_HDR] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
		if (pwrite(t->fd, h, REC_HDR, (off_t)r.off) != REC_HDR ||
		    (r.len && pwrite(t->fd, data, r.len, (off_t)(r.off + REC_HDR)) != (ssize_t)r.len))
			return VTL_E_IO;
	} else if (!filemark) {
		r.crc = crc32c(0, data, len);
	}
	return tape_push(t, r);
}

/* ------------------------------------------------------ the library state */

static int *element(struct sim *s, uint16_t addr, enum phys_elem_type *type)
{
	if (addr >= PHYS_SIM_SLOT0 && addr < PHYS_SIM_SLOT0 + s->cfg.slots) {
		*type = PHYS_ELEM_SLOT;
		return &s->slot[addr - PHYS_SIM_SLOT0];
	}
	if (addr >= PHYS_SIM_IE0 && addr < PHYS_SIM_IE0 + s->cfg.mail_slots) {
		*type = PHYS_ELEM_IE;
		return &s->ie[addr - PHYS_SIM_IE0];
	}
	if (addr >= PHYS_SIM_DRIVE0 && addr < PHYS_SIM_DRIVE0 + s->cfg.drives) {
		*type = PHYS_ELEM_DRIVE;
		return &s->drive_tape[addr - PHYS_SIM_DRIVE0];
	}
	return NULL;
}

/* Writes where every tape is, so that a reopened library finds them there (write, then rename). */
static int state_save(struct sim *s)
{
	if (!s->dir[0])
		return VTL_OK;
	char path[4200], tmp[4210];
	snprintf(path, sizeof path, "%s/%s", s->dir, STATE_FILE);
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return VTL_E_IO;
	for (unsigned i = 0; i < s->ntapes; i++) {
		uint16_t addr = 0;
		for (unsigned k = 0; k < s->cfg.slots; k++)
			if (s->slot[k] == (int)i)
				addr = (uint16_t)(PHYS_SIM_SLOT0 + k);
		for (unsigned k = 0; k < s->cfg.mail_slots; k++)
			if (s->ie[k] == (int)i)
				addr = (uint16_t)(PHYS_SIM_IE0 + k);
		for (unsigned k = 0; k < s->cfg.drives; k++)
			if (s->drive_tape[k] == (int)i)
				addr = (uint16_t)(PHYS_SIM_DRIVE0 + k);
		fprintf(f, "%u %s\n", addr, s->tapes[i].barcode);
	}
	bool ok = fflush(f) == 0 && fsync(fileno(f)) == 0;
	ok = fclose(f) == 0 && ok;
	return ok && rename(tmp, path) == 0 ? VTL_OK : VTL_E_IO;
}

static int add_tape(struct sim *s, const char *barcode, uint16_t addr)
{
	enum phys_elem_type type;
	int *e = element(s, addr, &type);
	if (!e || *e >= 0)
		return VTL_E_CORRUPT;
	struct tape *t = &s->tapes[s->ntapes];
	memset(t, 0, sizeof *t);
	snprintf(t->barcode, sizeof t->barcode, "%s", barcode);
	int rc = tape_open(s, t);
	if (rc)
		return rc;
	*e = (int)s->ntapes++;
	return VTL_OK;
}

static int state_load(struct sim *s, bool *found)
{
	*found = false;
	if (!s->dir[0])
		return VTL_OK;
	char path[4200];
	snprintf(path, sizeof path, "%s/%s", s->dir, STATE_FILE);
	FILE *f = fopen(path, "r");
	if (!f)
		return errno == ENOENT ? VTL_OK : VTL_E_IO;
	*found = true;
	unsigned addr;
	char bc[VTL_BARCODE_MAX + 1];
	int rc = VTL_OK;
	while (rc == VTL_OK && s->ntapes < s->cfg.tapes && fscanf(f, "%u %32s", &addr, bc) == 2)
		rc = add_tape(s, bc, (uint16_t)addr);
	fclose(f);
	return rc;
}

/* ------------------------------------------------------- the timing model */

/* Moves the model of drive d forward to time now: the buffer drains while the tape streams. */
static void advance(struct sim *s, struct drive *d, double now)
{
	(void)s;
	while (d->t < now) {
		if (d->motion == REPOSITIONING) {
			if (now < d->repos_until) {
				d->t = now;
				break;
			}
			d->t = d->repos_until;
			d->motion = d->buffered > 0 ? STREAMING : STOPPED;
		} else if (d->motion == STREAMING) {
			double can = d->speed * (now - d->t);
			if (can >= d->buffered) {
				double dry = d->buffered / d->speed;
				d->st.busy_s += dry;
				d->t += dry;
				d->buffered = 0;
				d->motion = STOPPED;
				d->ran_dry = true;
			} else {
				d->buffered -= can;
				d->st.busy_s += now - d->t;
				d->t = now;
			}
		} else {
			d->t = now;
		}
	}
}

/*
 * The tape starts moving once enough data waits in the buffer (or a flush
 * asks): a drive does not crawl off for every block. After a stop in the
 * middle of writing it must reposition first.
 */
static void start_motion(struct sim *s, struct drive *d, double now, bool flushing)
{
	if (d->motion != STOPPED || d->buffered <= 0 ||
	    (!flushing && d->buffered < (double)s->buffer * START_SHARE))
		return;
	if (d->wrote && d->ran_dry) {
		d->st.backhitches++;
		d->motion = REPOSITIONING;
		d->repos_until = now + s->cfg.backhitch_ms / 1000.0;
	} else if (d->wrote) {
		/* Restarting after a flush repositions too; that stop was counted as a flush. */
		d->motion = REPOSITIONING;
		d->repos_until = now + s->cfg.backhitch_ms / 1000.0;
	} else {
		d->motion = STREAMING;
	}
	d->ran_dry = false;
}

/*
 * Speed matching: the tape follows the rate data arrives at, within the
 * drive's range. A buffer filling up means the host has more than the tape
 * takes (its rate is capped by the tape's own speed then, so it cannot be
 * measured): the tape goes back up to full speed.
 */
static void match_speed(struct sim *s, struct drive *d, double now, size_t len)
{
	if (d->buffered >= (double)s->buffer * FULL_SHARE) {
		d->speed = s->native;
		d->st.speed_mbs = d->speed / MB;
	}
	if (d->win_start == 0) {
		/* The first write since a load or a move of the tape: the idle time before it says nothing of the rate. */
		d->win_start = now;
		d->win_bytes = (double)len;
		return;
	}
	d->win_bytes += (double)len;
	if (now - d->win_start >= RATE_WINDOW_S) {
		double rate = d->win_bytes / (now - d->win_start);
		d->in_rate = d->in_rate > 0 ? 0.5 * d->in_rate + 0.5 * rate : rate;
		d->win_start = now;
		d->win_bytes = 0;
		double lo = s->native * MIN_SPEED_SHARE;
		d->speed = d->in_rate < lo ? lo : d->in_rate > s->native ? s->native : d->in_rate;
		d->st.speed_mbs = d->speed / MB;
	}
}

/* Waits until the buffer can take len more bytes. */
static void wait_for_room(struct sim *s, struct drive *d, size_t len)
{
	for (;;) {
		double now = vtl_mono_s();
		advance(s, d, now);
		double over = d->buffered + (double)len - (double)s->buffer;
		if (over <= 0)
			return;
		start_motion(s, d, now, true); /* a full buffer gets the tape moving whatever the threshold */
		double wait = over / d->speed;
		if (d->motion == REPOSITIONING)
			wait += d->repos_until - now;
		sleep_s(wait);
	}
}

/* Writes the buffer out to the tape: the drive stops afterwards. */
static void flush(struct sim *s, struct drive *d)
{
	double now = vtl_mono_s();
	advance(s, d, now);
	start_motion(s, d, now, true);
	if (d->buffered > 0) {
		double wait = d->buffered / d->speed + (d->motion == REPOSITIONING ? d->repos_until - now : 0);
		sleep_s(wait);
		advance(s, d, vtl_mono_s());
		if (d->buffered > 0) {
			/* The sleep ended a little early: account the rest. */
			d->st.busy_s += d->buffered / d->speed;
			d->buffered = 0;
		}
		d->motion = STOPPED;
		d->ran_dry = false;
		d->st.flushes++;
	}
}

static void reset_motion(struct sim *s, struct drive *d)
{
	d->motion = STOPPED;
	d->ran_dry = d->wrote = d->reading = false;
	d->buffered = 0;
	d->speed = s->native;
	d->in_rate = 0;
	d->t = vtl_mono_s();
	d->win_start = 0;
	d->win_bytes = 0;
}

/* ------------------------------------------------------------------ ops */

static int drive_check(struct sim *s, unsigned d, struct tape **t)
{
	if (d >= s->cfg.drives)
		return phys_fail(&s->base, VTL_E_INVAL, "no drive %u in the simulated library", d);
	if (s->drives[d].fault.offline)
		return phys_fail(&s->base, VTL_E_IO, "drive %u: NOT READY, the drive is offline (injected)", d);
	if (s->drives[d].tape < 0)
		return phys_fail(&s->base, VTL_E_IO, "drive %u: NOT READY, medium not present (3A/00h)", d);
	*t = &s->tapes[s->drives[d].tape];
	return VTL_OK;
}

static int sim_inventory(struct phys_lib *l, struct phys_element *out, unsigned cap, unsigned *n)
{
	struct sim *s = sim_of(l);
	vtl_lock(&s->changer_mu, VTL_LOCK_PHYS_CHANGER);
	unsigned k = 0;
	struct {
		enum phys_elem_type type;
		uint16_t first;
		unsigned count;
		const int *held;
	} groups[] = {
		{PHYS_ELEM_DRIVE, PHYS_SIM_DRIVE0, s->cfg.drives, s->drive_tape},
		{PHYS_ELEM_IE, PHYS_SIM_IE0, s->cfg.mail_slots, s->ie},
		{PHYS_ELEM_SLOT, PHYS_SIM_SLOT0, s->cfg.slots, s->slot},
	};
	for (size_t g = 0; g < VTL_ARRAY_SIZE(groups); g++)
		for (unsigned i = 0; i < groups[g].count; i++, k++) {
			if (k >= cap)
				continue;
			int t = groups[g].held[i];
			out[k] = (struct phys_element){.type = groups[g].type, .address = (uint16_t)(groups[g].first + i),
						       .full = t >= 0};
			if (t >= 0)
				snprintf(out[k].barcode, sizeof out[k].barcode, "%s", s->tapes[t].barcode);
		}
	*n = k;
	vtl_unlock(&s->changer_mu, VTL_LOCK_PHYS_CHANGER);
	return VTL_OK;
}

static int move_locked(struct sim *s, uint16_t from, uint16_t to);

static int sim_move(struct phys_lib *l, uint16_t from, uint16_t to)
{
	struct sim *s = sim_of(l);
	vtl_lock(&s->changer_mu, VTL_LOCK_PHYS_CHANGER);
	int rc = move_locked(s, from, to);
	vtl_unlock(&s->changer_mu, VTL_LOCK_PHYS_CHANGER);
	return rc;
}

/* The move, under the changer's lock; each drive it empties or loads is changed under that drive's lock. */
static int move_locked(struct sim *s, uint16_t from, uint16_t to)
{
	struct phys_lib *l = &s->base;
	enum phys_elem_type ft, tt;
	int *src = element(s, from, &ft), *dst = element(s, to, &tt);
	if (!src || !dst)
		return phys_fail(l, VTL_E_INVAL, "MOVE MEDIUM %u -> %u: ILLEGAL REQUEST, invalid element address (21/01h)",
				 from, to);
	if (*src < 0)
		return phys_fail(l, VTL_E_SRC_EMPTY, "MOVE MEDIUM %u -> %u: ILLEGAL REQUEST, medium source element empty (3B/0Eh)",
				 from, to);
	if (*dst >= 0)
		return phys_fail(l, VTL_E_DST_FULL,
				 "MOVE MEDIUM %u -> %u: ILLEGAL REQUEST, medium destination element full (3B/0Dh)", from, to);
	if (ft == PHYS_ELEM_DRIVE) {
		struct drive *d = &s->drives[from - PHYS_SIM_DRIVE0];
		vtl_lock(&d->mu, VTL_LOCK_PHYS_DRIVE);
		bool offline = d->fault.offline;
		if (!offline) {
			flush(s, d);
			d->tape = -1;
		}
		vtl_unlock(&d->mu, VTL_LOCK_PHYS_DRIVE);
		if (offline)
			return phys_fail(l, VTL_E_IO, "MOVE MEDIUM %u -> %u: the drive is offline (injected)", from, to);
	}
	if (tt == PHYS_ELEM_DRIVE) {
		struct drive *d = &s->drives[to - PHYS_SIM_DRIVE0];
		vtl_lock(&d->mu, VTL_LOCK_PHYS_DRIVE);
		bool offline = d->fault.offline;
		if (!offline) {
			sleep_s(s->cfg.load_ms / 1000.0);
			d->tape = *src;
			d->pos = 0;
			memset(&d->st, 0, sizeof d->st);
			reset_motion(s, d);
		}
		vtl_unlock(&d->mu, VTL_LOCK_PHYS_DRIVE);
		if (offline) {
			if (ft == PHYS_ELEM_DRIVE) /* the source drive let it go: it stays there, as before the move */
				s->drives[from - PHYS_SIM_DRIVE0].tape = *src;
			return phys_fail(l, VTL_E_IO, "MOVE MEDIUM %u -> %u: the drive is offline (injected)", from, to);
		}
	}
	*dst = *src;
	*src = -1;
	int rc = state_save(s);
	return rc ? phys_fail(l, rc, "cannot save the simulated library's state in %s", s->dir) : VTL_OK;
}

/* A move of the tape (rewind, locate, space): costs the modelled time when it goes anywhere. */
static void reposition(struct sim *s, struct drive *d, uint64_t to)
{
	flush(s, d);
	if (to != d->pos)
		sleep_s(s->cfg.locate_ms / 1000.0);
	d->pos = to;
	d->wrote = false;
	reset_motion(s, d);
}

static int unload_locked(struct phys_lib *l, unsigned d)
{
	struct tape *t = NULL;
	int rc = drive_check(sim_of(l), d, &t);
	if (rc)
		return rc;
	reposition(sim_of(l), &sim_of(l)->drives[d], 0);
	return VTL_OK;
}



static int write_block_locked(struct phys_lib *l, unsigned di, const void *buf, size_t len)
{
	struct sim *s = sim_of(l);
	struct tape *t = NULL;
	int rc = drive_check(s, di, &t);
	if (rc)
		return rc;
	struct drive *d = &s->drives[di];
	if (len == 0 || len >= REC_FILEMARK)
		return phys_fail(l, VTL_E_INVAL, "drive %u: WRITE of %zu bytes: ILLEGAL REQUEST", di, len);
	uint64_t used = t->used;
	for (size_t i = d->pos; i < t->n; i++)
		if (!t->recs[i].filemark)
			used -= t->recs[i].len;
	if (d->fault.write_error_at && used + len > d->fault.write_error_at)
		return phys_fail(l, VTL_E_IO, "drive %u: WRITE: MEDIUM ERROR, write error (0C/00h) at %llu bytes (injected)",
				 di, (unsigned long long)used);
	if (used + len > s->capacity)
		return phys_fail(l, VTL_E_EOM, "drive %u: WRITE: VOLUME OVERFLOW, end of partition/medium detected (00/02h)",
				 di);
	if ((rc = tape_cut(t, d->pos)))
		return phys_fail(l, rc, "drive %u: cannot cut the tape file of %s: %s", di, t->barcode, strerror(errno));
	double now = vtl_mono_s();
	advance(s, d, now);
	match_speed(s, d, now, len);
	wait_for_room(s, d, len);
	if ((rc = tape_append(t, buf, (uint32_t)len, false)))
		return phys_fail(l, rc, "drive %u: cannot write the tape file of %s: %s", di, t->barcode, strerror(errno));
	d->buffered += (double)len;
	d->reading = false;
	start_motion(s, d, vtl_mono_s(), false);
	if (d->motion != STOPPED)
		d->wrote = true; /* from now on, a stop means repositioning before the next start */
	d->pos = t->n;
	d->st.written += len;
	return used + len > s->capacity - (uint64_t)((double)s->capacity * EARLY_WARNING_SHARE) ? VTL_W_EARLY_WARNING
											  : VTL_OK;
}

static int write_filemarks_locked(struct phys_lib *l, unsigned di, unsigned n)
{
	struct sim *s = sim_of(l);
	struct tape *t = NULL;
	int rc = drive_check(s, di, &t);
	if (rc)
		return rc;
	struct drive *d = &s->drives[di];
	if ((rc = tape_cut(t, d->pos)))
		return phys_fail(l, rc, "drive %u: cannot cut the tape file of %s", di, t->barcode);
	for (unsigned i = 0; i < n; i++)
		if ((rc = tape_append(t, NULL, 0, true)))
			return phys_fail(l, rc, "drive %u: cannot write the tape file of %s", di, t->barcode);
	d->pos = t->n;
	flush(s, d);
	if (t->fd >= 0 && fdatasync(t->fd) != 0)
		return phys_fail(l, VTL_E_IO, "drive %u: cannot sync the tape file of %s: %s", di, t->barcode,
				 strerror(errno));
	return VTL_OK;
}

/*
 * A read streams: the tape moves on at the native rate into the drive's
 * buffer while the host works, so a block is there as soon as the tape has
 * passed it. A host that falls a whole buffer behind has stopped the tape;
 * it restarts with a back-hitch.
 */
static void read_timing(struct sim *s, struct drive *d, uint32_t len)
{
	double now = vtl_mono_s();
	if (!d->reading) {
		d->reading = true;
		d->rclock = now;
	} else if (now - d->rclock > (double)s->buffer / s->native) {
		d->st.backhitches++;
		d->rclock = now + s->cfg.backhitch_ms / 1000.0;
	}
	d->rclock += (double)len / s->native;
	sleep_s(d->rclock - now);
}

static int read_block_locked(struct phys_lib *l, unsigned di, void *buf, size_t cap, size_t *len)
{
	struct sim *s = sim_of(l);
	struct tape *t = NULL;
	int rc = drive_check(s, di, &t);
	if (rc)
		return rc;
	struct drive *d = &s->drives[di];
	*len = 0;
	if (d->fault.read_error)
		return phys_fail(l, VTL_E_MEDIUM, "drive %u: READ: MEDIUM ERROR, unrecovered read error (11/00h) (injected)",
				 di);
	if (d->wrote)
		flush(s, d);
	if (d->pos >= t->n)
		return phys_fail(l, VTL_E_EOD, "drive %u: READ: BLANK CHECK, end of data detected (00/05h)", di);
	struct rec *r = &t->recs[d->pos++];
	if (r->filemark)
		return VTL_W_FILEMARK;
	read_timing(s, d, r->len);
	if (r->len > cap)
		return phys_fail(l, VTL_E_INVAL, "drive %u: READ: a block of %u bytes does not fit %zu (ILI)", di, r->len,
				 cap);
	if (t->fd < 0)
		return phys_fail(l, VTL_E_IO, "drive %u: READ: the simulated library keeps no data (no data_dir)", di);
	if (pread(t->fd, buf, r->len, (off_t)(r->off + REC_HDR)) != (ssize_t)r->len)
		return phys_fail(l, VTL_E_IO, "drive %u: cannot read the tape file of %s: %s", di, t->barcode,
				 strerror(errno));
	*len = r->len;
	return VTL_OK;
}

static int space_filemarks_locked(struct phys_lib *l, unsigned di, int64_t n)
{
	struct sim *s = sim_of(l);
	struct tape *t = NULL;
	int rc = drive_check(s, di, &t);
	if (rc)
		return rc;
	struct drive *d = &s->drives[di];
	uint64_t p = d->pos;
	for (int64_t k = 0; k < n; k++) {
		while (p < t->n && !t->recs[p].filemark)
			p++;
		if (p >= t->n) {
			reposition(s, d, p);
			return phys_fail(l, VTL_E_EOD, "drive %u: SPACE: BLANK CHECK, end of data detected (00/05h)", di);
		}
		p++;
	}
	for (int64_t k = 0; k > n; k--) {
		while (p > 0 && !t->recs[p - 1].filemark)
			p--;
		if (p == 0) {
			reposition(s, d, 0);
			return phys_fail(l, VTL_E_EOD, "drive %u: SPACE: beginning of partition/medium detected (00/04h)", di);
		}
		p--;
	}
	reposition(s, d, p);
	return VTL_OK;
}

static int locate_locked(struct phys_lib *l, unsigned di, uint64_t block)
{
	struct sim *s = sim_of(l);
	struct tape *t = NULL;
	int rc = drive_check(s, di, &t);
	if (rc)
		return rc;
	if (block > t->n) {
		reposition(s, &s->drives[di], t->n);
		return phys_fail(l, VTL_E_EOD, "drive %u: LOCATE %llu: BLANK CHECK, end of data detected (00/05h)", di,
				 (unsigned long long)block);
	}
	reposition(s, &s->drives[di], block);
	return VTL_OK;
}

static int status_locked(struct phys_lib *l, unsigned di, struct phys_drive_status *st)
{
	struct sim *s = sim_of(l);
	memset(st, 0, sizeof *st);
	struct tape *t = NULL;
	int rc = drive_check(s, di, &t);
	if (rc == VTL_E_INVAL)
		return rc;
	struct drive *d = &s->drives[di];
	st->max_block = 8u << 20;
	st->backhitches = d->st.backhitches;
	st->written = d->st.written;
	if (rc)
		return VTL_OK; /* not ready: ready stays false */
	st->ready = true;
	st->block = d->pos;
	st->bot = d->pos == 0;
	for (uint64_t i = 0; i < d->pos && i < t->n; i++)
		st->file += t->recs[i].filemark;
	st->early_warning = t->used > s->capacity - (uint64_t)((double)s->capacity * EARLY_WARNING_SHARE);
	return VTL_OK;
}

/* Takes the lock of drive d (none for a drive the library lacks: the call then fails on it); returns it. */
static pthread_mutex_t *drive_lock(struct sim *s, unsigned d)
{
	if (d >= s->cfg.drives)
		return NULL;
	vtl_lock(&s->drives[d].mu, VTL_LOCK_PHYS_DRIVE);
	return &s->drives[d].mu;
}

static int drive_unlock(pthread_mutex_t *mu, int rc)
{
	if (mu)
		vtl_unlock(mu, VTL_LOCK_PHYS_DRIVE);
	return rc;
}

/* The drive calls: each runs its body under the drive's lock (taken in its first statement). */
static int sim_unload(struct phys_lib *l, unsigned d)
{
	pthread_mutex_t *mu = drive_lock(sim_of(l), d);
	return drive_unlock(mu, unload_locked(l, d));
}

static int sim_rewind(struct phys_lib *l, unsigned d)
{
	return sim_unload(l, d);
}

static int sim_write_block(struct phys_lib *l, unsigned d, const void *buf, size_t len)
{
	pthread_mutex_t *mu = drive_lock(sim_of(l), d);
	return drive_unlock(mu, write_block_locked(l, d, buf, len));
}

static int sim_write_filemarks(struct phys_lib *l, unsigned d, unsigned n)
{
	pthread_mutex_t *mu = drive_lock(sim_of(l), d);
	return drive_unlock(mu, write_filemarks_locked(l, d, n));
}

static int sim_read_block(struct phys_lib *l, unsigned d, void *buf, size_t cap, size_t *len)
{
	pthread_mutex_t *mu = drive_lock(sim_of(l), d);
	return drive_unlock(mu, read_block_locked(l, d, buf, cap, len));
}

static int sim_space_filemarks(struct phys_lib *l, unsigned d, int64_t n)
{
	pthread_mutex_t *mu = drive_lock(sim_of(l), d);
	return drive_unlock(mu, space_filemarks_locked(l, d, n));
}

static int sim_locate(struct phys_lib *l, unsigned d, uint64_t block)
{
	pthread_mutex_t *mu = drive_lock(sim_of(l), d);
	return drive_unlock(mu, locate_locked(l, d, block));
}

static int sim_status(struct phys_lib *l, unsigned d, struct phys_drive_status *st)
{
	pthread_mutex_t *mu = drive_lock(sim_of(l), d);
	return drive_unlock(mu, status_locked(l, d, st));
}

static void sim_close(struct phys_lib *l)
{
	struct sim *s = sim_of(l);
	for (unsigned i = 0; i < s->cfg.drives; i++)
		if (s->drives[i].tape >= 0)
			flush(s, &s->drives[i]);
	for (unsigned i = 0; i < s->ntapes; i++) {
		if (s->tapes[i].fd >= 0)
			close(s->tapes[i].fd);
		free(s->tapes[i].recs);
	}
	free(s->tapes);
	free(s->slot);
	free(s->ie);
	for (unsigned i = 0; i < PHYS_MAX_DRIVES; i++)
		pthread_mutex_destroy(&s->drives[i].mu);
	pthread_mutex_destroy(&s->changer_mu);
	free(s);
}

static const struct phys_ops sim_ops = {
	.kind = "sim",
	.counts_backhitches = true,
	.inventory = sim_inventory,
	.move = sim_move,
	.unload = sim_unload,
	.rewind = sim_rewind,
	.write_block = sim_write_block,
	.write_filemarks = sim_write_filemarks,
	.read_block = sim_read_block,
	.space_filemarks = sim_space_filemarks,
	.locate = sim_locate,
	.status = sim_status,
	.close = sim_close,
};

void phys_sim_inject(struct phys_lib *l, unsigned d, const struct phys_sim_fault *f)
{
	struct sim *s = sim_of(l);
	pthread_mutex_t *mu = drive_lock(s, d);
	if (mu)
		s->drives[d].fault = *f;
	(void)drive_unlock(mu, VTL_OK);
}

void phys_sim_stats(struct phys_lib *l, unsigned d, struct phys_sim_stats *st)
{
	struct sim *s = sim_of(l);
	memset(st, 0, sizeof *st);
	pthread_mutex_t *mu = drive_lock(s, d);
	if (mu) {
		advance(s, &s->drives[d], vtl_mono_s());
		*st = s->drives[d].st;
	}
	(void)drive_unlock(mu, VTL_OK);
}

int phys_sim_open(const struct phys_sim_config *cfg, struct phys_lib **out, char *err, size_t errlen)
{
	double rate = cfg->rate_mbs > 0 ? cfg->rate_mbs : phys_sim_native_rate(cfg->generation);
	uint64_t capacity = cfg->capacity ? cfg->capacity : phys_sim_native_capacity(cfg->generation);
	if (!phys_sim_native_rate(cfg->generation)) {
		snprintf(err, errlen, "simulated library: LTO generation %u is not one of 5 to 10", cfg->generation);
		return VTL_E_CONFIG;
	}
	if (!cfg->drives || cfg->drives > PHYS_MAX_DRIVES || cfg->tapes > cfg->slots || cfg->slots > 1000 ||
	    cfg->mail_slots > 100) {
		snprintf(err, errlen, "simulated library: 1 to %d drives, at most 1000 slots and 100 mail slots, "
				      "no more tapes than slots",
			 PHYS_MAX_DRIVES);
		return VTL_E_CONFIG;
	}
	struct sim *s = calloc(1, sizeof *s);
	if (!s)
		return VTL_E_NOMEM;
	s->cfg = *cfg;
	s->cfg.prefix = NULL;
	s->native = rate * MB;
	s->capacity = capacity;
	s->buffer = cfg->buffer ? cfg->buffer : DEFAULT_BUFFER;
	s->base.ops = &sim_ops;
	s->base.drives = cfg->drives;
	s->base.min_matched_mbs = rate * MIN_SPEED_SHARE; /* the model's own (match_speed): fed slower, the buffer runs dry and the tape back-hitches */
	s->tapes = calloc(cfg->tapes ? cfg->tapes : 1, sizeof *s->tapes);
	s->slot = malloc((cfg->slots ? cfg->slots : 1) * sizeof *s->slot);
	s->ie = malloc((cfg->mail_slots ? cfg->mail_slots : 1) * sizeof *s->ie);
	pthread_mutex_init(&s->changer_mu, NULL);
	for (unsigned i = 0; i < PHYS_MAX_DRIVES; i++)
		pthread_mutex_init(&s->drives[i].mu, NULL);
	if (!s->tapes || !s->slot || !s->ie) {
		sim_close(&s->base);
		return VTL_E_NOMEM;
	}
	for (unsigned i = 0; i < cfg->slots; i++)
		s->slot[i] = -1;
	for (unsigned i = 0; i < cfg->mail_slots; i++)
		s->ie[i] = -1;
	for (unsigned i = 0; i < PHYS_MAX_DRIVES; i++) {
		s->drive_tape[i] = -1;
		s->drives[i].tape = -1;
		s->base.drive_addr[i] = (uint16_t)(PHYS_SIM_DRIVE0 + i);
	}
	int rc = VTL_OK;
	if (cfg->data_dir) {
		if (snprintf(s->dir, sizeof s->dir, "%s", cfg->data_dir) >= (int)sizeof s->dir ||
		    (mkdir(s->dir, 0755) != 0 && errno != EEXIST)) {
			snprintf(err, errlen, "simulated library: cannot use %s: %s", cfg->data_dir, strerror(errno));
			sim_close(&s->base);
			return VTL_E_CONFIG;
		}
	}
	bool found;
	rc = state_load(s, &found);
	for (unsigned i = 0; rc == VTL_OK && !found && i < cfg->tapes; i++) {
		char bc[VTL_BARCODE_MAX + 1];
		/* The media identifier: L5..L9, LA for LTO-10. */
		char gen_id = cfg->generation >= 10 ? 'A' : (char)('0' + cfg->generation);
		snprintf(bc, sizeof bc, "%.3s%03uL%c", cfg->prefix ? cfg->prefix : "PHY", i + 1, gen_id);
		rc = add_tape(s, bc, (uint16_t)(PHYS_SIM_SLOT0 + i));
	}
	if (rc == VTL_OK && !found)
		rc = state_save(s);
	if (rc) {
		snprintf(err, errlen, "simulated library in %s: %s", s->dir[0] ? s->dir : "memory", vtl_strerror(rc));
		sim_close(&s->base);
		return rc;
	}
	/* Tapes the state left in drives are loaded there, at the beginning. */
	for (unsigned i = 0; i < cfg->drives; i++) {
		s->drives[i].tape = s->drive_tape[i];
		reset_motion(s, &s->drives[i]);
	}
	*out = &s->base;
	return VTL_OK;
}
