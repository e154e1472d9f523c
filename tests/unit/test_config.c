/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of the configuration file parser (vtl/config): a full file and
 * a minimal one parse into the expected settings and defaults; every kind of
 * mistake is refused with its "FILE:LINE: ..." message; sizes; relative
 * paths against the file's folder; the pool and library views.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/grow.h"
#include "common/vtl_error.h"
#include "tests/unit/testlib.h"
#include "config/config.h"

static struct vtl_config *parse_ok(const char *text)
{
	struct vtl_config *c = NULL;
	char err[VTL_CFG_ERR_LEN] = "";
	int rc = vtl_config_parse("/etc/vtl/t.conf", text, strlen(text), &c, err, sizeof err);
	if (rc)
		fail_msg("config refused (%d): %s\n--- text:\n%s", rc, err, text);
	assert_non_null(c);
	return c;
}

/* The text is refused with VTL_E_CONFIG and a message that contains want. */
static void expect_error(const char *text, const char *want)
{
	struct vtl_config *c = (struct vtl_config *)1;
	char err[VTL_CFG_ERR_LEN] = "";
	int rc = vtl_config_parse("t.conf", text, strlen(text), &c, err, sizeof err);
	if (rc != VTL_E_CONFIG)
		fail_msg("config accepted or wrong code %d (%s)\n--- text:\n%s", rc, err, text);
	assert_null(c);
	if (!strstr(err, want))
		fail_msg("message \"%s\" does not contain \"%s\"\n--- text:\n%s", err, want, text);
}

#define POOL "[pool]\nmember = /srv/vtl/m0\n"

static const char full_text[] =
	"# a library\n"                                  /* 1 */
	"[library]\n"                                    /* 2 */
	"name = vtl1\n"                                  /* 3 */
	"vendor = IBM\n"                                 /* 4 */
	"product = 03584L32   # the TS3500\n"            /* 5 */
	"revision = 0402\n"                              /* 6 */
	"serial = 78A0001\n"                             /* 7 */
	"slots = 40\n"                                   /* 8 */
	"mail_slots = 4\n"                               /* 9 */
	"drives = 4\n"                                   /* 10 */
	"\n"                                             /* 11 */
	"[drive 2]\n"                                    /* 12 */
	"vendor = HP\n"                                  /* 13 */
	"model = \"Ultrium 8-SCSI\"\n"                   /* 14 */
	"serial = HU1234ABCD\n"                          /* 15 */
	"lun = 7\n"                                      /* 16 */
	"\n"                                             /* 17 */
	"[DRIVE 4]\n"                                    /* 18 */
	"Model = ULT3580-TD9\n"                          /* 19 */
	"\r\n"                                           /* 20 */
	"[pool]\r\n"                                     /* 21 */
	"member = disk0\n"                               /* 22 */
	"member = /srv/disk1/vtl/\n"                     /* 23 */
	"member = ../other//./disk2\n"                   /* 24 */
	"segment_size = 64M\n"                           /* 25 */
	"member_quota = 2T\n"                            /* 26 */
	"reserve = 1G\n"                                 /* 27 */
	"readahead_depth = 4\n"                          /* 28 */
	"readahead_chunk = 512K\n"                       /* 29 */
	"readahead_memory = 32 MiB\n"                    /* 30 */
	"lz4_acceleration = 1\n"                         /* 31 */
	"io_threads = 8\n"                               /* 32 */
	"; another comment style\n"                      /* 33 */
	"[catalog]\n"                                    /* 34 */
	"path = \"db/cat#1.db\"\n"                       /* 35 */
	"[iscsi]\n"                                      /* 36 */
	"listen = 192.0.2.10\n"                          /* 37 */
	"port = 3261\n"                                  /* 38 */
	"target_iqn = iqn.2026-01.com.example:vtl1\n"    /* 39 */
	"allow_anonymous = yes\n"                        /* 40 */
	"[daemon]\n"                                     /* 41 */
	"control_socket = /run/vtl/vtld.sock\n"          /* 42 */
	"log_level = debug\n"                            /* 43 */
	"syslog = yes\n"                                /* 44 */
	"tcmu = yes\n";                                 /* 45 */

static void full_config(void **state)
{
	(void)state;
	struct vtl_config *c = parse_ok(full_text);
	assert_string_equal(c->dir, "/etc/vtl");
	assert_string_equal(c->library.name, "vtl1");
	assert_string_equal(c->library.vendor, "IBM");
	assert_string_equal(c->library.product, "03584L32");
	assert_string_equal(c->library.revision, "0402");
	assert_string_equal(c->library.serial, "78A0001");
	assert_int_equal(c->library.slots, 40);
	assert_int_equal(c->library.mail_slots, 4);
	assert_int_equal(c->library.drives, 4);
	assert_int_equal(c->library.transport_first, 1);
	assert_int_equal(c->library.drive_first, 257);
	assert_int_equal(c->library.mail_slot_first, 769);
	assert_int_equal(c->library.slot_first, 1025);
	assert_int_equal(c->library.lun, 0);

	/* Drive 1 and 3: every default; 2 and 4 from their sections. */
	assert_string_equal(c->drive[0].vendor, "IBM");
	assert_string_equal(c->drive[0].model, "ULT3580-TD8");
	assert_int_equal(c->drive[0].generation, 8);
	assert_int_equal(c->drive[0].lun, 1);
	assert_string_equal(c->drive[0].serial, "78A0001D01");
	assert_int_equal(c->drive[0].line, 0);
	assert_string_equal(c->drive[1].vendor, "HP");
	assert_string_equal(c->drive[1].model, "Ultrium 8-SCSI");
	assert_string_equal(c->drive[1].serial, "HU1234ABCD");
	assert_int_equal(c->drive[1].lun, 7);
	assert_int_equal(c->drive[1].generation, 8);
	assert_int_equal(c->drive[1].line, 12);
	assert_string_equal(c->drive[2].serial, "78A0001D03");
	assert_int_equal(c->drive[2].lun, 3);
	assert_string_equal(c->drive[3].model, "ULT3580-TD9");
	assert_int_equal(c->drive[3].generation, 9);
	assert_int_equal(c->drive[3].number, 4);

	assert_int_equal(c->pool.members, 3);
	assert_string_equal(c->pool.member[0], "/etc/vtl/disk0");
	assert_string_equal(c->pool.member[1], "/srv/disk1/vtl");
	assert_string_equal(c->pool.member[2], "/etc/other/disk2");
	assert_true(c->pool.segment_size == 64ull << 20);
	assert_true(c->pool.member_quota == 2ull << 40);
	assert_true(c->pool.reserve == 1ull << 30);
	assert_int_equal(c->pool.readahead_depth, 4);
	assert_true(c->pool.readahead_chunk == 512u << 10);
	assert_true(c->pool.readahead_memory == 32u << 20);
	assert_int_equal(c->pool.lz4_acceleration, 1);
	assert_int_equal(c->pool.io_threads, 8);
	assert_string_equal(c->catalog.path, "/etc/vtl/db/cat#1.db");
	assert_string_equal(c->iscsi.listen, "192.0.2.10");
	assert_int_equal(c->iscsi.port, 3261);
	assert_string_equal(c->iscsi.target_iqn, "iqn.2026-01.com.example:vtl1");
	assert_true(c->iscsi.allow_anonymous);
	assert_string_equal(c->daemon.control_socket, "/run/vtl/vtld.sock");
	assert_string_equal(c->daemon.log_level, "debug");
	assert_true(c->daemon.syslog);
	assert_true(c->daemon.tcmu);

	struct vtl_pool_config pc;
	vtl_config_pool(c, &pc);
	assert_int_equal(pc.n_members, 3);
	assert_string_equal(pc.members[2], "/etc/other/disk2");
	assert_true(pc.segment_size == 64ull << 20);
	assert_true(pc.member_quota == 2ull << 40);
	assert_true(pc.reserve_bytes == 1ull << 30);
	assert_int_equal(pc.readahead_depth, 4);
	assert_int_equal(pc.readahead_chunk, 512u << 10);
	assert_int_equal(pc.readahead_memory, 32u << 20);
	assert_int_equal(pc.lz4_acceleration, 1);
	assert_int_equal(pc.io_threads, 8);

	struct cat_library lib;
	vtl_config_library(c, &lib);
	assert_string_equal(lib.name, "vtl1");
	assert_string_equal(lib.serial, "78A0001");
	assert_int_equal(lib.transports, 1);
	assert_int_equal(lib.transport_first, 1);
	assert_int_equal(lib.slots, 40);
	assert_int_equal(lib.slot_first, 1025);
	assert_int_equal(lib.ies, 4);
	assert_int_equal(lib.ie_first, 769);
	assert_int_equal(lib.drives, 4);
	assert_int_equal(lib.drive_first, 257);
	vtl_config_free(c);
}

static void minimal_config_defaults(void **state)
{
	(void)state;
	struct vtl_config *c = parse_ok("[library]\nslots = 10\n" POOL);
	assert_string_equal(c->library.name, "vtl");
	assert_string_equal(c->library.vendor, "IBM");
	assert_string_equal(c->library.product, "03584L32");
	assert_int_equal(strlen(c->library.serial), 10);
	assert_memory_equal(c->library.serial, "VTL", 3);
	assert_int_equal(c->library.drives, 0);
	assert_int_equal(c->library.mail_slots, 0);
	assert_int_equal(c->pool.members, 1);
	assert_true(c->pool.segment_size == 0);
	assert_true(c->pool.readahead_direct); /* cold read-ahead past the page cache unless told not to */
	struct vtl_pool_config pcd;
	vtl_config_pool(c, &pcd);
	assert_false(pcd.readahead_buffered);
	assert_false(c->pool.write_direct); /* off by default until the follower race is fixed */
	assert_true(pcd.write_buffered);
	vtl_config_free(c);
	c = parse_ok("[library]\nslots = 10\n" POOL "readahead_direct = no\nwrite_direct = yes\n");
	assert_false(c->pool.readahead_direct);
	assert_true(c->pool.write_direct);
	vtl_config_pool(c, &pcd);
	assert_true(pcd.readahead_buffered);
	assert_false(pcd.write_buffered);
	assert_string_equal(c->catalog.path, "/etc/vtl/catalog.db");
	assert_string_equal(c->daemon.control_socket, "/etc/vtl/vtld.sock");
	assert_string_equal(c->daemon.log_level, "info");
	assert_false(c->daemon.syslog);
	assert_false(c->daemon.tcmu);
	/* Loopback until told otherwise; SendTargets names the address a host came in on. */
	assert_string_equal(c->iscsi.listen, "127.0.0.1");
	assert_int_equal(c->iscsi.port, 3260);
	assert_int_equal(c->iscsi.nop_interval, 30);
	assert_string_equal(c->iscsi.target_iqn, "iqn.2026-01.org.vtl:vtl");
	assert_string_equal(c->iscsi.advertise, "local");
	assert_false(c->iscsi.allow_anonymous);
	assert_int_equal(c->iscsi.auth_fail_delay, 2);
	assert_int_equal(c->iscsi.hosts, 0);
	vtl_config_free(c);

	/* The default serial depends only on the name; the IQN is the name in lower case. */
	c = parse_ok("[library]\nname = Lib_A\nslots = 1\n" POOL);
	char s1[40];
	snprintf(s1, sizeof s1, "%s", c->library.serial);
	assert_string_equal(c->iscsi.target_iqn, "iqn.2026-01.org.vtl:lib-a");
	vtl_config_free(c);
	c = parse_ok(POOL "[library]\nslots = 2\nname = Lib_A\n");
	assert_string_equal(c->library.serial, s1);
	vtl_config_free(c);

	/* Empty ranges do not overlap anything. */
	c = parse_ok("[library]\nslots = 5\nmail_slots = 0\nmail_slot_first = 1026\ndrives = 0\ndrive_first = 1\n"
		     "transport_first = 0\n" POOL);
	assert_int_equal(c->library.transport_first, 0);
	vtl_config_free(c);

	/* Element ranges may end at 0xFFFE exactly. */
	c = parse_ok("[library]\nslots = 10\nslot_first = 65525\n" POOL);
	assert_int_equal(c->library.slot_first, 65525);
	vtl_config_free(c);
}

