/* SPDX-License-Identifier: Apache-2.0 */
#include "config/reload.h"

#include <stdio.h>

#include "common/log.h"
#include "common/sdnotify.h"
#include "common/vtl_error.h"

#define PLAN_TEXT_MAX 1024 /* what a plan lists; longer lists are cut */

int vtl_reload(const struct vtl_config *cur, const struct vtl_reload *r, char *msg, size_t cap)
{
	if (atomic_flag_test_and_set(r->busy)) {
		snprintf(msg, cap, "reload: another reload is running; try again");
		return VTL_E_BUSY;
	}
	/* A manager that misses these still sees the daemon run; sdnotify logged why. */
	vtl_ignore(sdnotify_reloading());
	struct vtl_config *next = NULL;
	char err[VTL_CFG_ERR_LEN], applied[PLAN_TEXT_MAX], refused[PLAN_TEXT_MAX];
	int rc = vtl_config_load(cur->path, &next, err, sizeof err);
	if (rc != VTL_OK) {
		snprintf(msg, cap, "reload: %s; nothing applied, still serving the configuration read before", err);
	} else if ((rc = vtl_config_reload_plan(cur, next, r->reloads, r->ignores, applied, sizeof applied, refused,
						sizeof refused)) < 0) {
		snprintf(msg, cap, "reload: %s", refused);
	} else if (rc == 0) {
		snprintf(msg, cap, "reload: %s", applied); /* nothing to apply: nothing is touched */
	} else if ((rc = r->apply(r->arg, next)) != VTL_OK) {
		snprintf(msg, cap, "reload: %s; nothing applied", vtl_strerror(rc));
	} else {
		snprintf(msg, cap, "reload: applied %s", applied);
		next = NULL; /* the daemon's now */
	}
	vtl_config_free(next);
	if (rc == VTL_OK)
		log_info("%s", msg);
	else
		log_error("%s", msg);
	char status[SDNOTIFY_STATUS_LEN];
	snprintf(status, sizeof status, "%s: %s", r->name,
		 rc == VTL_OK ? "configuration reloaded" : "reload refused, serving the previous configuration");
	vtl_ignore(sdnotify_ready(status));
	atomic_flag_clear(r->busy);
	return rc;
}
