/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Structures shared by the backend's modules (pool, cartridge, read-ahead).
 * Not part of the public interface.
 */
#ifndef VTL_BACKEND_INTERNAL_H
#define VTL_BACKEND_INTERNAL_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "backend/cartridge.h"
#include "backend/format.h"
#include "backend/pool.h"

struct ra;
struct seal_job;
struct workers;

struct pool_member {
	char *path;
	pthread_mutex_t lock;
	uint64_t used;        /* bytes of segment space this pool accounts on the member */
	uint64_t free_cache;  /* statvfs mode: free bytes as last measured, minus what was taken since */
	uint64_t taken_since; /* statvfs mode: bytes taken since the last measurement */
	uint64_t taken_total; /* bytes ever taken: what a rescan adds for takes during its scan */
	uint64_t given_total; /* bytes ever given back */
	uint64_t scan_disk;   /* the segment files' bytes the last scan counted */
	uint64_t scan_given;  /* given_total when that scan began */
	uint64_t rescan_ms;   /* monotonic time of the last rescan by a take that hit the quota */
};

struct vtl_pool {
	struct pool_member m[VTL_POOL_MAX_MEMBERS];
	unsigned n;
	uint64_t segment_size;
	uint64_t quota;
	uint64_t reserve;
	unsigned ra_depth;
	size_t ra_chunk;
	size_t ra_memory;
	int lz4_accel;
	struct workers *workers;
};

/* A file descriptor that read-ahead jobs may hold while the cartridge moves on. */
struct fdref {
	int fd;
	int refs;    /* jobs in flight using fd; protected by the read-ahead lock */
	bool orphan; /* the segment dropped it: the last job to finish closes it */
};

struct seg {
	uint32_t seq;
	unsigned member;
	uint64_t first_obj;
	uint32_t n_obj;
	uint64_t first_fm;
	uint32_t n_fm;
	uint64_t data_end;  /* end of the last object record */
	uint64_t index_off; /* sealed: offset of the INDEX record */
	uint64_t fm_off;    /* sealed: offset of the FMARKS record */
	uint64_t acct;      /* bytes taken from the pool for this segment */
	uint64_t synced_end; /* the sync mark on disk (or about to be): records below it were durable */
	uint64_t mark_next;  /* open: data_end at the last sync, the mark the next sync writes */
	bool sealed;
	bool eod_rec;       /* sealed with an EOD record (clean close) */
	bool lost;          /* no file holds these objects (damage): every one is unreadable */
	bool dmg_flag;      /* its INDEX has 0 entries for damaged objects (TRAILER_FLAG_DAMAGED) */
	uint32_t lost_last; /* lost, lost_files: the files seq..lost_last (missing or unreadable) were its */
	bool lost_files;
	uint32_t *fm;       /* filemark positions relative to first_obj; NULL until loaded */
	uint32_t fm_cap;
	uint32_t *mem_off;  /* sealed, footer damaged: the index rebuilt from the records */
	struct fdref *fd;   /* NULL when not open */
};

struct vtl_cart {
	struct vtl_pool *pool;
	char barcode[VTL_BARCODE_MAX + 1];
	struct vtl_cart_params p;
	int lockfd;

	struct seg *segs;
	size_t nseg, segcap;
	size_t nfd; /* segments with an open fd */

	uint32_t *off; /* offsets of the objects of the last segment when it is open */
	size_t offcap;

	uint64_t eod;
	uint64_t total_fm;
	uint64_t stored; /* record bytes on the tape (headers + payloads) */

	uint64_t pos;
	bool cur_valid; /* (cur_seg, cur_off) is where pos starts */
	size_t cur_seg;
	uint64_t cur_off;
	uint64_t seq_next; /* position after the last read, to detect sequential reading */
	unsigned seq_run;

	bool dirty;     /* changed since open: close must write the footer */
	bool need_sync; /* written since the last sync */
	uint64_t unsynced; /* host bytes written since the last sync */
	uint64_t dir_dirty; /* members whose directory entries need an fsync */
	bool compress;
	bool lz4_slow; /* the last block compressed slowly enough to use the workers */