static void syntax_errors(void **state)
{
	(void)state;
	expect_error("[librar]\n", "t.conf:1: unknown section [librar]");
	expect_error("\n[library\n", "t.conf:2: section header '[library' has no closing ']'");
	expect_error("[library] x\n", "t.conf:1: unexpected text 'x' after the section header");
	expect_error("[library 2]\n", "t.conf:1: [library 2]: section [library] takes no argument");
	expect_error("[]\n", "t.conf:1: section header []");
	expect_error("slots = 4\n", "t.conf:1: key 'slots' is outside any section");
	expect_error("[library]\nslots 4\n", "t.conf:2: expected 'key = value' or a [section] header, got 'slots 4'");
	expect_error("[library]\n= 4\n", "t.conf:2: a line starts with '='");
	expect_error("[library]\nslots =\n", "t.conf:2: [library] slots has no value");
	expect_error("[library]\nslots = # nothing\n", "t.conf:2: [library] slots has no value");
	expect_error("[library]\nname = \"vtl\n", "t.conf:2: a quoted value has no closing '\"'");
	expect_error("[library]\nname = \"vtl\" x\n", "t.conf:2: unexpected text 'x' after the quoted value");
	expect_error("[library]\nslots = 4\n[pool]\n[library]\n",
		     "t.conf:4: section [library] appears twice (first at line 1)");
	expect_error("[library]\nslots = 4\nslots = 5\n", "t.conf:3: [library] slots is set twice (first at line 2)");
	expect_error("[library]\nslot = 4\n", "t.conf:2: unknown key 'slot' in [library]; did you mean 'slots'?");
	expect_error("[library]\nmailslots = 4\n", "did you mean 'mail_slots'?");
	expect_error("[pool]\nsize = 4\n", "t.conf:2: unknown key 'size' in [pool]; the keys of [pool] are: member, "
					   "segment_size");
	expect_error("[drive 1]\ncolour = red\n", "t.conf:2: unknown key 'colour' in [drive 1]");
	expect_error("[drive 1]\nvendor = IBM\nvendor = HP\n", "t.conf:3: [drive 1] vendor is set twice");
	expect_error("[drive 1]\n[drive 1]\n", "t.conf:2: [drive 1] appears twice (first at line 1)");
	expect_error("[drive 0]\n", "t.conf:1: [drive 0]: a drive section is [drive N]");
	expect_error("[drive x]\n", "a drive section is [drive N]");
	expect_error("[drive]\n", "a drive section is [drive N]");
	const char nul[] = "[library]\nslots = 4\0\n";
	struct vtl_config *c = NULL;
	char err[VTL_CFG_ERR_LEN];
	EXPECT_RC(vtl_config_parse("t.conf", nul, sizeof nul - 1, &c, err, sizeof err), VTL_E_CONFIG);
	assert_non_null(strstr(err, "t.conf:2: the line holds a NUL byte"));
	char *lng = malloc(5000);
	assert_non_null(lng);
	memset(lng, '#', 4999);
	lng[4999] = 0;
	expect_error(lng, "t.conf:1: the line is longer than 4096 bytes");
	free(lng);
}

static void value_errors(void **state)
{
	(void)state;
	expect_error("[library]\nslots = -1\n", "t.conf:2: [library] slots = -1: give a whole number from 1 to 65534");
	expect_error("[library]\nslots = 0\n", "[library] slots = 0: give a whole number from 1");
	expect_error("[library]\nslots = 4x\n", "t.conf:2: [library] slots = 4x");
	expect_error("[library]\nslots = 99999999999999999999999\n", "give a whole number");
	expect_error("[library]\ndrives = 300\n", "[library] drives = 300: give a whole number from 0 to 256");
	expect_error("[library]\nslot_first = 65535\n", "slot_first = 65535: give a whole number from 0 to 65534");
	expect_error("[library]\nlun = 256\n", "lun = 256");
	expect_error("[library]\nname = my lib\n", "t.conf:2: name 'my lib': use 1 to 64 letters, digits, '.', '_' or '-'");
	expect_error("[library]\nvendor = TOOLONGVENDOR\n",
		     "t.conf:2: vendor 'TOOLONGVENDOR': use 1 to 8 printable ASCII characters");
	expect_error("[library]\nrevision = 12345\n", "revision '12345': use 1 to 4");
	expect_error("[library]\nserial = A/B\n", "serial 'A/B'");
	expect_error("[drive 1]\nmodel = ULT3580-TD8-EXTRA-LONG\n", "t.conf:2: model 'ULT3580-TD8-EXTRA-LONG': use 1 to 16");
	expect_error("[drive 1]\ngeneration = 4\n", "[drive 1] generation = 4: give a whole number from 5 to 10");
	expect_error("[drive 1]\ngeneration = 11\n", "[drive 1] generation = 11: give a whole number from 5 to 10");
	expect_error("[pool]\nsegment_size = 10X\n", "t.conf:2: [pool] segment_size = 10X: give a size such as 256M");
	expect_error("[pool]\nsegment_size = 1K\n", "t.conf:2: [pool] segment_size = 1K is out of range: use 64 KiB to 2048 MiB");
	expect_error("[pool]\nsegment_size = 4G\n", "is out of range");
	expect_error("[pool]\nreadahead_chunk = 1\n", "readahead_chunk = 1 is out of range");
	expect_error("[pool]\nio_threads = 0\n", "[pool] io_threads = 0: give a whole number from 1 to 256");
	expect_error("[pool]\nmember_quota = 0\n", "member_quota = 0: must be at least 1 bytes");
	expect_error("[iscsi]\nport = 0\n", "[iscsi] port = 0");
	expect_error("[iscsi]\nport = 70000\n", "[iscsi] port = 70000");
	expect_error("[iscsi]\ntarget_iqn = IQN.2026-01.com.example:x\n", "t.conf:2: target_iqn 'IQN.2026-01.com.example:x' "
									  "is not an iSCSI name");
	expect_error("[iscsi]\ntarget_iqn = iqn.26-01.com.example\n", "is not an iSCSI name");
	expect_error("[iscsi]\ntarget_iqn = eui.12345\n", "is not an iSCSI name");
	expect_error("[iscsi]\nlisten = a b\n", "listen 'a b': give an IP address or host name");
	expect_error("[iscsi]\nadvertise = a b\n", "advertise 'a b': give an IP address or host name");
	expect_error("[daemon]\nlog_level = verbose\n", "t.conf:2: log_level 'verbose': use error, warn, info or debug");
	char sock[300] = "[daemon]\ncontrol_socket = /";
	memset(sock + strlen(sock), 'x', 150);
	strcat(sock, "\n");
	expect_error(sock, "t.conf:2: control_socket '/xxx");

	/* Values that are fine. */
	struct vtl_config *c = parse_ok("[library]\nslots=3\n[iscsi]\ntarget_iqn = eui.02004567A425678D\n" POOL);
	vtl_config_free(c);
	c = parse_ok("[library]\nslots=3\nname=x\n[iscsi]\ntarget_iqn = naa.52004567BA64678D52004567BA64678D\n" POOL);
	vtl_config_free(c);
}

static void whole_file_errors(void **state)
{
	(void)state;
	expect_error(POOL, "t.conf: there is no [library] section");
	expect_error("[library]\nname = x\n" POOL, "t.conf:1: [library] has no slots = N");
	expect_error("[library]\nslots = 4\n", "t.conf: the pool has no member; add [pool]");
	expect_error("[library]\nslots = 4\n[pool]\nsegment_size = 1M\n", "t.conf:3: the pool has no member");
	expect_error("[library]\nslots = 4\n[pool]\nmember = /a\nmember = /b\nmember = /a/\n",
		     "t.conf:6: pool member /a is listed twice (first at line 4)");
	expect_error("[library]\nslots = 4\n[pool]\nmember = /a\nmember = /x/../a\n", "t.conf:5: pool member /a is "
												 "listed twice");
	expect_error("[library]\nslots = 4\n[catalog]\npath = /a\n[pool]\nmember = /a\n",
		     "t.conf:6: pool member /a is also the catalog path");

	/* Element ranges. */
	expect_error("[library]\nslots = 40\ndrives = 4\nslot_first = 258\n" POOL,
		     "t.conf:4: the drives (element addresses 257..260) overlap the storage slots (258..297); move "
		     "one of them with drive_first or slot_first");
	expect_error("[library]\nslots = 40\nmail_slots = 4\nmail_slot_first = 1060\n" POOL,
		     "t.conf:4: the storage slots (element addresses 1025..1064) overlap the mail slots (1060..1063)");
	expect_error("[library]\ndrives = 2\nslots = 4\ntransport_first = 258\n" POOL,
		     "t.conf:4: the transport (robot) (element addresses 258..258) overlap the drives");
	expect_error("[library]\nslot_first = 65530\nslots = 10\n" POOL,
		     "t.conf:3: the storage slots would take element addresses 65530..65539, past 65534; lower slot_first");

	/* Drives. */
	expect_error("[library]\nslots = 4\ndrives = 2\n[drive 3]\n" POOL,
		     "t.conf:4: [drive 3]: the library has 2 drives (drives = 2), so drive sections are [drive 1] to "
		     "[drive 2]");
	expect_error("[drive 1]\n[library]\nslots = 4\n" POOL, "t.conf:1: [drive 1]: the library has 0 drives");
	expect_error("[library]\nslots = 4\ndrives = 1\n[drive 1]\nvendor = ACME\nmodel = TAPE-X\n" POOL,
		     "t.conf:6: [drive 1]: cannot tell which LTO generation ACME 'TAPE-X' emulates");
	expect_error("[library]\nslots = 4\ndrives = 1\n[drive 1]\nmodel = ULT3580-TD8\ngeneration = 9\n" POOL,
		     "t.conf:6: [drive 1] generation = 9, but IBM ULT3580-TD8 is an LTO-8 drive");
	expect_error("[library]\nslots = 4\ndrives = 2\n[drive 2]\nlun = 1\n" POOL,
		     "t.conf:5: [drive 2] lun 1 is also drive 1's LUN");
	expect_error("[library]\nslots = 4\ndrives = 2\n[drive 1]\nlun = 0\n" POOL,
		     "t.conf:5: [drive 1] lun 0 is the changer's LUN");
	expect_error("[library]\nslots = 4\ndrives = 2\n[drive 2]\nserial = S1\n[drive 1]\nserial = S1\n" POOL,
		     "t.conf:7: [drive 1] serial S1 is also drive 2's serial");
	expect_error("[library]\nslots = 4\ndrives = 1\nserial = S1\n[drive 1]\nserial = S1\n" POOL,
		     "t.conf:6: [drive 1] serial S1 is the library's serial");
	expect_error("[library]\nslots = 4\n" POOL "[pool]\nreadahead_chunk = 1M\nreadahead_memory = 64K\n",
		     "section [pool] appears twice");
	expect_error("[library]\nslots = 4\n" POOL "readahead_chunk = 1M\nreadahead_memory = 64K\n",
		     "t.conf:6: [pool] readahead_memory (65536) is smaller than readahead_chunk (1048576)");

	/* An unknown drive model is fine with a generation. */
	struct vtl_config *c = parse_ok("[library]\nslots = 4\ndrives = 1\n[drive 1]\nvendor = ACME\nmodel = X\n"
					"generation = 6\n" POOL);
	assert_int_equal(c->drive[0].generation, 6);
	vtl_config_free(c);
}

