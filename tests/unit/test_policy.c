/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cache policy, one pass at a time, over a pool with a member quota and
 * a catalog: copies are queued for the cartridges each rule names, and not
 * for loaded ones, ones with a job, or when the rule is off; under pressure
 * premigrated disk copies are released least recently mounted first down to
 * the low-water mark, leaving the cartridge migrated, blank on disk and its
 * catalog totals intact; a cartridge held open elsewhere is skipped; with
 * nothing left to release, copies of the least recently mounted resident
 * cartridges are queued.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "backend/cartridge.h"
#include "backend/format.h"
#include "common/vtl_error.h"
#include "migrator/copy.h"
#include "migrator/policy.h"
#include "tests/unit/scsi_host.h"

#define SEG (1u << 20)
#define BIG_QUOTA (1ull << 30)   /* a pool nothing here comes near filling */
#define SMALL_QUOTA (10u << 20)  /* four cartridges of CART_DATA fill it to about 80 % */
#define BLOCK (256u << 10)
#define COPY_B (256u << 10)      /* the block size of the copies on tape */
#define CART_BLOCKS 8            /* CART_DATA = 2 MiB a cartridge */
#define IE0 10
#define SLOT0 1000

static struct cat_library lib;
static struct vtl_policy_config pcfg;

static int setup(void **state)
{
	if (host_setup(state) != 0)
		return -1;
	struct host *h = *state;
	host_pool_quota(h, BIG_QUOTA, SEG);
	lib = (struct cat_library){.transport_first = 1, .transports = 1, .slot_first = SLOT0, .slots = 10,
				   .ie_first = IE0, .ies = 2, .drive_first = 256, .drives = 1};
	snprintf(lib.name, sizeof lib.name, "LIB1");
	snprintf(lib.vendor, sizeof lib.vendor, "IBM");
	snprintf(lib.product, sizeof lib.product, "3573-TL");
	snprintf(lib.revision, sizeof lib.revision, "0100");
	snprintf(lib.serial, sizeof lib.serial, "POL0001");
	pcfg = (struct vtl_policy_config){.interval = 1, .premigrate = 0, .idle = 3600, .high_water = 70,
					  .low_water = 45, .throttle = 95, .throttle_rate = 10};
	return catalog_library_create(h->cat, &lib) == VTL_OK ? 0 : -1;
}

static int teardown(void **state)
{
	return host_teardown(state);
}

/* A physical tape of pool in the catalog, and a good copy of bc on it. */
static void good_copy(struct host *h, const char *bc, const char *tape, const char *pool)
{
	struct cat_ptape t = {.slot = -1, .capacity = 1ull << 40};
	snprintf(t.barcode, sizeof t.barcode, "%s", tape);
	snprintf(t.library, sizeof t.library, "sim");
	snprintf(t.state, sizeof t.state, "filling");
	snprintf(t.pool, sizeof t.pool, "%s", pool);
	int rc = catalog_ptape_add(h->cat, &t);
	assert_true(rc == VTL_OK || rc == VTL_E_EXISTS);
	struct cat_ptape g;
	EXPECT_RC(catalog_ptape_get(h->cat, tape, &g), 0);
	struct vtl_cart_params rp = {.readonly = true};
	struct vtl_cart *c = tl_cart_open(h->fx->pool, bc, &rp);
	/* What a verified copy of it in blocks of COPY_B records: its length, block size and digest. */
	struct cat_copy k = {.file = g.files, .length = vtl_cart_stream_size(c), .block_size = COPY_B,
			     .verified_at = time(NULL)};
	uint32_t b = COPY_B;
	char dg[1][COPY_DIGEST_MAX];
	EXPECT_RC(copy_stream_digests(c, &b, 1, dg), 0);
	EXPECT_RC(vtl_cart_close(c), 0);
	snprintf(k.barcode, sizeof k.barcode, "%s", bc);
	snprintf(k.tape, sizeof k.tape, "%s", tape);
	snprintf(k.digest, sizeof k.digest, "%s", dg[0]);
	snprintf(k.state, sizeof k.state, CAT_COPY_GOOD);
	EXPECT_RC(catalog_copy_commit(h->cat, &k, 1, NULL), 0);
}

/* Premigrated, as a verified copy makes a cartridge: the cache state and a good copy of its records. */
static void premigrate(struct host *h, const char *bc)
{
	good_copy(h, bc, "T00001L8", pcfg.copy_pools ? pcfg.copy_pool[0] : "default");
	EXPECT_RC(catalog_cartridge_set_cache(h->cat, bc, CAT_CACHE_PREMIGRATED), 0);
}

/*
 * A cartridge of LIB1 in element (a slot or a mail slot) with blocks blocks
 * of incompressible data on disk and its totals in the catalog; mounted: its
 * last mount is now (else never).
 */