	unsigned char *scratch; /* compressed payloads and partial reads */
	size_t scratch_cap;
	unsigned char *scratch2;
	size_t scratch2_cap;

	struct vtl_cart_stats st;
	struct ra *ra;
	struct seal_job *seal; /* the seal of a full segment still in flight on a worker */
	/*
	 * The write fence: set by the first failed write or sync. Linux reports
	 * a writeback error to a descriptor once, so a later fdatasync may
	 * succeed over pages it already dropped; from here on every write and
	 * sync fails with this error, until the cartridge is closed and opened
	 * again (the open's repair then finds what really is on disk).
	 */
	int fault;

	struct vtl_damage *dmg; /* damaged ranges, in tape order */
	size_t ndmg, dmgcap;
	/*
	 * A cut (an overwrite or erase before EOD) is under way or not yet
	 * synced: the marker file names its segment, and the open's repair
	 * treats what follows from there as a crash's leftovers, not as damage.
	 */
	bool cut_marker;
	uint32_t cut_seq;
};

/* ---- pool.c ---- */

/* Writes the path of the cartridge's folder on member m into buf. */
int pool_cart_dir(const struct vtl_pool *pool, unsigned m, const char *barcode, char *buf, size_t len);
/* Writes the path of segment seq into buf. */
int pool_seg_path(const struct vtl_pool *pool, const char *barcode, uint32_t seq, char *buf, size_t len);
/* Takes bytes of space on member m; VTL_E_POOL_FULL (nothing taken) when there is not enough. */
int pool_space_take(struct vtl_pool *pool, unsigned m, uint64_t bytes);
/* Gives back bytes of space on member m. */
void pool_space_give(struct vtl_pool *pool, unsigned m, uint64_t bytes);

/* ---- cartridge.c, for the read-ahead planner ---- */

/* Reads exactly len bytes at off: 0, VTL_E_IO, or VTL_E_CORRUPT when the file ends first. */
int read_full(int fd, void *buf, size_t len, uint64_t off);

/* Index of the segment that holds object obj (< eod). */
size_t cart_seg_of(const struct vtl_cart *c, uint64_t obj);
/* Reads n offsets of segment si from relative object rel on into out. */
int cart_offsets(struct vtl_cart *c, size_t si, uint32_t rel, uint32_t n, uint32_t *out);
/* Returns the read fd of segment si, opening it if needed; NULL on failure. */
struct fdref *cart_seg_fd(struct vtl_cart *c, size_t si);
/* Verifies and (if needed) decompresses one record payload: 0, or VTL_E_MEDIUM. */
int record_payload_decode(const struct rec_header *h, const unsigned char *stored, unsigned char *dst,
			  size_t dst_len);

/* ---- readahead.c ---- */

/* Creates the read-ahead of cartridge c; NULL on failure. */
struct ra *ra_create(struct vtl_cart *c);
/* Waits for its jobs and frees it. */
void ra_destroy(struct ra *ra);
/* Forgets everything planned; jobs in flight finish on their own. */
void ra_reset(struct ra *ra);
/* Starts reading ahead from object obj on. */
void ra_start(struct ra *ra, uint64_t obj);
/* True when read-ahead is running. */
bool ra_active(const struct ra *ra);
/* Stored bytes read ahead and ready for the host, and the most it keeps in flight. */
void ra_buffered(struct ra *ra, uint64_t *ready, uint64_t *limit);
/*
 * Serves the read of object obj from the read-ahead: 1 when served (r filled),
 * 0 when it cannot (the caller reads from disk).
 */
int ra_read(struct ra *ra, uint64_t obj, void *buf, size_t buflen, struct vtl_read_result *r);
/* Takes one reference on f for a job in flight. */
void fdref_get(struct fdref *f);
/* Releases one reference on f. */
void fdref_put(struct fdref *f);
/* Drops the segment's reference on f: closes now, or when the last job ends. */
void fdref_drop(struct fdref *f);

#endif