static void sizes(void **state)
{
	(void)state;
	uint64_t v;
	EXPECT_RC(vtl_parse_size("0", true, &v), VTL_OK);
	assert_true(v == 0);
	EXPECT_RC(vtl_parse_size("65536", true, &v), VTL_OK);
	assert_true(v == 65536);
	EXPECT_RC(vtl_parse_size("256M", true, &v), VTL_OK);
	assert_true(v == 256ull << 20);
	EXPECT_RC(vtl_parse_size("256M", false, &v), VTL_OK);
	assert_true(v == 256000000ull);
	EXPECT_RC(vtl_parse_size("12T", false, &v), VTL_OK);
	assert_true(v == 12000000000000ull);
	EXPECT_RC(vtl_parse_size("2.5T", false, &v), VTL_OK);
	assert_true(v == 2500000000000ull);
	EXPECT_RC(vtl_parse_size("1.5k", true, &v), VTL_OK);
	assert_true(v == 1536);
	EXPECT_RC(vtl_parse_size("1 GiB", false, &v), VTL_OK);
	assert_true(v == 1ull << 30);
	EXPECT_RC(vtl_parse_size("1gb", true, &v), VTL_OK);
	assert_true(v == 1000000000ull);
	EXPECT_RC(vtl_parse_size("16E", true, &v), VTL_E_INVAL);
	EXPECT_RC(vtl_parse_size("17179869184G", true, &v), VTL_E_INVAL); /* 2^64 */
	EXPECT_RC(vtl_parse_size("0.3", true, &v), VTL_E_INVAL);          /* not whole bytes */
	EXPECT_RC(vtl_parse_size("1.", true, &v), VTL_E_INVAL);
	EXPECT_RC(vtl_parse_size(".5K", true, &v), VTL_E_INVAL);
	EXPECT_RC(vtl_parse_size("1.0000000001T", false, &v), VTL_E_INVAL);
	EXPECT_RC(vtl_parse_size("-1", true, &v), VTL_E_INVAL);
	EXPECT_RC(vtl_parse_size("1KX", true, &v), VTL_E_INVAL);
	EXPECT_RC(vtl_parse_size("1Mi", true, &v), VTL_E_INVAL);
	EXPECT_RC(vtl_parse_size("", true, &v), VTL_E_INVAL);
	EXPECT_RC(vtl_parse_size(NULL, true, &v), VTL_E_INVAL);

	EXPECT_RC(vtl_parse_uint("18446744073709551615", UINT64_MAX, &v), VTL_OK);
	assert_true(v == UINT64_MAX);
	EXPECT_RC(vtl_parse_uint("18446744073709551616", UINT64_MAX, &v), VTL_E_INVAL);
	EXPECT_RC(vtl_parse_uint("10", 9, &v), VTL_E_INVAL);
	EXPECT_RC(vtl_parse_uint("+1", 9, &v), VTL_E_INVAL);
	EXPECT_RC(vtl_parse_uint(" 1", 9, &v), VTL_E_INVAL);
}

/* A new folder under $TMPDIR (or /tmp), its name in buf. */
static char *temp_dir(char *buf, size_t len)
{
	const char *t = getenv("TMPDIR");
	snprintf(buf, len, "%s/vtl-config-XXXXXX", t && *t ? t : "/tmp");
	char *d = mkdtemp(buf);
	assert_non_null(d);
	return d;
}

/* Loading a real file: relative paths resolve against its folder, wherever the program runs. */
static void load_file(void **state)
{
	(void)state;
	char tmpl[PATH_MAX];
	char *d = temp_dir(tmpl, sizeof tmpl);
	char sub[PATH_MAX], path[PATH_MAX + 16];
	snprintf(sub, sizeof sub, "%s/etc", d);
	assert_int_equal(mkdir(sub, 0755), 0);
	snprintf(path, sizeof path, "%s/vtl.conf", sub);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("[library]\nslots = 8\n[pool]\nmember = ../pool/m0\nmember = m1\n", f);
	fclose(f);

	/* Through a relative path from another working directory. */
	char cwd[PATH_MAX];
	assert_non_null(getcwd(cwd, sizeof cwd));
	assert_int_equal(chdir(d), 0);
	struct vtl_config *c = NULL;
	char err[VTL_CFG_ERR_LEN] = "";
	int rc = vtl_config_load("etc/vtl.conf", &c, err, sizeof err);
	if (rc)
		fail_msg("load: %d %s", rc, err);
	char want[PATH_MAX + 32];
	snprintf(want, sizeof want, "%s/pool/m0", d);
	assert_string_equal(c->pool.member[0], want);
	snprintf(want, sizeof want, "%s/etc/m1", d);
	assert_string_equal(c->pool.member[1], want);
	snprintf(want, sizeof want, "%s/etc/catalog.db", d);
	assert_string_equal(c->catalog.path, want);
	assert_string_equal(c->path, "etc/vtl.conf");
	vtl_config_free(c);

	/* Errors name the file as given. */
	f = fopen(path, "a");
	assert_non_null(f);
	fputs("bogus = 1\n", f);
	fclose(f);
	EXPECT_RC(vtl_config_load("etc/vtl.conf", &c, err, sizeof err), VTL_E_CONFIG);
	assert_null(c);
	assert_string_equal(err, "etc/vtl.conf:6: unknown key 'bogus' in [pool]; the keys of [pool] are: member, "
				 "segment_size, member_quota, reserve, readahead_depth, readahead_chunk, readahead_memory, readahead_direct, "
				 "write_direct, lz4_acceleration, io_threads");
	assert_int_equal(chdir(cwd), 0);

	/* A missing file. */
	snprintf(path, sizeof path, "%s/none.conf", d);
	EXPECT_RC(vtl_config_load(path, &c, err, sizeof err), VTL_E_IO);
	assert_non_null(strstr(err, "cannot read the configuration file"));
	assert_non_null(strstr(err, "No such file or directory"));
	rm_rf(d);
	vtl_config_free(NULL);
}

#define LIB "[library]\nslots = 4\n" POOL
#define ISCSI_HDR LIB "[iscsi]\n" /* [iscsi] is line 5 */

/* CHAP credentials, the initiator list and the alias: parsed, and every inconsistency refused at its line. */
static void nop_interval(void **state)
{
	(void)state;
	struct vtl_config *c = parse_ok("[library]\nname = L\nslots = 1\n" POOL "[iscsi]\nnop_interval = 0\n");
	assert_int_equal(c->iscsi.nop_interval, 0); /* keepalives off */
	vtl_config_free(c);
	expect_error("[library]\nname = L\nslots = 1\n" POOL "[iscsi]\nnop_interval = 3601\n", "t.conf:7: [iscsi] nop_interval = 3601");
}

/* recall_wait: unset is 0 (the drive's default), parsed with a unit, refused outside 1 s .. 10 min at its line. */
static void recall_wait(void **state)
{
	(void)state;
	struct vtl_config *c = parse_ok("[library]\nname = L\nslots = 1\n" POOL);
	assert_int_equal(c->library.recall_wait, 0);
	vtl_config_free(c);
	c = parse_ok("[library]\nname = L\nslots = 1\nrecall_wait = 2m\n" POOL);
	assert_int_equal(c->library.recall_wait, 120);
	vtl_config_free(c);
	expect_error("[library]\nname = L\nslots = 1\nrecall_wait = 0\n" POOL, "t.conf:4: [library] recall_wait = 0");
	expect_error("[library]\nname = L\nslots = 1\nrecall_wait = 11m\n" POOL, "t.conf:4: [library] recall_wait = 11m");
}

/* The [iscsi] limits: unset means the target's default (0), each parsed, each refused outside its range at its line. */
static void iscsi_limits(void **state)
{
	(void)state;
	struct vtl_config *c = parse_ok(ISCSI_HDR);
	assert_int_equal(c->iscsi.login_timeout, 0);
	assert_int_equal(c->iscsi.cmd_window, 0);
	assert_int_equal(c->iscsi.buffer_max, 0);
	vtl_config_free(c);
	c = parse_ok(ISCSI_HDR "login_timeout = 2\nmax_logins = 10\nmax_logins_per_address = 3\nmax_sessions = 20\n"
			       "max_sessions_per_address = 5\ncmd_window = 8\noutput_max = 1M\nnop_data_max = 512\n"
			       "session_buffer_max = 16M\nbuffer_max = 2G\n");
	assert_int_equal(c->iscsi.login_timeout, 2);
	assert_int_equal(c->iscsi.max_logins, 10);
	assert_int_equal(c->iscsi.max_logins_per_address, 3);
	assert_int_equal(c->iscsi.max_sessions, 20);
	assert_int_equal(c->iscsi.max_sessions_per_address, 5);
	assert_int_equal(c->iscsi.cmd_window, 8);
	assert_int_equal(c->iscsi.output_max, 1u << 20);
	assert_int_equal(c->iscsi.nop_data_max, 512);
	assert_int_equal(c->iscsi.session_buffer_max, 16u << 20);
	assert_int_equal(c->iscsi.buffer_max, 2ull << 30);
	vtl_config_free(c);
	expect_error(ISCSI_HDR "login_timeout = 0\n", "t.conf:6: [iscsi] login_timeout = 0");
	expect_error(ISCSI_HDR "cmd_window = 33\n", "t.conf:6: [iscsi] cmd_window = 33");
	expect_error(ISCSI_HDR "max_sessions = 4097\n", "t.conf:6: [iscsi] max_sessions = 4097");
	expect_error(ISCSI_HDR "output_max = 1K\n", "t.conf:6: [iscsi] output_max = 1K");
	expect_error(ISCSI_HDR "session_buffer_max = 512K\n", "t.conf:6: [iscsi] session_buffer_max = 512K");
	expect_error(ISCSI_HDR "nop_data_max = 1M\n", "t.conf:6: [iscsi] nop_data_max = 1M");
}

