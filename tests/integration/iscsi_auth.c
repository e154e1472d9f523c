/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A host that logs in to vtld with libiscsi under a chosen identity: an
 * initiator name, optional CHAP credentials (one-way, or mutual with the
 * target's name and secret the host expects), optional header digests;
 * then runs TEST UNIT READY and INQUIRY on LUN 0 to show the session works.
 * With -d it runs a discovery session (SendTargets) instead and lists what
 * it is told. With -w FILE it then waits (up to WAIT_MAX_S) until FILE
 * exists and runs the commands again in the same session, so that a test
 * can change the target in between (a reload). It prints what libiscsi
 * reports, so a refusal says why.
 *
 * Usage: iscsi_auth [-i INITIATOR] [-u USER -p SECRET [-U TARGET-USER -P TARGET-SECRET]] [-H] [-d]
 *                   [-w FILE] PORTAL TARGET-IQN
 * Exit status: 0 logged in and the commands worked (or discovery listed
 * targets); 2 the login was refused (the message says why); 1 anything else.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <iscsi/iscsi.h>
#include <iscsi/scsi-lowlevel.h>

#define EXIT_REFUSED 2
#define INQUIRY_LEN 96
#define TUR_TRIES 5            /* unit attentions a new nexus may see first */
#define TYPE_MEDIUM_CHANGER 8  /* SPC-4 peripheral device type */
#define DEFAULT_INITIATOR "iqn.2026-01.org.vtl:test-host"
#define WAIT_MAX_S 30          /* -w: how long FILE may take to appear */
#define WAIT_STEP_US 50000

static int usage(void)
{
	fprintf(stderr, "usage: iscsi_auth [-i INITIATOR] [-u USER -p SECRET [-U TARGET-USER -P TARGET-SECRET]] "
			"[-H] [-d] [-w FILE] PORTAL TARGET-IQN\n");
	return 1;
}

static int discover(struct iscsi_context *iscsi)
{
	struct iscsi_discovery_address *da = iscsi_discovery_sync(iscsi);
	if (!da) {
		printf("discovery failed: %s\n", iscsi_get_error(iscsi));
		return 1;
	}
	for (struct iscsi_discovery_address *a = da; a; a = a->next)
		printf("discovered target %s\n", a->target_name);
	iscsi_free_discovery_data(iscsi, da);
	return 0;
}

/* TEST UNIT READY (past unit attentions) and INQUIRY on LUN 0, which must be the changer. */
static int use_session(struct iscsi_context *iscsi)
{
	for (int i = 0;; i++) {
		struct scsi_task *t = iscsi_testunitready_sync(iscsi, 0);
		if (!t) {
			printf("TEST UNIT READY failed: %s\n", iscsi_get_error(iscsi));
			return 1;
		}
		int st = t->status, key = t->sense.key;
		scsi_free_scsi_task(t);
		if (st == SCSI_STATUS_GOOD)
			break;
		if (key != SCSI_SENSE_UNIT_ATTENTION || i == TUR_TRIES) {
			printf("TEST UNIT READY: status %d, sense key %d\n", st, key);
			return 1;
		}
	}
	struct scsi_task *t = iscsi_inquiry_sync(iscsi, 0, 0, 0, INQUIRY_LEN);
	if (!t || t->status != SCSI_STATUS_GOOD || t->datain.size < 1) {
		printf("INQUIRY failed: %s\n", iscsi_get_error(iscsi));
		return 1;
	}
	int type = t->datain.data[0] & 0x1F;
	scsi_free_scsi_task(t);
	if (type != TYPE_MEDIUM_CHANGER) {
		printf("INQUIRY: LUN 0 is device type %d, not a medium changer\n", type);
		return 1;
	}
	printf("commands work: TEST UNIT READY good, LUN 0 is a medium changer\n");
	return 0;
}

int main(int argc, char **argv)
{
	const char *initiator = DEFAULT_INITIATOR, *user = NULL, *secret = NULL, *tuser = NULL, *tsecret = NULL;
	const char *wait_for = NULL;
	setvbuf(stdout, NULL, _IOLBF, 0); /* a test reads the lines of a session it holds while the host waits */
	int header_digest = 0, discovery = 0, opt;
	while ((opt = getopt(argc, argv, "i:u:p:U:P:Hdw:")) != -1) {
		switch (opt) {
		case 'i': initiator = optarg; break;
		case 'u': user = optarg; break;
		case 'p': secret = optarg; break;
		case 'U': tuser = optarg; break;
		case 'P': tsecret = optarg; break;
		case 'H': header_digest = 1; break;
		case 'd': discovery = 1; break;
		case 'w': wait_for = optarg; break;
		default: return usage();
		}
	}
	if (argc - optind != 2 || !user != !secret || !tuser != !tsecret || (tuser && !user))
		return usage();
	const char *portal = argv[optind], *target = argv[optind + 1];

	struct iscsi_context *iscsi = iscsi_create_context(initiator);
	if (!iscsi) {
		fprintf(stderr, "cannot create a libiscsi context\n");
		return 1;
	}
	int rc = iscsi_set_session_type(iscsi, discovery ? ISCSI_SESSION_DISCOVERY : ISCSI_SESSION_NORMAL);
	if (!rc && !discovery)
		rc = iscsi_set_targetname(iscsi, target);
	/* Only CRC32C is offered when asked for, so that a login that succeeds really has digests. */
	if (!rc)
		rc = iscsi_set_header_digest(iscsi, header_digest ? ISCSI_HEADER_DIGEST_CRC32C : ISCSI_HEADER_DIGEST_NONE);
	if (!rc && user)
		rc = iscsi_set_initiator_username_pwd(iscsi, user, secret);
	if (!rc && tuser)
		rc = iscsi_set_target_username_pwd(iscsi, tuser, tsecret);
	if (rc) {
		printf("cannot set up the context: %s\n", iscsi_get_error(iscsi));
		iscsi_destroy_context(iscsi);
		return 1;
	}
	printf("%s login as %s%s%s%s\n", discovery ? "discovery" : "normal", initiator,
	       user ? ", CHAP" : ", no CHAP", tuser ? " (mutual)" : "", header_digest ? ", header digest CRC32C" : "");
	if (iscsi_connect_sync(iscsi, portal) != 0) {
		printf("cannot connect to %s: %s\n", portal, iscsi_get_error(iscsi));
		iscsi_destroy_context(iscsi);
		return 1;
	}
	if (iscsi_login_sync(iscsi) != 0) {
		printf("login refused: %s\n", iscsi_get_error(iscsi));
		iscsi_destroy_context(iscsi);
		return EXIT_REFUSED;
	}
	printf("logged in\n");
	rc = discovery ? discover(iscsi) : use_session(iscsi);
	if (!rc && wait_for && !discovery) {
		int waited = 0;
		while (access(wait_for, F_OK) != 0 && waited++ < WAIT_MAX_S * (1000000 / WAIT_STEP_US))
			usleep(WAIT_STEP_US);
		printf("%s, the same session again\n", access(wait_for, F_OK) == 0 ? "told to go on" : "waited in vain");
		rc = use_session(iscsi);
	}
	iscsi_logout_sync(iscsi);
	iscsi_destroy_context(iscsi);
	return rc;
}
