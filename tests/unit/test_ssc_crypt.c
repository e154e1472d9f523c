/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tape data encryption as a host sees it: the SECURITY PROTOCOL IN pages,
 * SET DATA ENCRYPTION and each of its refusals, blocks written encrypted and
 * read back, the DATA PROTECT senses of a missing, wrong or tampered key,
 * mixed mode, CKOD, scope between two nexuses, LOCK (the locked nexus, not
 * the parameters: 2Ah/13h on its data commands), and no plaintext of
 * what the host wrote anywhere in the pool.
 */
#include "tests/unit/scsi_host.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/format.h"
#include "common/crc32c.h"
#include "common/vtl_error.h"
#include "vtl/drive/ssc_internal.h"

#define NEXUS_B 0x200
#define BLK 65536

static const char MARKER[] = "PLAINTEXT-MARKER-7f3a";
static uint8_t wbuf[BLK], rbuf[BLK + 64], page[1024];

static const uint8_t KEY1[32] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
				 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32};
static const uint8_t KEY2[32] = {0xAA, 0xBB};

/* A SET DATA ENCRYPTION page, with what tests vary. */
struct sde_req {
	uint8_t scope, enc, dec, alg, keyfmt;
	bool lock, ckod;
	const uint8_t *key;
	uint16_t keylen;
	const char *ukad, *akad;
	uint16_t ukad_len, akad_len; /* 0: strlen */
	uint8_t flags_extra;          /* byte 5 bits the test adds (CKORP ...) */
};

static size_t sde_build(const struct sde_req *r, uint8_t *p)
{
	memset(p, 0, 512);
	p[0] = 0x00, p[1] = 0x10;
	p[4] = (uint8_t)(r->scope << 5 | (r->lock ? 1 : 0));
	p[5] = (uint8_t)((r->ckod ? 0x04 : 0) | r->flags_extra);
	p[6] = r->enc;
	p[7] = r->dec;
	p[8] = r->alg;
	p[9] = r->keyfmt;
	p[18] = (uint8_t)(r->keylen >> 8), p[19] = (uint8_t)r->keylen;
	size_t n = 20;
	if (r->key)
		memcpy(p + n, r->key, r->keylen);
	n += r->keylen;
	const char *kads[2] = {r->ukad, r->akad};
	uint16_t lens[2] = {r->ukad_len, r->akad_len};
	for (int t = 0; t < 2; t++) {
		if (!kads[t])
			continue;
		size_t l = lens[t] ? lens[t] : strlen(kads[t]);
		p[n] = (uint8_t)t;
		p[n + 2] = (uint8_t)(l >> 8), p[n + 3] = (uint8_t)l;
		memset(p + n + 4, 'k', l);
		memcpy(p + n + 4, kads[t], strlen(kads[t]) < l ? strlen(kads[t]) : l);
		n += 4 + l;
	}
	p[2] = (uint8_t)((n - 4) >> 8), p[3] = (uint8_t)(n - 4);
	return n;
}

static int spout_raw(struct host *h, uint8_t *p, size_t n)
{
	uint8_t cdb[12] = {0xB5, 0x20, 0x00, 0x10, 0, 0, (uint8_t)(n >> 24), (uint8_t)(n >> 16), (uint8_t)(n >> 8),
			   (uint8_t)n, 0, 0};
	return host_cmd(h, cdb, 12, SCSI_DIR_OUT, p, n);
}

static int spout(struct host *h, const struct sde_req *r)
{
	uint8_t p[512];
	return spout_raw(h, p, sde_build(r, p));
}

/* The usual request: scope ALL, ENCRYPT and DECRYPT with key. */
static struct sde_req req_key(const uint8_t *key, uint8_t dec)
{
	struct sde_req r = {.scope = 2, .enc = 2, .dec = dec, .alg = 1, .key = key, .keylen = 32,
			    .ukad = "tape-key-1", .akad = "akad-12"};
	return r;
}

static void set_key(struct host *h, const uint8_t *key, uint8_t dec)
{
	struct sde_req r = req_key(key, dec);
	spout(h, &r);
	expect_good(h);
}

static void set_off(struct host *h)
{
	struct sde_req r = {.scope = 2};
	spout(h, &r);
	expect_good(h);
}

/* SECURITY PROTOCOL IN of protocol proto page pg into page[]; returns the status. */
static int spin(struct host *h, uint8_t proto, uint16_t pg)
{
	uint8_t cdb[12] = {0xA2, proto, (uint8_t)(pg >> 8), (uint8_t)pg, 0, 0, 0, 0, 0x04, 0x00, 0, 0};
	memset(page, 0, sizeof page);
	return host_cmd(h, cdb, 12, SCSI_DIR_IN, page, sizeof page);
}

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void write_blk(struct host *h, uint32_t len, uint64_t seed, bool comp)
{
	uint8_t cdb[6];
	gen_data(wbuf, len, seed, comp);
	memcpy(wbuf + 100, MARKER, sizeof MARKER - 1);
	host_cmd(h, cdb, cdb_write6(cdb, false, len), SCSI_DIR_OUT, wbuf, len);
	expect_good(h);
}

static int read_blk(struct host *h, uint32_t len)
{
	uint8_t cdb[6];
	memset(rbuf, 0xEE, sizeof rbuf);
	return host_cmd(h, cdb, cdb_read6(cdb, false, false, len), SCSI_DIR_IN, rbuf, len);
}

static void expect_blk(struct host *h, uint32_t len, uint64_t seed, bool comp)
{
	read_blk(h, len);
	expect_good(h);
	assert_int_equal(h->c.data_len, len);
	gen_data(wbuf, len, seed, comp);
	memcpy(wbuf + 100, MARKER, sizeof MARKER - 1);
	assert_memory_equal(rbuf, wbuf, len);
}