/* control_group names a group of this host (root's group exists everywhere); a missing one is refused. */
static void control_group(void **state)
{
	(void)state;
	struct vtl_config *c = parse_ok("[library]\nname = L\nslots = 1\n" POOL "[daemon]\ncontrol_group = root\n"
					"[migrator]\ncontrol_group = root\n");
	assert_string_equal(c->daemon.control_group.name, "root");
	assert_int_equal(c->daemon.control_group.gid, 0);
	assert_string_equal(c->migrator.control_group.name, "root");
	vtl_config_free(c);
	c = parse_ok("[library]\nname = L\nslots = 1\n" POOL);
	assert_string_equal(c->daemon.control_group.name, "");
	assert_string_equal(c->migrator.control_group.name, "");
	vtl_config_free(c);
	expect_error("[daemon]\ncontrol_group = no-such-group-vtl\n", "t.conf:2: [daemon] control_group = no-such-group-vtl: "
		     "there is no group no-such-group-vtl on this host");
	expect_error("[migrator]\ncontrol_group = no-such-group-vtl\n", "t.conf:2: [migrator] control_group = "
		     "no-such-group-vtl: there is no group");
	expect_error("[daemon]\ncontrol_group = \"tape ops\"\n", "[daemon] control_group 'tape ops': give a group name");
}

static void iscsi_security(void **state)
{
	(void)state;
	struct vtl_config *c = parse_ok(ISCSI_HDR
					"target_alias = Tape library 1\n"
					"chap_user = backup-host\n"
					"chap_secret = \"twelve chars\"\n"
					"mutual_user = vtl1\n"
					"mutual_secret = 0123456789abcdef\n"
					"discovery_chap = yes\n"
					"initiator = iqn.1993-08.org.debian:01:aaaa\n"
					"initiator = iqn.2026-01.com.example:host2\n");
	assert_string_equal(c->iscsi.target_alias, "Tape library 1");
	assert_string_equal(c->iscsi.chap_user, "backup-host");
	assert_string_equal(c->iscsi.chap_secret, "twelve chars");
	assert_string_equal(c->iscsi.mutual_user, "vtl1");
	assert_string_equal(c->iscsi.mutual_secret, "0123456789abcdef");
	assert_true(c->iscsi.discovery_chap);
	assert_int_equal(c->iscsi.initiators, 2);
	assert_string_equal(c->iscsi.initiator[0], "iqn.1993-08.org.debian:01:aaaa");
	assert_string_equal(c->iscsi.initiator[1], "iqn.2026-01.com.example:host2");
	vtl_config_free(c);

	/* The defaults: no CHAP, every initiator, no alias (vtld then uses the library name). */
	c = parse_ok(LIB);
	assert_string_equal(c->iscsi.chap_user, "");
	assert_string_equal(c->iscsi.chap_secret, "");
	assert_string_equal(c->iscsi.mutual_user, "");
	assert_false(c->iscsi.discovery_chap);
	assert_int_equal(c->iscsi.initiators, 0);
	assert_string_equal(c->iscsi.target_alias, "");
	vtl_config_free(c);
	c = parse_ok(ISCSI_HDR "chap_user = u\nchap_secret = 123456789012\ndiscovery_chap = no\n");
	assert_false(c->iscsi.discovery_chap);
	vtl_config_free(c);

	/* A secret under 12 bytes, at its line, without the secret in the message. */
	expect_error(ISCSI_HDR "chap_user = u\nchap_secret = 12345678901\n",
		     "t.conf:7: chap_secret is 11 characters long: use 12 to 255");
	struct vtl_config *none = NULL;
	char err[VTL_CFG_ERR_LEN] = "";
	const char *short_secret = ISCSI_HDR "chap_user = u\nchap_secret = s3cr3t\n";
	assert_int_equal(vtl_config_parse("t.conf", short_secret, strlen(short_secret), &none, err, sizeof err),
			 VTL_E_CONFIG);
	assert_null(strstr(err, "s3cr3t"));
	expect_error(ISCSI_HDR "mutual_user = t\nmutual_secret = short\n", "t.conf:7: mutual_secret is 5 characters");
	char longer[400];
	snprintf(longer, sizeof longer, ISCSI_HDR "chap_user = u\nchap_secret = %0256d\n", 0);
	expect_error(longer, "t.conf:7: chap_secret is 256 characters long: use 12 to 255");
	expect_error(ISCSI_HDR "chap_user = u\nchap_secret = \"tab\there 12345\"\n", "t.conf:7: chap_secret: use "
		     "printable ASCII");

	/* Pairs, and mutual CHAP on top of one-way CHAP with another secret. */
	expect_error(ISCSI_HDR "chap_user = u\n", "t.conf:6: [iscsi] chap_user is set but chap_secret is not");
	expect_error(ISCSI_HDR "chap_secret = 123456789012\n", "t.conf:6: [iscsi] chap_secret is set but chap_user");
	expect_error(ISCSI_HDR "chap_user = u\nchap_secret = 123456789012\nmutual_user = t\n",
		     "t.conf:8: [iscsi] mutual_user is set but mutual_secret is not");
	expect_error(ISCSI_HDR "chap_user = u\nchap_secret = 123456789012\nmutual_secret = 123456789013\n",
		     "t.conf:8: [iscsi] mutual_secret is set but mutual_user is not");
	expect_error(ISCSI_HDR "mutual_user = t\nmutual_secret = 123456789012\n",
		     "t.conf:7: [iscsi] mutual CHAP (the target proving itself) needs one-way CHAP too");
	expect_error(ISCSI_HDR "chap_user = u\nchap_secret = 123456789012\nmutual_user = t\n"
		     "mutual_secret = 123456789012\n", "t.conf:9: [iscsi] mutual_secret is the same as chap_secret");
	expect_error(ISCSI_HDR "discovery_chap = yes\n", "t.conf:6: [iscsi] discovery_chap = yes needs chap_user");
	expect_error(ISCSI_HDR "discovery_chap = maybe\n", "t.conf:6: [iscsi] discovery_chap = maybe: use yes or no");
	expect_error(ISCSI_HDR "chap_user = u\nchap_user = v\n", "t.conf:7: [iscsi] chap_user is set twice (first at "
		     "line 6)");

	/* Initiator names: iSCSI names, each once. */
	expect_error(ISCSI_HDR "initiator = host1\n", "t.conf:6: initiator 'host1' is not an iSCSI name");
	expect_error(ISCSI_HDR "initiator = iqn.1993-08.org.debian:01:AAAA\n", "is not an iSCSI name");
	expect_error(ISCSI_HDR "initiator = iqn.1993-08.org.debian:01:a\ninitiator = iqn.1993-08.org.debian:01:a\n",
		     "t.conf:7: initiator iqn.1993-08.org.debian:01:a is listed twice (first at line 6)");
	char many[16384];
	int n = snprintf(many, sizeof many, ISCSI_HDR);
	for (int i = 0; i <= VTL_CFG_MAX_INITIATORS; i++)
		n += snprintf(many + n, sizeof many - (size_t)n, "initiator = iqn.2026-01.com.example:h%d\n", i);
	expect_error(many, "t.conf:262: too many initiators (initiator lines and [initiator] sections): at most 256");
}

#define HOST1 "[initiator iqn.1993-08.org.debian:01:host1]\n"

