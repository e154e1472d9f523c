/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Migration jobs against a simulated physical library: copies stack on a
 * tape and verify, the catalog records them with the tape's file count, a
 * write error retires the tape and the job goes on to another, a cancelled
 * or failed copy leaves nothing marked good, a loaded or damaged cartridge
 * is refused, and a copy damaged on tape fails verification. A job step the
 * catalog cannot record (a trigger added to it is the fault) ends the job
 * failed, never done, and a recall whose end cannot be recorded is no success.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "backend/internal.h"
#include "common/vtl_error.h"
#include "migrator/migrate.h"
#include "migrator/phys_sim.h"
#include "migrator/policy.h"
#include "tests/unit/scsi_host.h"

#define TAPE_CAP (64ull << 20)

static struct phys_lib *lib;
static struct migrator mig;
static char tapes[TL_DIR_LEN + 16];
static atomic_bool cancel;
static uint64_t cancel_after; /* bytes after which the progress callback cancels (0: never) */

static void progress(void *arg, const char *barcode, const struct stream_progress *p)
{
	(void)arg;
	(void)barcode;
	if (cancel_after && p->bytes >= cancel_after)
		atomic_store(&cancel, true);
}

static int setup(void **state)
{
	if (host_setup(state) != 0)
		return -1;
	struct host *h = *state;
	snprintf(tapes, sizeof tapes, "%s/tapes", h->fx->dir);
	struct phys_sim_config cfg = {.generation = 8, .drives = 2, .slots = 6, .tapes = 4, .capacity = TAPE_CAP,
				      .data_dir = tapes};
	char err[256];
	if (phys_sim_open(&cfg, &lib, err, sizeof err) != VTL_OK)
		return -1;
	atomic_store(&cancel, false);
	cancel_after = 0;
	mig = (struct migrator){.cat = h->cat, .pool = h->fx->pool, .lib = lib, .phys_name = "sim1", .virt_name = "unit",
				.ring = {.buffers = 4, .buffer_size = 256 << 10, .watermark = 2, .readers = 2},
				.verify = true, .drive = -1, .cancel = &cancel, .progress = progress};
	unsigned added = 0;
	return migrate_scan_tapes(&mig, TAPE_CAP, &added, err, sizeof err) == VTL_OK && added == 4 ? 0 : -1;
}

static int teardown(void **state)
{
	lib->ops->close(lib);
	return host_teardown(state);
}

/* A cartridge in the pool and the catalog holding blocks blocks of mixed data. */
static void cart_with(struct host *h, const char *bc, unsigned blocks, uint64_t seed)
{
	host_new_cart(h, bc, 0);
	struct vtl_cart_params p = {.compression = true};
	struct vtl_cart *c = tl_cart_open(h->fx->pool, bc, &p);
	static uint8_t buf[262144];
	for (unsigned i = 0; i < blocks; i++) {
		gen_data(buf, sizeof buf, seed * 100 + i, seed < 100 && i % 3 == 0);
		EXPECT_RC(vtl_cart_write_block(c, buf, sizeof buf), 0);
		if (i % 10 == 9)
			EXPECT_RC(vtl_cart_write_filemarks(c, 1), 0);
	}
	EXPECT_RC(vtl_cart_close(c), 0);
}

struct found {
	struct cat_copy k[4];
	unsigned n;
};

static int found_copy(const struct cat_copy *k, void *arg)
{
	struct found *f = arg;
	if (k->id && f->n < 4)
		f->k[f->n++] = *k;
	return 0;
}

static struct found copies_of(struct host *h, const char *bc)
{
	struct found f = {0};
	EXPECT_RC(catalog_copy_list(h->cat, bc, found_copy, &f), 0);
	return f;
}