static void cart(struct host *h, const char *bc, uint16_t element, unsigned blocks, bool mounted,
		 enum cat_cache_state cache)
{
	host_new_cart(h, bc, 0);
	EXPECT_RC(catalog_cartridge_place(h->cat, bc, lib.id, element, "available", "test"), 0);
	struct vtl_cart_params p = {0};
	struct vtl_cart *c = tl_cart_open(h->fx->pool, bc, &p);
	static uint8_t buf[BLOCK];
	for (unsigned i = 0; i < blocks; i++) {
		gen_data(buf, sizeof buf, (uint64_t)element * 1000 + i, false);
		EXPECT_RC(vtl_cart_write_block(c, buf, sizeof buf), 0);
	}
	struct vtl_position pos;
	vtl_cart_position(c, &pos);
	EXPECT_RC(vtl_cart_close(c), 0);
	EXPECT_RC(catalog_cartridge_usage(h->cat, bc, (uint64_t)blocks * BLOCK, pos.stored_bytes, pos.eod, mounted), 0);
	if (cache == CAT_CACHE_PREMIGRATED)
		premigrate(h, bc);
	else
		EXPECT_RC(catalog_cartridge_set_cache(h->cat, bc, cache), 0);
}

static struct policy_report pass_draining(struct host *h, int64_t now, bool draining)
{
	struct policy_ctx ctx = {.cat = h->cat, .pool = h->fx->pool, .library = "LIB1", .cfg = &pcfg, .now = now,
				 .draining = draining};
	struct policy_report r;
	char err[512] = "";
	int rc = policy_pass(&ctx, &r, err, sizeof err);
	if (rc)
		fail_msg("policy_pass: %d %s", rc, err);
	return r;
}

static struct policy_report pass(struct host *h, int64_t now)
{
	return pass_draining(h, now, false);
}

static void expect_list(const struct policy_list *l, const char *const *want, unsigned n)
{
	if (l->n != n)
		fail_msg("%u barcodes listed (first: %s), expected %u", l->n, l->n ? l->barcode[0] : "-", n);
	for (unsigned i = 0; i < n; i++)
		assert_string_equal(l->barcode[i], want[i]);
}

static int count_job(const struct cat_job *j, void *arg)
{
	(void)j;
	(*(unsigned *)arg)++;
	return 0;
}

static unsigned queued_jobs(struct host *h)
{
	unsigned n = 0;
	EXPECT_RC(catalog_job_list(h->cat, CAT_JOB_QUEUED, count_job, &n), 0);
	return n;
}

static int finish_job(const struct cat_job *j, void *arg)
{
	return catalog_job_update(arg, j->id, CAT_JOB_DONE, 0, NULL);
}

/* The worker's part: every queued job ends. */
static void finish_jobs(struct host *h)
{
	EXPECT_RC(catalog_job_list(h->cat, CAT_JOB_QUEUED, finish_job, h->cat), 0);
}

static enum cat_cache_state cache_of(struct host *h, const char *bc)
{
	struct cat_cartridge cc;
	EXPECT_RC(catalog_cartridge_get(h->cat, bc, &cc), 0);
	return cc.cache;
}

/*
 * Each rule names its cartridges, only resident ones with data, neither
 * loaded nor with a job; a rule that is off names none, and a second pass
 * queues nothing twice.
 */
static void candidates_per_rule(void **state)
{
	struct host *h = *state;
	cart(h, "F00001L8", SLOT0, 1, true, CAT_CACHE_RESIDENT);
	EXPECT_RC(catalog_cartridge_usage(h->cat, "F00001L8", BLOCK, 15ull << 40, 1, false), 0); /* at its end */
	cart(h, "E00001L8", IE0, 1, true, CAT_CACHE_RESIDENT);           /* in a mail slot */
	cart(h, "I00001L8", SLOT0 + 1, 1, false, CAT_CACHE_RESIDENT);    /* never mounted: idle */
	cart(h, "R00001L8", SLOT0 + 2, 1, true, CAT_CACHE_RESIDENT);     /* mounted just now: no rule */
	cart(h, "L00001L8", IE0 + 1, 1, false, CAT_CACHE_RESIDENT);      /* would be ejected and idle, but loaded */
	EXPECT_RC(catalog_cartridge_set_state(h->cat, "L00001L8", "loaded"), 0);
	cart(h, "Q00001L8", SLOT0 + 3, 1, false, CAT_CACHE_RESIDENT);    /* idle, but has a job already */
	int64_t id;
	EXPECT_RC(catalog_job_add(h->cat, CAT_JOB_MIGRATE, "Q00001L8", &id), 0);
	cart(h, "P00001L8", SLOT0 + 4, 1, false, CAT_CACHE_PREMIGRATED); /* idle, but copied already */
	cart(h, "N00001L8", SLOT0 + 5, 0, false, CAT_CACHE_RESIDENT);    /* idle, but blank */
	/* After the mounts: a second that ticks while they are made must not make "an hour later" 3599 s. */
	int64_t now = time(NULL);

	struct policy_report r = pass(h, now);
	assert_int_equal(r.full.n + r.ejected.n + r.idle.n + r.pressure.n + r.released.n, 0);
	assert_int_equal(queued_jobs(h), 1);

	pcfg.premigrate = VTL_POLICY_EJECTED | VTL_POLICY_IDLE;
	pcfg.idle = 0; /* the idle rule is off without a time */
	r = pass(h, now);
	expect_list(&r.ejected, (const char *const[]){"E00001L8"}, 1);
	assert_int_equal(r.full.n + r.idle.n, 0);

	pcfg.premigrate = VTL_POLICY_FULL | VTL_POLICY_EJECTED | VTL_POLICY_IDLE;
	pcfg.idle = 3600;
	r = pass(h, now);
	expect_list(&r.full, (const char *const[]){"F00001L8"}, 1);
	expect_list(&r.idle, (const char *const[]){"I00001L8"}, 1);
	assert_int_equal(r.ejected.n, 0); /* queued by the pass before */
	assert_int_equal(queued_jobs(h), 4);
	assert_true(r.before.percent < pcfg.high_water);
	assert_int_equal(r.released.n, 0);

	/* An hour later the mounted ones are idle too, but only R00001L8 has no job yet. */
	r = pass(h, now + 3600);
	expect_list(&r.idle, (const char *const[]){"R00001L8"}, 1);
	assert_int_equal(queued_jobs(h), 5);
	r = pass(h, now + 3600);
	assert_int_equal(r.full.n + r.ejected.n + r.idle.n, 0);
	assert_true(policy_full(98, 100) && !policy_full(97, 100) && !policy_full(1, 0));
}