/* [initiator NAME] sections: each host's own credentials, in the allow list, and every mistake refused at its line. */
static void initiator_sections(void **state)
{
	(void)state;
	struct vtl_config *c = parse_ok(ISCSI_HDR                                  /* 5 */
					"chap_user = shared\n"                     /* 6 */
					"chap_secret = shared-secret-01\n"         /* 7 */
					"mutual_user = vtl1\n"                     /* 8 */
					"mutual_secret = target-secret-01\n"       /* 9 */
					"discovery_chap = yes\n"                   /* 10 */
					"initiator = iqn.2026-01.com.example:plain\n" /* 11 */
					HOST1                                      /* 12 */
					"chap_user = host1\n"
					"chap_secret = \"host1 secret 0123\"\n"
					"[Initiator iqn.1993-08.org.debian:01:host2]\n"
					"chap_user = host2\n"
					"chap_secret = host2-secret-456\n"
					"mutual_user = vtl-for-host2\n"
					"mutual_secret = host2-target-789\n"
					"discovery_chap = no\n");
	assert_int_equal(c->iscsi.hosts, 2);
	const struct vtl_initiator_config *h1 = c->iscsi.host[0], *h2 = c->iscsi.host[1];
	assert_string_equal(h1->name, "iqn.1993-08.org.debian:01:host1");
	assert_int_equal(h1->line, 12);
	assert_string_equal(h1->chap_user, "host1");
	assert_string_equal(h1->chap_secret, "host1 secret 0123");
	assert_string_equal(h1->mutual_user, "");   /* the [iscsi] ones apply */
	assert_true(h1->discovery_chap);            /* [iscsi] discovery_chap */
	assert_string_equal(h2->name, "iqn.1993-08.org.debian:01:host2");
	assert_string_equal(h2->mutual_user, "vtl-for-host2");
	assert_string_equal(h2->mutual_secret, "host2-target-789");
	assert_false(h2->discovery_chap);
	/* Every section's name joins the allow list, after the initiator lines before it. */
	assert_int_equal(c->iscsi.initiators, 3);
	assert_string_equal(c->iscsi.initiator[0], "iqn.2026-01.com.example:plain");
	assert_string_equal(c->iscsi.initiator[1], "iqn.1993-08.org.debian:01:host1");
	assert_string_equal(c->iscsi.initiator[2], "iqn.1993-08.org.debian:01:host2");
	assert_true(vtl_config_iscsi_guarded(c));
	vtl_config_free(c);

	/* Sections alone: no shared CHAP needed, even for discovery_chap and mutual CHAP. */
	c = parse_ok(ISCSI_HDR "discovery_chap = yes\nmutual_user = vtl1\nmutual_secret = target-secret-01\n"
		     HOST1 "chap_user = host1\nchap_secret = host1-secret-01\n");
	assert_string_equal(c->iscsi.chap_user, "");
	assert_true(c->iscsi.host[0]->discovery_chap);
	vtl_config_free(c);

	/* The section header. */
	expect_error(ISCSI_HDR "[initiator]\n", "t.conf:6: [initiator]: an initiator section is [initiator NAME]");
	expect_error(LIB "[initiator host1]\nchap_user = a\nchap_secret = host1-secret-01\n",
		     "t.conf:5: initiator 'host1' is not an iSCSI name");
	expect_error(LIB "[initiator iqn.1993-08.org.debian:01:HOST1]\n", "t.conf:5: initiator "
		     "'iqn.1993-08.org.debian:01:HOST1' is not an iSCSI name");
	expect_error(LIB HOST1 "chap_user = a\nchap_secret = host1-secret-01\n" HOST1,
		     "t.conf:8: initiator iqn.1993-08.org.debian:01:host1 is listed twice (first at line 5)");
	expect_error(ISCSI_HDR "initiator = iqn.1993-08.org.debian:01:host1\n" HOST1
		     "chap_user = a\nchap_secret = host1-secret-01\n",
		     "t.conf:7: initiator iqn.1993-08.org.debian:01:host1 is listed twice (first at line 6)");
	expect_error(LIB HOST1 "chap_user = a\nchap_secret = host1-secret-01\n[iscsi]\n"
		     "initiator = iqn.1993-08.org.debian:01:host1\n",
		     "t.conf:9: initiator iqn.1993-08.org.debian:01:host1 is listed twice (first at line 5)");
	/* Its keys. */
	expect_error(LIB HOST1 "chap_user = a\n", "t.conf:6: [initiator iqn.1993-08.org.debian:01:host1] needs "
		     "chap_user and chap_secret");
	expect_error(LIB HOST1, "t.conf:5: [initiator iqn.1993-08.org.debian:01:host1] needs chap_user and chap_secret");
	expect_error(LIB HOST1 "chap_user = a\nchap_secret = short\n", "t.conf:7: chap_secret is 5 characters long: "
		     "use 12 to 255");
	expect_error(LIB HOST1 "chap_user = a\nchap_user = b\n", "t.conf:7: [initiator "
		     "iqn.1993-08.org.debian:01:host1] chap_user is set twice (first at line 6)");
	expect_error(LIB HOST1 "listen = 0.0.0.0\n", "t.conf:6: unknown key 'listen' in [initiator "
		     "iqn.1993-08.org.debian:01:host1]");
	expect_error(LIB HOST1 "chap_user = a\nchap_secret = host1-secret-01\nmutual_user = t\n",
		     "t.conf:8: [initiator iqn.1993-08.org.debian:01:host1] mutual_user and mutual_secret go together");
	expect_error(LIB HOST1 "chap_user = a\nchap_secret = host1-secret-01\nmutual_user = t\n"
		     "mutual_secret = host1-secret-01\n", "t.conf:9: [initiator iqn.1993-08.org.debian:01:host1] "
		     "chap_secret is the same as its mutual_secret");
	expect_error(ISCSI_HDR "mutual_user = t\nmutual_secret = target-secret-01\n" HOST1
		     "chap_user = a\nchap_secret = target-secret-01\n", "t.conf:10: [initiator "
		     "iqn.1993-08.org.debian:01:host1] chap_secret is the same as [iscsi] mutual_secret");
	expect_error(LIB HOST1 "chap_user = a\nchap_secret = host1-secret-01\ndiscovery_chap = sometimes\n",
		     "t.conf:8: [initiator iqn.1993-08.org.debian:01:host1] discovery_chap = sometimes: use yes or no");

	/* At most VTL_CFG_MAX_INITIATORS names, sections and lines together. */
	size_t cap = 128 * (VTL_CFG_MAX_INITIATORS + 2);
	char *many = malloc(cap);
	assert_non_null(many);
	int n = snprintf(many, cap, ISCSI_HDR "initiator = iqn.2026-01.com.example:line\n");
	for (int i = 0; i < VTL_CFG_MAX_INITIATORS; i++)
		n += snprintf(many + n, cap - (size_t)n, "[initiator iqn.2026-01.com.example:h%d]\nchap_user = "
			      "u\nchap_secret = 0123456789ab\n", i);
	expect_error(many, "t.conf:772: too many initiators (initiator lines and [initiator] sections): at most 256");
	free(many);
}

/* [iscsi] listen: loopback by default; another address needs CHAP, an allow list or allow_anonymous. */
static void exposure(void **state)
{
	(void)state;
	assert_true(vtl_config_loopback("127.0.0.1"));
	assert_true(vtl_config_loopback("127.1.2.3"));
	assert_true(vtl_config_loopback("::1"));
	assert_true(vtl_config_loopback("::ffff:127.0.0.1"));
	assert_false(vtl_config_loopback("0.0.0.0"));
	assert_false(vtl_config_loopback("::"));
	assert_false(vtl_config_loopback("192.0.2.10"));
	assert_false(vtl_config_loopback("128.0.0.1"));
	assert_false(vtl_config_loopback("no-such-host.invalid"));
	assert_false(vtl_config_loopback(""));

	struct vtl_config *c = parse_ok(ISCSI_HDR "listen = ::1\n");
	assert_false(vtl_config_iscsi_guarded(c));
	vtl_config_free(c);
	expect_error(ISCSI_HDR "listen = 0.0.0.0\n", "t.conf:6: [iscsi] listen = 0.0.0.0 serves the network without "
		     "CHAP or an initiator allow list");
	expect_error(ISCSI_HDR "listen = ::\n", "or allow_anonymous = yes (vtld then warns); or listen = 127.0.0.1");
	expect_error(ISCSI_HDR "port = 3261\nlisten = 192.0.2.10\nallow_anonymous = no\n", "t.conf:7: [iscsi] "
		     "listen = 192.0.2.10 serves");
	expect_error(ISCSI_HDR "allow_anonymous = perhaps\n", "t.conf:6: [iscsi] allow_anonymous = perhaps: use yes or no");
	/* Each way of guarding it. */
	const char *ok[] = {
		"listen = 0.0.0.0\nallow_anonymous = yes\n",
		"listen = 0.0.0.0\nchap_user = u\nchap_secret = 0123456789ab\n",
		"listen = 0.0.0.0\ninitiator = iqn.1993-08.org.debian:01:host1\n",
		"listen = ::\n" HOST1 "chap_user = u\nchap_secret = 0123456789ab\n",
	};
	for (size_t i = 0; i < VTL_ARRAY_SIZE(ok); i++) {
		char text[512];
		snprintf(text, sizeof text, ISCSI_HDR "%s", ok[i]);
		c = parse_ok(text);
		vtl_config_free(c);
	}
}

/* [iscsi] auth_fail_delay and advertise. */
static void auth_fail_delay_and_advertise(void **state)
{
	(void)state;
	struct vtl_config *c = parse_ok(ISCSI_HDR "auth_fail_delay = 0\nadvertise = none\n");
	assert_int_equal(c->iscsi.auth_fail_delay, 0);
	assert_string_equal(c->iscsi.advertise, "none");
	vtl_config_free(c);
	c = parse_ok(ISCSI_HDR "auth_fail_delay = 60\nadvertise = 10.0.2.2:3260\n");
	assert_int_equal(c->iscsi.auth_fail_delay, 60);
	assert_string_equal(c->iscsi.advertise, "10.0.2.2:3260");
	vtl_config_free(c);
	expect_error(ISCSI_HDR "auth_fail_delay = 61\n", "t.conf:6: [iscsi] auth_fail_delay = 61: give a whole number "
		     "from 0 to 60");
	expect_error(ISCSI_HDR "auth_fail_delay = 2s\n", "t.conf:6: [iscsi] auth_fail_delay = 2s");
}

/* Writes text to dir/name with mode (exactly, whatever the umask), and loads it: the result code, err filled. */
static int load_with_mode(const char *dir, const char *text, mode_t mode, char *err, size_t errlen, char *path,
			  size_t plen)
{
	snprintf(path, plen, "%s/vtl.conf", dir);
	unlink(path);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, mode), 0);
	struct vtl_config *c = NULL;
	int rc = vtl_config_load(path, &c, err, errlen);
	if (rc)
		assert_null(c);
	vtl_config_free(c);
	return rc;
}

/* A file with CHAP secrets must not be readable by others nor writable by its group. */
static void secret_file_mode(void **state)
{
	(void)state;
	char tmpl[PATH_MAX];
	char *d = temp_dir(tmpl, sizeof tmpl);
	char err[VTL_CFG_ERR_LEN], path[PATH_MAX + 16], want[2 * PATH_MAX + 256];
	const char *shared = ISCSI_HDR "chap_user = u\nchap_secret = 0123456789ab\n";
	const char *mutual = ISCSI_HDR "chap_user = u\nchap_secret = 0123456789ab\nmutual_user = t\n"
			     "mutual_secret = 0123456789ac\n";
	const char *host = LIB HOST1 "chap_user = u\nchap_secret = 0123456789ab\n";
	const char *physical = LIB "[physical]\ntype = iscsi\nportal = 192.0.2.1:3260\n"
			       "target = iqn.2026-01.com.example:lib\nchap_user = m\nchap_secret = 0123456789ab\n";

	/* Allowed: owner only, and the group reading. */
	EXPECT_RC(load_with_mode(d, shared, 0600, err, sizeof err, path, sizeof path), VTL_OK);
	EXPECT_RC(load_with_mode(d, host, 0640, err, sizeof err, path, sizeof path), VTL_OK);
	EXPECT_RC(load_with_mode(d, physical, 0400, err, sizeof err, path, sizeof path), VTL_OK);
	/* Without secrets the mode does not matter. */
	EXPECT_RC(load_with_mode(d, LIB, 0666, err, sizeof err, path, sizeof path), VTL_OK);

	/* Refused, with the file, its mode and the fix. */
	EXPECT_RC(load_with_mode(d, shared, 0644, err, sizeof err, path, sizeof path), VTL_E_CONFIG);
	snprintf(want, sizeof want, "%s holds CHAP secrets but its mode 0644 lets other users read it: chmod 600 %s",
		 path, path);
	if (!strstr(err, want))
		fail_msg("\"%s\" does not contain \"%s\"", err, want);
	EXPECT_RC(load_with_mode(d, mutual, 0660, err, sizeof err, path, sizeof path), VTL_E_CONFIG);
	assert_non_null(strstr(err, "its mode 0660 lets its group change it: chmod 600"));
	EXPECT_RC(load_with_mode(d, host, 0604, err, sizeof err, path, sizeof path), VTL_E_CONFIG);
	assert_non_null(strstr(err, "its mode 0604 lets other users read it"));
	EXPECT_RC(load_with_mode(d, physical, 0666, err, sizeof err, path, sizeof path), VTL_E_CONFIG);
	assert_non_null(strstr(err, "mode 0666"));
	EXPECT_RC(load_with_mode(d, shared, 0602, err, sizeof err, path, sizeof path), VTL_E_CONFIG);
	/* The secret itself is never in the message. */
	assert_null(strstr(err, "0123456789ab"));
	rm_rf(d);
}