static void copies_stack_and_verify(void **state)
{
	struct host *h = *state;
	cart_with(h, "M00001L8", 24, 1);
	cart_with(h, "M00002L8", 12, 2);
	int64_t job;
	EXPECT_RC(catalog_job_add(h->cat, CAT_JOB_MIGRATE, "M00001L8", &job), 0);
	struct migrate_report r1, r2;
	char err[512];
	EXPECT_RC(migrate_copy(&mig, "M00001L8", job, &r1, err, sizeof err), 0);
	assert_string_equal(r1.tape, "PHY001L8");
	assert_int_equal(r1.file, 0);
	assert_true(r1.verified);
	EXPECT_RC(migrate_copy(&mig, "M00002L8", 0, &r2, err, sizeof err), 0);
	assert_string_equal(r2.tape, "PHY001L8"); /* stacked on the same tape */
	assert_int_equal(r2.file, 1);
	assert_int_equal(r2.copy.block, 1 + r1.copy.data_blocks + r1.copy.trailer_blocks + 1);

	struct found f = copies_of(h, "M00001L8");
	assert_int_equal(f.n, 1);
	assert_string_equal(f.k[0].state, "good");
	assert_string_equal(f.k[0].digest, r1.copy.digest);
	assert_true(f.k[0].verified_at > 0);
	assert_int_equal(f.k[0].length, r1.copy.stream_bytes);
	struct cat_ptape t;
	EXPECT_RC(catalog_ptape_get(h->cat, "PHY001L8", &t), 0);
	assert_int_equal(t.files, 2);
	assert_string_equal(t.state, "filling");
	assert_int_equal(t.used, r1.copy.tape_bytes + r2.copy.tape_bytes);
	struct cat_cartridge cc;
	EXPECT_RC(catalog_cartridge_get(h->cat, "M00001L8", &cc), 0);
	assert_int_equal(cc.cache, CAT_CACHE_PREMIGRATED);
	struct cat_job j;
	EXPECT_RC(catalog_job_get(h->cat, job, &j), 0);
	assert_int_equal(j.state, CAT_JOB_DONE);
	assert_int_equal(j.bytes_done, r1.copy.stream_bytes);

	unsigned verified = 0;
	EXPECT_RC(migrate_verify(&mig, "M00001L8", 0, &verified, err, sizeof err), 0);
	assert_int_equal(verified, 1);
	EXPECT_RC(migrate_verify(&mig, "M00002L8", 0, &verified, err, sizeof err), 0);
	assert_int_equal(migrate_verify(&mig, "M00009L8", 0, &verified, err, sizeof err), VTL_E_NOTFOUND);
}

/* A write error half way: the tape is retired, the copy lands on the next tape, nothing bad is recorded. */
static void write_error_moves_to_another_tape(void **state)
{
	struct host *h = *state;
	cart_with(h, "M00003L8", 20, 3);
	unsigned d;
	char err[512];
	EXPECT_RC(migrate_mount(&mig, "PHY001L8", &d, err, sizeof err), 0);
	struct phys_sim_fault fault = {.write_error_at = 2u << 20};
	phys_sim_inject(lib, d, &fault);
	struct migrate_report r;
	EXPECT_RC(migrate_copy(&mig, "M00003L8", 0, &r, err, sizeof err), 0);
	assert_int_equal(r.tries, 2);
	assert_string_equal(r.tape, "PHY002L8");
	assert_int_equal(r.file, 0);
	struct cat_ptape t;
	EXPECT_RC(catalog_ptape_get(h->cat, "PHY001L8", &t), 0);
	assert_string_equal(t.state, "error");
	assert_int_equal(t.files, 0);
	struct found f = copies_of(h, "M00003L8");
	assert_int_equal(f.n, 2); /* the failed attempt, kept as a bad copy, then the good one */
	assert_string_equal(f.k[0].tape, "PHY001L8");
	assert_string_equal(f.k[0].state, "bad");
	assert_string_equal(f.k[1].tape, "PHY002L8");
	assert_string_equal(f.k[1].state, "good");
}

static double slow(void *arg)
{
	(void)arg;
	return 8e6; /* slow enough for the progress callback (twice a second) to see the copy half way */
}

/* Cancelled half way: no copy, the tape's file count unchanged; the next copy takes that file's place. */
static void cancelled_copy_leaves_nothing(void **state)
{
	struct host *h = *state;
	cart_with(h, "M00004L8", 30, 4);
	cancel_after = 2u << 20;
	mig.ring.rate_limit = slow;
	struct migrate_report r;
	char err[512];
	assert_int_equal(migrate_copy(&mig, "M00004L8", 0, &r, err, sizeof err), VTL_E_BUSY);
	assert_non_null(strstr(err, "cancelled"));
	assert_int_equal(r.tries, 1);
	assert_int_equal(copies_of(h, "M00004L8").n, 0);
	struct cat_ptape t;
	EXPECT_RC(catalog_ptape_get(h->cat, "PHY001L8", &t), 0);
	assert_int_equal(t.files, 0);
	assert_string_equal(t.state, "scratch");
	cancel_after = 0;
	mig.ring.rate_limit = NULL;
	atomic_store(&cancel, false);
	int rc = migrate_copy(&mig, "M00004L8", 0, &r, err, sizeof err);
	if (rc)
		fail_msg("%s", err);
	assert_string_equal(r.tape, "PHY001L8");
	assert_int_equal(r.file, 0);
	assert_int_equal(r.copy.block, 0);
	unsigned verified;
	EXPECT_RC(migrate_verify(&mig, "M00004L8", 0, &verified, err, sizeof err), 0);
}