static void simple(struct host *h, uint8_t op, uint8_t b4)
{
	uint8_t cdb[6] = {op, 0, 0, 0, b4, 0};
	host_cmd(h, cdb, 6, SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
}

static void rewind_tape(struct host *h)
{
	simple(h, 0x01, 0);
}

static void wfm(struct host *h)
{
	uint8_t cdb[6];
	host_cmd(h, cdb, cdb_wfm6(cdb, 1, false), SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
}

/* Makes nexus the sender of the next commands, its unit attentions cleared. */
static void as(struct host *h, uint64_t nexus)
{
	h->nexus = nexus;
	uint8_t cdb[6] = {0x03, 0, 0, 0, 18, 0};
	uint8_t s[18];
	for (int i = 0; i < 3; i++)
		host_cmd(h, cdb, 6, SCSI_DIR_IN, s, sizeof s);
}

static void expect_field(struct host *h, enum scsi_asc asc, uint16_t byte)
{
	expect_sense(h, SK_ILLEGAL_REQUEST, asc);
	assert_true(h->c.sense.sks_valid);
	assert_int_equal(h->c.sense.sks_field, byte);
}

static void loaded(struct host *h, const char *bc)
{
	host_new_cart(h, bc, 0);
	host_load(h, bc);
}

/* Calls fn on every regular file under dir. */
static void each_file(const char *dir, void (*fn)(const char *path, void *arg), void *arg)
{
	DIR *dd = opendir(dir);
	if (!dd)
		return;
	struct dirent *e;
	while ((e = readdir(dd))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		struct stat st;
		if (lstat(path, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode))
			each_file(path, fn, arg);
		else if (S_ISREG(st.st_mode))
			fn(path, arg);
	}
	closedir(dd);
}

static void count_marker(const char *path, void *arg)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return;
	static uint8_t buf[4 << 20];
	ssize_t n = read(fd, buf, sizeof buf);
	close(fd);
	if (n > 0 && memmem(buf, (size_t)n, MARKER, sizeof MARKER - 1))
		(*(int *)arg)++;
}

static int files_with_marker(struct host *h)
{
	int n = 0;
	each_file(h->fx->dir, count_marker, &n);
	return n;
}

/* ---- pages ---- */

static void protocol_info_pages(void **state)
{
	struct host *h = *state;
	spin(h, 0x00, 0x0000);
	expect_good(h);
	assert_int_equal(be16(page + 6), 2);
	assert_int_equal(page[8], 0x00);
	assert_int_equal(page[9], 0x20);
	spin(h, 0x00, 0x0001);
	expect_good(h);
	assert_int_equal(h->c.data_len, 4);
	assert_int_equal(be16(page + 2), 0); /* no certificate */
	spin(h, 0x00, 0x0002);
	expect_field(h, ASC_INVALID_FIELD_IN_CDB, 2);
	spin(h, 0x21, 0x0000);
	expect_field(h, ASC_INVALID_FIELD_IN_CDB, 1);
}

static void tape_pages(void **state)
{
	struct host *h = *state;
	spin(h, 0x20, 0x0000);
	expect_good(h);
	assert_int_equal(be16(page + 2), 14);
	const uint16_t want[] = {0x0000, 0x0001, 0x0010, 0x0011, 0x0012, 0x0020, 0x0021};
	for (int i = 0; i < 7; i++)
		assert_int_equal(be16(page + 4 + 2 * i), want[i]);
	spin(h, 0x20, 0x0001);
	expect_good(h);
	assert_int_equal(be16(page + 2), 2);
	assert_int_equal(be16(page + 4), 0x0010);
	/* Capabilities: one AES-256-GCM descriptor with the LTO KAD maxima. */
	spin(h, 0x20, 0x0010);
	expect_good(h);
	assert_int_equal(be16(page), 0x0010);
	assert_int_equal(be16(page + 2), 40);
	const uint8_t *a = page + 20;
	assert_int_equal(a[0], 1);
	assert_int_equal(be16(a + 2), 20);
	assert_int_equal((page[4] >> 2) & 3, 1); /* IBM model: EXTDECC 01b */
	assert_int_equal(a[4] & 0x20, 0);        /* and no MAC_C (no IBM text gives it) */
	assert_int_equal(a[4] & 0x03, 2); /* ENCRYPT_C */
	assert_int_equal((a[4] >> 2) & 0x03, 2); /* DECRYPT_C */
	assert_int_equal(be16(a + 6), 32);
	assert_int_equal(be16(a + 8), 12);
	assert_int_equal(be16(a + 10), 32);
	assert_int_equal(a[20] << 24 | a[21] << 16 | a[22] << 8 | a[23], 0x00010014);
	spin(h, 0x20, 0x0011);
	expect_good(h);
	assert_int_equal(be16(page + 2), 1);
	assert_int_equal(page[4], 0x00);
	spin(h, 0x20, 0x0012);
	expect_good(h);
	assert_int_equal(page[4] & 1, 1);    /* LOCK_C */
	assert_int_equal(page[5] & 7, 4);    /* CKOD_C; no CKORP_C or CKORL_C on the IBM model */
	assert_int_equal(page[7] & 7, 7);    /* AITN_C, LOCAL_C, PUBLIC_C */
	/* Status with nothing set: both modes DISABLE, no key instance. */
	spin(h, 0x20, 0x0020);
	expect_good(h);
	assert_int_equal(page[5], 0);
	assert_int_equal(page[6], 0);
	/* Next block status needs a cartridge. */
	spin(h, 0x20, 0x0021);
	expect_sense(h, SK_NOT_READY, ASC_MEDIUM_NOT_PRESENT);
	spin(h, 0x20, 0x0030);
	expect_field(h, ASC_INVALID_FIELD_IN_CDB, 2);
	uint8_t cdb[12] = {0xA2, 0x20, 0, 0, 0x80, 0, 0, 0, 4, 0, 0, 0};
	host_cmd(h, cdb, 12, SCSI_DIR_IN, page, sizeof page);
	expect_field(h, ASC_INVALID_FIELD_IN_CDB, 4);
}

/* ---- SET DATA ENCRYPTION refusals ---- */

static void sde_refusals(void **state)
{
	struct host *h = *state;
	struct sde_req r;
	r = req_key(KEY1, 2), r.keylen = 31;
	spout(h, &r);
	expect_field(h, ASC_INVALID_FIELD_IN_PARAMETERS, 18);
	r = req_key(KEY1, 2), r.alg = 2;
	spout(h, &r);
	expect_field(h, ASC_INVALID_FIELD_IN_PARAMETERS, 8);
	r = req_key(KEY1, 2), r.keyfmt = 1;
	spout(h, &r);
	expect_field(h, ASC_INVALID_FIELD_IN_PARAMETERS, 9);
	r = req_key(KEY1, 2), r.enc = 1; /* EXTERNAL */
	spout(h, &r);
	expect_field(h, ASC_INVALID_FIELD_IN_PARAMETERS, 6);
	r = req_key(KEY1, 1); /* RAW */
	spout(h, &r);
	expect_field(h, ASC_INVALID_FIELD_IN_PARAMETERS, 7);
	r = req_key(KEY1, 2), r.scope = 3;
	spout(h, &r);
	expect_field(h, ASC_INVALID_FIELD_IN_PARAMETERS, 4);
	r = req_key(KEY1, 2), r.flags_extra = 0x80; /* CEEM 10b: check the external mode */
	spout(h, &r);
	expect_field(h, ASC_INVALID_FIELD_IN_PARAMETERS, 5);
	assert_int_equal(h->c.sense.sks_bit, 7);
	r = req_key(KEY1, 2), r.flags_extra = 0x02; /* CKORP */
	spout(h, &r);
	expect_field(h, ASC_INVALID_FIELD_IN_PARAMETERS, 5);
	assert_int_equal(h->c.sense.sks_bit, 1);
	/* KAD too long: the pointer is at its length (U-KAD descriptor at 52, A-KAD after it). */
	r = req_key(KEY1, 2), r.ukad_len = 33;
	spout(h, &r);
	expect_field(h, ASC_INVALID_FIELD_IN_PARAMETERS, 54);
	r = req_key(KEY1, 2), r.ukad_len = 32, r.akad_len = 13;
	spout(h, &r);
	expect_field(h, ASC_INVALID_FIELD_IN_PARAMETERS, 52 + 4 + 32 + 2);
	/* A nonce descriptor: not supported. */
	uint8_t p[512];
	r = req_key(KEY1, 2), r.ukad = NULL, r.akad = NULL;
	size_t n = sde_build(&r, p);
	p[n] = 2, p[n + 3] = 4;
	n += 8;
	p[2] = (uint8_t)((n - 4) >> 8), p[3] = (uint8_t)(n - 4);
	spout_raw(h, p, n);
	expect_field(h, ASC_INVALID_FIELD_IN_PARAMETERS, 52);
	/* A page longer than the list. */
	r = req_key(KEY1, 2);
	n = sde_build(&r, p);
	spout_raw(h, p, n - 5);
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH);
	/* Another page, another protocol. */
	uint8_t cdb[12] = {0xB5, 0x20, 0x00, 0x11, 0, 0, 0, 0, 0, 60, 0, 0};
	host_cmd(h, cdb, 12, SCSI_DIR_OUT, p, 60);
	expect_field(h, ASC_INVALID_FIELD_IN_CDB, 2);
	cdb[1] = 0x00, cdb[3] = 0x10;
	host_cmd(h, cdb, 12, SCSI_DIR_OUT, p, 60);
	expect_field(h, ASC_INVALID_FIELD_IN_CDB, 1);
	/* Nothing took effect. */
	spin(h, 0x20, 0x0020);
	expect_good(h);
	assert_int_equal(page[5], 0);
	assert_int_equal(page[8] | page[9] | page[10] | page[11], 0);
}

