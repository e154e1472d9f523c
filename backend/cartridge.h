/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A virtual cartridge with tape semantics, stored in a disk pool.
 *
 * The tape is a sequence of logical objects numbered from 0 at BOT: data
 * blocks (1 byte to 16 MiB) and filemarks. End of data (EOD) is the object
 * number just past the last one. Every operation works at the current
 * position; writing anywhere before EOD discards everything from that point
 * on, as on a real tape. The file number of a position is the count of
 * filemarks before it.
 *
 * One thread at a time may call into a given cartridge (a tape drive runs its
 * commands in order); the read-ahead workers behind it are internal.
 */
#ifndef VTL_BACKEND_CARTRIDGE_H
#define VTL_BACKEND_CARTRIDGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/crypt.h"
#include "common/vtl_error.h"

#include "backend/pool.h"

#define VTL_BLOCK_MAX (16u << 20) /* largest data block accepted */
/* Stored bytes an object takes on the medium beyond its payload (its record header), as capacity counts them. */
#define VTL_RECORD_OVERHEAD 32u

struct vtl_cart;

struct vtl_cart_params {
	uint64_t capacity;      /* nominal capacity in stored bytes; 0 = unlimited */
	uint64_t early_warning; /* EW is reported from capacity - early_warning on */
	bool compression;       /* LZ4 each data block written in this session */
	bool readonly;          /* open for reading; never repairs nor writes */
	bool worm;              /* append only: refuse to overwrite anything written */
	bool follow;            /* read-only beside a writer (no lock): vtl_cart_refresh picks up its appends */
	/*
	 * follow only, may be NULL: called when a read, LOCATE or SPACE needs
	 * more than the writer has appended; waits a little and returns 1 while
	 * the writer is at work, 0 once it has finished (the tape is then all
	 * there will be). Reads, locates and spaces wait through it for the
	 * objects they need instead of stopping at the end of data.
	 */
	VTL_MUST_CHECK int (*more)(void *arg);
	void *more_arg;
};

enum vtl_object_type {
	VTL_OBJ_DATA = 1,
	VTL_OBJ_FILEMARK = 2,
	VTL_OBJ_EOD = 3,
};

struct vtl_read_result {
	enum vtl_object_type type;
	uint32_t length;  /* true length of the data block (may exceed the buffer) */
	uint32_t copied;  /* bytes placed in the caller's buffer */
	uint64_t object;  /* object number that was read (EOD: the EOD position) */
	/*
	 * CRC32C of the whole block as the host wrote it (uncompressed), checked
	 * against the data: known (has_block_crc) for blocks stored raw and for
	 * compressed records that carry it (every record written since format
	 * rule "block CRC"); older compressed records leave it to the caller.
	 */
	bool has_block_crc;
	uint32_t block_crc;
};

enum vtl_space_stop {
	VTL_SPACE_DONE = 0,     /* the whole count was spaced */
	VTL_SPACE_FILEMARK = 1, /* stopped by a filemark while spacing blocks */
	VTL_SPACE_EOD = 2,      /* stopped at end of data */
	VTL_SPACE_BOT = 3,      /* stopped at beginning of tape */
	VTL_SPACE_MEDIUM = 4,   /* stopped by a damaged object it could not pass (VTL_E_MEDIUM) */
};

struct vtl_space_result {
	enum vtl_space_stop stop;
	uint64_t residual; /* requested count minus count actually spaced */
};

struct vtl_position {
	uint64_t object;       /* current logical object number */
	uint64_t file;         /* filemarks before the current position */
	uint64_t eod;          /* object number of end of data */
	uint64_t stored_bytes; /* bytes the medium holds before the current EOD */
	bool bot;              /* at object 0 */
	bool at_eod;           /* object == eod */
	bool early_warning;    /* stored bytes are past the early-warning point */
};

struct vtl_cart_stats {
	uint64_t written_bytes;      /* data bytes the host wrote this session */
	uint64_t written_stored;     /* bytes those took on the medium (after compression) */
	uint64_t read_bytes;         /* data bytes returned to the host this session */
	uint64_t read_stored;        /* bytes those took on the medium */
	uint64_t readahead_hits;     /* reads served from the read-ahead */
	uint64_t readahead_misses;   /* reads that had to go to disk themselves */
	uint64_t readahead_ready;    /* stored bytes read ahead, ready for the host (0 when not reading ahead) */
	uint64_t readahead_limit;    /* the most stored bytes the read-ahead keeps in flight */
	uint64_t readahead_direct;   /* stored bytes the read-ahead read past the page cache (O_DIRECT) */
	uint64_t written_direct;     /* record bytes appended past the page cache (O_DIRECT) */
	uint64_t unsynced_bytes;     /* host bytes written since the last sync (not yet on stable storage) */
	const char *compression;     /* "on (...)" or "off (why)": what the next block gets (a static string) */
};