static void refused_cartridges(void **state)
{
	struct host *h = *state;
	cart_with(h, "M00005L8", 10, 5);
	EXPECT_RC(catalog_cartridge_set_state(h->cat, "M00005L8", "loaded"), 0);
	struct migrate_report r;
	char err[512];
	assert_int_equal(migrate_copy(&mig, "M00005L8", 0, &r, err, sizeof err), VTL_E_BUSY);
	assert_non_null(strstr(err, "loaded"));
	EXPECT_RC(catalog_cartridge_set_state(h->cat, "M00005L8", "available"), 0);
	/* Damaged on disk: refused, no retry on another tape, the tape not blamed. */
	char path[TL_PATH_LEN + 64];
	EXPECT_RC(pool_seg_path(h->fx->pool, "M00005L8", 0, path, sizeof path), 0);
	int fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	uint8_t b = 0;
	assert_int_equal(pwrite(fd, &b, 1, 128 + 32 + 777), 1);
	close(fd);
	assert_int_equal(migrate_copy(&mig, "M00005L8", 0, &r, err, sizeof err), VTL_E_MEDIUM);
	assert_int_equal(r.tries, 1);
	assert_non_null(strstr(err, "damaged"));
	struct cat_ptape t;
	EXPECT_RC(catalog_ptape_get(h->cat, "PHY001L8", &t), 0);
	assert_string_equal(t.state, "scratch");
	assert_int_equal(migrate_copy(&mig, "M00099L8", 0, &r, err, sizeof err), VTL_E_NOTFOUND);
	/* Bigger than any tape. */
	cart_with(h, "M00006L8", 300, 106); /* 75 MiB of random data */
	assert_int_equal(migrate_copy(&mig, "M00006L8", 0, &r, err, sizeof err), VTL_E_POOL_FULL);
	assert_non_null(strstr(err, "no tape of sim1 has room"));
}

/* A copy damaged on tape: verification fails and marks it bad; its cartridge, without another, is resident again. */
static void damaged_copy_is_marked_bad(void **state)
{
	struct host *h = *state;
	cart_with(h, "M00007L8", 16, 7);
	struct migrate_report r;
	char err[512];
	EXPECT_RC(migrate_copy(&mig, "M00007L8", 0, &r, err, sizeof err), 0);
	char path[TL_DIR_LEN + 64];
	snprintf(path, sizeof path, "%s/%s.tape", tapes, r.tape);
	int fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	uint8_t b = 0x5A;
	assert_int_equal(pwrite(fd, &b, 1, 4 + COPY_HEADER_LEN + 4 + 3000), 1);
	close(fd);
	unsigned verified = 0;
	struct cat_cartridge cc;
	EXPECT_RC(catalog_cartridge_get(h->cat, "M00007L8", &cc), 0);
	assert_int_equal(cc.cache, CAT_CACHE_PREMIGRATED);
	assert_int_equal(migrate_verify(&mig, "M00007L8", 0, &verified, err, sizeof err), VTL_E_MEDIUM);
	assert_int_equal(verified, 0);
	struct found f = copies_of(h, "M00007L8");
	assert_string_equal(f.k[0].state, "bad");
	/* Premigrated no more: the disk copy is its only one, and the policy copies resident cartridges. */
	EXPECT_RC(catalog_cartridge_get(h->cat, "M00007L8", &cc), 0);
	assert_int_equal(cc.cache, CAT_CACHE_RESIDENT);
}

/*
 * The tape ends before the copy does (62 MiB of a 64 MiB tape were used
 * behind the catalog's back): end of medium mid-copy retires the tape and
 * the copy lands on the next one.
 */
static void end_of_tape_moves_to_another_tape(void **state)
{
	struct host *h = *state;
	cart_with(h, "M00010L8", 20, 10); /* about 4 MiB */
	unsigned d;
	char err[512];
	EXPECT_RC(migrate_mount(&mig, "PHY001L8", &d, err, sizeof err), 0);
	static uint8_t fill[1 << 20];
	for (unsigned i = 0; i < 62; i++)
		assert_true(lib->ops->write_block(lib, d, fill, sizeof fill) >= 0);
	EXPECT_RC(lib->ops->write_filemarks(lib, d, 1), 0);
	/* The catalog learns of that file (a copy since invalidated), not of its size. */
	struct cat_copy k = {.file = 0, .block = 0, .length = 1};
	snprintf(k.barcode, sizeof k.barcode, "M00010L8");
	snprintf(k.tape, sizeof k.tape, "PHY001L8");
	snprintf(k.digest, sizeof k.digest, "unknown");
	snprintf(k.state, sizeof k.state, "invalid");
	EXPECT_RC(catalog_copy_commit(h->cat, &k, 0, "filling"), 0);
	struct migrate_report r;
	EXPECT_RC(migrate_copy(&mig, "M00010L8", 0, &r, err, sizeof err), 0);
	assert_int_equal(r.tries, 2);
	assert_string_equal(r.tape, "PHY002L8");
	struct cat_ptape t;
	EXPECT_RC(catalog_ptape_get(h->cat, "PHY001L8", &t), 0);
	assert_string_equal(t.state, "error");
}

