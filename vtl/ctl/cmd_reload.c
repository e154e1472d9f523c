/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reload: has the running daemons read the configuration file again
 * (vtld_reload, migd_reload) and prints what each applied, or why it
 * applied nothing. Both daemons read the same file, so by default each one
 * that runs is asked.
 */
#include <stdio.h>
#include <string.h>

#include "common/grow.h"
#include "vtl/ctl/ctl.h"

#define ANSWER_MAX 4096

/* Asks one daemon; prints "NAME: what it applied" (or its answer, --json); 0 or VTLCTL_FAIL (reported). */
static int reload_one(struct ctl *ctl, enum ctlproto_verb verb, const char *name, bool first)
{
	char answer[ANSWER_MAX], text[ANSWER_MAX];
	int rc = ctl_request_raw(ctl, &(struct ctlproto_request){.verb = verb}, answer, sizeof answer);
	if (rc)
		return rc;
	bool ok = strncmp(answer, "{\"ok\":true", 10) == 0;
	if (ctl->json) {
		printf("%s\"%s\":%s", first ? "{" : ",", name, answer);
		return ok ? 0 : VTLCTL_FAIL;
	}
	ans_text(answer, ok ? "message" : "error", text, sizeof text);
	if (!ok)
		return ctl_err(ctl, VTLCTL_FAIL, "%s: %s", name, text);
	printf("%s: %s\n", name, text);
	return 0;
}

int cmd_reload(struct ctl *ctl, int argc, char **argv)
{
	struct ctl_opt opts[] = {{.lng = "vtld"}, {.lng = "migrator"}};
	char **pos;
	int npos;
	int rc = ctl_parse(ctl, argc, argv, opts, VTL_ARRAY_SIZE(opts), &pos, &npos);
	if (rc)
		return rc;
	if (npos)
		return ctl_usage(ctl, "unexpected argument '%s'", pos[0]);
	if ((rc = ctl_load_config(ctl)))
		return rc;
	bool only = opts[0].set || opts[1].set;
	/* Named: it must answer (the request says so if not). Not named: each one that runs. */
	bool vtld = only ? opts[0].set : ctl_daemon_up(ctl);
	bool migrator = only ? opts[1].set : ctl_migrator_up(ctl);
	if (!vtld && !migrator)
		return ctl_err(ctl, VTLCTL_FAIL, "neither vtld (%s) nor vtl-migrator (%s) answers: nothing to reload",
			       ctl->cfg->daemon.control_socket, ctl->cfg->migrator.control_socket);
	int rv = vtld ? reload_one(ctl, CTLPROTO_RELOAD, "vtld", true) : 0;
	int rm = migrator ? reload_one(ctl, CTLPROTO_MIGRATOR_RELOAD, "vtl-migrator", !vtld) : 0;
	if (ctl->json)
		printf("}\n");
	return rv ? rv : rm;
}