/* Four cartridges of 2 MiB in a 10 MiB pool: about 80 % full. */
static void fill_pool(struct host *h, enum cat_cache_state cache)
{
	host_pool_quota(h, SMALL_QUOTA, SEG);
	cart(h, "A00001L8", SLOT0, CART_BLOCKS, true, cache);
	cart(h, "A00002L8", SLOT0 + 1, CART_BLOCKS, true, cache);
	cart(h, "A00003L8", SLOT0 + 2, CART_BLOCKS, false, cache); /* never mounted: least recently used */
	cart(h, "A00004L8", SLOT0 + 3, CART_BLOCKS, true, cache);
	EXPECT_RC(catalog_cartridge_set_state(h->cat, "A00004L8", "loaded"), 0);
}

static int last_event(const struct cat_event *ev, void *arg)
{
	*(struct cat_event *)arg = *ev;
	return 0;
}

/*
 * Above high water, premigrated disk copies go least recently mounted first
 * (A00003L8 before A00001L8), the loaded one never, and the releases stop
 * at low water. A released cartridge is migrated, keeps its catalog totals,
 * still exists blank in the pool, and its space is free.
 */
static void release_lru_down_to_low_water(void **state)
{
	struct host *h = *state;
	fill_pool(h, CAT_CACHE_PREMIGRATED);
	struct cat_cartridge before;
	EXPECT_RC(catalog_cartridge_get(h->cat, "A00003L8", &before), 0);

	struct policy_report r = pass(h, time(NULL));
	print_message("  pool %.1f%% -> %.1f%%, %llu bytes released\n", r.before.percent, r.after.percent,
		      (unsigned long long)r.released_bytes);
	assert_true(r.before.percent >= pcfg.high_water);
	expect_list(&r.released, (const char *const[]){"A00003L8", "A00001L8"}, 2);
	assert_true(r.after.percent <= pcfg.low_water);
	assert_true(r.after.used_bytes + 2 * CART_BLOCKS * BLOCK <= r.before.used_bytes);
	assert_true(r.released_bytes >= 2ull * CART_BLOCKS * BLOCK);
	assert_int_equal(r.pressure.n, 0);
	assert_int_equal(cache_of(h, "A00003L8"), CAT_CACHE_MIGRATED);
	assert_int_equal(cache_of(h, "A00001L8"), CAT_CACHE_MIGRATED);
	assert_int_equal(cache_of(h, "A00002L8"), CAT_CACHE_PREMIGRATED);
	assert_int_equal(cache_of(h, "A00004L8"), CAT_CACHE_PREMIGRATED);

	struct cat_cartridge after;
	EXPECT_RC(catalog_cartridge_get(h->cat, "A00003L8", &after), 0);
	assert_int_equal(after.eod, before.eod);
	assert_int_equal(after.eod, CART_BLOCKS);
	assert_int_equal(after.bytes_written, before.bytes_written);
	assert_int_equal(after.bytes_stored, before.bytes_stored);
	assert_int_equal(vtl_cart_exists(h->fx->pool, "A00003L8"), 1);
	struct vtl_cart_info info;
	EXPECT_RC(vtl_cart_info(h->fx->pool, "A00003L8", &info), 0);
	assert_int_equal(info.eod, 0);
	assert_int_equal(info.stored_bytes, 0);

	struct cat_event ev = {0};
	EXPECT_RC(catalog_event_list(h->cat, 0, 0, last_event, &ev), 0);
	assert_string_equal(ev.actor, "policy");
	assert_non_null(strstr(ev.what, "release A00001L8: disk copy of"));
	assert_non_null(strstr(ev.what, "since it reached the high-water mark of 70%"));
	assert_false(r.draining);

	/* Below high water now: the next pass releases nothing. */
	r = pass(h, time(NULL));
	assert_int_equal(r.released.n, 0);
}

