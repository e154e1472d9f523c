/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cache policy's commands: policy (the pool's fill, the marks, what the
 * last pass did) and release (an operator gives up a premigrated
 * cartridge's disk copy). Both ask vtl-migrator, which runs the policy.
 */
#include <stdio.h>
#include <string.h>

#include "backend/pool.h"
#include "common/grow.h"
#include "common/vtl_error.h"
#include "vtl/ctl/ctl.h"

#define ANSWER_MAX 65536
#define LIST_TEXT_MAX 1024

/* The strings of the JSON array key in ans, joined by blanks into out ("-" when empty). */
static void ans_list(const char *ans, const char *key, char *out, size_t cap)
{
	char pat[64];
	snprintf(pat, sizeof pat, "\"%s\":[", key);
	const char *p = strstr(ans, pat);
	size_t at = 0;
	out[0] = 0;
	if (p) {
		p += strlen(pat);
		while (*p && *p != ']' && at + 1 < cap) {
			if (*p == '"')
				; /* the barcodes need no unescaping: they are printable ASCII without quotes */
			else if (*p == ',')
				out[at++] = ' ';
			else
				out[at++] = *p;
			p++;
		}
		out[at] = 0;
	}
	if (!at)
		snprintf(out, cap, "-");
}

static int migrator_needed(struct ctl *ctl)
{
	int rc = ctl_load_config(ctl);
	if (rc)
		return rc;
	if (!ctl_migrator_up(ctl))
		return ctl_err(ctl, VTLCTL_FAIL, "vtl-migrator is not running (nothing answers on %s): it runs the policy",
			       ctl->cfg->migrator.control_socket);
	return 0;
}

int cmd_policy(struct ctl *ctl, int argc, char **argv)
{
	int rc = ctl_parse_bare(ctl, argc, argv);
	if (rc || (rc = migrator_needed(ctl)))
		return rc;
	static char answer[ANSWER_MAX];
	bool printed;
	if ((rc = ctl_query(ctl, &(struct ctlproto_request){.verb = CTLPROTO_POLICY}, answer, sizeof answer, &printed)) || printed)
		return rc;
	char used[32], size[32], rules[64], err[512];
	fmt_bytes(ans_u64(answer, "used_bytes"), used, sizeof used);
	fmt_bytes(ans_u64(answer, "size_bytes"), size, sizeof size);
	ans_text(answer, "premigrate", rules, sizeof rules);
	printf("pool: %.1f%% full (%s of %s); high water %llu%%, low water %llu%%", ans_real(answer, "fill_percent"),
	       used, size, ans_u64(answer, "high_water"), ans_u64(answer, "low_water"));
	if (ans_u64(answer, "throttle"))
		printf("; host writes slowed to %llu MB/s from %llu%%\n", ans_u64(answer, "throttle_rate"),
		       ans_u64(answer, "throttle"));
	else
		printf("; host writes never slowed\n");
	printf("copy candidates: %s (idle after %llu s); a pass every %llu s, %llu passes so far\n", rules,
	       ans_u64(answer, "idle"), ans_u64(answer, "interval"), ans_u64(answer, "passes"));
	char total[32];
	fmt_bytes(ans_u64(answer, "total_released_bytes"), total, sizeof total);
	printf("since vtl-migrator started: %llu copies queued, %llu disk copies released (%s)\n",
	       ans_u64(answer, "total_queued"), ans_u64(answer, "total_released"), total);
	printf("last pass: pool %.1f%% -> %.1f%%%s\n", ans_real(answer, "last_fill_before"),
	       ans_real(answer, "last_fill_after"),
	       strstr(answer, "\"draining\":true") ? "; still releasing down to the low-water mark" : "");
	ans_text(answer, "last_error", err, sizeof err);
	if (err[0])
		printf("last pass failed: %s\n", err);
	static const char *const head[] = {"ACTION", "COUNT", "CARTRIDGES"};
	static const struct {
		const char *key, *what;
	} rows[] = {
		{"queued_full", "copy queued: full"},        {"queued_ejected", "copy queued: ejected"},
		{"queued_idle", "copy queued: idle"},        {"queued_pressure", "copy queued: pool pressure"},
		{"queued_pools", "copy queued: copy pool"},
		{"released", "disk copy released"},          {"busy", "skipped: open elsewhere"},
		{"refused", "release refused (events)"},    {"queued_verify", "verify queued: block size"},
	};
	struct table t;
	table_init(&t, 3, head, "LRL");
	for (size_t i = 0; i < VTL_ARRAY_SIZE(rows); i++) {
		char key[48], count[24], list[LIST_TEXT_MAX];
		snprintf(key, sizeof key, "%s_count", rows[i].key);
		snprintf(count, sizeof count, "%llu", ans_u64(answer, key));
		ans_list(answer, rows[i].key, list, sizeof list);
		table_add(&t, rows[i].what, count, list);
	}
	table_print(&t, stdout);
	table_free(&t);
	return 0;
}

int cmd_release(struct ctl *ctl, int argc, char **argv)
{
	struct ctl_opt opts[] = {{"force", 'f', false, NULL, false}};
	const char *barcode;
	int rc = ctl_parse_barcode_opts(ctl, argc, argv, opts, 1, &barcode);
	if (rc)
		return rc;
	if ((rc = migrator_needed(ctl)))
		return rc;
	struct ctlproto_request r = {.verb = CTLPROTO_RELEASE, .flags = opts[0].set ? CTLPROTO_FLAG_FORCE : 0};
	snprintf(r.barcode, sizeof r.barcode, "%s", barcode);
	char msg[1024];
	if ((rc = ctl_request(ctl, &r, msg, sizeof msg)))
		return rc;
	printf("%s\n", msg);
	return 0;
}