/* The example shipped in etc/ parses (the tests run from the top of the tree; elsewhere it is skipped). */
static void shipped_example(void **state)
{
	(void)state;
	struct vtl_config *c = NULL;
	char err[VTL_CFG_ERR_LEN] = "";
	int rc = vtl_config_load("etc/vtl.conf.example", &c, err, sizeof err);
	if (rc == VTL_E_IO && access("etc/vtl.conf.example", F_OK) != 0) {
		print_message("  etc/vtl.conf.example not found from here: skipped\n");
		skip();
	}
	if (rc)
		fail_msg("etc/vtl.conf.example: %s", err);
	assert_int_equal(c->library.drives, 4);
	assert_int_equal(c->library.slots, 40);
	assert_int_equal(c->library.mail_slots, 4);
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(c->drive[i].generation, 8);
	assert_int_equal(c->pool.members, 2);
	vtl_config_free(c);
}

/* [physical] and [migrator]: defaults, a simulated and an iSCSI library, and what is refused. */
static void migration_sections(void **state)
{
	(void)state;
	struct vtl_config *c = parse_ok("[library]\nslots = 4\n" POOL);
	assert_int_equal(c->physicals, 0);
	assert_int_equal(c->migrator.buffers, 64);
	assert_int_equal(c->migrator.buffer_size, 1u << 20);
	assert_int_equal(c->migrator.readers, 4);
	assert_true(c->migrator.verify);
	assert_string_equal(c->migrator.control_socket, "/etc/vtl/migrator.sock");
	vtl_config_free(c);

	c = parse_ok("[library]\nslots = 4\n" POOL "[physical]\ntype = sim\nname = lto9sim\ntapes = 5\n"
		     "tape_capacity = 2G\nbackhitch_ms = 500\n[migrator]\nbuffers = 32\nbuffer_size = 2M\n"
		     "watermark = 8\nrate = 300\nwindow = 08:00-18:00\nwindow_rate = 100\nverify = no\n");
	assert_int_equal(c->physicals, 1);
	assert_string_equal(c->physical[0].type, "sim");
	assert_string_equal(c->physical[0].name, "lto9sim");
	assert_int_equal(c->physical[0].generation, 9);
	assert_int_equal(c->physical[0].tapes, 5);
	assert_int_equal(c->physical[0].tape_capacity, 2ull << 30);
	assert_int_equal(c->physical[0].backhitch_ms, 500);
	assert_string_equal(c->physical[0].data_dir, "/etc/vtl/physical");
	assert_int_equal(c->migrator.buffers, 32);
	assert_int_equal(c->migrator.buffer_size, 2u << 20);
	assert_int_equal(c->migrator.watermark, 8);
	assert_int_equal(c->migrator.rate, 300);
	assert_int_equal(c->migrator.window_rate, 100);
	assert_false(c->migrator.verify);
	unsigned from, to;
	assert_true(vtl_config_window(c->migrator.window, &from, &to));
	assert_int_equal(from, 8 * 60);
	assert_int_equal(to, 18 * 60);
	vtl_config_free(c);

	c = parse_ok("[library]\nslots = 4\n" POOL "[physical]\ntype = iscsi\nportal = 10.0.0.5:3260\n"
		     "target = iqn.2026-01.com.example:ts4500\n");
	assert_string_equal(c->physical[0].portal, "10.0.0.5:3260");
	assert_string_equal(c->physical[0].initiator, "iqn.2026-01.org.vtl:migrator");
	assert_string_equal(c->physical[0].mutual_user, "");
	vtl_config_free(c);
	/* Mutual CHAP for the library: the target's name and secret, as [iscsi] has them, and the same rules. */
#define PHYS_ISCSI "[library]\nslots = 4\n" POOL "[physical]\ntype = iscsi\nportal = h\ntarget = iqn.2026-01.x:y\n"
	c = parse_ok(PHYS_ISCSI "chap_user = migrator\nchap_secret = 123456789012\nmutual_user = ts4500\n"
		     "mutual_secret = abcdefghijkl\n");
	assert_string_equal(c->physical[0].chap_user, "migrator");
	assert_string_equal(c->physical[0].mutual_user, "ts4500");
	assert_string_equal(c->physical[0].mutual_secret, "abcdefghijkl");
	vtl_config_free(c);
	expect_error(PHYS_ISCSI "mutual_user = t\nmutual_secret = 123456789012\n",
		     "t.conf:10: [physical] mutual CHAP (the target proving itself) needs one-way CHAP too");
	expect_error(PHYS_ISCSI "chap_user = u\nchap_secret = 123456789012\nmutual_user = t\n",
		     "t.conf:11: [physical] mutual_user is set but mutual_secret is not");
	expect_error(PHYS_ISCSI "chap_user = u\nchap_secret = 123456789012\nmutual_user = t\nmutual_secret = "
		     "123456789012\n", "t.conf:12: [physical] mutual_secret is the same as chap_secret");
	expect_error(PHYS_ISCSI "chap_user = u\n", "t.conf:9: [physical] chap_user is set but chap_secret is not");
	expect_error(PHYS_ISCSI "mutual_user = t\nmutual_secret = short\n", "t.conf:10: mutual_secret is 5 characters");
#undef PHYS_ISCSI

	expect_error("[library]\nslots = 4\n" POOL "[physical]\ntype = tape\n",
		     "t.conf:6: [physical] type = 'tape': use sim");
	expect_error("[library]\nslots = 4\n" POOL "[physical]\n", "[physical] type = '': use sim");
	expect_error("[library]\nslots = 4\n" POOL "[physical]\ntype = iscsi\n", "needs portal = HOST:PORT");
	expect_error("[library]\nslots = 4\n" POOL "[physical]\ntype = sim\nslots = 2\ntapes = 3\n",
		     "t.conf:8: [physical] tapes = 3: more than its 2 slots");
	expect_error("[library]\nslots = 4\n" POOL "[migrator]\nbuffers = 4\nwatermark = 5\n",
		     "t.conf:7: [migrator] watermark = 5: more than its 4 buffers");
	expect_error("[library]\nslots = 4\n" POOL "[migrator]\nwindow = 8-18\n", "give HH:MM-HH:MM");
	expect_error("[library]\nslots = 4\n" POOL "[migrator]\nbuffer_size = 1K\n", "buffer_size");
}

/* [physical] type = st: the changer, drive and drive_sg lines in their order, and what is refused. */
static void physical_st(void **state)
{
	(void)state;
#define ST_HDR "[library]\nslots = 4\n" POOL "[physical]\ntype = st\n"
	struct vtl_config *c = parse_ok(ST_HDR "changer = /dev/sg3\ndrive = /dev/nst1\ndrive = /dev/nst0\n"
					"drive_sg = /dev/sg5\ndrive_sg = /dev/sg4\n");
	assert_int_equal(c->physicals, 1);
	assert_string_equal(c->physical[0].type, "st");
	assert_string_equal(c->physical[0].changer, "/dev/sg3");
	assert_int_equal(c->physical[0].st_drives, 2);
	assert_string_equal(c->physical[0].drive[0], "/dev/nst1");
	assert_string_equal(c->physical[0].drive[1], "/dev/nst0");
	assert_int_equal(c->physical[0].st_drive_sgs, 2);
	assert_string_equal(c->physical[0].drive_sg[0], "/dev/sg5");
	assert_string_equal(c->physical[0].drive_sg[1], "/dev/sg4");
	vtl_config_free(c);
	c = parse_ok(ST_HDR "changer = /dev/sg3\ndrive = /dev/nst0\n");
	assert_int_equal(c->physical[0].st_drives, 1);
	assert_int_equal(c->physical[0].st_drive_sgs, 0);
	vtl_config_free(c);

	expect_error(ST_HDR "drive = /dev/nst0\n", "t.conf:5: [physical] type = st needs changer = /dev/sgN");
	/* A changer alone: vtl-migrator finds its drives by serial number (docs/configuration.md). */
	c = parse_ok(ST_HDR "changer = /dev/sg3\n");
	assert_string_equal(c->physical[0].changer, "/dev/sg3");
	assert_int_equal(c->physical[0].st_drives, 0);
	vtl_config_free(c);
	expect_error(ST_HDR "changer = /dev/sg3\ndrive_sg = /dev/sg4\n",
		     "t.conf:8: [physical] drive_sg lines without drive lines: drives that are found by serial number "
		     "come with their sg nodes");
	expect_error(ST_HDR "changer = /dev/sg3\ndrive = /dev/st0\n",
		     "t.conf:8: [physical] drive = /dev/st0 rewinds on close: use the non-rewinding node /dev/nst0");
	expect_error(ST_HDR "changer = /dev/sg3\ndrive = nst0\n", "t.conf:8: [physical] drive = nst0: give the device "
								  "node's absolute path");
	expect_error(ST_HDR "changer = /dev/sg3\ndrive = /dev/nst0\ndrive = /dev/nst0\n",
		     "t.conf:9: drive /dev/nst0 is listed twice (first at line 8)");
	expect_error(ST_HDR "changer = /dev/sg3\ndrive = /dev/nst0\ndrive = /dev/nst1\ndrive_sg = /dev/sg4\n",
		     "t.conf:10: [physical] 1 drive_sg lines for 2 drives");
	expect_error(ST_HDR "changer = /dev/sg3\nchanger = /dev/sg4\ndrive = /dev/nst0\n",
		     "t.conf:8: [physical] changer is set twice (first at line 7)");
	char many[2048] = ST_HDR "changer = /dev/sg3\n";
	int n = (int)strlen(many);
	for (int i = 0; i <= VTL_CFG_MAX_PHYS_DRIVES; i++)
		n += snprintf(many + n, sizeof many - (size_t)n, "drive = /dev/nst%d\n", i);
	expect_error(many, "t.conf:24: too many drive lines: at most 16");
	expect_error("[library]\nslots = 4\n" POOL "[physical]\ntype = tape\n", "or st (a library attached to this host");
#undef ST_HDR
}