/*
 * Hysteresis: releases that began at high water go on in later passes, below
 * high water, as more cartridges become premigrated, until the low mark.
 */
static void releases_go_on_down_to_low_water(void **state)
{
	struct host *h = *state;
	fill_pool(h, CAT_CACHE_RESIDENT);
	premigrate(h, "A00003L8");
	struct policy_report r = pass(h, time(NULL));
	expect_list(&r.released, (const char *const[]){"A00003L8"}, 1);
	assert_true(r.after.percent < pcfg.high_water && r.after.percent > pcfg.low_water);
	assert_true(r.draining);
	/* A00001L8 was copied meanwhile: the pool is below high water, yet still draining. */
	finish_jobs(h);
	premigrate(h, "A00001L8");
	r = pass_draining(h, time(NULL), r.draining);
	expect_list(&r.released, (const char *const[]){"A00001L8"}, 1);
	assert_true(r.after.percent <= pcfg.low_water);
	assert_false(r.draining);
	/* At low water: the next premigrated cartridge keeps its disk copy. */
	premigrate(h, "A00002L8");
	r = pass_draining(h, time(NULL), r.draining);
	assert_int_equal(r.released.n, 0);
	/* Without the hysteresis, below high water, nothing is released either. */
	r = pass(h, time(NULL));
	assert_int_equal(r.released.n, 0);
}

/* A cartridge another process holds open is skipped and the next one released instead. */
static void busy_cartridge_skipped(void **state)
{
	struct host *h = *state;
	fill_pool(h, CAT_CACHE_PREMIGRATED);
	struct vtl_cart_params p = {0};
	struct vtl_cart *held = tl_cart_open(h->fx->pool, "A00003L8", &p);
	struct policy_report r = pass(h, time(NULL));
	expect_list(&r.busy, (const char *const[]){"A00003L8"}, 1);
	expect_list(&r.released, (const char *const[]){"A00001L8", "A00002L8"}, 2);
	assert_int_equal(cache_of(h, "A00003L8"), CAT_CACHE_PREMIGRATED);
	EXPECT_RC(vtl_cart_close(held), 0);
	struct vtl_cart_info info;
	EXPECT_RC(vtl_cart_info(h->fx->pool, "A00003L8", &info), 0);
	assert_int_equal(info.eod, CART_BLOCKS); /* its data untouched */
}

/* Nothing premigrated to release: copies of the least recently mounted resident cartridges, enough to reach low water. */
static void pressure_queues_copies(void **state)
{
	struct host *h = *state;
	fill_pool(h, CAT_CACHE_RESIDENT);
	struct policy_report r = pass(h, time(NULL));
	assert_int_equal(r.released.n, 0);
	/* About 35 % of 10 MiB to free: two cartridges of 2 MiB; never the loaded one. */
	expect_list(&r.pressure, (const char *const[]){"A00003L8", "A00001L8"}, 2);
	assert_int_equal(queued_jobs(h), 2);
	assert_int_equal(cache_of(h, "A00003L8"), CAT_CACHE_RESIDENT);
	/* Queued already, they are enough: the next pass queues no more. */
	r = pass(h, time(NULL));
	assert_int_equal(r.pressure.n, 0);
	assert_int_equal(queued_jobs(h), 2);
	/* Once they are copied and released, the pool is at low water again. */
	finish_jobs(h);
	premigrate(h, "A00003L8");
	premigrate(h, "A00001L8");
	r = pass(h, time(NULL));
	expect_list(&r.released, (const char *const[]){"A00003L8", "A00001L8"}, 2);
	assert_true(r.after.percent <= pcfg.low_water);
	assert_int_equal(r.pressure.n, 0);
}

