/* SPDX-License-Identifier: Apache-2.0 */
/* vtlctl: errors, opening the configuration, catalog and pool, elements, option parsing. */
#include <errno.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/cartridge.h"
#include "common/ctlproto.h"
#include "common/ctlsock.h"
#include "common/grow.h"
#include "common/vtl_error.h"
#include "vtl/ctl/ctl.h"

/* ----------------------------------------------------------------- errors */

static void vmsg(struct ctl *ctl, const char *what, const char *fmt, va_list ap)
{
	fprintf(stderr, "vtlctl: ");
	if (ctl->cmd)
		fprintf(stderr, "%s: ", ctl->cmd->name);
	if (what)
		fputs(what, stderr);
	vfprintf(stderr, fmt, ap);
}

int ctl_err(struct ctl *ctl, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(ctl, NULL, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return code;
}

int ctl_usage(struct ctl *ctl, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(ctl, NULL, fmt, ap);
	va_end(ap);
	if (ctl->cmd)
		fprintf(stderr, "; see 'vtlctl help %s'\n", ctl->cmd->name);
	else
		fprintf(stderr, "; see 'vtlctl --help'\n");
	return VTLCTL_USAGE;
}

void ctl_warn(struct ctl *ctl, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(ctl, "warning: ", fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int ctl_cat_err(struct ctl *ctl, int rc, const char *fmt, ...)
{
	char doing[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(doing, sizeof doing, fmt, ap);
	va_end(ap);
	const char *why = ctl->cat ? catalog_last_error(ctl->cat) : "";
	if (rc == VTL_E_BUSY)
		return ctl_err(ctl, VTLCTL_FAIL, "%s: the catalog stayed busy (another program is writing it); try again",
			       doing);
	return ctl_err(ctl, VTLCTL_FAIL, "%s: %s", doing, why && why[0] ? why : vtl_strerror(rc));
}

/* ------------------------------------------------------------------- open */

static void set_actor(struct ctl *ctl)
{
	char buf[1024];
	struct passwd pw, *res = NULL;
	if (getpwuid_r(geteuid(), &pw, buf, sizeof buf, &res) == 0 && res)
		snprintf(ctl->actor, sizeof ctl->actor, "vtlctl:%.24s", res->pw_name);
	else
		snprintf(ctl->actor, sizeof ctl->actor, "vtlctl:uid %u", (unsigned)geteuid());
}

int ctl_load_config(struct ctl *ctl)
{
	if (ctl->cfg)
		return 0;
	if (!ctl->actor[0])
		set_actor(ctl);
	char err[VTL_CFG_ERR_LEN];
	int rc = vtl_config_load(ctl->config_path, &ctl->cfg, err, sizeof err);
	if (rc == 0)
		return 0;
	if (rc == VTL_E_IO && ctl->config_from_default)
		return ctl_err(ctl, VTLCTL_FAIL, "%s (no -c FILE was given and VTL_CONFIG is not set, so the installed "
			       "%s was tried)", err, vtl_config_installed_path());
	return ctl_err(ctl, VTLCTL_FAIL, "%s", err);
}

int ctl_open_library(struct ctl *ctl)
{
	if (ctl->cat)
		return 0;
	int rc = ctl_load_config(ctl);
	if (rc)
		return rc;
	char err[512] = "";
	const char *path = ctl->cfg->catalog.path;
	rc = catalog_open(path, false, &ctl->cat, err, sizeof err);
	if (rc == VTL_E_NOTFOUND && access(path, F_OK) != 0)
		return ctl_err(ctl, VTLCTL_FAIL, "there is no catalog at %s (the [catalog] path of %s); create the "
			       "library with 'vtlctl init' (or, if only the catalog was lost, 'vtlctl init --catalog-only' "
			       "then 'vtlctl catalog rebuild')", path, ctl->cfg->path);
	if (rc)
		return ctl_err(ctl, VTLCTL_FAIL, "cannot open the catalog %s: %s", path, err[0] ? err : vtl_strerror(rc));
	rc = catalog_library_get(ctl->cat, ctl->cfg->library.name, &ctl->lib);
	if (rc == VTL_E_NOTFOUND)
		return ctl_err(ctl, VTLCTL_FAIL, "the catalog %s holds no library named '%s' (the [library] name in %s); "
			       "was the name changed after 'vtlctl init'?", path, ctl->cfg->library.name, ctl->cfg->path);
	if (rc)
		return ctl_cat_err(ctl, rc, "reading library '%s' from %s", ctl->cfg->library.name, path);
	return 0;
}

int ctl_open_model(struct ctl *ctl)
{
	if (ctl->model)
		return 0;
	int rc = ctl_open_library(ctl);
	if (rc)
		return rc;
	struct library_options opt = {.offline = true};
	char err[512] = "";
	if ((rc = library_open(ctl->cat, ctl->pool, ctl->lib.name, &opt, &ctl->model, err, sizeof err)))
		return ctl_err(ctl, VTLCTL_FAIL, "cannot open library '%s': %s", ctl->lib.name,
			       err[0] ? err : vtl_strerror(rc));
	return 0;
}

int ctl_open_pool(struct ctl *ctl)
{
	if (ctl->pool)
		return 0;
	int rc = ctl_load_config(ctl);
	if (rc)
		return rc;
	struct vtl_pool_config pc;
	vtl_config_pool(ctl->cfg, &pc);
	pc.io_threads = 1; /* vtlctl reads headers and creates empty cartridges: one worker is plenty */
	char err[512] = "";
	rc = vtl_pool_open(&pc, &ctl->pool, err, sizeof err);
	if (rc)
		return ctl_err(ctl, VTLCTL_FAIL, "cannot open the disk pool: %s (check the [pool] members in %s)",
			       err[0] ? err : vtl_strerror(rc), ctl->cfg->path);
	return 0;
}

#define DAEMON_TIMEOUT_MS 120000 /* a move that loads a drive may take a while; a hung vtld must not hang vtlctl */

bool ctl_daemon_up(struct ctl *ctl)
{
	if (ctl_load_config(ctl))
		return false;
	return ctlsock_answers(ctl->cfg->daemon.control_socket);
}

int ctl_require_offline(struct ctl *ctl)
{
	int rc = ctl_load_config(ctl);
	if (rc)
		return rc;
	if (ctl_daemon_up(ctl))
		return ctl_err(ctl, VTLCTL_FAIL, "vtld is running (it answers on %s); this command changes the library "
			       "only while vtld is stopped", ctl->cfg->daemon.control_socket);
	return 0;
}

/* The JSON string value of key in a one-line answer, unescaped into out; false if absent. */
static bool json_string(const char *answer, const char *key, char *out, size_t cap)
{
	char pat[64];
	snprintf(pat, sizeof pat, "\"%s\":\"", key);
	const char *p = strstr(answer, pat);
	if (!p || cap == 0)
		return false;
	p += strlen(pat);
	size_t n = 0;
	for (; *p && *p != '"' && n + 1 < cap; p++) {
		if (*p == '\\' && p[1])
			p++;
		out[n++] = *p;
	}
	out[n] = 0;
	return true;
}

static const char *daemon_socket(const struct ctl *ctl, enum ctlproto_daemon d)
{
	return d == CTLPROTO_VTLD ? ctl->cfg->daemon.control_socket : ctl->cfg->migrator.control_socket;
}

/*
 * Builds the line of *req (common/ctlproto.c, the table the daemons parse
 * with), sends it to the daemon that answers its verb and reads the one-line
 * answer into answer; 0 or VTLCTL_FAIL (reported).
 */
static int daemon_exchange(struct ctl *ctl, const struct ctlproto_request *req, char *answer, size_t cap)
{
	char line[CTLSOCK_REQUEST_MAX], err[512];
	if (ctlproto_format(req, line, sizeof line, err, sizeof err) != VTL_OK)
		return ctl_err(ctl, VTLCTL_FAIL, "cannot build the request: %s", err);
	enum ctlproto_daemon d = ctlproto_verb(req->verb)->daemon;
	const char *name = ctlproto_daemon_name(d);
	int rc = ctlsock_exchange(daemon_socket(ctl, d), line, answer, cap, DAEMON_TIMEOUT_MS);
	if (rc == -1)
		return ctl_err(ctl, VTLCTL_FAIL, "%s does not answer on %s", name, daemon_socket(ctl, d));
	if (rc == -3)
		return ctl_err(ctl, VTLCTL_FAIL, "this user may not use %s's control socket %s (permission denied): run as "
			       "root, as %s's user, or as a member of its control_group", name, daemon_socket(ctl, d), name);
	if (rc)
		return ctl_err(ctl, VTLCTL_FAIL, "%s did not answer the request", name);
	return 0;
}

int ctl_request(struct ctl *ctl, const struct ctlproto_request *req, char *msg, size_t cap)
{
	char answer[4096];
	int rc = daemon_exchange(ctl, req, answer, sizeof answer);
	if (rc)
		return rc;
	char text[1024];
	if (strncmp(answer, "{\"ok\":true", 10) != 0)
		return ctl_err(ctl, VTLCTL_FAIL, "%s", json_string(answer, "error", text, sizeof text) ? text : answer);
	if (msg && !json_string(answer, "message", msg, cap))
		msg[0] = 0;
	return 0;
}

int ctl_request_raw(struct ctl *ctl, const struct ctlproto_request *req, char *answer, size_t cap)
{
	return daemon_exchange(ctl, req, answer, cap);
}

bool ctl_migrator_up(struct ctl *ctl)
{
	return ctl_load_config(ctl) == 0 && ctlsock_answers(ctl->cfg->migrator.control_socket);
}

int ctl_query(struct ctl *ctl, const struct ctlproto_request *req, char *answer, size_t cap, bool *printed)
{
	*printed = false;
	int rc = ctl_request_raw(ctl, req, answer, cap);
	if (rc)
		return rc;
	if (strncmp(answer, "{\"ok\":true", 10) != 0) {
		char e[512];
		ans_text(answer, "error", e, sizeof e);
		return ctl_err(ctl, VTLCTL_FAIL, "%s", e[0] ? e : answer);
	}
	if (ctl->json) {
		printf("%s\n", answer);
		*printed = true;
	}
	return 0;
}

void ctl_close(struct ctl *ctl)
{
	library_close(ctl->model); /* before the catalog it uses */
	ctl->model = NULL;
	if (ctl->pool)
		vtl_pool_close(ctl->pool);
	if (ctl->cat)
		catalog_close(ctl->cat);
	vtl_config_free(ctl->cfg);
	free(ctl->argbuf);
	ctl->argbuf = NULL;
	ctl->pool = NULL;
	ctl->cat = NULL;
	ctl->cfg = NULL;
}

/* --------------------------------------------------------------- elements */

const char *ctl_elem_type_words(enum cat_elem_type t)
{
	switch (t) {
	case CAT_ELEM_TRANSPORT: return "robot";
	case CAT_ELEM_SLOT: return "slot";
	case CAT_ELEM_IE: return "mail slot";
	case CAT_ELEM_DRIVE: return "drive";
	case CAT_ELEM_ALL: break;
	}
	return "element";
}

void ctl_elem_ranges(const struct cat_library *lib, char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = 0;
	const struct {
		const char *what;
		unsigned first, count;
	} r[] = {
		{"storage slots", lib->slot_first, lib->slots},
		{"mail slots", lib->ie_first, lib->ies},
		{"drives", lib->drive_first, lib->drives},
		{"robot", lib->transport_first, lib->transports},
	};
	for (size_t i = 0; i < VTL_ARRAY_SIZE(r); i++) {
		if (!r[i].count)
			continue;
		int w = r[i].count == 1 ? snprintf(buf + n, len - n, "%s%s %u", n ? ", " : "", r[i].what, r[i].first)
					: snprintf(buf + n, len - n, "%s%s %u..%u", n ? ", " : "", r[i].what, r[i].first,
						   r[i].first + r[i].count - 1);
		if (w < 0 || (size_t)w >= len - n)
			break;
		n += (size_t)w;
	}
}

void ctl_location(const struct cat_library *lib, const struct cat_cartridge *c, char *buf, size_t len)
{
	if (c->library_id == 0)
		snprintf(buf, len, "outside");
	else if (c->library_id != lib->id)
		snprintf(buf, len, "library %lld", (long long)c->library_id);
	else if (c->element == CAT_NO_ELEMENT)
		snprintf(buf, len, "none");
	else
		snprintf(buf, len, "%s %u", libdoc_elem_type_name(libdoc_elem_type(lib, c->element)), c->element);
}

int ctl_parse_address(const char *s, uint16_t *out)
{
	uint64_t v;
	if (vtl_parse_uint(s, 0xFFFE, &v))
		return VTL_E_INVAL;
	*out = (uint16_t)v;
	return VTL_OK;
}

/* ---------------------------------------------------------------- placing */

static int collect_empty(const struct cat_element *e, void *arg)
{
	struct ctl_empty *w = arg;
	if (e->full)
		return 0;
	if (vtl_grow((void **)&w->addr, &w->cap, w->n, sizeof *w->addr))
		return w->err = VTL_E_NOMEM;
	w->addr[w->n++] = e->address;
	return 0;
}

int ctl_empty_elements(struct ctl *ctl, enum cat_elem_type type, struct ctl_empty *w)
{
	memset(w, 0, sizeof *w);
	int rc = catalog_element_list(ctl->cat, ctl->lib.id, type, collect_empty, w);
	return rc ? rc : w->err;
}

int ctl_place(struct ctl *ctl, const char *barcode, uint16_t element, const char *state)
{
	return catalog_cartridge_place(ctl->cat, barcode, ctl->lib.id, element, state, ctl->actor);
}

/* -------------------------------------------------------------- options */

static int set_opt(struct ctl *ctl, struct ctl_opt *o, const char *shown, const char *attached, int argc,
		   char **argv, int *i)
{
	if (o->set)
		return ctl_usage(ctl, "option %s is given twice", shown);
	o->set = true;
	if (!o->has_arg) {
		if (attached)
			return ctl_usage(ctl, "option %s takes no value", shown);
		return 0;
	}
	if (attached) {
		o->val = attached;
		return 0;
	}
	if (*i + 1 >= argc)
		return ctl_usage(ctl, "option %s needs a value", shown);
	o->val = argv[++*i];
	return 0;
}

int ctl_parse(struct ctl *ctl, int argc, char **argv, struct ctl_opt *opts, size_t nopts, char ***pos, int *npos)
{
	struct ctl_opt global[] = {
		{"config", 'c', true, NULL, false},
		{"json", 0, false, NULL, false},
		{"help", 'h', false, NULL, false},
	};
	char **p = calloc((size_t)argc + 1, sizeof *p);
	if (!p)
		return ctl_err(ctl, VTLCTL_FAIL, "out of memory");
	int np = 0;
	bool only_pos = false;
	int rc = 0;
	for (int i = 0; i < argc && !rc; i++) {
		char *a = argv[i];
		if (only_pos || a[0] != '-' || a[1] == 0) {
			p[np++] = a;
			continue;
		}
		if (strcmp(a, "--") == 0) {
			only_pos = true;
			continue;
		}
		struct ctl_opt *o = NULL;
		char shown[64];
		const char *attached = NULL;
		if (a[1] == '-') {
			const char *name = a + 2;
			const char *eq = strchr(name, '=');
			size_t nl = eq ? (size_t)(eq - name) : strlen(name);
			attached = eq ? eq + 1 : NULL;
			snprintf(shown, sizeof shown, "--%.*s", (int)(nl < 40 ? nl : 40), name);
			for (size_t k = 0; k < nopts && !o; k++)
				if (strlen(opts[k].lng) == nl && strncmp(opts[k].lng, name, nl) == 0)
					o = &opts[k];
			for (size_t k = 0; k < VTL_ARRAY_SIZE(global)&& !o; k++)
				if (strlen(global[k].lng) == nl && strncmp(global[k].lng, name, nl) == 0)
					o = &global[k];
		} else {
			snprintf(shown, sizeof shown, "-%c", a[1]);
			for (size_t k = 0; k < nopts && !o; k++)
				if (opts[k].shrt == a[1])
					o = &opts[k];
			for (size_t k = 0; k < VTL_ARRAY_SIZE(global)&& !o; k++)
				if (global[k].shrt == a[1])
					o = &global[k];
			if (o && a[2])
				attached = a + 2;
			if (o && !o->has_arg && a[2]) {
				rc = ctl_usage(ctl, "unknown option '%s' (short options cannot be combined)", a);
				break;
			}
		}
		if (!o) {
			rc = ctl_usage(ctl, "unknown option '%s'", a);
			break;
		}
		rc = set_opt(ctl, o, shown, attached, argc, argv, &i);
	}
	if (!rc) {
		if (global[0].set) {
			ctl->config_path = global[0].val;
			ctl->config_from_default = false;
		}
		if (global[1].set)
			ctl->json = true;
		if (global[2].set) {
			ctl_print_help(ctl->cmd, stdout);
			rc = -1;
		}
	}
	if (rc) {
		free(p);
		*pos = NULL;
		*npos = 0;
		return rc;
	}
	free(ctl->argbuf);
	ctl->argbuf = p;
	*pos = p;
	*npos = np;
	return 0;
}

int ctl_parse_barcode(struct ctl *ctl, int argc, char **argv, const char **barcode)
{
	return ctl_parse_barcode_opts(ctl, argc, argv, NULL, 0, barcode);
}

int ctl_parse_barcode_opts(struct ctl *ctl, int argc, char **argv, struct ctl_opt *opts, size_t nopts,
			   const char **barcode)
{
	char **pos;
	int npos;
	int rc = ctl_parse(ctl, argc, argv, opts, nopts, &pos, &npos);
	if (rc)
		return rc;
	if (npos != 1)
		return ctl_usage(ctl, "give one cartridge barcode");
	/* One word of a daemon's request: "A00001L8 force" or "X drive 1" given as the barcode must not add options. */
	if (strlen(pos[0]) > CAT_BARCODE_MAX || vtl_barcode_check(pos[0]))
		return ctl_usage(ctl, "'%.40s' is not a barcode", pos[0]);
	*barcode = pos[0];
	return ctl_load_config(ctl);
}

int ctl_parse_bare(struct ctl *ctl, int argc, char **argv)
{
	char **pos;
	int npos;
	int rc = ctl_parse(ctl, argc, argv, NULL, 0, &pos, &npos);
	if (rc)
		return rc;
	if (npos)
		return ctl_usage(ctl, "unexpected argument '%s'", pos[0]);
	return ctl_load_config(ctl);
}
