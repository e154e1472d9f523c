/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The drive's state, shared by the modules that implement its commands
 * (ssc.c: lifecycle, readiness, the command table; ssc_rw.c: data;
 * ssc_pos.c: positioning; ssc_mode.c: mode pages; ssc_log.c: log pages;
 * ssc_mam.c: medium auxiliary memory; ssc_density.c: densities and
 * capacity). Handlers run with d->mu held.
 */
#ifndef VTL_DRIVE_SSC_INTERNAL_H
#define VTL_DRIVE_SSC_INTERNAL_H

#include <pthread.h>
#include <stddef.h>

#include "backend/cartridge.h"
#include "vtl/scsi/device.h"
#include "vtl/drive/ssc.h"

/* Density codes of LTO formats (IBM/HP LTO SCSI references; SSC-4 REPORT DENSITY SUPPORT). */
enum ssc_density {
	DENSITY_DEFAULT = 0x00,
	DENSITY_LTO5 = 0x58,
	DENSITY_LTO6 = 0x5A,
	DENSITY_LTO7 = 0x5C,
	DENSITY_LTO7M = 0x5D, /* LTO-7 cartridge written as Type M (M8) */
	DENSITY_LTO8 = 0x5E,
	DENSITY_LTO9 = 0x60,
	DENSITY_LTO10 = 0x62, /* IBM's LTFS (TC_DC_LTO10), FreeBSD mt(1) */
};

/* Medium type codes in the mode parameter header (IBM LTO reference): data and WORM. */
#define SSC_MEDIUM_TYPE_DATA 0x00
#define SSC_MEDIUM_TYPE_WORM 0x01
#define SSC_MEDIUM_TYPE_CLEANING 0x02 /* reported while a cleaning cartridge is in */

#define SSC_BLOCK_LIMIT_MAX 0x800000u /* READ BLOCK LIMITS maximum: 8 MiB, as IBM LTO drives report */
#define SSC_BLOCK_LIMIT_MIN 1u

/* Methods of reporting informational exceptions (SPC-4 page 1Ch MRIE); 7h-Bh reserved, Ch-Fh vendor specific. */
enum ssc_mrie {
	MRIE_NONE = 0x0,
	MRIE_OBSOLETE = 0x1,              /* asynchronous event reporting */
	MRIE_UNIT_ATTENTION = 0x2,
	MRIE_RECOVERED_CONDITIONAL = 0x3, /* conditionally generate recovered error (PER: taken as set) */
	MRIE_RECOVERED = 0x4,             /* unconditionally generate recovered error */
	MRIE_NO_SENSE = 0x5,
	MRIE_ON_REQUEST = 0x6,            /* only report on REQUEST SENSE */
};

/* Mode parameters the data path obeys (the mode pages hold the rest). */
struct ssc_mode {
	uint32_t block_len;   /* block descriptor: 0 = variable-block mode */
	uint8_t density;      /* block descriptor density code last selected (0 = default) */
	bool buffered;        /* mode header BUFFER MODE 1: WRITE completes when data is in the buffer */
	bool compression;     /* page 0Fh DCE: compress data written */
	bool swp;             /* page 0Ah SWP: software write protect */
	bool sili_ok;         /* page 10h: suppress ILI reporting for READ with SILI (always allowed here) */
	bool rew;             /* page 10h REW: report early warning on read */
	bool sew;             /* page 10h SEW: synchronize at early warning */
	uint8_t mrie;         /* page 1Ch method of reporting informational exceptions */
	bool dexcpt;          /* page 1Ch DEXCPT */
	bool test;            /* page 1Ch TEST */
	uint8_t select_partition; /* page 10h active partition (always 0: one partition) */
	uint8_t lbp_method;   /* page 0Ah/F0h LOGICAL BLOCK PROTECTION METHOD (enum ssc_lbp_method) */
	bool lbp_w;           /* page 0Ah/F0h LBP_W: WRITE blocks carry protection information */
	bool lbp_r;           /* page 0Ah/F0h LBP_R: READ blocks carry protection information */
	bool append_only;     /* page 10h/01h WRITE MODE 1h: write-type commands only at end of data */
};