/* [policy]: defaults, every key, durations with units, rule lists, and the checks between the marks. */
/* [migrator] drives = N|all and recall_drives: every drive by default, none kept; refused when nothing is left for copies. */
static void migrator_drives(void **state)
{
	(void)state;
	struct vtl_config *c = parse_ok("[library]\nslots = 4\n" POOL);
	assert_int_equal(c->migrator.drives, 0); /* all */
	assert_int_equal(c->migrator.recall_drives, 0);
	vtl_config_free(c);
	c = parse_ok("[library]\nslots = 4\n" POOL "[migrator]\ndrives = 3\nrecall_drives = 2\n");
	assert_int_equal(c->migrator.drives, 3);
	assert_int_equal(c->migrator.recall_drives, 2);
	vtl_config_free(c);
	c = parse_ok("[library]\nslots = 4\n" POOL "[migrator]\ndrives = all\nrecall_drives = 1\n");
	assert_int_equal(c->migrator.drives, 0);
	assert_int_equal(c->migrator.recall_drives, 1);
	vtl_config_free(c);
	expect_error("[library]\nslots = 4\n" POOL "[migrator]\ndrives = 0\n",
		     "t.conf:6: [migrator] drives = 0: give all (every drive of the library) or a number from 1 to 16");
	expect_error("[library]\nslots = 4\n" POOL "[migrator]\ndrives = most\n",
		     "t.conf:6: [migrator] drives = most: give all (every drive of the library) or a number from 1 to 16");
	expect_error("[library]\nslots = 4\n" POOL "[migrator]\ndrives = 2\nrecall_drives = 2\n",
		     "t.conf:7: [migrator] recall_drives = 2 must be below drives = 2: copies need a drive too");
}

/* [migrator] pool_rate: off (0), MB/s, or auto (probed); copy_floor 0 by default: each copy's drive's own. */
static void migrator_pool_rate(void **state)
{
	(void)state;
	struct vtl_config *c = parse_ok("[library]\nslots = 4\n" POOL);
	assert_int_equal(c->migrator.pool_rate, 0);
	assert_int_equal(c->migrator.copy_floor, 0);
	vtl_config_free(c);
	c = parse_ok("[library]\nslots = 4\n" POOL "[migrator]\npool_rate = 700\ncopy_floor = 120\n");
	assert_int_equal(c->migrator.pool_rate, 700);
	assert_int_equal(c->migrator.copy_floor, 120);
	vtl_config_free(c);
	c = parse_ok("[library]\nslots = 4\n" POOL "[migrator]\npool_rate = auto\n");
	assert_int_equal(c->migrator.pool_rate, VTL_CFG_POOL_RATE_AUTO);
	vtl_config_free(c);
	expect_error("[library]\nslots = 4\n" POOL "[migrator]\npool_rate = fast\n",
		     "t.conf:6: [migrator] pool_rate = fast: give auto (the migrator measures it) or MB/s from 0 to 100000");
}

static void policy_section(void **state)
{
	(void)state;
	struct vtl_config *c = parse_ok("[library]\nslots = 4\n" POOL);
	assert_int_equal(c->policy.interval, 10);
	assert_int_equal(c->policy.premigrate, VTL_POLICY_FULL | VTL_POLICY_EJECTED | VTL_POLICY_IDLE);
	assert_int_equal(c->policy.idle, 3600);
	assert_int_equal(c->policy.high_water, 85);
	assert_int_equal(c->policy.low_water, 70);
	assert_int_equal(c->policy.throttle, 95);
	assert_int_equal(c->policy.throttle_rate, 20);
	assert_int_equal(c->policy.copy_pools, 1);
	assert_string_equal(c->policy.copy_pool[0], CAT_POOL_DEFAULT);
	vtl_config_free(c);

	c = parse_ok("[library]\nslots = 4\n" POOL "[policy]\ninterval = 2m\npremigrate = ejected, Idle\nidle = 30m\n"
		     "high_water = 60\nlow_water = 40\nthrottle = 90\nthrottle_rate = 5\ncopy_pools = onsite, vault\n");
	assert_int_equal(c->policy.copy_pools, 2);
	assert_string_equal(c->policy.copy_pool[0], "onsite");
	assert_string_equal(c->policy.copy_pool[1], "vault");
	assert_int_equal(c->policy.interval, 120);
	assert_int_equal(c->policy.premigrate, VTL_POLICY_EJECTED | VTL_POLICY_IDLE);
	assert_int_equal(c->policy.idle, 1800);
	assert_int_equal(c->policy.high_water, 60);
	assert_int_equal(c->policy.low_water, 40);
	assert_int_equal(c->policy.throttle, 90);
	assert_int_equal(c->policy.throttle_rate, 5);
	vtl_config_free(c);

	c = parse_ok("[library]\nslots = 4\n" POOL "[policy]\npremigrate = none\nidle = 0\nthrottle = 0\ninterval = 1d\n");
	assert_int_equal(c->policy.premigrate, 0);
	assert_int_equal(c->policy.idle, 0);
	assert_int_equal(c->policy.throttle, 0);
	assert_int_equal(c->policy.interval, 86400);
	vtl_config_free(c);

	uint64_t d;
	assert_int_equal(vtl_parse_duration("45", 100, &d), 0);
	assert_int_equal(d, 45);
	assert_int_equal(vtl_parse_duration("2h", 86400, &d), 0);
	assert_int_equal(d, 7200);
	assert_int_equal(vtl_parse_duration("2h", 3600, &d), VTL_E_INVAL);
	assert_int_equal(vtl_parse_duration("h", 3600, &d), VTL_E_INVAL);
	assert_int_equal(vtl_parse_duration("1.5h", 86400, &d), VTL_E_INVAL);
	assert_int_equal(vtl_parse_duration("1hs", 86400, &d), VTL_E_INVAL);

	static const struct {
		const char *lines, *want;
	} bad[] = {
		{"interval = 0\n", "t.conf:6: [policy] interval = 0: give a duration such as 90s"},
		{"idle = 10 minutes\n", "[policy] idle = 10 minutes: give a duration"},
		{"premigrate = full, mounted\n", "t.conf:6: [policy] premigrate = full, mounted: give a list of full, ejected and idle"},
		{"premigrate = none, full\n", "none cannot be listed with a rule"},
		{"high_water = 101\n", "[policy] high_water = 101: give a whole number from 1 to 100"},
		{"high_water = 50\nlow_water = 50\n", "t.conf:7: [policy] low_water = 50 must be below high_water = 50"},
		{"throttle = 80\n", "t.conf:6: [policy] throttle = 80 is below high_water = 85"},
		{"throttle_rate = 0\n", "[policy] throttle_rate = 0: give a whole number from 1"},
		{"copy_pools = a, b, c\n", "[policy] copy_pools = a, b, c: give 1 or 2 pool names"},
		{"copy_pools = vault, vault\n", "pool 'vault' is named twice"},
		{"copy_pools = on/site\n", "[policy] copy_pools: pool 'on/site': use letters"},
	};
	for (size_t i = 0; i < VTL_ARRAY_SIZE(bad); i++) {
		char t[512];
		snprintf(t, sizeof t, "[library]\nslots = 4\n" POOL "[policy]\n%s", bad[i].lines);
		expect_error(t, bad[i].want);
	}
}

/* [daemon] http and [migrator] http: off by default; loopback alone, or another address with a token. */
static void http_endpoints(void **state)
{
	(void)state;
	struct vtl_config *c = parse_ok("[library]\nslots = 4\n" POOL);
	assert_string_equal(c->daemon.http.listen, "");
	assert_string_equal(c->migrator.http.listen, "");
	vtl_config_free(c);
	c = parse_ok("[library]\nslots = 4\n" POOL "[daemon]\nhttp = 127.0.0.1:9110\nhttp_connections = 4\n"
		     "http_connections_per_address = 2\nhttp_timeout = 1m\n[migrator]\nhttp = [::1]:9111\n");
	assert_string_equal(c->daemon.http.listen, "127.0.0.1:9110");
	assert_int_equal(c->daemon.http.connections, 4);
	assert_int_equal(c->daemon.http.per_address, 2);
	assert_int_equal(c->daemon.http.timeout, 60);
	assert_string_equal(c->migrator.http.listen, "[::1]:9111");
	vtl_config_free(c);
	c = parse_ok("[library]\nslots = 4\n" POOL "[daemon]\nhttp = 0.0.0.0:9110\nhttp_token = 0123456789abcdef\n");
	assert_string_equal(c->daemon.http.token, "0123456789abcdef");
	vtl_config_free(c);
	expect_error("[library]\nslots = 4\n" POOL "[daemon]\nhttp = 0.0.0.0:9110\n",
		     "t.conf:6: [daemon] http = 0.0.0.0:9110 is not a loopback address: set http_token too");
	expect_error("[library]\nslots = 4\n" POOL "[migrator]\nhttp = 10.1.1.1:9110\n",
		     "t.conf:6: [migrator] http = 10.1.1.1:9110 is not a loopback address");
	expect_error("[library]\nslots = 4\n" POOL "[daemon]\nhttp = localhost:9110\n",
		     "t.conf:6: [daemon] http = localhost:9110: give an IP address and a port");
	expect_error("[library]\nslots = 4\n" POOL "[daemon]\nhttp = 127.0.0.1\n", "give an IP address and a port");
	expect_error("[library]\nslots = 4\n" POOL "[daemon]\nhttp_token = short-token\n",
		     "t.conf:6: [daemon] http_token is 11 characters long: use 16 to 128");
	expect_error("[library]\nslots = 4\n" POOL "[daemon]\nhttp_token = 0123456789 abcdef\n",
		     "without blanks");
	expect_error("[library]\nslots = 4\n" POOL "[daemon]\nhttp_connections = 0\n", "http_connections");
}

/* Several [physical NAME] libraries: each its own keys, pools bound to one library, and what is refused. */
#define TWO_LIBS "[library]\nslots = 4\n" POOL "[physical site]\ntype = sim\npools = default\n" \
		 "[physical vault]\ntype = sim\ndrives = 3\npools = vault, offsite\nprefix = VLT\n"
