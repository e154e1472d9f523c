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
#include <sys/uio.h>

#include "backend/cartridge.h"
#include "backend/compress_policy.h"
#include "backend/format.h"
#include "backend/pool.h"
#include "common/grow.h"

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
	bool ra_direct; /* read-ahead reads chunks not in the page cache with O_DIRECT (readahead.c) */
	bool wr_direct; /* large records are appended with O_DIRECT (cart_direct.c) */
	int lz4_accel;
	struct workers *workers;
};

/* fdref.dfd before read-ahead first wanted it, and once O_DIRECT failed on the file. */
#define FDREF_DIRECT_NONE (-1)
#define FDREF_DIRECT_FAILED (-2)
/* Alignment of O_DIRECT offsets, lengths and buffers: the largest logical block size in use (4 KiB). */
#define DIRECT_ALIGN 4096u

/* A file descriptor that read-ahead jobs may hold while the cartridge moves on. */
struct fdref {
	int fd;
	int dfd;     /* the same file opened with O_DIRECT for read-ahead: FDREF_DIRECT_NONE/_FAILED or a descriptor */
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
	uint64_t wb_started; /* open: the kernel was asked to write back the bytes below this */
	uint64_t wb_waited;  /* open: and those below this are written back (cart_writeback) */
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

/*
 * A cartridge in use: one session of it. Its parts are grouped by the file
 * that owns them (writes them and keeps their invariants); the other files
 * read them, and change them only through that file's functions where it
 * has any. One thread at a time calls into a cartridge.
 */

/*
 * The tape as the segment table describes it: built by the open
 * (cart_repair.c) and a follower's refresh (cart_follow.c), grown, sealed
 * and reopened by cart_segment.c, cut and appended to by cart_write.c;
 * every lookup (cart_index.c) reads it. The descriptors are cart_fd.c's.
 */
struct cart_tape {
	struct seg *segs;
	size_t nseg, segcap;
	size_t nfd; /* segments with an open fd (cart_fd.c) */

	uint32_t *off; /* offsets of the objects of the last segment when it is open */
	size_t offcap;

	uint64_t eod;
	uint64_t total_fm;
	uint64_t stored; /* record bytes on the tape (headers + payloads) */
};

/*
 * Where the host is on the tape (cart_position.c): an object number, and a
 * cursor into the segment that holds it, which reading (cart_read.c)
 * advances record by record and any move invalidates.
 */
struct cart_cursor {
	uint64_t pos;
	bool valid; /* (seg, off) is where pos starts */
	size_t seg;
	uint64_t off;
	uint64_t seq_next; /* position after the last read, to detect sequential reading */
	unsigned seq_run;
};

/*
 * Appends past the page cache (cart_direct.c): the open segment's file as it
 * ends at end, its last partial DIRECT_ALIGN block held in buf (end UINT64_MAX:
 * not known), for the next record's O_DIRECT write.
 */
struct cart_direct {
	struct fdref *ref;  /* the descriptor end and buf belong to, held; NULL before the first */
	uint64_t end;
	unsigned char *buf; /* DIRECT_ALIGN-aligned: the partial block, then the record while it is written */
	size_t cap;
	bool off;       /* the file system refused O_DIRECT: every append is buffered */
	uint64_t bytes; /* record bytes appended with O_DIRECT since open */
};

/*
 * The write state and the sync accounting: what cart_write.c appended and
 * cart_sync.c has not yet made durable, the seal in flight (cart_segment.c)
 * and the write fence.
 */
struct cart_write {
	bool dirty;     /* changed since open: close must write the footer */
	bool need_sync; /* written since the last sync */
	uint64_t unsynced; /* host bytes written since the last sync */
	uint64_t dir_dirty; /* members whose directory entries need an fsync */
	bool compress;
	bool lz4_slow; /* the last block compressed slowly enough to use the workers */
	struct cpol cpol; /* whether compressing pays on this cartridge (compress_policy.h) */
	struct seal_job *seal; /* the seal of a full segment still in flight on a worker */
	/*
	 * The write fence: set by the first failed write or sync. Linux reports
	 * a writeback error to a descriptor once, so a later fdatasync may
	 * succeed over pages it already dropped; from here on every write and
	 * sync fails with this error, until the cartridge is closed and opened
	 * again (the open's repair then finds what really is on disk).
	 */
	int fault;
	bool wb_off; /* the file system has no sync_file_range: writeback is left to the kernel */
	struct cart_direct dw; /* appends with O_DIRECT (cart_direct.c) */
};

/* What the tape has lost, and whether a cut is under way (cart_damage.c). */
struct cart_damage {
	struct vtl_damage *list; /* damaged ranges, in tape order */
	size_t n, cap;
	/*
	 * A cut (an overwrite or erase before EOD) is under way or not yet
	 * synced: the marker file names its segment, and the open's repair
	 * treats what follows from there as a crash's leftovers, not as damage.
	 */
	bool cut_marker;
	uint32_t cut_seq;
};

/*
 * Buffers reused from one record to the next, grown as needed (scratch_need)
 * and freed at close; whoever uses one is done with it before returning.
 */
struct cart_scratch {
	unsigned char *stored; /* stored payloads: compressed output, records read to check or decompress */
	size_t stored_cap;
	unsigned char *plain; /* a compressed block decompressed whole for a read shorter than it */
	size_t plain_cap;
	unsigned char *crypt; /* an encrypted payload being built, or a block being decrypted */
	size_t crypt_cap;
};

struct vtl_cart {
	/* Set at open (cart_open.c); p's capacity also by vtl_cart_set_capacity. */
	struct vtl_pool *pool;
	char barcode[VTL_BARCODE_MAX + 1];
	struct vtl_cart_params p;
	int lockfd;