/* Logical block protection methods (SSC-4 table 144). */
enum ssc_lbp_method {
	LBP_METHOD_NONE = 0x00,
	LBP_METHOD_RS_CRC = 0x01, /* Reed-Solomon CRC of ECMA-319 */
	LBP_METHOD_CRC32C = 0x02, /* CRC32C (Castagnoli) */
};
#define SSC_LBP_PI_LEN 4      /* protection information bytes of either method */
#define SSC_LBP_PAGE 0x0A     /* Control Data Protection: a subpage of the control mode page */
#define SSC_LBP_SUBPAGE 0xF0
#define SSC_LBP_PAGE_LEN 32
#define SSC_DCE_PAGE 0x10     /* Device Configuration Extension: a subpage of device configuration */
#define SSC_DCE_SUBPAGE 0x01
#define SSC_DCE_PAGE_LEN 32

/* The allow overwrite variable (SSC-4 7.1, ALLOW OVERWRITE field). */
enum ssc_allow_overwrite {
	SSC_ALLOW_DISABLED = 0x0,
	SSC_ALLOW_CURRENT = 0x1, /* one write-type command at the position it named */
	SSC_ALLOW_FORMAT = 0x2,  /* one FORMAT MEDIUM or SET CAPACITY */
};

/* Counters the log pages report; cleared by LOG SELECT where a page allows it. */
struct ssc_counters {
	uint64_t write_cmds, read_cmds;
	uint64_t host_written, host_read;     /* bytes the host transferred */
	uint64_t medium_written, medium_read; /* bytes on the medium (after compression) */
	uint64_t write_errors, read_errors;   /* uncorrected */
	uint64_t filemarks_written;
	uint64_t loads;                       /* lifetime of the drive object */
	uint64_t cleanings;
};

#define SSC_LOG_BASES 8 /* log pages with counters a LOG SELECT may reset (ssc_log.c) */

/* TapeAlert flags (SSC-4 annex A / TapeAlert specification), as bit (flag - 1). */
enum ssc_tapealert {
	TA_READ_WARNING = 1,
	TA_WRITE_WARNING = 2,
	TA_HARD_ERROR = 3,
	TA_MEDIA = 4,
	TA_READ_FAILURE = 5,
	TA_WRITE_FAILURE = 6,
	TA_WRITE_PROTECT = 9,
	TA_NO_REMOVAL = 10,
	TA_CLEANING_MEDIA = 11,
	TA_UNSUPPORTED_FORMAT = 12,
	TA_CLEAN_NOW = 20,
	TA_CLEAN_PERIODIC = 21,
	TA_EXPIRED_CLEANING_MEDIA = 22,
	TA_INVALID_CLEANING_TAPE = 23,
};

/*
 * Data encryption parameters (SSC-4 4.2.21): one public set, and local sets
 * of the nexuses that asked for their own (SCOPE LOCAL). A nexus uses its
 * local set when it has one, else the public one.
 */
#define SSC_CRYPT_LOCAL_MAX 8
struct ssc_crypt_set {
	bool used;               /* a local set: held by nexus */
	uint64_t nexus;          /* local: whose; public: who set it last */
	uint8_t key_scope;       /* scope the key was set with (enum sde_scope) */
	uint64_t gen;            /* changes whenever the set is established or released (ssc_crypt_lock) */
	bool ckod;               /* the key goes at the next unload */
	bool ckorp, ckorl;       /* it goes when set_by's reservation is preempted / lost (ssc_crypt_res_lost) */
	uint64_t set_by;         /* the nexus whose SET established it */
	uint8_t ceem;            /* CEEM as set, reported as CEEMS */
	uint8_t enc_mode, dec_mode, algorithm, rdmc, kad_format;
	struct vtl_key *key;     /* the key (locked memory), NULL when none */
	struct vtl_crypt io;     /* what the cartridge does under it */
};
/*
 * LOCK (SSC-3/SSC-4 4.2.21.11) is saved with the I_T nexus, not with the
 * parameters: a nexus is pinned to the set it used when its SET ended and to
 * that set's generation, until its next SECURITY PROTOCOL OUT or a reset.
 * Several nexuses may lock to one public set, so the count is the drive's
 * bound on locking nexuses, not on sets.
 */
#define SSC_CRYPT_LOCK_MAX 16
struct ssc_crypt_lock {
	bool used;
	uint64_t nexus;                  /* the locked nexus */
	const struct ssc_crypt_set *set; /* the set it locked to (pub or one of local[]) */
	uint64_t gen;                    /* that set's gen when it locked */
};
struct ssc_crypt_state {
	struct ssc_crypt_set pub;
	struct ssc_crypt_set local[SSC_CRYPT_LOCAL_MAX];
	struct ssc_crypt_lock locks[SSC_CRYPT_LOCK_MAX];
	uint32_t instance;       /* key instance counter: every key set or cleared counts one */
	uint64_t gen;            /* the last generation handed to a set */
};