/* ---- the data path ---- */

static void encrypted_round_trip(void **state)
{
	struct host *h = *state;
	loaded(h, "E00001L8");
	set_key(h, KEY1, 2);
	spin(h, 0x20, 0x0020);
	expect_good(h);
	assert_int_equal(page[4] & 7, 2);   /* key scope ALL I_T NEXUS */
	assert_int_equal(page[5], 2);
	assert_int_equal(page[6], 2);
	assert_int_equal(page[7], 1);
	assert_int_equal(page[11], 1);      /* key instance counter */
	assert_int_equal(page[24], 0);      /* U-KAD descriptor */
	assert_int_equal(be16(page + 26), 10);
	assert_memory_equal(page + 28, "tape-key-1", 10);
	/* Enough blocks for the read-ahead to run; compressible and not. */
	for (int i = 0; i < 24; i++)
		write_blk(h, BLK - (uint32_t)i, (uint64_t)i, i % 2);
	wfm(h);
	rewind_tape(h);
	spin(h, 0x20, 0x0021);
	expect_good(h);
	assert_int_equal(page[12] & 0x0F, 0x5); /* encrypted, and the key decrypts it */
	assert_int_equal(page[13], 1);
	assert_int_equal(page[16], 0);
	assert_memory_equal(page + 20, "tape-key-1", 10);
	for (int i = 0; i < 24; i++)
		expect_blk(h, BLK - (uint32_t)i, (uint64_t)i, i % 2);
	spin(h, 0x20, 0x0021);
	expect_good(h);
	assert_int_equal(page[12] & 0x0F, 0x2); /* a filemark: not a logical block */
	simple(h, 0x1B, 0);                     /* unload: everything on disk */
	assert_int_equal(files_with_marker(h), 0);
}

static void plaintext_has_marker(void **state)
{
	/* The check above can fail: without a key the marker is in the segment file. */
	struct host *h = *state;
	loaded(h, "E00002L8");
	write_blk(h, 4096, 1, false);
	simple(h, 0x1B, 0);
	assert_int_equal(files_with_marker(h), 1);
}