/* What kind of damage a range of objects has (docs/format.md, "Durability and crash repair"). */
enum vtl_damage_kind {
	VTL_DAMAGE_RECORDS = 1, /* records inside synced data fail their checks */
	VTL_DAMAGE_SHORT = 2,   /* a segment ends before where the next one says it does */
	VTL_DAMAGE_MISSING = 3, /* segment files in the middle of the tape are missing */
	VTL_DAMAGE_HEADER = 4,  /* segment files in the middle have an unreadable header */
};

/* A range of unreadable objects; everything outside it stays reachable. */
struct vtl_damage {
	uint64_t first;    /* first damaged object */
	uint64_t count;    /* damaged objects from there */
	uint32_t seq;      /* the segment file the damage is in (MISSING, HEADER: the first of them) */
	uint32_t seq_last; /* MISSING, HEADER: the last of those segment files; otherwise seq */
	enum vtl_damage_kind kind;
};

#define VTL_DAMAGE_INFO_MAX 8 /* damaged ranges vtl_cart_info describes (it counts them all) */

struct vtl_cart_info {
	uint64_t eod;          /* objects on the tape */
	uint64_t filemarks;    /* filemarks among them */
	uint64_t stored_bytes; /* bytes on the medium (record headers + stored payloads) */
	uint32_t segments;     /* segment files */
	uint32_t damaged;      /* damaged ranges (the first VTL_DAMAGE_INFO_MAX are in damage[]) */
	uint64_t damaged_objects; /* objects in all of them */
	struct vtl_damage damage[VTL_DAMAGE_INFO_MAX];
};

/*
 * Calls fn with the barcode of every cartridge in the pool, in byte order
 * (a cartridge is a folder on its home member holding segment 0); fn
 * returning non-zero stops the walk and is returned.
 */
VTL_MUST_CHECK int vtl_pool_list_cartridges(struct vtl_pool *pool, int (*fn)(const char *barcode, void *arg), void *arg);

/* Reads what a cartridge holds, read-only (VTL_E_BUSY while a writer has it open). */
VTL_MUST_CHECK int vtl_cart_info(struct vtl_pool *pool, const char *barcode, struct vtl_cart_info *out);

/* Creates an empty (blank) cartridge; VTL_E_EXISTS if one is there already. */
VTL_MUST_CHECK int vtl_cart_create(struct vtl_pool *pool, const char *barcode);

/* Deletes a cartridge and all its segments; it must not be open. */
VTL_MUST_CHECK int vtl_cart_delete(struct vtl_pool *pool, const char *barcode);

/* Returns 1 if a cartridge with this barcode exists in the pool, 0 if not, <0 on error. */
VTL_MUST_CHECK int vtl_cart_exists(struct vtl_pool *pool, const char *barcode);

/*
 * Opens a cartridge positioned at BOT. A writable open takes an exclusive
 * lock (VTL_E_BUSY if held) and repairs a crashed tail: records that are
 * torn or fail their CRC after the last whole record are cut off. Damage
 * (bad records below a segment's sync mark, a middle segment cut short or
 * missing) is kept as found and listed by vtl_cart_damage (one warning in
 * the log per damaged range); the rest of the tape stays reachable.
 */
VTL_MUST_CHECK int vtl_cart_open(struct vtl_pool *pool, const char *barcode, const struct vtl_cart_params *p,
		  struct vtl_cart **out);

/*
 * For a cartridge opened with follow: takes in the whole, checked records a
 * writer in another process (or thread) appended since the open or the last
 * refresh, across new segments; *eod (may be NULL) gets the end of data now
 * seen. The position stays. VTL_E_INVAL if c was not opened with follow.
 */
VTL_MUST_CHECK int vtl_cart_refresh(struct vtl_cart *c, uint64_t *eod);

/* Syncs (writable), writes the clean-close marker and index, and frees c. */
VTL_MUST_CHECK int vtl_cart_close(struct vtl_cart *c);