/* An operator's release: refused unless premigrated, not loaded, without a job; done otherwise. */
static void release_by_hand(void **state)
{
	struct host *h = *state;
	cart(h, "R00001L8", SLOT0, 2, true, CAT_CACHE_RESIDENT);
	cart(h, "P00001L8", SLOT0 + 1, 2, true, CAT_CACHE_PREMIGRATED);
	cart(h, "P00002L8", SLOT0 + 2, 2, true, CAT_CACHE_PREMIGRATED);
	EXPECT_RC(catalog_cartridge_set_state(h->cat, "P00002L8", "loaded"), 0);
	cart(h, "P00003L8", SLOT0 + 3, 2, true, CAT_CACHE_PREMIGRATED);
	int64_t id;
	EXPECT_RC(catalog_job_add(h->cat, CAT_JOB_VERIFY, "P00003L8", &id), 0);
	char err[512];
	uint64_t freed = 1;
	assert_int_equal(policy_release(h->cat, h->fx->pool, NULL, "R00001L8", "test", &freed, err, sizeof err), VTL_E_INVAL);
	assert_non_null(strstr(err, "R00001L8 is resident, not premigrated"));
	assert_int_equal(freed, 0);
	assert_int_equal(policy_release(h->cat, h->fx->pool, NULL, "P00002L8", "test", &freed, err, sizeof err), VTL_E_BUSY);
	assert_non_null(strstr(err, "is loaded in a drive"));
	assert_int_equal(policy_release(h->cat, h->fx->pool, NULL, "P00003L8", "test", &freed, err, sizeof err), VTL_E_BUSY);
	assert_non_null(strstr(err, "has a queued or running job"));
	assert_int_equal(policy_release(h->cat, h->fx->pool, NULL, "NOSUCH", "test", &freed, err, sizeof err), VTL_E_NOTFOUND);
	assert_non_null(strstr(err, "there is no cartridge NOSUCH"));
	EXPECT_RC(policy_release(h->cat, h->fx->pool, NULL, "P00001L8", "asked by the operator", &freed, err, sizeof err), 0);
	assert_true(freed >= 2ull * BLOCK);
	assert_int_equal(cache_of(h, "P00001L8"), CAT_CACHE_MIGRATED);
	/* Twice: it is migrated now. */
	assert_int_equal(policy_release(h->cat, h->fx->pool, NULL, "P00001L8", "test", &freed, err, sizeof err), VTL_E_INVAL);
	assert_non_null(strstr(err, "P00001L8 is migrated, not premigrated"));
}


/*
 * Two copy pools: a premigrated cartridge with a copy in the first only gets
 * a copy queued for the second, and keeps its disk copy (neither the
 * pressure nor an operator releases it) until it has both.
 */
static void copy_pools_gate_release(void **state)
{
	struct host *h = *state;
	pcfg.copy_pools = 2;
	snprintf(pcfg.copy_pool[0], sizeof pcfg.copy_pool[0], "default");
	snprintf(pcfg.copy_pool[1], sizeof pcfg.copy_pool[1], "vault");
	fill_pool(h, CAT_CACHE_PREMIGRATED);
	for (unsigned i = 1; i <= 4; i++) {
		char bc[16];
		snprintf(bc, sizeof bc, "A0000%uL8", i);
		good_copy(h, bc, "T00001L8", "default");
	}
	unsigned have = 9;
	EXPECT_RC(policy_copy_pools(h->cat, &pcfg, "A00001L8", &have), 0);
	assert_int_equal(have, 1);
	assert_string_equal(policy_next_pool(&pcfg, have), "vault");
	struct policy_report r = pass(h, time(NULL));
	assert_true(r.before.percent >= pcfg.high_water);
	assert_int_equal(r.released.n, 0); /* none has its vault copy */
	expect_list(&r.pools, (const char *const[]){"A00003L8", "A00001L8", "A00002L8"}, 3); /* A00004L8 is loaded */
	char err[512];
	uint64_t freed = 0;
	finish_jobs(h);
	assert_int_equal(policy_release(h->cat, h->fx->pool, &pcfg, "A00003L8", "test", &freed, err, sizeof err),
			 VTL_E_INVAL);
	assert_non_null(strstr(err, "A00003L8 has no good copy in pool vault yet"));
	good_copy(h, "A00003L8", "V00001L8", "vault");
	EXPECT_RC(policy_copy_pools(h->cat, &pcfg, "A00003L8", &have), 0);
	assert_int_equal(have, 3);
	r = pass(h, time(NULL));
	expect_list(&r.released, (const char *const[]){"A00003L8"}, 1);
	assert_int_equal(cache_of(h, "A00003L8"), CAT_CACHE_MIGRATED);
	assert_int_equal(cache_of(h, "A00001L8"), CAT_CACHE_PREMIGRATED);
}

/*
 * A catalog that says premigrated over a disk copy that changed since its
 * copy was made (a first write whose catalog change was lost): the disk
 * copy is compared with the good copies before anything is released, and
 * kept, with the reason in the error and the event log.
 */