struct ssc_drive {
	struct scsi_dev dev; /* first: handlers get &dev and convert back with ssc_of */
	pthread_mutex_t mu;
	struct ssc_config cfg;
	unsigned gen;        /* LTO generation of the drive */

	enum ssc_state state;
	struct ssc_medium medium;  /* valid unless SSC_EMPTY */
	struct vtl_label label;
	bool can_write;            /* the generation rules let this drive write the medium */
	bool held;                 /* SSC_EJECTED by LOAD UNLOAD with HOLD: still in the drive, MAM accessible */
	struct vtl_cart *cart;     /* open while SSC_LOADED */
	uint64_t capacity;         /* capacity of the loaded medium in force, bytes (SET CAPACITY may lower it) */
	uint64_t native_capacity;  /* the loaded medium's capacity before SET CAPACITY (set while loaded) */
	uint64_t clean_until_ms;   /* SSC_CLEANING ends at this CLOCK_MONOTONIC time */
	struct ssc_status last;    /* position and counts of the last load, kept after unthreading */


	struct ssc_mode mode;
	struct ssc_counters cnt;
	/* ssc_log.c: d->cnt as it was at each log page's last reset; a page reports the difference. */
	struct ssc_counters log_base[SSC_LOG_BASES];
	uint64_t tapealert;        /* bit (flag - 1) set: flag active until read */
	uint64_t ie_reported;      /* TapeAlert flags already reported as informational exceptions */

	/* An error found after its command completed, reported on the next one (SSC-4 4.2.15). */
	bool deferred_pending;
	struct scsi_sense deferred;

	/* MAM attributes of the loaded medium (read from the MAM store at load when there is one). */
	void *mam_mem;

	/* The drive as ssc_status last saw it, for ssc_status_now while a command runs. */
	pthread_mutex_t snap_mu;
	struct ssc_status snap;

	/* A migrated cartridge coming back to disk (ssc_stage.c). */
	bool following;            /* cart follows the stage in progress: read-only, waits for what it needs */
	bool modified;             /* the stage ops' modify was called in this load */
	enum ssc_stage stage;      /* what the last poll said */
	uint64_t stage_polled_ms;  /* when */
	uint64_t stage_wait_until_ms; /* the running command waits on the stage until then (0: not waiting yet) */
	bool stage_timed_out;      /* the running command's wait on the stage ended by its deadline */
	bool unrecorded;           /* the last ssc_threaded or ssc_stage_begin failed: on_medium could not record it */

	/* A cartridge the robot put in while a copy still held it (ssc.c): becoming ready until the copy lets go. */
	bool opening;              /* SSC_STAGING without a stage: the drive opens it as soon as it can */
	uint64_t open_retry_ms;    /* the next try */
	uint64_t yield_asked_ms;   /* when the copy was last asked to let go */

	struct ssc_crypt_state crypt; /* ssc_crypt.c */
	/* ssc_append.c: the allow overwrite variable and the position it names; forgotten at each load. */
	uint8_t allow_overwrite;   /* enum ssc_allow_overwrite */
	uint64_t allow_object;

	/* Contiguous copy of a block whose data the transport split over several buffers. */
	uint8_t *bounce;
	size_t bounce_cap;
};

static inline struct ssc_drive *ssc_of(struct scsi_dev *dev)
{
	return (struct ssc_drive *)dev;
}

/* The sense a command that needs a ready medium gets now; NULL when ready. */
const struct scsi_sense *ssc_not_ready(struct ssc_drive *d, struct scsi_sense *buf);

/* Whether a write to the loaded medium is allowed; else fills *s with the DATA PROTECT reason. */
bool ssc_may_write(struct ssc_drive *d, struct scsi_sense *s);

/* Translates a backend error at the current position into sense (MEDIUM ERROR, VOLUME OVERFLOW ...). */
struct scsi_sense ssc_sense_of_err(struct ssc_drive *d, int err);

/*
 * The informational exception to report now (page 1Ch, DEXCPT 0): the test
 * (5Dh/FFh) or TapeAlert flags set since the last report (5Dh/00h);
 * ASC_NONE if none. Flags cleared since are forgotten, so they report again.
 */