/* A drive that cannot take the tape (offline): the job fails and says why; the tapes are not blamed. */
static void offline_drive_fails_job_not_tapes(void **state)
{
	struct host *h = *state;
	cart_with(h, "M00011L8", 4, 11);
	struct phys_sim_fault off = {.offline = true};
	phys_sim_inject(lib, 0, &off);
	phys_sim_inject(lib, 1, &off);
	struct migrate_report r;
	char err[512];
	assert_int_equal(migrate_copy(&mig, "M00011L8", 0, &r, err, sizeof err), VTL_E_IO);
	assert_non_null(strstr(err, "offline"));
	assert_int_equal(r.tries, 1);
	struct cat_ptape t;
	EXPECT_RC(catalog_ptape_get(h->cat, "PHY001L8", &t), 0);
	assert_string_equal(t.state, "scratch");
	assert_int_equal(copies_of(h, "M00011L8").n, 0);
}

/* A read error while verifying: the copy is marked bad, the event log says so. */
static void read_error_in_verify_marks_copy_bad(void **state)
{
	struct host *h = *state;
	cart_with(h, "M00012L8", 6, 12);
	struct migrate_report r;
	char err[512];
	EXPECT_RC(migrate_copy(&mig, "M00012L8", 0, &r, err, sizeof err), 0);
	unsigned d;
	EXPECT_RC(migrate_mount(&mig, r.tape, &d, err, sizeof err), 0);
	struct phys_sim_fault bad = {.read_error = true};
	phys_sim_inject(lib, d, &bad);
	unsigned verified = 1;
	assert_int_equal(migrate_verify(&mig, "M00012L8", 0, &verified, err, sizeof err), VTL_E_MEDIUM);
	assert_int_equal(verified, 0);
	assert_non_null(strstr(err, "unrecovered read error"));
	assert_string_equal(copies_of(h, "M00012L8").k[0].state, "bad");
}

/*
 * A native copy: on a scratch tape of its own, from its beginning, the host's
 * blocks and filemarks one to one, readable as the cartridge was; verified,
 * recorded, and the tape takes no stacked copy after it.
 */
static void native_copy_reads_as_the_cartridge(void **state)
{
	struct host *h = *state;
	cart_with(h, "M00008L8", 23, 8); /* filemarks after blocks 9 and 19 */
	cart_with(h, "M00009L8", 5, 9);
	struct migrate_report r;
	char err[512];
	mig.native = true;
	EXPECT_RC(migrate_copy(&mig, "M00008L8", 0, &r, err, sizeof err), 0);
	mig.native = false;
	assert_true(r.verified);
	assert_int_equal(r.file, 0);
	assert_int_equal(r.copy.block, 0);
	assert_int_equal(r.copy.data_blocks, 23);
	assert_int_equal(r.copy.filemarks, 2);
	assert_non_null(strstr(r.copy.digest, COPY_NATIVE_PREFIX));
	struct cat_ptape t;
	EXPECT_RC(catalog_ptape_get(h->cat, r.tape, &t), 0);
	assert_string_equal(t.state, "native");
	/* Read the tape as a backup application would: block by block, filemarks where the host wrote them. */
	unsigned d;
	EXPECT_RC(migrate_mount(&mig, r.tape, &d, err, sizeof err), 0);
	EXPECT_RC(lib->ops->rewind(lib, d), 0);
	static uint8_t want[262144], got[262144];
	for (unsigned i = 0; i < 23; i++) {
		size_t len = 0;
		EXPECT_RC(lib->ops->read_block(lib, d, got, sizeof got, &len), 0);
		gen_data(want, sizeof want, 8 * 100 + i, i % 3 == 0);
		assert_int_equal(len, sizeof want);
		assert_memory_equal(got, want, len);
		if (i % 10 == 9)
			assert_int_equal(lib->ops->read_block(lib, d, got, sizeof got, &len), VTL_W_FILEMARK);
	}
	size_t len;
	assert_int_equal(lib->ops->read_block(lib, d, got, sizeof got, &len), VTL_E_EOD);
	unsigned verified = 0;
	EXPECT_RC(migrate_verify(&mig, "M00008L8", 0, &verified, err, sizeof err), 0);
	assert_int_equal(verified, 1);
	/* A stacked copy goes elsewhere. */
	EXPECT_RC(migrate_copy(&mig, "M00009L8", 0, &r, err, sizeof err), 0);
	EXPECT_RC(catalog_ptape_get(h->cat, r.tape, &t), 0);
	assert_string_equal(t.state, "filling");
	assert_string_not_equal(r.tape, "PHY001L8");
}