static void several_libraries(void **state)
{
	(void)state;
	struct vtl_config *c = parse_ok(TWO_LIBS "[policy]\ncopy_pools = default, vault\n");
	assert_int_equal(c->physicals, 2);
	assert_true(vtl_config_has_physical(c));
	assert_string_equal(c->physical[0].name, "site");
	assert_string_equal(c->physical[1].name, "vault");
	assert_int_equal(c->physical[0].drives, 2);
	assert_int_equal(c->physical[1].drives, 3);
	assert_int_equal(c->physical[1].pools, 2);
	assert_string_equal(c->physical[1].pool[1], "offsite");
	/* Simulated libraries keep their tapes apart by default. */
	assert_string_equal(c->physical[0].data_dir, "/etc/vtl/physical-site");
	assert_string_equal(c->physical[1].data_dir, "/etc/vtl/physical-vault");
	assert_int_equal(vtl_config_pool_library(c, "default"), 0);
	assert_int_equal(vtl_config_pool_library(c, "offsite"), 1);
	assert_int_equal(vtl_config_pool_library(c, "elsewhere"), -1);
	assert_ptr_equal(vtl_config_physical_named(c, "vault"), &c->physical[1]);
	assert_null(vtl_config_physical_named(c, "physical"));
	vtl_config_free(c);
	/* The only library serves every pool until it names its own; a plain [physical] is named by its key. */
	c = parse_ok("[library]\nslots = 4\n" POOL "[physical]\ntype = sim\nname = lib1\n[policy]\ncopy_pools = a, b\n");
	assert_int_equal(c->physicals, 1);
	assert_string_equal(c->physical[0].name, "lib1");
	assert_int_equal(vtl_config_pool_library(c, "b"), 0);
	assert_string_equal(c->physical[0].data_dir, "/etc/vtl/physical");
	vtl_config_free(c);
	expect_error("[library]\nslots = 4\n" POOL "[physical only]\ntype = sim\npools = a\n[policy]\ncopy_pools = a, b\n",
		     "t.conf:9: [policy] copy_pools: pool b is in no physical library's pools (a in only): add it to the "
		     "pools line of the library whose tapes hold it");
	expect_error(TWO_LIBS "[policy]\ncopy_pools = default, tape\n",
		     "t.conf:14: [policy] copy_pools: pool tape is in no physical library's pools (default in site, vault "
		     "in vault, offsite in vault)");
	expect_error("[library]\nslots = 4\n" POOL "[physical site]\ntype = sim\npools = default\n[physical vault]\n"
		     "type = sim\nprefix = VLT\n", "t.conf:8: [physical vault] has no pools = line: with several physical libraries, "
		     "name the copy pools whose tapes each one keeps (e.g. pools = default)");
	expect_error("[library]\nslots = 4\n" POOL "[physical site]\ntype = sim\npools = default\n[physical vault]\n"
		     "type = sim\nprefix = VLT\npools = vault, default\n", "t.conf:11: [physical vault] pools: pool default is in "
		     "physical library site (line 5) already: a pool's tapes are in one library");
	expect_error("[library]\nslots = 4\n" POOL "[physical site]\ntype = sim\n[physical site]\n",
		     "t.conf:7: [physical site] appears twice (first at line 5)");
	expect_error("[library]\nslots = 4\n" POOL "[physical]\ntype = sim\n[physical]\n",
		     "t.conf:7: section [physical] appears twice (first at line 5)");
	expect_error("[library]\nslots = 4\n" POOL "[physical]\ntype = sim\nname = vault\npools = a\n[physical vault]\n"
		     "type = sim\nprefix = VLT\npools = b\n", "t.conf:9: [physical vault]: another physical library (line 5) is "
		     "called vault too; give each its own name");
	expect_error("[library]\nslots = 4\n" POOL "[physical site]\nname = other\n",
		     "t.conf:6: [physical site] name = other: the section header names this library (site); leave name out");
	expect_error("[library]\nslots = 4\n" POOL "[physical a/b]\n",
		     "t.conf:5: [physical a/b]: name a library with 1 to 64 letters, digits, '.', '_' or '-'");
	expect_error("[library]\nslots = 4\n" POOL "[physical a]\n[physical b]\n[physical c]\n[physical d]\n[physical e]\n",
		     "t.conf:9: [physical e]: at most 4 physical libraries");
	/* Each library's messages name its section. */
	expect_error("[library]\nslots = 4\n" POOL "[physical site]\ntype = sim\npools = default\n[physical vault]\n"
		     "type = iscsi\npools = vault\n", "t.conf:8: [physical vault] type = iscsi needs portal = HOST:PORT");
	expect_error("[library]\nslots = 4\n" POOL "[physical site]\ntype = sim\npools = default\nchap_user = u\n",
		     "t.conf:8: [physical site] chap_user is set but chap_secret is not");
	expect_error("[library]\nslots = 4\n" POOL "[physical site]\ntype = sim\npools = default\npools = b\n",
		     "t.conf:8: [physical site] pools is set twice (first at line 7)");
	expect_error("[library]\nslots = 4\n" POOL "[physical site]\ntype = sim\npools = a, a\n",
		     "t.conf:7: [physical site] pools = a, a: pool 'a' is named twice");
	expect_error("[library]\nslots = 4\n" POOL "[physical site]\ntype = sim\npools = a\n[physical vault]\n"
		     "type = sim\npools = b\n", "t.conf:8: [physical vault] prefix = PHY: the tapes of simulated library "
		     "site begin with PHY too; give each its own prefix");
	expect_error("[library]\nslots = 4\n" POOL "[physical site]\ntype = sim\nprefix = AB\n",
		     "t.conf:7: [physical site] prefix = AB: give 3 letters or digits");
}

/* A reload compares physical libraries by name: added, removed and changed ones are restart-only. */
static void reload_libraries(void **state)
{
	(void)state;
	char applied[1024], refused[1024];
	static const char *const none[] = {NULL};
	struct vtl_config *a = parse_ok(TWO_LIBS), *b = parse_ok("[library]\nslots = 4\n" POOL "[physical vault]\n"
								 "type = sim\ndrives = 4\npools = vault, offsite\nprefix = VLT\n"
								 "[physical site]\ntype = sim\npools = default\n"
								 "[physical more]\ntype = sim\npools = more\n"
								 "prefix = MOR\n");
	assert_int_equal(vtl_config_reload_plan(a, b, none, none, applied, sizeof applied, refused, sizeof refused),
			 VTL_E_CONFIG);
	assert_string_equal(refused, "[physical vault] drives changed from 3 to 4, [physical more] added: need a restart; "
				     "nothing applied");
	vtl_config_free(b);
	b = parse_ok(TWO_LIBS);
	assert_int_equal(vtl_config_reload_plan(a, b, none, none, applied, sizeof applied, refused, sizeof refused), 0);
	vtl_config_free(b);
	vtl_config_free(a);
}

/* What a daemon's reload would do with the file changed from base to next (vtl_config_reload_plan). */
static int plan(const char *base, const char *next, char *applied, char *refused)
{
	static const char *const reloads[] = {"daemon log_level", "iscsi chap_secret", "iscsi initiator", "initiator *",
						       NULL};
	static const char *const ignores[] = {"physical *", "migrator rate", NULL};
	struct vtl_config *a = parse_ok(base), *b = parse_ok(next);
	int rc = vtl_config_reload_plan(a, b, reloads, ignores, applied, 1024, refused, 1024);
	vtl_config_free(a);
	vtl_config_free(b);
	return rc;
}

#define RELOAD_LIB "[library]\nslots = 20\ndrives = 2\n[pool]\nmember = /p/m0\n[catalog]\npath = /c.db\n"

static void reload_plans(void **state)
{
	(void)state;
	char applied[1024], refused[1024];
	/* Only reloadable changes: each is listed (a secret without its values), in the key table's order. */
	assert_int_equal(plan(RELOAD_LIB "[iscsi]\nchap_user = u\nchap_secret = first-secret-123\n",
			      RELOAD_LIB "[iscsi]\nchap_user = u\nchap_secret = second-secret-45\n[daemon]\nlog_level = debug\n",
			      applied, refused), 2);
	assert_string_equal(applied, "[iscsi] chap_secret changed, [daemon] log_level changed from info to debug");
	assert_null(strstr(applied, "second-secret"));
	/* A key set where it was not: "(none)" before. */
	assert_int_equal(plan(RELOAD_LIB "[iscsi]\nchap_user = u\nchap_secret = first-secret-123\n",
			      RELOAD_LIB "[iscsi]\nchap_user = u\nchap_secret = first-secret-123\nmutual_user = m\n"
					 "mutual_secret = mutual-secret-99\n", applied, refused), VTL_E_CONFIG);
	assert_string_equal(refused, "[iscsi] mutual_user changed from (none) to m, [iscsi] mutual_secret changed: need a "
				     "restart; nothing applied");
	/* Nothing changed, or only what the daemon does not read. */
	assert_int_equal(plan(RELOAD_LIB, RELOAD_LIB "[migrator]\nrate = 40\n", applied, refused), 0);
	assert_string_equal(applied, "nothing this daemon reads changed");
	/* One key that needs a restart refuses the whole reload, naming it and both values. */
	assert_int_equal(plan(RELOAD_LIB, "[library]\nslots = 30\ndrives = 2\n[pool]\nmember = /p/m0\n[catalog]\npath = /c.db\n"
				      "[daemon]\nlog_level = debug\n", applied, refused), VTL_E_CONFIG);
	assert_string_equal(refused, "[library] slots changed from 20 to 30: needs a restart; nothing applied");
	assert_string_equal(applied, "");
	/* Several: each is named; repeatable keys as lists, drive sections by number. */
	assert_int_equal(plan(RELOAD_LIB, "[library]\nslots = 20\ndrives = 2\n[drive 2]\nmodel = ULT3580-TD9\n"
				      "[pool]\nmember = /p/m0\nmember = /p/m1\n[catalog]\npath = /c.db\n[iscsi]\nport = 3261\n",
			      applied, refused), VTL_E_CONFIG);
	assert_string_equal(refused, "[iscsi] port changed from 3260 to 3261, [pool] member changed from /p/m0 to "
				     "/p/m0, /p/m1, [drive 2] model changed from ULT3580-TD8 to ULT3580-TD9, [drive 2] "
				     "generation changed from 8 to 9: need a restart; nothing applied");
	/* [initiator NAME] sections that come and go (their names join [iscsi]'s allow list). */
	assert_int_equal(plan(RELOAD_LIB "[initiator iqn.2026-01.com.example:a]\nchap_user = a\nchap_secret = a-secret-0123456\n",
			      RELOAD_LIB "[initiator iqn.2026-01.com.example:b]\nchap_user = b\nchap_secret = b-secret-0123456\n",
			      applied, refused), 3);
	assert_string_equal(applied, "[iscsi] initiator changed from iqn.2026-01.com.example:a to "
				     "iqn.2026-01.com.example:b, [initiator iqn.2026-01.com.example:a] removed, "
				     "[initiator iqn.2026-01.com.example:b] added");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(physical_st),
		cmocka_unit_test(full_config),
		cmocka_unit_test(minimal_config_defaults),
		cmocka_unit_test(syntax_errors),
		cmocka_unit_test(value_errors),
		cmocka_unit_test(whole_file_errors),
		cmocka_unit_test(sizes),
		cmocka_unit_test(load_file),
		cmocka_unit_test(shipped_example),
		cmocka_unit_test(iscsi_security),
		cmocka_unit_test(initiator_sections),
		cmocka_unit_test(exposure),
		cmocka_unit_test(auth_fail_delay_and_advertise),
		cmocka_unit_test(secret_file_mode),
		cmocka_unit_test(nop_interval),
		cmocka_unit_test(recall_wait),
		cmocka_unit_test(iscsi_limits),
		cmocka_unit_test(control_group),
		cmocka_unit_test(migration_sections),
		cmocka_unit_test(migrator_drives),
		cmocka_unit_test(migrator_pool_rate),
		cmocka_unit_test(policy_section),
		cmocka_unit_test(http_endpoints),
		cmocka_unit_test(reload_plans),
		cmocka_unit_test(several_libraries),
		cmocka_unit_test(reload_libraries),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