enum scsi_asc ssc_ie_pending(struct ssc_drive *d);

/* Marks the pending informational exception reported. */
void ssc_ie_reported(struct ssc_drive *d);

/* Makes everything written durable; a failure is the deferred error of earlier buffered writes (in *s). */
bool ssc_flush(struct ssc_drive *d, struct scsi_sense *s);

/* The density code of the loaded medium (or of the drive's own generation when none). */
uint8_t ssc_density_of_medium(const struct ssc_drive *d);

/* The early-warning distance (bytes before the end) for a medium of this capacity: one largest write at least, the capacity at most. */
uint64_t ssc_early_warning(const struct ssc_drive *d, uint64_t capacity);

/* How the drive opens the cartridge of d->medium now (follow: beside its stage, waiting through ssc_stage_more). */
struct vtl_cart_params ssc_cart_params(struct ssc_drive *d, bool follow);

/* Opens the cartridge of d->medium (follow: beside its stage), asking a copy that holds it to let go. */
int ssc_open_cart(struct ssc_drive *d, bool follow, struct vtl_cart **out);

/*
 * Makes the drive SSC_LOADED at BOT on c, opened by ssc_open_cart: one load,
 * as the library and MAM count it. When on_medium cannot record it, c is
 * closed, the drive stays as it was, d->unrecorded is set and its error returned.
 */
int ssc_threaded(struct ssc_drive *d, struct vtl_cart *c, bool follow);

/* Tells the library (on_medium) that the cartridge is threaded; sets d->unrecorded and returns its error when it cannot record it. */
int ssc_record_loaded(struct ssc_drive *d);

/* ssc_open_cart, then ssc_threaded. */
int ssc_thread(struct ssc_drive *d, bool follow);

/* A follower's more hook (backend/cartridge.h): waits a little, 1 while the stage runs, 0 once it ended. */
int ssc_stage_more(void *arg);
/* ssc_stage.c: a migrated cartridge threaded; asks for its stage and waits in SSC_STAGING (on_medium failing: as ssc_threaded). */
int ssc_stage_begin(struct ssc_drive *d);
/* Moves a stage on: SSC_STAGING becomes ready once records are on disk, a follower becomes writable once all are. */
void ssc_stage_tick(struct ssc_drive *d);
/* Before a write: waits for the stage to end, reopens the cartridge writable, tells the library; false with *s. */
bool ssc_stage_writable(struct ssc_drive *d, struct scsi_sense *s);
/*
 * The sense of a read (or space) that met end of data at eod while the
 * cartridge is staged: NOT READY / becoming ready when its wait on a running
 * stage ran out, MEDIUM ERROR for records a failed stage did not bring back.
 * False (s untouched) when eod is the cartridge's true end of data.
 */
bool ssc_stage_sense(struct ssc_drive *d, uint64_t eod, struct scsi_sense *s);
/* True when a read that reached end of data at eod stopped short of records the stage failed to bring back. */
bool ssc_stage_lost(struct ssc_drive *d, uint64_t eod);

/* The number of the highest bit set in v (0..7), for a field pointer at a reserved bit; -1 for 0. */
static inline int top_bit(uint8_t v)
{
	int b = -1;
	while (v) {
		b++;
		v >>= 1;
	}
	return b;
}

/* ssc_crypt.c: hands the cartridge the keys of nexus's parameters (before each data command). */
void ssc_crypt_apply(struct ssc_drive *d, uint64_t nexus);
/*
 * ssc_crypt.c: before a WRITE, READ or VERIFY of nexus: false with *s set
 * (DATA PROTECT, 2Ah/13h) when nexus locked its parameters and the set it
 * locked to has since been replaced or released; else true, and the
 * cartridge has nexus's keys (ssc_crypt_apply).
 */
bool ssc_crypt_use(struct ssc_drive *d, uint64_t nexus, struct scsi_sense *s);
/* The medium is unloading: keys set with CKOD are wiped (SSC-4 8.5.3.2). */
void ssc_crypt_unloaded(struct ssc_drive *d);
/* The nexus is gone: its local parameters are wiped, its locks released. */
void ssc_crypt_nexus_lost(struct ssc_drive *d, uint64_t nexus);
/* Every key wiped, every parameter back to its default (reset, shutdown). */
void ssc_crypt_wipe(struct ssc_drive *d);
/*
 * ssc_crypt.c: the drive's reservation loss observer (struct scsi_res
 * on_loss, arg the drive): nexus holds no reservation any more; the
 * parameters it set with CKORL, or with CKORP when preempted, go to their
 * defaults, key included. Runs under the drive's lock.
 */