/* Reads the whole cartridge back and checks every block and filemark against what cart_with wrote. */
static void expect_cart_content(struct host *h, const char *bc, unsigned blocks, uint64_t seed)
{
	struct vtl_cart_params p = {.readonly = true};
	struct vtl_cart *c = tl_cart_open(h->fx->pool, bc, &p);
	static uint8_t got[262144], want[262144];
	struct vtl_read_result r;
	for (unsigned i = 0; i < blocks; i++) {
		EXPECT_RC(vtl_cart_read(c, got, sizeof got, &r), 0);
		assert_int_equal(r.type, VTL_OBJ_DATA);
		gen_data(want, sizeof want, seed * 100 + i, seed < 100 && i % 3 == 0);
		assert_int_equal(r.copied, sizeof want);
		assert_memory_equal(got, want, sizeof want);
		if (i % 10 == 9) {
			EXPECT_RC(vtl_cart_read(c, got, sizeof got, &r), 0);
			assert_int_equal(r.type, VTL_OBJ_FILEMARK);
		}
	}
	EXPECT_RC(vtl_cart_read(c, got, sizeof got, &r), 0);
	assert_int_equal(r.type, VTL_OBJ_EOD);
	EXPECT_RC(vtl_cart_close(c), 0);
}

/* Releases a cartridge's disk data, as the cache policy will: empty on disk, migrated in the catalog. */
static void release(struct host *h, const char *bc)
{
	struct vtl_cart_params p = {0};
	struct vtl_cart *c = tl_cart_open(h->fx->pool, bc, &p);
	EXPECT_RC(vtl_cart_rewind(c), 0);
	EXPECT_RC(vtl_cart_erase(c), 0);
	EXPECT_RC(vtl_cart_close(c), 0);
	EXPECT_RC(catalog_cartridge_set_cache(h->cat, bc, CAT_CACHE_MIGRATED), 0);
}

/*
 * Recall: two copies on two tapes; the newest is damaged on tape, so it is
 * marked bad and the older one is staged back; the cartridge reads back
 * bit-exact and is premigrated. Without a good copy, it stays migrated.
 */
static void recall_falls_back_to_the_older_copy(void **state)
{
	struct host *h = *state;
	cart_with(h, "M00013L8", 25, 13);
	struct migrate_report r1, r2;
	char err[512];
	EXPECT_RC(migrate_copy(&mig, "M00013L8", 0, &r1, err, sizeof err), 0);
	EXPECT_RC(catalog_ptape_update(h->cat, r1.tape, 0, "full"), 0); /* the next copy goes to another tape */
	EXPECT_RC(migrate_copy(&mig, "M00013L8", 0, &r2, err, sizeof err), 0);
	assert_string_not_equal(r1.tape, r2.tape);
	assert_int_equal(migrate_recall(&mig, "M00013L8", 0, err, sizeof err), VTL_E_EXISTS);
	release(h, "M00013L8");
	char path[TL_DIR_LEN + 64];
	snprintf(path, sizeof path, "%s/%s.tape", tapes, r2.tape);
	int fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	uint8_t b = 0xA5;
	assert_int_equal(pwrite(fd, &b, 1, 4 + COPY_HEADER_LEN + 4 + 777777), 1);
	close(fd);
	int64_t job;
	EXPECT_RC(catalog_job_add(h->cat, CAT_JOB_RECALL, "M00013L8", &job), 0);
	EXPECT_RC(migrate_recall(&mig, "M00013L8", job, err, sizeof err), 0);
	expect_cart_content(h, "M00013L8", 25, 13);
	struct cat_cartridge cc;
	EXPECT_RC(catalog_cartridge_get(h->cat, "M00013L8", &cc), 0);
	assert_int_equal(cc.cache, CAT_CACHE_PREMIGRATED);
	struct found f = copies_of(h, "M00013L8");
	assert_int_equal(f.n, 2);
	assert_string_equal(f.k[0].state, "good");
	assert_string_equal(f.k[1].state, "bad");
	struct cat_job j;
	EXPECT_RC(catalog_job_get(h->cat, job, &j), 0);
	assert_int_equal(j.state, CAT_JOB_DONE);
	/* Both copies gone bad: the recall fails and leaves the cartridge migrated and empty. */
	EXPECT_RC(catalog_copy_set_state(h->cat, f.k[0].id, "bad"), 0);
	release(h, "M00013L8");
	assert_int_equal(migrate_recall(&mig, "M00013L8", 0, err, sizeof err), VTL_E_NOTFOUND);
	EXPECT_RC(catalog_cartridge_get(h->cat, "M00013L8", &cc), 0);
	assert_int_equal(cc.cache, CAT_CACHE_MIGRATED);
}