	struct cart_tape tape;
	struct cart_cursor cur;
	struct cart_write wr;
	struct cart_damage dmg;
	struct cart_scratch scratch;

	const struct vtl_crypt *crypt; /* vtl_cart_set_crypt: the keys and KAD in force (NULL: none) */

	struct vtl_cart_stats st; /* counted by reading, read-ahead and writing */
	struct ra *ra;            /* the read-ahead (readahead.c) */
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

/*
 * ---- the cartridge's files (cart_*.c), for one another and the read-ahead ----
 *
 * The cartridge (cartridge.h) is implemented by one file per job: cart_open.c
 * (life in the pool), cart_repair.c (the open's walk and repair), cart_scan.c
 * (walking records), cart_segment.c (creating, sealing, reopening segments),
 * cart_index.c (lookups), cart_fd.c (descriptors and I/O), cart_damage.c
 * (damage and the cut marker), cart_sync.c (durability and the fence),
 * cart_position.c, cart_read.c, cart_write.c, cart_follow.c (a follower) and
 * cart_inventory.c (listing). They call one another freely: one layer.
 */

/* Space a sealed footer needs beyond 4 bytes per object: EOD, FMARKS, INDEX headers, trailer. */
#define FOOTER_FIXED (3 * REC_HEADER_LEN + TRAILER_LEN)
_Static_assert(VTL_RECORD_OVERHEAD == REC_HEADER_LEN, "capacity counts a record header per object");

/* Bytes a sealed footer takes for n_obj objects and n_fm filemarks. */
static inline uint64_t footer_size(uint32_t n_obj, uint32_t n_fm)
{
	return FOOTER_FIXED + 4ull * n_obj + 4ull * n_fm;
}

/* The last segment of the table (there is always one). */
static inline struct seg *last_seg(struct vtl_cart *c)
{
	return &c->tape.segs[c->tape.nseg - 1];
}

/* Grows the scratch buffer *buf (capacity *cap) to at least need bytes: 0 or VTL_E_NOMEM. */
static inline int scratch_need(unsigned char **buf, size_t *cap, size_t need)
{
	return vtl_grow_to((void **)buf, cap, need, 1);
}

/* cart_fd.c */

/* Reads exactly len bytes at off: 0, VTL_E_IO, or VTL_E_CORRUPT when the file ends first. */
int read_full(int fd, void *buf, size_t len, uint64_t off);
/* Writes the cnt buffers of iov whole at off (iov is consumed): 0 or VTL_E_IO, errno saying why. */
int write_fullv(int fd, struct iovec *iov, int cnt, uint64_t off);
/* True when errno says the file system (or the quota) is full. */
bool errno_is_full(void);
/* Fsyncs the folder at path: 0 or VTL_E_IO. */
int fsync_path(const char *path);
/* Drops segment s's descriptor, if it has one. */
void seg_close_fd(struct vtl_cart *c, struct seg *s);
/* Closes descriptors beyond FD_CACHE_MAX, keeping segment keep's, the cursor's and the last one's. */
void fd_trim(struct vtl_cart *c, size_t keep);
/* A reference holding segment fd of c (no O_DIRECT descriptor yet); NULL when out of memory (fd stays the caller's). */
struct fdref *fdref_new(const struct vtl_cart *c, int fd);
/* Returns the read fd of segment si, opening it if needed; NULL on failure. */
struct fdref *cart_seg_fd(struct vtl_cart *c, size_t si);
/* The descriptor of segment si, opened if needed; -1 on failure. */
int seg_fd(struct vtl_cart *c, size_t si);
/* Opens f's O_DIRECT descriptor of segment si once (f->dfd; FDREF_DIRECT_FAILED where the file system refuses). */
void cart_seg_direct(struct vtl_cart *c, size_t si, struct fdref *f);
/* True when every page of [off, off + len) of fd is in the page cache (a read would not wait for the disk). */
bool fd_range_cached(int fd, uint64_t off, uint64_t len);
/*
 * Reads [off, off + len) of the file through its O_DIRECT descriptor dfd into abuf, which stands for
 * the file from off rounded down to DIRECT_ALIGN and is aligned so, with room to the next DIRECT_ALIGN
 * past off + len: 0, VTL_E_CORRUPT (the file ends first) or VTL_E_IO (errno EINVAL: O_DIRECT refused).
 */
int read_full_direct(int dfd, unsigned char *abuf, uint64_t off, size_t len);
/* Bytes an O_DIRECT buffer for [off, off + len) spans: from off rounded down to past off + len rounded up. */
size_t direct_span(uint64_t off, size_t len);
/* Makes *buf a DIRECT_ALIGN-aligned buffer of at least n bytes (*cap its size; contents not kept): 0 or VTL_E_NOMEM. */
int direct_buf_reserve(unsigned char **buf, size_t *cap, size_t n);
/*
 * Reads [off, off + len) of the file at path into buf, as read_full does; a range the page cache does not
 * hold is read with O_DIRECT through the calling thread's aligned buffer when the pool's read-ahead reads
 * so. Safe from several threads at once. 0, VTL_E_IO or VTL_E_CORRUPT (the file ends first).
 */
int read_path_range(const struct vtl_pool *pool, const char *path, void *buf, size_t len, uint64_t off);

/* cart_direct.c */

/*
 * Writes the record in iov (cnt buffers) at offset at of segment si, the end of its records: with
 * O_DIRECT when the pool, the file system and the record's size allow, else buffered (iov is then
 * consumed). 0 or VTL_E_IO with errno saying why (ENOSPC: the file system is full); the file may then
 * hold part of the record, which the caller cuts off. Either way the file holds the whole record on 0.
 */
int direct_append(struct vtl_cart *c, size_t si, struct iovec *iov, int cnt, uint64_t at);
/* Drops what the direct appends hold (the descriptor's reference and the buffer); at close. */
void direct_forget(struct vtl_cart *c);

/* cart_index.c */

/* Index of the segment that holds object obj (< eod). */
size_t cart_seg_of(const struct vtl_cart *c, uint64_t obj);
/* Reads n offsets of segment si from relative object rel on into out. */
int cart_offsets(struct vtl_cart *c, size_t si, uint32_t rel, uint32_t n, uint32_t *out);
/* The offset of object obj in segment si (its data_end for the object just past it); VTL_E_CORRUPT when absurd. */
int obj_offset(struct vtl_cart *c, size_t si, uint64_t obj, uint64_t *off);
/* Loads the filemark list of a sealed segment; a damaged footer is rebuilt from the records. */
int seg_load_fm(struct vtl_cart *c, size_t si);
/* Filemarks before object obj (0..eod). */
int fm_before(struct vtl_cart *c, uint64_t obj, uint64_t *count);
/* Object number of the k-th filemark on the tape (k < total_fm). */
int fm_object(struct vtl_cart *c, uint64_t k, uint64_t *obj);
/* Record bytes on the tape before object obj. */
int stored_before(struct vtl_cart *c, uint64_t obj, uint64_t *bytes);

/* cart_damage.c */

/* Records that objects first..first+count-1 are damaged (the list stays in tape order). */
int dmg_add(struct vtl_cart *c, uint64_t first, uint64_t count, uint32_t seq, uint32_t seq_last,
	    enum vtl_damage_kind kind);
/* The first damaged object at or after from; UINT64_MAX when there is none. */
uint64_t dmg_next(const struct vtl_cart *c, uint64_t from);
/* The last damaged object before before; UINT64_MAX when there is none. */
uint64_t dmg_prev(const struct vtl_cart *c, uint64_t before);
/* Forgets the damage from object obj on (a cut removed it from the tape). */
void dmg_cut(struct vtl_cart *c, uint64_t obj);
/* One warning per damaged range, naming the cartridge, the segment file(s) and the objects. */
void dmg_log(const struct vtl_cart *c);
/* Writes the path of the cartridge's cut marker into buf. */
int cut_marker_path(const struct vtl_pool *pool, const char *barcode, char *buf, size_t len);
/* Reads the cut marker, if there is one: from its segment on, the open's repair reads crash leftovers. */
void cut_marker_load(struct vtl_cart *c);
/* Makes the marker of a cut at segment seq durable before the cut removes or truncates anything. */
int cut_marker_set(struct vtl_cart *c, uint32_t seq);
/* Removes the cut marker once the cut and everything before it are durable. */
int cut_marker_clear(struct vtl_cart *c);
/* True when what the open finds from segment seq on may be a crash's leftovers rather than damage. */
bool crash_may(const struct vtl_cart *c, uint32_t seq);

/* cart_sync.c */

/* Writes the sync mark end into the header in fd, in place. */
int mark_pwrite(int fd, uint64_t end);
/* Writes segment si's sync mark: its records below end are durable (the next fdatasync carries it). */
int seg_mark_write(struct vtl_cart *c, size_t si, uint64_t end);
/* Fences c after a failed write or sync (see struct cart_write's fault); returns rc. */
int cart_fence(struct vtl_cart *c, int rc);
/* Makes segment files created, removed or renamed since the last sync durable in their folders. */
int cart_sync_dirs(struct vtl_cart *c);

/*
 * Streams the open segment's written bytes to the disk behind the writer, so
 * that a sync has little left; durability still comes from vtl_cart_sync
 * alone. A writeback error fences c (and is returned), since the kernel
 * reports it once and a later fdatasync would not see it.
 */
int cart_writeback(struct vtl_cart *c);

/* cart_segment.c */

/* Creates segment file seq with its header (its member marked in *dir_dirty); the caller adds it to the table. */
int seg_file_create(struct vtl_pool *pool, const char *barcode, uint32_t seq, uint64_t first_obj,
		    uint64_t first_fm, int *fd_out, uint64_t *dir_dirty);
/* Appends a new empty open segment after the last one (which must be sealed). */
int seg_append_new(struct vtl_cart *c);
/* Waits for the seal in flight, if any, and returns its error. */
int seal_wait(struct vtl_cart *c);
/* Seals the last segment (with an EOD record or not), now or, async, on a worker. */
int seg_seal_last(struct vtl_cart *c, bool with_eod, bool async);
/* Reads sealed segment s's INDEX footer record (in fd) into out, checked against its CRC. */
int index_read(const struct seg *s, int fd, uint32_t *out);
/* Reopens the sealed segment si for appending: its index comes back into memory, its footer goes. */
int seg_unseal(struct vtl_cart *c, size_t si);
/* Closes segment s's descriptor and frees its filemark list and in-memory index. */
void seg_forget(struct vtl_cart *c, struct seg *s);

/* cart_scan.c */

/* Walks segment si's records from its header (or, resume, its data_end): the longest whole prefix. */
int seg_scan(struct vtl_cart *c, size_t si, int fd, uint64_t size, bool check_payload, bool resume,
	     uint64_t mark, uint32_t **offs, size_t *cap);
/* Rebuilds from its records the index and filemarks of sealed segment si whose footer is damaged. */
int seg_rebuild(struct vtl_cart *c, size_t si);

/* cart_repair.c */

/* Reads the trailer of a segment into s; false when there is no trustworthy one. */
bool seg_trailer_load(struct seg *s, int fd, uint64_t size);
/* Scans the cartridge's folders: *next the lowest segment number above after, *top the highest (UINT32_MAX: none). */
int seg_files_scan(struct vtl_pool *pool, const char *barcode, uint32_t after, uint32_t *next, uint32_t *top);
/* True when segment file seq exists with a valid header that continues the tape at (obj, fm). */
bool seg_continues(struct vtl_cart *c, uint32_t seq, uint64_t obj, uint64_t fm);
/* Loads segments first and up, continuing the tape as far as c holds it. */
int cart_load_from(struct vtl_cart *c, uint32_t first);
/* Loads the whole tape at open: the cut marker, every segment with repair, the damage logged. */
int cart_load(struct vtl_cart *c);

/* cart_follow.c */

/* A follower waits until the writer appended past obj or finished; true when the tape holds obj. */
bool follow_until(struct vtl_cart *c, uint64_t obj);

/* cart_position.c */

/* Makes the cursor (cur.seg, cur.off) point at cur.pos (< eod). */
int cursor_find(struct vtl_cart *c);
/* Moves the cursor past a record of rec_len bytes that ended at object pos. */
void cursor_advance(struct vtl_cart *c, uint64_t rec_len);

/* cart_read.c */

/* Verifies and (if needed) decompresses one record payload: 0, or VTL_E_MEDIUM. */
int record_payload_decode(const struct rec_header *h, const unsigned char *stored, unsigned char *dst,
			  size_t dst_len);

/* Checks a decompressed block against the record's block CRC (when it has one): 0, or VTL_E_MEDIUM. */
int record_block_check(const struct rec_header *h, const unsigned char *plain);

/* Sets r's block CRC from a record read whole and checked: known for raw blocks and records that carry it. */
void record_block_crc(const struct rec_header *h, struct vtl_read_result *r);

/* ---- readahead.c ---- */

/* Creates the read-ahead of cartridge c; NULL on failure. */
struct ra *ra_create(struct vtl_cart *c);
/* Waits for its jobs and frees it; with loans out, the last vtl_loan_release frees it instead. */
void ra_destroy(struct ra *ra);
/* Forgets everything planned; jobs in flight finish on their own. */
void ra_reset(struct ra *ra);
/* Starts reading ahead from object obj on. */
void ra_start(struct ra *ra, uint64_t obj);
/* True when read-ahead is running. */
bool ra_active(const struct ra *ra);
/* Stored bytes read ahead and ready for the host, and the most it keeps in flight. */
void ra_buffered(struct ra *ra, uint64_t *ready, uint64_t *limit);
/* Stored bytes this read-ahead read with O_DIRECT (chunks the page cache did not hold). */
uint64_t ra_direct_bytes(struct ra *ra);
/*
 * Serves the read of object obj from the read-ahead: 1 when served (r filled),
 * 0 when it cannot (the caller reads from disk). With loan non-NULL, a block
 * held as the host wrote it is lent (*data, *loan set; buf untouched)
 * instead of copied into buf; *loan stays NULL when it was copied.
 */
int ra_read(struct ra *ra, uint64_t obj, void *buf, size_t buflen, struct vtl_read_result *r, const void **data,
	    struct vtl_loan **loan);
/* Takes one reference on f for a job in flight. */
void fdref_get(struct fdref *f);
/* Releases one reference on f. */
void fdref_put(struct fdref *f);
/* Drops the segment's reference on f: closes now, or when the last job ends. */
void fdref_drop(struct fdref *f);

#endif