void ssc_crypt_res_lost(void *arg, uint64_t nexus, bool preempted);
/*
 * ssc_crypt.c: a write, filemark or erase at object at replaces everything
 * from there on; encrypted says the blocks written there were encrypted.
 * Keeps the medium's first encrypted block (MAM_PRIVATE_ENC_FIRST), which
 * page 0020h's VCELB reports.
 */
void ssc_crypt_written(struct ssc_drive *d, uint64_t at, bool encrypted);
/* ssc_crypt.c: whether nexus's blocks are written encrypted now. */
bool ssc_crypt_encrypts(struct ssc_drive *d, uint64_t nexus);
void ssc_security_in(struct scsi_dev *dev, struct scsi_cmd *c);
void ssc_security_out(struct scsi_dev *dev, struct scsi_cmd *c);
/* ssc_lbp.c: logical block protection. */
/* What MODE SELECT may change in page 0Ah/F0h. */
extern const uint8_t ssc_lbp_page_mask[SSC_LBP_PAGE_LEN];
/* Renders page 0Ah/F0h's fields from m into p (SSC_LBP_PAGE_LEN bytes, header left to the caller). */
void ssc_lbp_page_render(const struct ssc_mode *m, uint8_t *p);
/* Checks a page 0Ah/F0h a host sent; false with the byte and bit of the first bad field. */
bool ssc_lbp_page_check(const uint8_t *p, uint16_t *byte, int *bit);
/* Takes the fields of a checked page 0Ah/F0h into m. */
void ssc_lbp_page_apply(struct ssc_mode *m, const uint8_t *p);
/* Bytes of protection information each block carries on WRITE (write) or READ now: 0 or SSC_LBP_PI_LEN. */
uint32_t ssc_lbp_pi_len(const struct ssc_drive *d, bool write);
/* Whether the last SSC_LBP_PI_LEN bytes of a block of len bytes (data and PI) are its CRC under the method in force. */
bool ssc_lbp_check(const struct ssc_drive *d, const uint8_t *block, size_t len);
/* Writes a checked protected block of len bytes: its data, with the CRC32C kept as the record's block CRC. */
int ssc_lbp_write_block(struct ssc_drive *d, const uint8_t *block, size_t len);
/*
 * After a read of a data block into p (fit bytes of room): appends its
 * protection information as far as fit allows and counts it in r's length
 * and copied bytes, so the READ's residue and ILI are those of the
 * protected block.
 */
void ssc_lbp_append(const struct ssc_drive *d, uint8_t *p, size_t fit, struct vtl_read_result *r);
/* ABORTED COMMAND, LOGICAL BLOCK GUARD CHECK FAILED: a WRITE's protection information did not match. */
struct scsi_sense ssc_lbp_guard_failed(void);
/* The Reed-Solomon CRC of ECMA-319 over len bytes (LBP method 01h). */
uint32_t ssc_rs_crc(const void *buf, size_t len);

/* ssc_append.c: append-only mode. */
/* What MODE SELECT may change in page 10h/01h. */
extern const uint8_t ssc_dce_page_mask[SSC_DCE_PAGE_LEN];
/* Renders page 10h/01h's fields from m into p (header left to the caller). */
void ssc_dce_page_render(const struct ssc_mode *m, uint8_t *p);
/* Checks a page 10h/01h a host sent against the current values cur; false with the bad field's byte and bit. */
bool ssc_dce_page_check(const struct ssc_mode *cur, const uint8_t *p, uint16_t *byte, int *bit);
/* Takes the fields of a checked page 10h/01h into m. */
void ssc_dce_page_apply(struct ssc_mode *m, const uint8_t *p);
/*
 * Whether append-only mode lets a write-type command run at the current
 * position (from_bot: FORMAT MEDIUM or SET CAPACITY); else *s is DATA
 * PROTECT. Uses up the allow overwrite variable either way.
 */
bool ssc_append_allowed(struct ssc_drive *d, bool from_bot, struct scsi_sense *s);
void ssc_allow_overwrite(struct scsi_dev *dev, struct scsi_cmd *c);

