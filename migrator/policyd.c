/* SPDX-License-Identifier: Apache-2.0 */
#include "migrator/policyd.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/grow.h"
#include "common/jsonout.h"
#include "common/log.h"
#include "common/vtl_error.h"
#include "migrator/policy.h"

#define ERR_MAX 512

struct policyd {
	struct vtl_catalog *cat;
	struct vtl_pool *pool;
	const struct vtl_config *cfg;
	pthread_mutex_t mu;         /* one pass or release at a time; policy, last, last_err, passes, next_ns */
	struct vtl_policy_config policy; /* cfg's [policy], or a reload's */
	struct policy_report last;
	char last_err[ERR_MAX];
	unsigned long passes;
	unsigned long queued, released; /* since the start: copies the passes queued, disk copies released */
	uint64_t released_bytes;
	uint64_t next_ns;           /* CLOCK_MONOTONIC: when the next pass is due */
};

int policyd_create(struct vtl_catalog *cat, struct vtl_pool *pool, const struct vtl_config *cfg,
		   struct policyd **out)
{
	struct policyd *pd = calloc(1, sizeof *pd);
	if (!pd)
		return VTL_E_NOMEM;
	pd->cat = cat;
	pd->pool = pool;
	pd->cfg = cfg;
	pd->policy = cfg->policy;
	pthread_mutex_init(&pd->mu, NULL);
	pd->next_ns = vtl_mono_ns(); /* the first pass runs at once */
	*out = pd;
	return VTL_OK;
}

void policyd_set(struct policyd *pd, const struct vtl_policy_config *p)
{
	pthread_mutex_lock(&pd->mu);
	uint64_t last = pd->next_ns - (uint64_t)pd->policy.interval * VTL_NS_PER_S;
	pd->policy = *p;
	pd->next_ns = last + (uint64_t)p->interval * VTL_NS_PER_S; /* the new interval counts from the last pass */
	pthread_mutex_unlock(&pd->mu);
}

void policyd_destroy(struct policyd *pd)
{
	if (!pd)
		return;
	pthread_mutex_destroy(&pd->mu);
	free(pd);
}

/* Logs what a pass did, when it did anything: an operator reads the log to see the policy at work. */
static void log_pass(const struct policy_report *r)
{
	unsigned queued = r->full.n + r->ejected.n + r->idle.n + r->pressure.n + r->pools.n;
	if (!queued && !r->released.n && !r->busy.n && !r->refused.n && !r->verify.n)
		return;
	log_info("policy: pool %.1f%% -> %.1f%%; copies queued: %u full, %u ejected, %u idle, %u for pool pressure, "
		 "%u for a copy pool; %u disk copies released (%llu bytes); %u busy, skipped; %u refused; %u verifies "
		 "queued for a block size", r->before.percent, r->after.percent, r->full.n, r->ejected.n, r->idle.n,
		 r->pressure.n, r->pools.n, r->released.n, (unsigned long long)r->released_bytes, r->busy.n, r->refused.n,
		 r->verify.n);
}

void policyd_tick(struct policyd *pd)
{
	uint64_t now = vtl_mono_ns();
	pthread_mutex_lock(&pd->mu);
	if (now < pd->next_ns) {
		pthread_mutex_unlock(&pd->mu);
		return;
	}
	pd->next_ns = now + (uint64_t)pd->policy.interval * VTL_NS_PER_S;
	struct policy_ctx ctx = {.cat = pd->cat, .pool = pd->pool, .library = pd->cfg->library.name,
				 .cfg = &pd->policy, .now = time(NULL), .draining = pd->last.draining};
	char err[ERR_MAX] = "";
	int rc = policy_pass(&ctx, &pd->last, err, sizeof err);
	pd->passes++;
	pd->queued += pd->last.full.n + pd->last.ejected.n + pd->last.idle.n + pd->last.pressure.n + pd->last.pools.n;
	pd->released += pd->last.released.n;
	pd->released_bytes += pd->last.released_bytes;
	snprintf(pd->last_err, sizeof pd->last_err, "%s", rc ? err : "");
	if (rc)
		log_warn("policy pass: %s", err);
	else
		log_pass(&pd->last);
	pthread_mutex_unlock(&pd->mu);
}

static void json_list(char *out, size_t cap, size_t *at, const char *key, const struct policy_list *l)
{
	jo_printf(out, cap, at, ",\"%s\":[", key);
	for (unsigned i = 0; i < l->n && i < POLICY_LIST_MAX; i++) {
		jo_printf(out, cap, at, "%s\"", i ? "," : "");
		jo_str(out, cap, at, l->barcode[i]);
		jo_printf(out, cap, at, "\"");
	}
	jo_printf(out, cap, at, "],\"%s_count\":%u", key, l->n);
}