static void changed_disk_copy_kept(void **state)
{
	struct host *h = *state;
	cart(h, "D00001L8", SLOT0, 2, false, CAT_CACHE_PREMIGRATED);
	struct vtl_cart_params p = {0};
	struct vtl_cart *c = tl_cart_open(h->fx->pool, "D00001L8", &p);
	EXPECT_RC(vtl_cart_space_eod(c), 0);
	static uint8_t buf[BLOCK];
	gen_data(buf, sizeof buf, 77, false);
	EXPECT_RC(vtl_cart_write_block(c, buf, sizeof buf), 0); /* newer data the tape copy does not have */
	EXPECT_RC(vtl_cart_close(c), 0);
	char err[512] = "";
	uint64_t freed = 0;
	assert_int_equal(policy_release(h->cat, h->fx->pool, &pcfg, "D00001L8", "test", &freed, err, sizeof err),
			 VTL_E_CORRUPT);
	assert_non_null(strstr(err, "not released"));
	assert_int_equal(freed, 0);
	assert_int_equal(cache_of(h, "D00001L8"), CAT_CACHE_PREMIGRATED);
	struct cat_event ev = {0};
	EXPECT_RC(catalog_event_list(h->cat, 0, 0, last_event, &ev), 0);
	assert_non_null(strstr(ev.what, "release D00001L8 refused"));
	/* The disk copy is whole: three blocks. */
	c = tl_cart_open(h->fx->pool, "D00001L8", &p);
	EXPECT_RC(vtl_cart_space_eod(c), 0);
	struct vtl_position pos;
	vtl_cart_position(c, &pos);
	assert_int_equal(pos.eod, 3);
	EXPECT_RC(vtl_cart_close(c), 0);
}

/* The last event's text. */
static struct cat_event last(struct host *h)
{
	struct cat_event ev = {0};
	EXPECT_RC(catalog_event_list(h->cat, 0, 0, last_event, &ev), 0);
	return ev;
}

/* The cartridge's objects on disk. */
static uint64_t disk_eod(struct host *h, const char *bc)
{
	struct vtl_cart_info info;
	EXPECT_RC(vtl_cart_info(h->fx->pool, bc, &info), 0);
	return info.eod;
}

/* bc's only good copy (the test's copies are one per cartridge). */
static int first_copy(const struct cat_copy *k, void *arg)
{
	if (!strcmp(k->state, CAT_COPY_GOOD))
		*(struct cat_copy *)arg = *k;
	return 0;
}

/*
 * The disk copy rewritten from BOT with other data of the same length (a
 * host's rewrite whose catalog change was lost): the bytes agree with the
 * copy, the digest does not, and the release refuses, forced or not,
 * without saying which side is wrong or marking anything.
 */
static void same_length_other_data_kept(void **state)
{
	struct host *h = *state;
	cart(h, "D00002L8", SLOT0, 2, false, CAT_CACHE_PREMIGRATED);
	struct vtl_cart_params p = {0};
	struct vtl_cart *c = tl_cart_open(h->fx->pool, "D00002L8", &p);
	static uint8_t buf[BLOCK];
	for (unsigned i = 0; i < 2; i++) {
		gen_data(buf, sizeof buf, 500 + i, false);
		EXPECT_RC(vtl_cart_write_block(c, buf, sizeof buf), 0);
	}
	EXPECT_RC(vtl_cart_close(c), 0);
	char err[1024] = "", did[512];
	uint64_t freed = 7;
	assert_int_equal(policy_release(h->cat, h->fx->pool, &pcfg, "D00002L8", "test", &freed, err, sizeof err),
			 VTL_E_CORRUPT);
	assert_non_null(strstr(err, "D00002L8: its disk copy's digest is crc32c-blocks:"));
	assert_non_null(strstr(err, "its copy on T00001L8 file 0 has crc32c-blocks:"));
	assert_non_null(strstr(err, "its records are sound"));
	assert_non_null(strstr(err, "which side is wrong is not known"));
	assert_int_equal(freed, 0);
	assert_non_null(strstr(last(h).what, "release D00002L8 refused: D00002L8: its disk copy's digest"));
	assert_int_equal(policy_release_forced(h->cat, h->fx->pool, &pcfg, "D00002L8", "test", &freed, did, sizeof did,
					       err, sizeof err), VTL_E_CORRUPT);
	assert_non_null(strstr(err, "--force gives up only a damaged disk copy"));
	assert_non_null(strstr(last(h).what, "release D00002L8 --force refused"));
	assert_int_equal(cache_of(h, "D00002L8"), CAT_CACHE_PREMIGRATED);
	struct cat_copy k = {0};
	EXPECT_RC(catalog_copy_list(h->cat, "D00002L8", first_copy, &k), 0);
	assert_string_equal(k.state, CAT_COPY_GOOD); /* nothing proves the copy wrong */
	assert_int_equal(disk_eod(h, "D00002L8"), 2);
}

/*
 * A copy recorded before copies had their block size (a catalog upgraded
 * from schema 4): its digest cannot be recomputed, so the release refuses
 * and says to verify; once a verify has recorded the size it goes ahead.
 * A pass lists it as refused and releases the others.
 */