/* Handlers, by module. */
void ssc_test_unit_ready(struct scsi_dev *dev, struct scsi_cmd *c);
void ssc_request_sense(struct scsi_dev *dev, struct scsi_cmd *c);
void ssc_inquiry(struct scsi_dev *dev, struct scsi_cmd *c);
void ssc_prevent_allow(struct scsi_dev *dev, struct scsi_cmd *c);
void ssc_load_unload(struct scsi_dev *dev, struct scsi_cmd *c);

void ssc_read6(struct scsi_dev *dev, struct scsi_cmd *c);
void ssc_write6(struct scsi_dev *dev, struct scsi_cmd *c);
void ssc_write_filemarks6(struct scsi_dev *dev, struct scsi_cmd *c);
void ssc_verify6(struct scsi_dev *dev, struct scsi_cmd *c);
void ssc_read_block_limits(struct scsi_dev *dev, struct scsi_cmd *c);

void ssc_rewind(struct scsi_dev *dev, struct scsi_cmd *c);
void ssc_space6(struct scsi_dev *dev, struct scsi_cmd *c);
void ssc_space16(struct scsi_dev *dev, struct scsi_cmd *c);
void ssc_locate10(struct scsi_dev *dev, struct scsi_cmd *c);
void ssc_locate16(struct scsi_dev *dev, struct scsi_cmd *c);
void ssc_read_position(struct scsi_dev *dev, struct scsi_cmd *c);
void ssc_erase6(struct scsi_dev *dev, struct scsi_cmd *c);

void ssc_mode_sense(struct scsi_dev *dev, struct scsi_cmd *c);   /* 6 and 10 */
void ssc_mode_select(struct scsi_dev *dev, struct scsi_cmd *c);  /* 6 and 10 */
void ssc_log_sense(struct scsi_dev *dev, struct scsi_cmd *c);
void ssc_log_select(struct scsi_dev *dev, struct scsi_cmd *c);
/* Sets the mode defaults of a new drive (called by ssc_create). */
void ssc_mode_init(struct ssc_drive *d);

void ssc_read_attribute(struct scsi_dev *dev, struct scsi_cmd *c);
void ssc_write_attribute(struct scsi_dev *dev, struct scsi_cmd *c);
/* Updates the device attributes of MAM when a cartridge is loaded / unloaded (load count, last serial ...). */
void ssc_mam_loaded(struct ssc_drive *d);
void ssc_mam_unloading(struct ssc_drive *d);
/*
 * The loaded medium's stored attribute id (device attributes too, and the
 * drive's private ones, MAM_PRIVATE_*): VTL_OK with *len its length (cut to
 * cap), VTL_E_NOTFOUND if unset, VTL_E_INVAL with no MAM in memory.
 */
int ssc_mam_get(struct ssc_drive *d, uint16_t id, void *buf, size_t cap, size_t *len);
/* A numeric attribute of the loaded medium as READ ATTRIBUTE would give it now (0 when unset or unloaded). */
uint64_t ssc_mam_number(struct ssc_drive *d, uint16_t id);
/* Stores attribute id of the loaded medium (len 0: removes it), in the MAM store if there is one; VTL_OK or its error. */
int ssc_mam_put(struct ssc_drive *d, uint16_t id, const void *val, size_t len);
/* The medium was erased from BOT (FORMAT MEDIUM: initialized too; SET CAPACITY): counts it in MAM. */
void ssc_mam_formatted(struct ssc_drive *d, bool initialized);
/* Attributes the drive keeps for itself in MAM (SPC-4 reserves 1800h..FFFFh; READ ATTRIBUTE never shows them). */
#define MAM_PRIVATE_CAPACITY 0xFF00 /* SET CAPACITY's proportion, 2 bytes: survives unloads as on a real cartridge */
#define MAM_PRIVATE_ENC_FIRST 0xFF01 /* object number of the first encrypted block, 8 bytes; absent: none (VCELB) */


void ssc_report_density(struct scsi_dev *dev, struct scsi_cmd *c);
void ssc_set_capacity(struct scsi_dev *dev, struct scsi_cmd *c);
void ssc_format_medium(struct scsi_dev *dev, struct scsi_cmd *c);
/* Applies the stored SET CAPACITY proportion to a medium just loaded (called by ssc_mam_loaded). */
void ssc_capacity_loaded(struct ssc_drive *d);

#endif