/* The premigrate rules as the configuration writes them: "full,ejected,idle", or "none". */
static void rules_text(unsigned bits, char *buf, size_t cap)
{
	static const struct {
		unsigned bit;
		const char *name;
	} rules[] = {{VTL_POLICY_FULL, "full"}, {VTL_POLICY_EJECTED, "ejected"}, {VTL_POLICY_IDLE, "idle"}};
	size_t at = 0;
	buf[0] = 0;
	for (size_t i = 0; i < VTL_ARRAY_SIZE(rules); i++)
		if (bits & rules[i].bit)
			jo_printf(buf, cap, &at, "%s%s", at ? "," : "", rules[i].name);
	if (!at)
		jo_printf(buf, cap, &at, "none");
}

void policyd_counts(struct policyd *pd, struct policyd_counts *out)
{
	pthread_mutex_lock(&pd->mu);
	*out = (struct policyd_counts){.passes = pd->passes, .queued = pd->queued, .released = pd->released,
				       .released_bytes = pd->released_bytes};
	pthread_mutex_unlock(&pd->mu);
}

void policyd_answer_status(struct policyd *pd, char *out, size_t cap)
{
	pthread_mutex_lock(&pd->mu);
	const struct vtl_policy_config policy = pd->policy, *p = &policy;
	pthread_mutex_unlock(&pd->mu);
	struct vtl_pool_fill fill;
	int rc = vtl_pool_fill(pd->pool, true, &fill);
	if (rc) {
		jo_answer(out, cap, rc, "cannot measure the pool", NULL);
		return;
	}
	char rules[32];
	rules_text(p->premigrate, rules, sizeof rules);
	size_t at = 0;
	jo_printf(out, cap, &at,
		  "{\"ok\":true,\"fill_percent\":%.1f,\"used_bytes\":%llu,\"size_bytes\":%llu,\"high_water\":%u,"
		  "\"low_water\":%u,\"throttle\":%u,\"throttle_rate\":%u,\"interval\":%u,\"premigrate\":\"%s\","
		  "\"idle\":%u",
		  fill.percent, (unsigned long long)fill.used_bytes, (unsigned long long)fill.size_bytes, p->high_water,
		  p->low_water, p->throttle, p->throttle_rate, p->interval, rules, p->idle);
	pthread_mutex_lock(&pd->mu);
	const struct policy_report *r = &pd->last;
	jo_printf(out, cap, &at, ",\"passes\":%lu,\"last_time\":%lld,\"last_fill_before\":%.1f,\"last_fill_after\":%.1f,"
		  "\"draining\":%s", pd->passes, (long long)r->time, r->before.percent, r->after.percent,
		  r->draining ? "true" : "false");
	json_list(out, cap, &at, "queued_full", &r->full);
	json_list(out, cap, &at, "queued_ejected", &r->ejected);
	json_list(out, cap, &at, "queued_idle", &r->idle);
	json_list(out, cap, &at, "queued_pressure", &r->pressure);
	json_list(out, cap, &at, "queued_pools", &r->pools);
	json_list(out, cap, &at, "released", &r->released);
	json_list(out, cap, &at, "busy", &r->busy);
	json_list(out, cap, &at, "refused", &r->refused);
	json_list(out, cap, &at, "queued_verify", &r->verify);
	jo_printf(out, cap, &at, ",\"released_bytes\":%llu,\"total_queued\":%lu,\"total_released\":%lu,"
		  "\"total_released_bytes\":%llu,\"last_error\":\"", (unsigned long long)r->released_bytes, pd->queued,
		  pd->released, (unsigned long long)pd->released_bytes);
	jo_str(out, cap, &at, pd->last_err);
	jo_printf(out, cap, &at, "\"}");
	pthread_mutex_unlock(&pd->mu);
}

void policyd_answer_release(struct policyd *pd, const char *barcode, bool force, char *out, size_t cap)
{
	char err[ERR_MAX * 2] = "", msg[ERR_MAX] = "";
	uint64_t freed = 0;
	pthread_mutex_lock(&pd->mu);
	int rc = force ? policy_release_forced(pd->cat, pd->pool, &pd->policy, barcode, "asked by the operator",
					       &freed, msg, sizeof msg, err, sizeof err)
		       : policy_release(pd->cat, pd->pool, &pd->policy, barcode, "asked by the operator", &freed, err,
					sizeof err);
	pthread_mutex_unlock(&pd->mu);
	if (rc == VTL_OK) {
		log_info("policy: released the disk copy of %s (%llu bytes), asked by the operator%s", barcode,
			 (unsigned long long)freed, force ? " (forced)" : "");
		pthread_mutex_lock(&pd->mu);
		pd->released++;
		pd->released_bytes += freed;
		pthread_mutex_unlock(&pd->mu);
	} else {
		log_warn("policy: %s", err);
	}
	/* A forced release that found the disk copy sound released it as a plain one does: the same answer. */
	if (!msg[0])
		snprintf(msg, sizeof msg, "released the disk copy of %s (%llu bytes); it is migrated", barcode,
			 (unsigned long long)freed);
	jo_answer(out, cap, rc, err, msg);
}