/* A recall cancelled part way keeps what it brought back (the cartridge stays migrated); the next one resumes. */
static void cancelled_recall_resumes(void **state)
{
	struct host *h = *state;
	cart_with(h, "M00014L8", 30, 14);
	struct migrate_report r;
	char err[512];
	EXPECT_RC(migrate_copy(&mig, "M00014L8", 0, &r, err, sizeof err), 0);
	release(h, "M00014L8");
	cancel_after = 1; /* the first progress report cancels: a block or so is staged */
	int64_t job;
	EXPECT_RC(catalog_job_add(h->cat, CAT_JOB_RECALL, "M00014L8", &job), 0);
	assert_int_equal(migrate_recall(&mig, "M00014L8", job, err, sizeof err), VTL_E_BUSY);
	struct cat_cartridge cc;
	EXPECT_RC(catalog_cartridge_get(h->cat, "M00014L8", &cc), 0);
	assert_int_equal(cc.cache, CAT_CACHE_MIGRATED);
	struct vtl_cart_info info;
	EXPECT_RC(vtl_cart_info(h->fx->pool, "M00014L8", &info), 0);
	assert_true(info.eod > 0 && info.eod < 33); /* 30 blocks and 3 filemarks in all */
	struct cat_job j;
	EXPECT_RC(catalog_job_get(h->cat, job, &j), 0);
	assert_int_equal(j.state, CAT_JOB_FAILED);
	cancel_after = 0;
	atomic_store(&cancel, false);
	EXPECT_RC(migrate_recall(&mig, "M00014L8", 0, err, sizeof err), 0);
	expect_cart_content(h, "M00014L8", 30, 14);
	EXPECT_RC(catalog_cartridge_get(h->cat, "M00014L8", &cc), 0);
	assert_int_equal(cc.cache, CAT_CACHE_PREMIGRATED);
}

/* Two copy pools: the first copy goes to the first pool, the second to the other one's tapes. */
static void copies_go_to_each_pool(void **state)
{
	struct host *h = *state;
	cart_with(h, "M00015L8", 6, 15);
	EXPECT_RC(catalog_ptape_set_pool(h->cat, "PHY003L8", "vault"), 0);
	EXPECT_RC(catalog_ptape_set_pool(h->cat, "PHY004L8", "vault"), 0);
	struct vtl_policy_config cp = {.copy_pools = 2};
	snprintf(cp.copy_pool[0], sizeof cp.copy_pool[0], CAT_POOL_DEFAULT);
	snprintf(cp.copy_pool[1], sizeof cp.copy_pool[1], "vault");
	mig.copies = &cp;
	struct migrate_report r;
	char err[512];
	EXPECT_RC(migrate_copy(&mig, "M00015L8", 0, &r, err, sizeof err), 0);
	assert_string_equal(r.tape, "PHY001L8");
	assert_string_equal(r.pool, CAT_POOL_DEFAULT);
	EXPECT_RC(migrate_copy(&mig, "M00015L8", 0, &r, err, sizeof err), 0);
	assert_string_equal(r.tape, "PHY003L8");
	assert_string_equal(r.pool, "vault");
	unsigned have = 0;
	EXPECT_RC(policy_copy_pools(h->cat, &cp, "M00015L8", &have), 0);
	assert_int_equal(have, 3);
	/* Both pools hold one: another copy goes to the first pool again. */
	EXPECT_RC(migrate_copy(&mig, "M00015L8", 0, &r, err, sizeof err), 0);
	assert_string_equal(r.pool, CAT_POOL_DEFAULT);
	/* A pool without a tape with room: the job says which pool. */
	snprintf(cp.copy_pool[1], sizeof cp.copy_pool[1], "offsite");
	assert_int_equal(migrate_copy(&mig, "M00015L8", 0, &r, err, sizeof err), VTL_E_POOL_FULL);
	assert_non_null(strstr(err, "in pool offsite"));
	mig.copies = NULL;
}