/*
 * Writes a data block of len bytes (1..VTL_BLOCK_MAX) at the current position.
 * Returns 0, VTL_W_EARLY_WARNING when written past the early-warning point,
 * VTL_E_EOM / VTL_E_POOL_FULL when there is no room (nothing written, the
 * tape unchanged), VTL_E_WORM on an overwrite of WORM media.
 */
VTL_MUST_CHECK int vtl_cart_write_block(struct vtl_cart *c, const void *buf, size_t len);

/*
 * As vtl_cart_write_block, for a block whose CRC32C (crc32c(0, buf, len))
 * the caller has already computed and checked, as a drive does with the
 * protection information of logical block protection: it is kept in the
 * record as the block's CRC and not computed again.
 */
VTL_MUST_CHECK int vtl_cart_write_block_crc(struct vtl_cart *c, const void *buf, size_t len, uint32_t crc);

/*
 * Writes count filemarks at the current position; returns like write_block.
 * EOM is checked for the whole count first; a pool that fills part way stops
 * it with some written (the position tells how many).
 */
VTL_MUST_CHECK int vtl_cart_write_filemarks(struct vtl_cart *c, uint32_t count);

/* Discards everything from the current position on (the position becomes EOD). */
VTL_MUST_CHECK int vtl_cart_erase(struct vtl_cart *c);

/*
 * Reads the object at the current position into buf (at most buflen bytes).
 * A data block or a filemark moves the position past it; at EOD the position
 * stays. A block that fails its checksum, or an object in a damaged range
 * (vtl_cart_damage), gives VTL_E_MEDIUM with r->object set and the position
 * left on it (a LOCATE past it reaches what follows).
 */
VTL_MUST_CHECK int vtl_cart_read(struct vtl_cart *c, void *buf, size_t buflen, struct vtl_read_result *r);

/*
 * A read-ahead buffer lent to a reader instead of copied out of (see
 * vtl_cart_read_lend). It stays valid, whatever the cartridge does meanwhile
 * (LOCATE, a write, more reads, vtl_cart_close), until vtl_loan_release.
 */
struct vtl_loan;

/*
 * Like vtl_cart_read, but when the read-ahead holds the data block as the
 * host wrote it (stored raw, or decompressed within the read-ahead's
 * budget; not encrypted), nothing is copied into buf: *data points at the
 * block's first r->copied bytes in the read-ahead and *loan must be given
 * back with vtl_loan_release once they are used. Otherwise *loan is NULL
 * and the result is exactly vtl_cart_read's (the data in buf).
 */
VTL_MUST_CHECK int vtl_cart_read_lend(struct vtl_cart *c, void *buf, size_t buflen, struct vtl_read_result *r,
				      const void **data, struct vtl_loan **loan);

/* Ends a loan of vtl_cart_read_lend (any thread, once); its buffer may then be refilled or freed. */
void vtl_loan_release(struct vtl_loan *loan);

/*
 * Sets the keys and KAD the cartridge uses from now on (NULL: none, blocks
 * are written in clear and encrypted ones cannot be read). cr stays the
 * caller's; it must outlive its use. With cr->enc, each data block written is
 * compressed (if on), then encrypted. A read of an encrypted block fails
 * with VTL_E_ENCRYPTED (no read key), VTL_E_KEY (another key) or VTL_E_AUTH
 * (altered); of a plaintext one with VTL_E_PLAIN unless cr->plain_ok. A
 * failed read leaves the position at the block.
 */
void vtl_cart_set_crypt(struct vtl_cart *c, const struct vtl_crypt *cr);

/*
 * How the object at the position is stored (for NEXT BLOCK ENCRYPTION
 * STATUS), without moving: VTL_OK with *out filled (is_data false for a
 * filemark or EOD), or the error reading it would give (VTL_E_MEDIUM ...).
 */
VTL_MUST_CHECK int vtl_cart_peek_crypt(struct vtl_cart *c, struct vtl_block_crypt *out);

/* Positions at object obj (0..eod); past EOD it stops at EOD and returns VTL_E_EOD. */
VTL_MUST_CHECK int vtl_cart_locate(struct vtl_cart *c, uint64_t obj);