static void no_key_and_wrong_key(void **state)
{
	struct host *h = *state;
	loaded(h, "E00003L8");
	set_key(h, KEY1, 2);
	write_blk(h, 4096, 3, false);
	write_blk(h, 4096, 4, false);
	rewind_tape(h);
	set_off(h);
	read_blk(h, 4096);
	expect_sense(h, SK_DATA_PROTECT, ASC_UNABLE_TO_DECRYPT);
	assert_int_equal(host_position(h), 0); /* still at the block */
	spin(h, 0x20, 0x0021);
	expect_good(h);
	assert_int_equal(page[12] & 0x0F, 0x6);
	set_key(h, KEY2, 2);
	read_blk(h, 4096);
	expect_sense(h, SK_DATA_PROTECT, ASC_INCORRECT_ENCRYPTION_KEY);
	spin(h, 0x20, 0x0021);
	assert_int_equal(page[12] & 0x0F, 0x6);
	/* Positioning needs no key: SPACE passes an encrypted block, VERIFY of it does need the key. */
	uint8_t cdb[6];
	host_cmd(h, cdb, cdb_space6(cdb, 0, 1), SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	assert_int_equal(host_position(h), 1);
	uint8_t verify[6] = {0x13, 0, 0, 0x10, 0x00, 0}; /* VERIFY(6), variable, 4096 bytes */
	host_cmd(h, verify, 6, SCSI_DIR_NONE, NULL, 0);
	expect_sense(h, SK_DATA_PROTECT, ASC_INCORRECT_ENCRYPTION_KEY);
	set_key(h, KEY1, 2);
	host_cmd(h, verify, 6, SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	rewind_tape(h);
	expect_blk(h, 4096, 3, false);
	expect_blk(h, 4096, 4, false);
}

/* Rewrites the first data record's payload byte at off and fixes its CRC, as an attacker would. */
static void tamper(const char *path, void *arg)
{
	(void)arg;
	int fd = open(path, O_RDWR);
	if (fd < 0)
		return;
	unsigned char hb[REC_HEADER_LEN];
	struct rec_header rh;
	if (pread(fd, hb, sizeof hb, SEG_HEADER_LEN) == (ssize_t)sizeof hb && rec_header_decode(hb, &rh) == 0 &&
	    rh.type == REC_DATA && (rh.flags & REC_FLAG_ENCRYPTED)) {
		static unsigned char pl[1 << 17];
		assert_true(pread(fd, pl, rh.stored_len, SEG_HEADER_LEN + REC_HEADER_LEN) == (ssize_t)rh.stored_len);
		pl[rh.stored_len - REC_CRYPT_TAG_LEN - 7] ^= 0x40; /* a ciphertext byte */
		rh.payload_crc = crc32c(0, pl, rh.stored_len);
		rec_header_encode(&rh, hb);
		assert_true(pwrite(fd, pl, rh.stored_len, SEG_HEADER_LEN + REC_HEADER_LEN) == (ssize_t)rh.stored_len);
		assert_true(pwrite(fd, hb, sizeof hb, SEG_HEADER_LEN) == (ssize_t)sizeof hb);
	}
	close(fd);
}

static void tampered_block(void **state)
{
	struct host *h = *state;
	loaded(h, "E00004L8");
	set_key(h, KEY1, 2);
	write_blk(h, 4096, 5, false);
	write_blk(h, 4096, 6, false);
	simple(h, 0x1B, 0);
	each_file(h->fx->dir, tamper, NULL);
	simple(h, 0x1B, 1);
	read_blk(h, 4096);
	expect_sense(h, SK_DATA_PROTECT, ASC_CRYPTO_INTEGRITY_FAILED);
	assert_int_equal(host_position(h), 0);
	uint8_t cdb[6];
	host_cmd(h, cdb, cdb_space6(cdb, 0, 1), SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	expect_blk(h, 4096, 6, false); /* the next one is intact */
}

static void mixed_mode(void **state)
{
	struct host *h = *state;
	loaded(h, "E00005L8");
	write_blk(h, 4096, 7, false); /* plaintext */
	set_key(h, KEY1, 2);
	write_blk(h, 4096, 8, false); /* encrypted */
	rewind_tape(h);
	spin(h, 0x20, 0x0021);
	assert_int_equal(page[12] & 0x0F, 0x3); /* not encrypted */
	read_blk(h, 4096);
	expect_sense(h, SK_DATA_PROTECT, ASC_UNENCRYPTED_WHILE_DECRYPTING);
	set_key(h, KEY1, 3); /* MIXED */
	expect_blk(h, 4096, 7, false);
	expect_blk(h, 4096, 8, false);
}

static void ckod_wipes_at_unload(void **state)
{
	struct host *h = *state;
	loaded(h, "E00006L8");
	struct sde_req r = req_key(KEY1, 2);
	r.ckod = true;
	spout(h, &r);
	expect_good(h);
	write_blk(h, 4096, 9, false);
	simple(h, 0x1B, 0); /* unload */
	spin(h, 0x20, 0x0020);
	expect_good(h);
	assert_int_equal(page[5], 0);
	assert_int_equal(page[6], 0);
	assert_int_equal(page[11], 2); /* set, then cleared: two key instances */
	simple(h, 0x1B, 1);
	read_blk(h, 4096);
	expect_sense(h, SK_DATA_PROTECT, ASC_UNABLE_TO_DECRYPT);
	/* Without CKOD the key stays over an unload. */
	set_key(h, KEY1, 2);
	simple(h, 0x1B, 0);
	simple(h, 0x1B, 1);
	expect_blk(h, 4096, 9, false);
}

/* The sense a locked nexus's data command gets once its parameters changed (SSC-3/SSC-4 4.2.21.11, HP LTO-4 p.72). */
static void expect_lock_broken(struct host *h)
{
	expect_sense(h, SK_DATA_PROTECT, ASC_ENCRYPTION_KIC_CHANGED);
}

/* A WRITE of one 4096-byte block that must fail because of a broken lock: nothing written, position kept. */
static void write_refused(struct host *h, uint64_t at)
{
	uint8_t cdb[6];
	gen_data(wbuf, 4096, 99, false);
	host_cmd(h, cdb, cdb_write6(cdb, false, 4096), SCSI_DIR_OUT, wbuf, 4096);
	expect_lock_broken(h);
	assert_int_equal(host_position(h), at);
}

/* A (the host nexus) sets KEY1 for ALL I_T NEXUS with LOCK; returns the request, to send again. */
static struct sde_req set_locked(struct host *h)
{
	struct sde_req r = req_key(KEY1, 2);
	r.lock = true;
	spout(h, &r);
	expect_good(h);
	return r;
}

/*
 * LOCK pins the nexus, not the parameters: another nexus's ALL I_T NEXUS SET
 * succeeds, and the locked nexus's WRITE, READ and VERIFY then fail with
 * 2Ah/13h (nothing written, nothing read, position kept) until it sends a
 * SECURITY PROTOCOL OUT of its own.
 */
static void lock_and_scope(void **state)
{
	struct host *h = *state;
	loaded(h, "E00007L8");
	set_locked(h);
	write_blk(h, 4096, 11, false); /* object 0, KEY1 */
	as(h, NEXUS_B);
	set_key(h, KEY2, 2); /* no refusal: the lock is A's, not the parameters' */
	as(h, HOST_NEXUS);   /* A's unit attention 2Ah/11h, cleared */
	write_refused(h, 1);
	rewind_tape(h);
	read_blk(h, 4096);
	expect_lock_broken(h);
	assert_int_equal(host_position(h), 0);
	uint8_t verify[6] = {0x13, 0, 0, 0x10, 0x00, 0}; /* VERIFY(6), variable, 4096 bytes */
	host_cmd(h, verify, 6, SCSI_DIR_NONE, NULL, 0);
	expect_lock_broken(h);
	/* The lock stays broken until A's own SET; the status page still answers. */
	read_blk(h, 4096);
	expect_lock_broken(h);
	spin(h, 0x20, 0x0020);
	expect_good(h);
	/* A SET without LOCK ends the lock: A reads with the public parameters B set (KEY2). */
	struct sde_req pub = {.scope = 0};
	spout(h, &pub);
	expect_good(h);
	read_blk(h, 4096);
	expect_sense(h, SK_DATA_PROTECT, ASC_INCORRECT_ENCRYPTION_KEY);
	/* B's own, local parameters: B now writes in clear, past A's block. */
	as(h, NEXUS_B);
	struct sde_req local = {.scope = 1};
	spout(h, &local);
	expect_good(h);
	spin(h, 0x20, 0x0020);
	assert_int_equal(page[4] >> 5, 1); /* I_T nexus scope LOCAL */
	assert_int_equal(page[5], 0);
	uint8_t cdb[6];
	host_cmd(h, cdb, cdb_space6(cdb, 0, 1), SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	write_blk(h, 4096, 10, false); /* object 1, in clear */
	rewind_tape(h);
	host_cmd(h, cdb, cdb_space6(cdb, 0, 1), SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	expect_blk(h, 4096, 10, false);
}

/* A new SET with LOCK from the locked nexus locks it again, to what it set now. */
static void lock_re_established(void **state)
{
	struct host *h = *state;
	loaded(h, "E00010L8");
	struct sde_req r = set_locked(h);
	as(h, NEXUS_B);
	set_key(h, KEY2, 2);
	as(h, HOST_NEXUS);
	write_refused(h, 0);
	spout(h, &r);
	expect_good(h);
	write_blk(h, 4096, 12, false);
	rewind_tape(h);
	expect_blk(h, 4096, 12, false);
	/* B is not locked: A's change does not stop it, and B shares the public KEY1 A set again. */
	as(h, NEXUS_B);
	rewind_tape(h);
	expect_blk(h, 4096, 12, false);
}

/* The lock holds with both modes DISABLE (T10 r0803201); a LOCAL SET of another nexus leaves it alone. */
static void lock_with_modes_disable(void **state)
{
	struct host *h = *state;
	loaded(h, "E00011L8");
	struct sde_req off = {.scope = 2, .lock = true};
	spout(h, &off);
	expect_good(h);
	write_blk(h, 4096, 13, false);
	as(h, NEXUS_B);
	struct sde_req local = req_key(KEY2, 2);
	local.scope = 1;
	spout(h, &local);
	expect_good(h);
	as(h, HOST_NEXUS);
	write_blk(h, 4096, 14, false); /* B's own parameters are not the ones A locked to */
	as(h, NEXUS_B);
	set_key(h, KEY2, 2);
	as(h, HOST_NEXUS);
	write_refused(h, 2);
	rewind_tape(h);
	read_blk(h, 4096);
	expect_lock_broken(h);
}

/* A nexus locks to PUBLIC parameters another nexus created; the creator, not locked, may replace them. */
static void lock_to_public_of_another(void **state)
{
	struct host *h = *state;
	loaded(h, "E00012L8");
	set_key(h, KEY1, 2);
	as(h, NEXUS_B);
	struct sde_req pub = {.scope = 0, .lock = true};
	spout(h, &pub);
	expect_good(h);
	write_blk(h, 4096, 15, false);
	as(h, HOST_NEXUS);
	set_key(h, KEY2, 2);
	write_blk(h, 4096, 16, false); /* A is not locked */
	as(h, NEXUS_B);
	write_refused(h, 2);
}

/* Parameters released under the lock (CKOD at unload; another nexus's ALL I_T NEXUS drops a LOCAL set) break it. */
static void lock_broken_by_release(void **state)
{
	struct host *h = *state;
	loaded(h, "E00013L8");
	struct sde_req r = req_key(KEY1, 2);
	r.lock = true;
	r.ckod = true;
	spout(h, &r);
	expect_good(h);
	write_blk(h, 4096, 17, false);
	simple(h, 0x1B, 0); /* unload: CKOD clears the key */
	simple(h, 0x1B, 1);
	read_blk(h, 4096);
	expect_lock_broken(h);
	/* A LOCAL set, locked, dropped by B's ALL I_T NEXUS SET. */
	struct sde_req local = req_key(KEY1, 2);
	local.scope = 1;
	local.lock = true;
	spout(h, &local);
	expect_good(h);
	expect_blk(h, 4096, 17, false);
	as(h, NEXUS_B);
	set_key(h, KEY2, 2);
	as(h, HOST_NEXUS);
	rewind_tape(h);
	read_blk(h, 4096);
	expect_lock_broken(h);
}

/* The lock ends with the nexus and at a reset: the next data command runs under the parameters then in force. */
static void lock_ends_with_nexus(void **state)
{
	struct host *h = *state;
	loaded(h, "E00008L8");
	struct sde_req r = set_locked(h);
	as(h, NEXUS_B);
	set_key(h, KEY2, 2);
	ssc_nexus_lost(h->d, HOST_NEXUS);
	as(h, HOST_NEXUS); /* the same initiator logs in again: a new nexus, not locked */
	write_blk(h, 4096, 18, false);
	/* A reset ends every lock, and wipes every key. */
	spout(h, &r);
	expect_good(h);
	as(h, NEXUS_B);
	set_key(h, KEY2, 2);
	ssc_reset(h->d);
	as(h, HOST_NEXUS);
	spin(h, 0x20, 0x0020);
	expect_good(h);
	assert_int_equal(page[5], 0);
	assert_int_equal(page[6], 0);
	rewind_tape(h);
	uint8_t cdb[6];
	host_cmd(h, cdb, cdb_space6(cdb, 0, 1), SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	write_blk(h, 4096, 19, false); /* plaintext, not refused */
}

/* Each locking nexus saves its lock: more than the drive keeps is refused (55h/03h, our choice), nothing changed. */
static void lock_entries_bounded(void **state)
{
	struct host *h = *state;
	struct sde_req pub = {.scope = 0, .lock = true};
	for (uint64_t i = 0; i < SSC_CRYPT_LOCK_MAX; i++) {
		as(h, 0x1000 + i);
		spout(h, &pub);
		expect_good(h);
	}
	as(h, 0x1000 + SSC_CRYPT_LOCK_MAX);
	spout(h, &pub);
	expect_sense(h, SK_ILLEGAL_REQUEST, ASC_INSUFFICIENT_RESOURCES);
	/* A locked nexus's new SET reuses its own entry. */
	as(h, 0x1000);
	spout(h, &pub);
	expect_good(h);
	struct sde_req nolock = {.scope = 0};
	spout(h, &nolock);
	expect_good(h);
	as(h, 0x1000 + SSC_CRYPT_LOCK_MAX);
	spout(h, &pub);
	expect_good(h);
}

/* What the status page reports follows what was set: RDMC protect, CEEM "not checked", each key a new instance. */
static void status_follows_settings(void **state)
{
	struct host *h = *state;
	struct sde_req r = req_key(KEY1, 3);
	r.flags_extra = 0x40 | 0x30; /* CEEM 01b, RDMC 11b (protect from raw reads) */
	spout(h, &r);
	expect_good(h);
	spin(h, 0x20, 0x0020);
	expect_good(h);
	assert_int_equal(page[6], 3);      /* MIXED */
	assert_int_equal(page[12] & 1, 1); /* RDMD */
	assert_int_equal((page[12] >> 1) & 3, 1); /* CEEMS: CEEM as set */
	assert_int_equal((page[12] >> 4) & 7, 1); /* PARAMETERS CONTROL 001b: the host sets them */
	assert_int_equal(page[11], 1);
	set_key(h, KEY2, 2);
	spin(h, 0x20, 0x0020);
	assert_int_equal(page[12] & 1, 0);
	assert_int_equal(page[11], 3); /* KEY1 went (2), KEY2 came (3) */
	/* LOCAL from this nexus: its own parameters, key scope LOCAL, the public ones untouched. */
	struct sde_req local = req_key(KEY1, 2);
	local.scope = 1;
	spout(h, &local);
	expect_good(h);
	spin(h, 0x20, 0x0020);
	assert_int_equal(page[4] >> 5, 1);
	assert_int_equal(page[4] & 7, 1);
	as(h, NEXUS_B);
	spin(h, 0x20, 0x0020);
	assert_int_equal(page[4] >> 5, 0);
	assert_int_equal(page[4] & 7, 2); /* B shares the public key set with ALL I_T NEXUS */
	assert_int_equal(page[5], 2);
}

static void other_nexus_told(void **state)
{
	struct host *h = *state;
	loaded(h, "E00009L8");
	as(h, NEXUS_B);
	as(h, HOST_NEXUS);
	set_key(h, KEY1, 2);
	h->nexus = NEXUS_B;
	uint8_t tur[6] = {0};
	host_cmd(h, tur, 6, SCSI_DIR_NONE, NULL, 0);
	expect_sense(h, SK_UNIT_ATTENTION, ASC_ENCRYPTION_CHANGED_BY_OTHER);
	host_cmd(h, tur, 6, SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	/* The nexus that set them hears nothing; a LOCAL change tells no one. */
	h->nexus = HOST_NEXUS;
	host_cmd(h, tur, 6, SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
	struct sde_req local = {.scope = 1};
	spout(h, &local);
	expect_good(h);
	h->nexus = NEXUS_B;
	host_cmd(h, tur, 6, SCSI_DIR_NONE, NULL, 0);
	expect_good(h);
}

/* ---- logical block protection with encryption ---- */

/* MODE SELECT(10) of the Control Data Protection page (0Ah/F0h): CRC32C, LBP_W and LBP_R. */
static void lbp_crc32c_on(struct host *h)
{
	uint8_t list[8 + 32] = {0};
	list[3] = 0x10; /* buffered mode */
	uint8_t *p = list + 8;
	p[0] = 0x4A, p[1] = 0xF0, p[3] = 0x1C, p[4] = 2 /* CRC32C */, p[5] = 4, p[6] = 0xC0 /* LBP_W, LBP_R */;
	uint8_t cdb[10] = {0x55, 0x10, 0, 0, 0, 0, 0, 0, sizeof list, 0};
	host_cmd(h, cdb, 10, SCSI_DIR_OUT, list, sizeof list);
	expect_good(h);
}

/* Block seed of len bytes with the marker, then its CRC32C least significant byte first (SSC-4 4.2.22). */
static void protected_blk(uint8_t *p, uint32_t len, uint64_t seed)
{
	gen_data(p, len, seed, seed % 2);
	memcpy(p + 100, MARKER, sizeof MARKER - 1);
	uint32_t crc = crc32c(0, p, len);
	for (int i = 0; i < 4; i++)
		p[len + i] = (uint8_t)(crc >> (8 * i));
}

static void lbp_and_encryption(void **state)
{
	struct host *h = *state;
	static uint8_t blk[BLK + 4];
	const uint32_t len = 8192;
	loaded(h, "E00009L8");
	set_key(h, KEY1, 2);
	lbp_crc32c_on(h);
	uint8_t cdb[6];
	for (uint64_t i = 0; i < 3; i++) {
		protected_blk(blk, len, 40 + i);
		host_cmd(h, cdb, cdb_write6(cdb, false, len + 4), SCSI_DIR_OUT, blk, len + 4);
		expect_good(h);
	}
	/* A CRC that is not the plaintext's: refused before encryption, nothing written, position kept. */
	protected_blk(blk, len, 43);
	blk[len + 2] ^= 0x10;
	host_cmd(h, cdb, cdb_write6(cdb, false, len + 4), SCSI_DIR_OUT, blk, len + 4);
	expect_sense(h, SK_HARDWARE_ERROR, ASC_LOGICAL_BLOCK_GUARD_CHECK_FAILED);
	assert_int_equal(sense_info(h), len + 4);
	assert_int_equal(host_position(h), 3);
	wfm(h);
	rewind_tape(h);
	/* Each block comes back decrypted with the CRC32C of the plaintext the host sent. */
	for (uint64_t i = 0; i < 3; i++) {
		read_blk(h, len + 4);
		expect_good(h);
		assert_int_equal(h->c.data_len, len + 4);
		protected_blk(blk, len, 40 + i);
		assert_memory_equal(rbuf, blk, len + 4);
	}
	uint8_t r6[6];
	host_cmd(h, r6, cdb_read6(r6, false, false, len + 4), SCSI_DIR_IN, rbuf, len + 4);
	expect_sense(h, SK_NO_SENSE, ASC_FILEMARK_DETECTED); /* the refused block is not there */
	/* The blocks are encrypted on disk: no plaintext (the marker) in the pool. */
	simple(h, 0x1B, 0);
	assert_int_equal(files_with_marker(h), 0);
}


/* ---- CKORP / CKORL (HP models) ---- */

#define NEXUS_A HOST_NEXUS
#define KEY_A 0xAAull
#define KEY_B 0xBBull
#define PR_WE 0x1 /* WRITE EXCLUSIVE */

/* PERSISTENT RESERVE OUT service action sa (type for those that take one) with reservation key key and sa_key. */
static int pr_out(struct host *h, uint8_t sa, uint8_t type, uint64_t key, uint64_t sa_key)
{
	uint8_t cdb[10] = {0x5F, sa, type, 0, 0, 0, 0, 0, 24, 0};
	uint8_t p[24] = {0};
	for (int i = 0; i < 8; i++) {
		p[i] = (uint8_t)(key >> (56 - 8 * i));
		p[8 + i] = (uint8_t)(sa_key >> (56 - 8 * i));
	}
	return host_cmd(h, cdb, 10, SCSI_DIR_OUT, p, sizeof p);
}

static void pr_register(struct host *h, uint64_t key)
{
	pr_out(h, 0x00, 0, 0, key);
	expect_good(h);
}

/* An HP drive with a cartridge, one encrypted block written by NEXUS_A with flags (byte 5 bits) under its reservation. */
static void hp_with_block(struct host *h, uint8_t flags)
{
	host_drive_model(h, "HP", "Ultrium 8-SCSI");
	loaded(h, "CKR001L8");
	as(h, NEXUS_A);
	pr_register(h, KEY_A);
	pr_out(h, 0x01, PR_WE, KEY_A, 0); /* RESERVE */
	expect_good(h);
	struct sde_req r = req_key(KEY1, 2);
	r.flags_extra = flags;
	spout(h, &r);
	expect_good(h);
	write_blk(h, 4096, 7, false);
	wfm(h);
}

/* Whether nexus's status page shows a key in force (ENCRYPT mode). */
static bool has_key(struct host *h, uint64_t nexus)
{
	as(h, nexus);
	spin(h, 0x20, 0x0020);
	expect_good(h);
	return page[5] == 2;
}

/* A key set with CKORP, then one with CKORL: each refused with the field pointer at its bit (byte 5 bit 1, bit 0). */
static void expect_ckorp_ckorl_refused(struct host *h)
{
	struct sde_req r = req_key(KEY1, 2);
	r.flags_extra = 0x02;
	spout(h, &r);
	expect_invalid_field(h, ASC_INVALID_FIELD_IN_PARAMETERS, false, 5, 1);
	r.flags_extra = 0x01;
	spout(h, &r);
	expect_invalid_field(h, ASC_INVALID_FIELD_IN_PARAMETERS, false, 5, 0);
}

static void hp_pages_offer_ckorp_ckorl(void **state)
{
	struct host *h = *state;
	host_drive_model(h, "HP", "Ultrium 8-SCSI");
	spin(h, 0x20, 0x0012);
	expect_good(h);
	assert_int_equal(page[5] & 7, 7); /* CKOD_C, CKORP_C, CKORL_C (HP LTO-5 reference) */
	spin(h, 0x20, 0x0010);
	expect_good(h);
	assert_int_equal((page[4] >> 2) & 3, 2); /* EXTDECC 10b */
	assert_int_equal(page[24] & 0x20, 0x20); /* MAC_C */
	/* Without a reservation the bits name nothing to watch. */
	expect_ckorp_ckorl_refused(h);
	struct sde_req r = req_key(KEY1, 2);
	/* An SPC-2 reservation is a reservation (CKORL) but not a persistent one (CKORP). */
	simple(h, 0x16, 0); /* RESERVE(6) */
	r.flags_extra = 0x02;
	spout(h, &r);
	expect_invalid_field(h, ASC_INVALID_FIELD_IN_PARAMETERS, false, 5, 1);
	r.flags_extra = 0x01;
	spout(h, &r);
	expect_good(h);
	assert_true(has_key(h, NEXUS_A));
	/* Its release is a reservation loss: the key goes. */
	simple(h, 0x17, 0); /* RELEASE(6) */
	assert_false(has_key(h, NEXUS_A));
}

/* CKORP: another nexus's PREEMPT of the reservation clears the key; the block can no longer be read. */
static void ckorp_preempt_clears_key(void **state)
{
	struct host *h = *state;
	hp_with_block(h, 0x02);
	assert_true(has_key(h, NEXUS_A));
	as(h, NEXUS_B);
	pr_register(h, KEY_B);
	pr_out(h, 0x04, PR_WE, KEY_B, KEY_A); /* PREEMPT A */
	expect_good(h);
	assert_false(has_key(h, NEXUS_A));
	rewind_tape(h);
	read_blk(h, 4096);
	expect_sense(h, SK_DATA_PROTECT, ASC_UNABLE_TO_DECRYPT);
}

/* CKORL: the holder's RELEASE is a loss and clears the key; with neither bit a PREEMPT leaves it, and the block reads. */
static void preempt_without_ckorp_keeps_key(void **state)
{
	struct host *h = *state;
	hp_with_block(h, 0x01);
	pr_out(h, 0x02, PR_WE, KEY_A, 0); /* RELEASE */
	expect_good(h);
	assert_false(has_key(h, NEXUS_A));
	/* Again with neither bit. */
	pr_out(h, 0x01, PR_WE, KEY_A, 0);
	expect_good(h);
	set_key(h, KEY1, 2);
	as(h, NEXUS_B);
	pr_register(h, KEY_B);
	pr_out(h, 0x04, PR_WE, KEY_B, KEY_A);
	expect_good(h);
	assert_true(has_key(h, NEXUS_A));
	rewind_tape(h);
	expect_blk(h, 4096, 7, false);
}

/* CKORL: a PREEMPT is a reservation loss as well, so is a CLEAR; CKORP alone ignores a RELEASE. */
static void ckorl_on_preempt_and_clear(void **state)
{
	struct host *h = *state;
	hp_with_block(h, 0x01);
	as(h, NEXUS_B);
	pr_register(h, KEY_B);
	pr_out(h, 0x04, PR_WE, KEY_B, KEY_A);
	expect_good(h);
	assert_false(has_key(h, NEXUS_A));
	/* B now holds it; B sets CKORL, A (registered again) clears everything. */
	as(h, NEXUS_B);
	struct sde_req r = req_key(KEY2, 2);
	r.flags_extra = 0x01;
	spout(h, &r);
	expect_good(h);
	assert_true(has_key(h, NEXUS_B));
	as(h, NEXUS_A);
	pr_register(h, KEY_A);
	pr_out(h, 0x03, 0, KEY_A, 0); /* CLEAR */
	expect_good(h);
	assert_false(has_key(h, NEXUS_B));
	/* CKORP without CKORL: the holder's own RELEASE is no preempt, the key stays. */
	pr_register(h, KEY_A);
	pr_out(h, 0x01, PR_WE, KEY_A, 0);
	expect_good(h);
	r = req_key(KEY1, 2);
	r.flags_extra = 0x02;
	spout(h, &r);
	expect_good(h);
	pr_out(h, 0x02, PR_WE, KEY_A, 0);
	expect_good(h);
	assert_true(has_key(h, NEXUS_A));
}

/* The parameters go with the reservation of the nexus that set them, even after another nexus locked them. */
static void ckorl_follows_the_setter(void **state)
{
	struct host *h = *state;
	host_drive_model(h, "HP", "Ultrium 8-SCSI");
	loaded(h, "CKR002L8");
	as(h, NEXUS_B);
	pr_register(h, KEY_B);
	as(h, NEXUS_A);
	pr_register(h, KEY_A);
	pr_out(h, 0x01, 0x7, KEY_A, 0); /* RESERVE, WRITE EXCLUSIVE - ALL REGISTRANTS: both hold it */
	expect_good(h);
	struct sde_req r = req_key(KEY1, 2);
	r.flags_extra = 0x01;
	spout(h, &r);
	expect_good(h);
	as(h, NEXUS_B);
	struct sde_req pub = {.scope = 0, .lock = true};
	spout(h, &pub);
	expect_good(h);
	assert_true(has_key(h, NEXUS_B)); /* B shares the public parameters A set */
	as(h, NEXUS_A);
	pr_out(h, 0x00, 0, KEY_A, 0); /* A unregisters: its reservation is lost */
	expect_good(h);
	assert_false(has_key(h, NEXUS_B));
	assert_false(has_key(h, NEXUS_A));
	/* B locked to the parameters CKORL just released: its WRITE is refused, though B still holds the reservation. */
	as(h, NEXUS_B);
	write_refused(h, 0);
}

/* VCELB (page 0020h byte 12 bit 3) of the loaded medium, as the host nexus sees it. */
static bool vcelb(struct host *h)
{
	spin(h, 0x20, 0x0020);
	expect_good(h);
	return page[12] & 0x08;
}

/* VCELB says whether the medium holds an encrypted block: writes, filemarks and erases that truncate it count. */
static void vcelb_follows_the_medium(void **state)
{
	struct host *h = *state;
	assert_false(vcelb(h)); /* no cartridge */
	loaded(h, "E00020L8");
	assert_false(vcelb(h));
	write_blk(h, 4096, 1, false); /* object 0, in clear */
	assert_false(vcelb(h));
	set_key(h, KEY1, 3);
	write_blk(h, 4096, 2, false); /* object 1, encrypted */
	assert_true(vcelb(h));
	set_off(h);
	write_blk(h, 4096, 3, false); /* object 2, in clear: 1 stays */
	assert_true(vcelb(h));
	simple(h, 0x1B, 0); /* unload and load: kept with the cartridge */
	simple(h, 0x1B, 1);
	assert_true(vcelb(h));
	/* Rewritten from object 1 on (after reading 0): the encrypted block is gone. */
	expect_blk(h, 4096, 1, false);
	write_blk(h, 4096, 4, false);
	assert_false(vcelb(h));
	/* Encrypted again at 2, then a filemark at 2 replaces it; then an erase at BOT of a new one. */
	set_key(h, KEY1, 3);
	write_blk(h, 4096, 5, false);
	assert_true(vcelb(h));
	rewind_tape(h);
	expect_blk(h, 4096, 1, false);
	expect_blk(h, 4096, 4, false);
	wfm(h);
	assert_false(vcelb(h));
	write_blk(h, 4096, 6, false);
	assert_true(vcelb(h));
	rewind_tape(h);
	simple(h, 0x19, 0); /* ERASE (short) at BOT */
	assert_false(vcelb(h));
	write_blk(h, 4096, 7, false);
	assert_true(vcelb(h));
	rewind_tape(h);
	simple(h, 0x04, 0); /* FORMAT MEDIUM */
	assert_false(vcelb(h));
}

/* The IBM model offers neither bit: refused even by a reservation holder. */
static void ibm_refuses_ckorp_ckorl(void **state)
{
	struct host *h = *state;
	pr_register(h, KEY_A);
	pr_out(h, 0x01, PR_WE, KEY_A, 0);
	expect_good(h);
	expect_ckorp_ckorl_refused(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(protocol_info_pages, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(tape_pages, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(sde_refusals, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(encrypted_round_trip, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(plaintext_has_marker, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(no_key_and_wrong_key, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(tampered_block, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(mixed_mode, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(ckod_wipes_at_unload, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(lock_and_scope, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(lock_re_established, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(lock_with_modes_disable, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(lock_to_public_of_another, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(lock_broken_by_release, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(lock_ends_with_nexus, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(lock_entries_bounded, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(other_nexus_told, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(status_follows_settings, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(lbp_and_encryption, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(hp_pages_offer_ckorp_ckorl, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(ckorp_preempt_clears_key, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(preempt_without_ckorp_keeps_key, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(ckorl_on_preempt_and_clear, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(ckorl_follows_the_setter, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(ibm_refuses_ckorp_ckorl, host_setup, host_teardown),
		cmocka_unit_test_setup_teardown(vcelb_follows_the_medium, host_setup, host_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