/* Counts the event log's lines that are exactly arg's text. */
struct event_match {
	const char *what;
	unsigned n;
};

static int match_event(const struct cat_event *e, void *arg)
{
	struct event_match *m = arg;
	m->n += strcmp(e->what, m->what) == 0;
	return 0;
}

/*
 * A tape whose copy header was forged (block size 1, a length of 2^62 + 2,
 * CRC made right): the recall refuses it with the field and what the tape
 * and the catalog say, logs it, marks the copy bad and leaves the cartridge
 * migrated; nothing is marked good.
 */
static void forged_header_fails_recall(void **state)
{
	struct host *h = *state;
	cart_with(h, "M00016L8", 10, 16);
	struct migrate_report r;
	char err[512];
	EXPECT_RC(migrate_copy(&mig, "M00016L8", 0, &r, err, sizeof err), 0);
	assert_int_equal(r.copy.block, 0); /* the tape's first record: its header at byte 4 of the tape file */
	release(h, "M00016L8");
	char path[TL_DIR_LEN + 64];
	snprintf(path, sizeof path, "%s/%s.tape", tapes, r.tape);
	int fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	uint8_t hb[COPY_HEADER_LEN];
	assert_int_equal(pread(fd, hb, sizeof hb, 4), sizeof hb);
	struct copy_header ch;
	EXPECT_RC(copy_header_decode(hb, sizeof hb, &ch), 0);
	ch.block_size = 1;
	ch.stream_bytes = (1ull << 62) + 2;
	copy_header_encode(&ch, hb);
	assert_int_equal(pwrite(fd, hb, sizeof hb, 4), sizeof hb);
	close(fd);
	int64_t job;
	EXPECT_RC(catalog_job_add(h->cat, CAT_JOB_RECALL, "M00016L8", &job), 0);
	assert_int_equal(migrate_recall(&mig, "M00016L8", job, err, sizeof err), VTL_E_MEDIUM);
	char want[256];
	snprintf(want, sizeof want, "recall of M00016L8 from %s file 0 failed: header: block_size 1, outside "
		 "4096..8388608 (the drive's READ BLOCK LIMITS)", r.tape);
	assert_string_equal(err, want);
	struct event_match logged = {want, 0};
	EXPECT_RC(catalog_event_list(h->cat, 0, 0, match_event, &logged), 0);
	assert_int_equal(logged.n, 1);
	struct cat_cartridge cc;
	EXPECT_RC(catalog_cartridge_get(h->cat, "M00016L8", &cc), 0);
	assert_int_equal(cc.cache, CAT_CACHE_MIGRATED);
	assert_string_equal(copies_of(h, "M00016L8").k[0].state, "bad");
	struct cat_job j;
	EXPECT_RC(catalog_job_get(h->cat, job, &j), 0);
	assert_int_equal(j.state, CAT_JOB_FAILED);
}

#define FAULT(when) "CREATE TRIGGER fault BEFORE UPDATE OF " when " BEGIN SELECT RAISE(ABORT, 'injected'); END;"

/* A copy job of a new cartridge bc while fault makes a catalog update fail: it fails, and err says why. */
static struct cat_job failing_copy(struct host *h, const char *bc, uint64_t seed, const char *fault, const char *why)
{
	cart_with(h, bc, 6, seed);
	host_catalog_fault(h, fault);
	int64_t job;
	EXPECT_RC(catalog_job_add(h->cat, CAT_JOB_MIGRATE, bc, &job), 0);
	struct migrate_report r;
	char err[512];
	assert_int_not_equal(migrate_copy(&mig, bc, job, &r, err, sizeof err), VTL_OK);
	assert_non_null(strstr(err, why));
	struct cat_job j;
	EXPECT_RC(catalog_job_get(h->cat, job, &j), 0);
	return j;
}

static void unrecorded_premigration_fails_the_job(void **state)
{
	struct host *h = *state;
	struct cat_job j = failing_copy(h, "M00031L8", 31, FAULT("cache ON cartridge WHEN NEW.cache = 1"), "premigrated");
	assert_int_equal(j.state, CAT_JOB_FAILED);
	assert_non_null(strstr(j.error, "premigrated"));
	struct cat_cartridge cc;
	EXPECT_RC(catalog_cartridge_get(h->cat, "M00031L8", &cc), 0);
	assert_int_equal(cc.cache, CAT_CACHE_RESIDENT); /* so the policy never releases its disk copy */
}