/*
 * Spaces count blocks (negative: towards BOT). Forward, a filemark stops it
 * on the EOT side of the filemark; backward, on its BOT side; EOD and BOT
 * also stop it. *r tells what stopped it and the residual count. A damaged
 * range in the way stops it on its near side with VTL_E_MEDIUM and
 * VTL_SPACE_MEDIUM (the same for filemarks).
 */
VTL_MUST_CHECK int vtl_cart_space_blocks(struct vtl_cart *c, int64_t count, struct vtl_space_result *r);

/* Spaces count filemarks (negative: towards BOT; ends on the BOT side of the last one passed). */
VTL_MUST_CHECK int vtl_cart_space_filemarks(struct vtl_cart *c, int64_t count, struct vtl_space_result *r);

/* Positions at end of data. */
VTL_MUST_CHECK int vtl_cart_space_eod(struct vtl_cart *c);

/* Positions at BOT. */
VTL_MUST_CHECK int vtl_cart_rewind(struct vtl_cart *c);

/*
 * Makes everything written so far survive a crash or power loss. Also returns
 * a failure of an earlier segment's seal that ran in the background. After
 * any failed write or sync the cartridge is fenced: every later write, erase
 * and sync returns that error (never success over data the kernel may have
 * dropped) until it is closed and opened again.
 */
VTL_MUST_CHECK int vtl_cart_sync(struct vtl_cart *c);

/* Fills *pos with the current position. */
void vtl_cart_position(struct vtl_cart *c, struct vtl_position *pos);

/*
 * Changes the capacity and early-warning distance of an open cartridge, as
 * SET CAPACITY does: only at BOT (VTL_E_INVAL elsewhere, or if early_warning
 * exceeds a non-zero capacity); VTL_E_READONLY if opened read-only. What is
 * already written stays; writes past the new capacity get VTL_E_EOM.
 */
VTL_MUST_CHECK int vtl_cart_set_capacity(struct vtl_cart *c, uint64_t capacity, uint64_t early_warning);

/* Turns LZ4 compression of blocks written from now on on or off. */
void vtl_cart_set_compression(struct vtl_cart *c, bool on);

/* Fills *st with this session's counters. */
void vtl_cart_stats(const struct vtl_cart *c, struct vtl_cart_stats *st);

/*
 * The record stream: every record of the tape (its 32-byte header and its
 * payload as stored, compressed or not) in tape order, without the segment
 * headers and footers: what a stacked copy on physical tape holds
 * (docs/format.md). Its size is the tape's stored bytes up to EOD.
 */
uint64_t vtl_cart_stream_size(const struct vtl_cart *c);

/*
 * Appends one record of a record stream as stored (rec: its 32-byte header
 * and its payload, len bytes in all), at end of data, which must be where
 * the cartridge is: how a recall stages a stacked copy back without
 * decompressing. The header must decode, be a data record or a filemark,
 * carry the cartridge's EOD as its object number, and its payload must match
 * its CRC: VTL_E_CORRUPT otherwise, nothing written. Then as
 * vtl_cart_write_block (VTL_W_EARLY_WARNING, VTL_E_EOM, VTL_E_POOL_FULL).
 */
VTL_MUST_CHECK int vtl_cart_append_stored(struct vtl_cart *c, const void *rec, size_t len);

/*
 * Copies up to max of the damaged ranges the open found (in tape order) to
 * out and returns how many there are in all.
 */
size_t vtl_cart_damage(const struct vtl_cart *c, struct vtl_damage *out, size_t max);

/* A short name for a damage kind ("bad records", "segment cut short", "segments missing", ...). */
const char *vtl_damage_kind_name(enum vtl_damage_kind kind);

/*
 * Writes one line saying what d is ("cartridge B: damaged: ... in segment
 * file N.seg: objects X..Y unreadable") into buf; returns its length.
 */
size_t vtl_damage_describe(const char *barcode, const struct vtl_damage *d, char *buf, size_t len);

/* The barcode of an open cartridge, and how many filemarks it holds before EOD. */
const char *vtl_cart_barcode(const struct vtl_cart *c);
uint64_t vtl_cart_filemarks(const struct vtl_cart *c);

/*
 * Reads len bytes of the record stream from offset off into buf. Safe to
 * call from several threads at once while nothing writes the cartridge
 * (each call opens the segment files it needs). VTL_E_INVAL past the end.
 */
VTL_MUST_CHECK int vtl_cart_stream_read(struct vtl_cart *c, uint64_t off, void *buf, size_t len);

#endif