static void copy_without_block_size(void **state)
{
	struct host *h = *state;
	cart(h, "O00001L8", SLOT0 + 5, 2, false, CAT_CACHE_PREMIGRATED);
	struct cat_copy k = {0};
	EXPECT_RC(catalog_copy_list(h->cat, "O00001L8", first_copy, &k), 0);
	EXPECT_RC(catalog_copy_set_block_size(h->cat, k.id, 0), 0);
	char err[1024] = "";
	uint64_t freed = 0;
	assert_int_equal(policy_release(h->cat, h->fx->pool, &pcfg, "O00001L8", "test", &freed, err, sizeof err),
			 VTL_E_INVAL);
	assert_string_equal(err, "O00001L8: its copy on T00001L8 file 0 was recorded without its block size, so its "
			    "digest cannot be compared with the disk copy's: not released; vtlctl verify O00001L8 reads "
			    "the copy back and records it");
	assert_int_equal(cache_of(h, "O00001L8"), CAT_CACHE_PREMIGRATED);
	/* Under pressure: a verify is queued for it (once), and the pass goes on to the next cartridge. */
	fill_pool(h, CAT_CACHE_PREMIGRATED);
	struct policy_report r = pass(h, time(NULL));
	expect_list(&r.verify, (const char *const[]){"O00001L8"}, 1);
	assert_int_equal(r.refused.n, 0);
	assert_true(r.released.n >= 1);
	assert_int_equal(queued_jobs(h), 1);
	assert_int_equal(cache_of(h, "O00001L8"), CAT_CACHE_PREMIGRATED);
	r = pass_draining(h, time(NULL), true);
	assert_int_equal(r.verify.n, 0); /* its verify is still queued */
	assert_int_equal(queued_jobs(h), 1);
	/* The verify records the size; the next pass under pressure may release it. */
	finish_jobs(h);
	EXPECT_RC(catalog_copy_set_block_size(h->cat, k.id, COPY_B), 0);
	EXPECT_RC(policy_release(h->cat, h->fx->pool, &pcfg, "O00001L8", "test", &freed, err, sizeof err), 0);
	assert_int_equal(cache_of(h, "O00001L8"), CAT_CACHE_MIGRATED);
}

/* Cuts bc's segment file seq short, inside its first record: damage a later open finds and keeps. */
static void cut_segment(struct host *h, const char *bc, uint32_t seq)
{
	char path[sizeof h->fx->mpath[0] + 64];
	snprintf(path, sizeof path, "%s/%s/%08u.seg", h->fx->mpath[0], bc, seq);
	assert_int_equal(truncate(path, SEG_HEADER_LEN + REC_HEADER_LEN + 1000), 0);
}

/*
 * A damaged disk copy (a middle segment cut short): the plain release
 * refuses and names --force; the forced one refuses, changing nothing,
 * without a good copy, when the copy's bytes are not what the catalog
 * recorded, or when no copy is verified; otherwise it gives the disk copy
 * up, says so, logs it as forced, and a recall finds the cartridge blank.
 */