static void unrecorded_job_end_is_no_success(void **state)
{
	struct host *h = *state;
	struct cat_job j = failing_copy(h, "M00032L8", 32, FAULT("state ON job WHEN NEW.state = 3"),
					"cannot record the end of job");
	assert_int_equal(j.state, CAT_JOB_RUNNING); /* a restart queues it again */
}

/* A recall that cannot record that it runs stages nothing; one that cannot record its end is no success. */
static void unrecorded_recall_steps(void **state)
{
	struct host *h = *state;
	cart_with(h, "M00033L8", 8, 33);
	struct migrate_report r;
	char err[512];
	EXPECT_RC(migrate_copy(&mig, "M00033L8", 0, &r, err, sizeof err), 0);
	release(h, "M00033L8");
	host_catalog_fault(h, FAULT("cache ON cartridge WHEN NEW.cache = 3"));
	int64_t job;
	EXPECT_RC(catalog_job_add(h->cat, CAT_JOB_RECALL, "M00033L8", &job), 0);
	assert_int_not_equal(migrate_recall(&mig, "M00033L8", job, err, sizeof err), VTL_OK);
	struct cat_job j;
	EXPECT_RC(catalog_job_get(h->cat, job, &j), 0);
	assert_int_equal(j.state, CAT_JOB_FAILED);
	struct vtl_cart_info info;
	EXPECT_RC(vtl_cart_info(h->fx->pool, "M00033L8", &info), 0);
	assert_int_equal(info.eod, 0); /* nothing staged */
	struct cat_cartridge cc;
	EXPECT_RC(catalog_cartridge_get(h->cat, "M00033L8", &cc), 0);
	assert_int_equal(cc.cache, CAT_CACHE_MIGRATED);
	host_catalog_fault(h, "DROP TRIGGER fault;" FAULT("cache ON cartridge WHEN NEW.cache = 1"));
	EXPECT_RC(catalog_job_add(h->cat, CAT_JOB_RECALL, "M00033L8", &job), 0);
	assert_int_not_equal(migrate_recall(&mig, "M00033L8", job, err, sizeof err), VTL_OK);
	assert_non_null(strstr(err, "cannot record the end of the stage"));
	EXPECT_RC(catalog_job_get(h->cat, job, &j), 0);
	assert_int_equal(j.state, CAT_JOB_FAILED);
}

/*
 * A migrated cartridge whose damaged disk copy is still there (a forced
 * release that stopped before its files were gone): the recall empties it
 * rather than take its records for a stage already under way, and the
 * cartridge reads back whole.
 */
static void recall_empties_a_damaged_disk_copy(void **state)
{
	struct host *h = *state;
	cart_with(h, "M00040L8", 25, 40);
	struct migrate_report r;
	char err[512];
	EXPECT_RC(migrate_copy(&mig, "M00040L8", 0, &r, err, sizeof err), 0);
	char path[sizeof h->fx->mpath[0] + 64];
	snprintf(path, sizeof path, "%s/M00040L8/00000001.seg", h->fx->mpath[0]);
	assert_int_equal(truncate(path, 4096), 0);
	struct vtl_cart_info info;
	EXPECT_RC(vtl_cart_info(h->fx->pool, "M00040L8", &info), 0);
	assert_true(info.damaged > 0);
	EXPECT_RC(catalog_cartridge_set_cache(h->cat, "M00040L8", CAT_CACHE_MIGRATED), 0);
	EXPECT_RC(migrate_recall(&mig, "M00040L8", 0, err, sizeof err), 0);
	EXPECT_RC(vtl_cart_info(h->fx->pool, "M00040L8", &info), 0);
	assert_int_equal(info.damaged, 0);
	expect_cart_content(h, "M00040L8", 25, 40);
	struct cat_cartridge cc;
	EXPECT_RC(catalog_cartridge_get(h->cat, "M00040L8", &cc), 0);
	assert_int_equal(cc.cache, CAT_CACHE_PREMIGRATED);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(copies_stack_and_verify), T(write_error_moves_to_another_tape), T(cancelled_copy_leaves_nothing),
		T(refused_cartridges), T(damaged_copy_is_marked_bad), T(native_copy_reads_as_the_cartridge),
		T(end_of_tape_moves_to_another_tape), T(offline_drive_fails_job_not_tapes),
		T(read_error_in_verify_marks_copy_bad), T(recall_falls_back_to_the_older_copy), T(cancelled_recall_resumes),
		T(copies_go_to_each_pool), T(forged_header_fails_recall), T(unrecorded_premigration_fails_the_job),
		T(unrecorded_job_end_is_no_success), T(unrecorded_recall_steps), T(recall_empties_a_damaged_disk_copy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