static void damaged_disk_copy_forced(void **state)
{
	struct host *h = *state;
	cart(h, "X00001L8", SLOT0, CART_BLOCKS, false, CAT_CACHE_PREMIGRATED);
	cut_segment(h, "X00001L8", 1);
	char err[1024] = "", did[512] = "";
	uint64_t freed = 0;
	assert_int_equal(policy_release(h->cat, h->fx->pool, &pcfg, "X00001L8", "test", &freed, err, sizeof err),
			 VTL_E_MEDIUM);
	assert_non_null(strstr(err, "X00001L8: its disk copy is damaged: objects "));
	assert_non_null(strstr(err, "(segment cut short, segment file 00000001.seg)"));
	assert_non_null(strstr(err, "not released: vtlctl release --force X00001L8 gives it up"));
	assert_non_null(strstr(last(h).what, "release X00001L8 refused: X00001L8: its disk copy is damaged"));

	struct cat_copy k = {0};
	EXPECT_RC(catalog_copy_list(h->cat, "X00001L8", first_copy, &k), 0);
	/* Never verified: the copy must be read back first. */
	EXPECT_RC(catalog_copy_verified(h->cat, k.id, 0), 0);
	assert_int_equal(policy_release_forced(h->cat, h->fx->pool, &pcfg, "X00001L8", "test", &freed, did, sizeof did,
					       err, sizeof err), VTL_E_INVAL);
	assert_non_null(strstr(err, "none of its good copies has been verified with its block size recorded: run "
			       "vtlctl verify X00001L8 first"));
	EXPECT_RC(catalog_copy_verified(h->cat, k.id, time(NULL)), 0);
	/* The catalog recorded other bytes for the cartridge than the copy holds: not the data the host wrote last. */
	struct cat_cartridge cc;
	EXPECT_RC(catalog_cartridge_get(h->cat, "X00001L8", &cc), 0);
	EXPECT_RC(catalog_cartridge_usage(h->cat, "X00001L8", cc.bytes_written, cc.bytes_stored + BLOCK, cc.eod, false),
		  0);
	assert_int_equal(policy_release_forced(h->cat, h->fx->pool, &pcfg, "X00001L8", "test", &freed, did, sizeof did,
					       err, sizeof err), VTL_E_CORRUPT);
	assert_non_null(strstr(err, "that copy may not hold what the host wrote last; not released"));
	EXPECT_RC(catalog_cartridge_usage(h->cat, "X00001L8", cc.bytes_written, cc.bytes_stored, cc.eod, false), 0);
	/* No good copy at all. */
	EXPECT_RC(catalog_copy_set_state(h->cat, k.id, CAT_COPY_BAD), 0);
	assert_int_equal(policy_release_forced(h->cat, h->fx->pool, NULL, "X00001L8", "test", &freed, did, sizeof did,
					       err, sizeof err), VTL_E_NOTFOUND);
	assert_non_null(strstr(err, "X00001L8: no good copy on physical tape restores it: its disk copy stays"));
	assert_int_equal(cache_of(h, "X00001L8"), CAT_CACHE_PREMIGRATED);
	assert_int_equal(disk_eod(h, "X00001L8"), CART_BLOCKS); /* refusals changed nothing */
	assert_int_equal(freed, 0);
	assert_string_equal(did, "");
	EXPECT_RC(catalog_copy_set_state(h->cat, k.id, CAT_COPY_GOOD), 0);

	EXPECT_RC(policy_release_forced(h->cat, h->fx->pool, &pcfg, "X00001L8", "asked by the operator", &freed, did,
					sizeof did, err, sizeof err), 0);
	assert_non_null(strstr(did, "release X00001L8 forced: its damaged disk copy ("));
	assert_non_null(strstr(did, "given up for its copy on T00001L8 file 0 ("));
	assert_non_null(strstr(did, "verified); it is migrated, the next load or vtlctl recall restores it whole"));
	assert_string_equal(last(h).what, did);
	assert_true(freed > 0);
	assert_int_equal(cache_of(h, "X00001L8"), CAT_CACHE_MIGRATED);
	assert_int_equal(disk_eod(h, "X00001L8"), 0);
	struct vtl_cart_info info;
	EXPECT_RC(vtl_cart_info(h->fx->pool, "X00001L8", &info), 0);
	assert_int_equal(info.damaged, 0); /* the damaged files are gone */
	EXPECT_RC(catalog_cartridge_get(h->cat, "X00001L8", &cc), 0);
	assert_int_equal(cc.eod, CART_BLOCKS); /* the recall's target */
}

/*
 * A byte changed inside a sealed record's payload, which no open reads: the
 * digest differs, and the disk copy's own checks (the record's CRC) say it
 * is the damaged side, so the forced release may give it up.
 */
static void silently_damaged_record_forced(void **state)
{
	struct host *h = *state;
	cart(h, "X00002L8", SLOT0, CART_BLOCKS, false, CAT_CACHE_PREMIGRATED);
	char path[sizeof h->fx->mpath[0] + 64];
	snprintf(path, sizeof path, "%s/X00002L8/00000000.seg", h->fx->mpath[0]);
	FILE *f = fopen(path, "r+b");
	assert_non_null(f);
	assert_int_equal(fseek(f, SEG_HEADER_LEN + REC_HEADER_LEN + 100, SEEK_SET), 0);
	int b = fgetc(f);
	assert_true(b != EOF);
	assert_int_equal(fseek(f, SEG_HEADER_LEN + REC_HEADER_LEN + 100, SEEK_SET), 0);
	assert_int_equal(fputc(b ^ 0xff, f), b ^ 0xff);
	assert_int_equal(fclose(f), 0);
	char err[1024] = "", did[512] = "";
	uint64_t freed = 0;
	assert_int_equal(policy_release(h->cat, h->fx->pool, &pcfg, "X00002L8", "test", &freed, err, sizeof err),
			 VTL_E_MEDIUM);
	assert_non_null(strstr(err, "X00002L8: its disk copy's digest is crc32c-blocks:"));
	assert_non_null(strstr(err, "; its disk copy is damaged: its records fail their checks near stream byte "));
	assert_non_null(strstr(err, "not released: vtlctl release --force X00002L8"));
	assert_int_equal(cache_of(h, "X00002L8"), CAT_CACHE_PREMIGRATED);
	EXPECT_RC(policy_release_forced(h->cat, h->fx->pool, &pcfg, "X00002L8", "asked by the operator", &freed, did,
					sizeof did, err, sizeof err), 0);
	assert_non_null(strstr(did, "release X00002L8 forced"));
	assert_int_equal(cache_of(h, "X00002L8"), CAT_CACHE_MIGRATED);
	assert_int_equal(disk_eod(h, "X00002L8"), 0);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(candidates_per_rule), T(release_lru_down_to_low_water), T(releases_go_on_down_to_low_water),
		T(busy_cartridge_skipped),
		T(pressure_queues_copies), T(release_by_hand), T(copy_pools_gate_release), T(changed_disk_copy_kept),
		T(same_length_other_data_kept), T(copy_without_block_size), T(damaged_disk_copy_forced),
		T(silently_damaged_record_forced),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
