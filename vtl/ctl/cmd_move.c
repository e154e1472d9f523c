/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vtlctl move, import, export: the operator's hands and the robot. While vtld
 * runs, it makes the move; while it is stopped, every move between two
 * elements goes through the library model offline (vtl/library/library.h), so that
 * both paths obey the same rules; putting a cartridge in from outside or
 * taking it out of the library goes through ctl_place.
 */
#include <stdlib.h>
#include <string.h>

#include "common/vtl_error.h"
#include "vtl/ctl/ctl.h"
#include "config/media.h"

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

static void json_elem(struct json *j, const char *key, const struct cat_library *lib, uint16_t a)
{
	if (a == CAT_NO_ELEMENT) {
		json_null(j, key);
		return;
	}
	json_obj(j, key);
	json_str(j, "type", libdoc_elem_type_name(libdoc_elem_type(lib, a)));
	json_u64(j, "address", a);
	json_obj_end(j);
}

/* "slot 1025", "mail slot 769", "outside the library" */
static void where_words(const struct cat_library *lib, uint16_t a, char *buf, size_t len)
{
	if (a == CAT_NO_ELEMENT)
		snprintf(buf, len, "outside the library");
	else
		snprintf(buf, len, "%s %u", ctl_elem_type_words(libdoc_elem_type(lib, a)), a);
}

static void print_moved(struct ctl *ctl, const char *verb, const char *barcode, uint16_t from, uint16_t to,
			const char *hint)
{
	if (ctl->json) {
		struct json j;
		json_init(&j, stdout);
		json_obj(&j, NULL);
		json_str(&j, "action", verb);
		json_str(&j, "barcode", barcode);
		json_elem(&j, "from", &ctl->lib, from);
		json_elem(&j, "to", &ctl->lib, to);
		json_obj_end(&j);
		json_end(&j);
		return;
	}
	char f[64], t[64];
	where_words(&ctl->lib, from, f, sizeof f);
	where_words(&ctl->lib, to, t, sizeof t);
	printf("%s %s: %s -> %s\n", verb, barcode, f, t);
	if (hint)
		printf("%s\n", hint);
}

/* Explains why a move from -> to failed (rc from library_move, with its words why, or from ctl_place). */
static int move_err(struct ctl *ctl, int rc, const char *barcode, uint16_t from, uint16_t to, const char *why)
{
	struct cat_element e;
	char ranges[256];
	switch (rc) {
	case VTL_E_SRC_EMPTY:
		return ctl_err(ctl, VTLCTL_FAIL, "%s %u is empty; see 'vtlctl slot list --full'",
			       ctl_elem_type_words(libdoc_elem_type(&ctl->lib, from)), from);
	case VTL_E_DST_FULL:
		if (catalog_element_get(ctl->cat, ctl->lib.id, to, &e) == 0 && e.full)
			return ctl_err(ctl, VTLCTL_FAIL, "%s %u already holds %s; choose an empty one ('vtlctl slot list "
				       "--empty')", ctl_elem_type_words(e.type), to, e.barcode);
		return ctl_err(ctl, VTLCTL_FAIL, "element %u is full", to);
	case VTL_E_NOTFOUND:
	case VTL_E_INVAL:
		ctl_elem_ranges(&ctl->lib, ranges, sizeof ranges);
		if (from != CAT_NO_ELEMENT && catalog_element_get(ctl->cat, ctl->lib.id, from, &e) == VTL_E_NOTFOUND)
			return ctl_err(ctl, VTLCTL_FAIL, "the library has no element %u (%s)", from, ranges);
		if (to != CAT_NO_ELEMENT && catalog_element_get(ctl->cat, ctl->lib.id, to, &e) == VTL_E_NOTFOUND)
			return ctl_err(ctl, VTLCTL_FAIL, "the library has no element %u (%s)", to, ranges);
		break;
	case VTL_E_INCOMPATIBLE:
		return ctl_err(ctl, VTLCTL_FAIL, "%s; choose a drive that takes it ('vtlctl drive list')", why);
	}
	if (why && why[0] && rc != VTL_E_IO)
		return ctl_err(ctl, VTLCTL_FAIL, "%s", why);
	return ctl_cat_err(ctl, rc, "moving %s", barcode ? barcode : "the cartridge");
}

/* vtld moves the cartridge in from to to (a drive loads what it receives; hosts are told). 0 or VTLCTL_FAIL. */
static int daemon_move(struct ctl *ctl, uint16_t from, uint16_t to)
{
	struct ctlproto_request r = {.verb = CTLPROTO_MOVE, .item = {.is_address = true, .address = from},
				     .element = {to}, .elements = 1};
	return ctl_request(ctl, &r, NULL, 0);
}

/* vtld imports barcode into mail slot ie (creating a new one blank). 0 or VTLCTL_FAIL. */
static int daemon_import(struct ctl *ctl, const char *barcode, uint16_t ie)
{
	struct ctlproto_request r = {.verb = CTLPROTO_IMPORT, .element = {ie}, .elements = 1};
	snprintf(r.barcode, sizeof r.barcode, "%s", barcode);
	return ctl_request(ctl, &r, NULL, 0);
}

/*
 * Moves the cartridge in from to to while vtld is stopped: through the library
 * model, which applies the rules vtld applies (a drive takes only media it
 * reads, the robot reaches the element), and records it in the catalog.
 */
static int offline_move(struct ctl *ctl, const char *barcode, uint16_t from, uint16_t to)
{
	int rc = ctl_open_model(ctl);
	if (rc)
		return rc;
	char why[512] = "";
	if ((rc = library_move(ctl->model, from, to, ctl->actor, why, sizeof why)))
		return move_err(ctl, rc, barcode, from, to, why);
	return 0;
}

/* ------------------------------------------------------------------- move */

int cmd_move(struct ctl *ctl, int argc, char **argv)
{
	char **pos;
	int npos;
	int rc = ctl_parse(ctl, argc, argv, NULL, 0, &pos, &npos);
	if (rc)
		return rc;
	if (npos != 2)
		return ctl_usage(ctl, "give FROM and TO: two element addresses (FROM may be a barcode), e.g. 'vtlctl move "
				 "1025 257'");
	uint16_t from = CAT_NO_ELEMENT, to;
	if (ctl_parse_address(pos[1], &to))
		return ctl_usage(ctl, "TO '%s' is not an element address (a number from 'vtlctl slot list')", pos[1]);
	if (all_digits(pos[0]) && ctl_parse_address(pos[0], &from))
		return ctl_usage(ctl, "FROM '%s' is not an element address", pos[0]);
	if (!all_digits(pos[0]) && (strlen(pos[0]) > CAT_BARCODE_MAX || vtl_barcode_check(pos[0])))
		return ctl_usage(ctl, "FROM '%.40s' is neither an element address nor a barcode", pos[0]);
	if ((rc = ctl_open_library(ctl)))
		return rc;
	bool online = ctl_daemon_up(ctl);
	bool robot_from = all_digits(pos[0]) && libdoc_elem_type(&ctl->lib, from) == CAT_ELEM_TRANSPORT;
	if (robot_from || libdoc_elem_type(&ctl->lib, to) == CAT_ELEM_TRANSPORT)
		return ctl_err(ctl, VTLCTL_FAIL, "element %u is the robot, which only carries cartridges during a move; "
			       "move between slots, mail slots and drives", robot_from ? from : to);
	char barcode[CAT_BARCODE_MAX + 1] = "";
	if (!all_digits(pos[0])) {
		struct cat_cartridge c;
		int r = catalog_cartridge_get(ctl->cat, pos[0], &c);
		if (r == VTL_E_NOTFOUND)
			return ctl_err(ctl, VTLCTL_FAIL, "there is no cartridge %s (see 'vtlctl cartridge list')", pos[0]);
		if (r)
			return ctl_cat_err(ctl, r, "reading %s", pos[0]);
		if (c.library_id != ctl->lib.id)
			return ctl_err(ctl, VTLCTL_FAIL, "cartridge %s is outside the library; 'vtlctl import %s' puts it "
				       "into a mail slot", pos[0], pos[0]);
		if (c.element == CAT_NO_ELEMENT)
			return ctl_err(ctl, VTLCTL_FAIL, "cartridge %s is in no element of the library; 'vtlctl import %s' "
				       "puts it into a mail slot", pos[0], pos[0]);
		from = c.element;
		snprintf(barcode, sizeof barcode, "%s", c.barcode);
	} else {
		struct cat_element e;
		int r = catalog_element_get(ctl->cat, ctl->lib.id, from, &e);
		if (r)
			return move_err(ctl, r, NULL, from, to, NULL);
		if (!e.full)
			return move_err(ctl, VTL_E_SRC_EMPTY, NULL, from, to, NULL);
		snprintf(barcode, sizeof barcode, "%s", e.barcode);
	}
	if (from == to)
		return ctl_usage(ctl, "%s is already in element %u: FROM and TO are the same", barcode, to);
	if (online) {
		/* vtld makes the move (a drive loads what it receives; hosts are told). */
		if ((rc = daemon_move(ctl, from, to)))
			return rc;
	} else if ((rc = offline_move(ctl, barcode, from, to))) {
		return rc;
	}
	print_moved(ctl, "moved", barcode, from, to, NULL);
	return 0;
}

/* ----------------------------------------------------------------- import */

/* The mail slot to use: --to (checked) or the first empty one. 0 or VTLCTL_FAIL (reported). */
static int pick_mail_slot(struct ctl *ctl, const char *to, uint16_t *out)
{
	if (to) {
		if (ctl_parse_address(to, out))
			return ctl_usage(ctl, "--to %s is not an element address", to);
		return ctl_check_target(ctl, *out, CAT_ELEM_IE);
	}
	if (ctl->lib.ies == 0)
		return ctl_err(ctl, VTLCTL_FAIL, "library %s has no mail slots (mail_slots in %s)", ctl->lib.name,
			       ctl->cfg->path);
	int rc = ctl_first_empty(ctl, CAT_ELEM_IE, out);
	if (rc == VTL_E_DST_FULL)
		return ctl_err(ctl, VTLCTL_FAIL, "all %u mail slots are full; move a cartridge out of one first ('vtlctl "
			       "slot list --type ie')", ctl->lib.ies);
	if (rc)
		return ctl_cat_err(ctl, rc, "looking for an empty mail slot");
	return 0;
}

int cmd_import(struct ctl *ctl, int argc, char **argv)
{
	struct ctl_opt opts[] = {
		{"new", 0, false, NULL, false},
		{"media", 0, true, NULL, false},
		{"capacity", 0, true, NULL, false},
		{"to", 0, true, NULL, false},
	};
	char **pos;
	int npos;
	int rc = ctl_parse(ctl, argc, argv, opts, 4, &pos, &npos);
	if (rc)
		return rc;
	if (npos != 1)
		return ctl_usage(ctl, "give exactly one barcode");
	const char *bc = pos[0];
	bool isnew = opts[0].set;
	if (!isnew && (opts[1].set || opts[2].set))
		return ctl_usage(ctl, "--media and --capacity describe a new cartridge: they need --new");
	struct new_cart nc;
	char err[512];
	if (isnew) {
		if ((rc = ctl_new_cart(ctl, bc, opts[1].val, opts[2].val, &nc)))
			return rc;
	} else if (vtl_label_parse(bc, NULL, err, sizeof err)) {
		return ctl_usage(ctl, "%s", err);
	}
	if ((rc = ctl_open_library(ctl)))
		return rc;
	bool online = ctl_daemon_up(ctl);
	if (online && isnew && (opts[1].set || opts[2].set))
		return ctl_err(ctl, VTLCTL_FAIL, "vtld is running: it imports a new cartridge with its label's media and "
			       "capacity; leave out --media and --capacity, or stop vtld");
	if (isnew && !online && (rc = ctl_open_pool(ctl)))
		return rc;
	uint16_t ie;
	if (online) {
		/* vtld puts it into the mail slot (creating a new one blank) and tells the hosts. */
		struct cat_cartridge c;
		rc = catalog_cartridge_get(ctl->cat, bc, &c);
		if (!isnew && rc == VTL_E_NOTFOUND)
			return ctl_err(ctl, VTLCTL_FAIL, "there is no cartridge %s; to import a new blank one, add --new", bc);
		if (isnew && rc == VTL_OK)
			return ctl_err(ctl, VTLCTL_FAIL, "cartridge %s exists already; import it without --new", bc);
		if ((rc = pick_mail_slot(ctl, opts[3].val, &ie)) || (rc = daemon_import(ctl, bc, ie)))
			return rc;
	} else if (isnew) {
		if ((rc = ctl_check_new(ctl, bc)) || (rc = pick_mail_slot(ctl, opts[3].val, &ie)) ||
		    (rc = ctl_create_cart(ctl, &nc, ie)))
			return rc;
		char what[128];
		snprintf(what, sizeof what, "import new %s into %u", bc, ie);
		if (catalog_event(ctl->cat, ctl->actor, what))
			ctl_warn(ctl, "%s was imported, but the event log could not be written", bc);
	} else {
		struct cat_cartridge c;
		rc = catalog_cartridge_get(ctl->cat, bc, &c);
		if (rc == VTL_E_NOTFOUND)
			return ctl_err(ctl, VTLCTL_FAIL, "there is no cartridge %s; to import a new blank one, add --new", bc);
		if (rc)
			return ctl_cat_err(ctl, rc, "reading %s", bc);
		if (c.library_id == ctl->lib.id && c.element != CAT_NO_ELEMENT) {
			char loc[64];
			where_words(&ctl->lib, c.element, loc, sizeof loc);
			return ctl_err(ctl, VTLCTL_FAIL, "cartridge %s is already in the library (%s); import takes a "
				       "cartridge from outside (see 'vtlctl export --remove')", bc, loc);
		}
		if (c.library_id != ctl->lib.id && c.library_id != 0)
			return ctl_err(ctl, VTLCTL_FAIL, "cartridge %s belongs to another library of this catalog", bc);
		if ((rc = pick_mail_slot(ctl, opts[3].val, &ie)))
			return rc;
		rc = ctl_place(ctl, bc, ie, "available");
		if (rc)
			return move_err(ctl, rc, bc, CAT_NO_ELEMENT, ie, NULL);
	}
	char hint[160];
	snprintf(hint, sizeof hint, "move it into a storage slot with 'vtlctl move %u <slot>' (empty slots: "
		 "'vtlctl slot list --type slot --empty')", ie);
	print_moved(ctl, isnew ? "imported new" : "imported", bc, CAT_NO_ELEMENT, ie, hint);
	return 0;
}

/* ----------------------------------------------------------------- export */

int cmd_export(struct ctl *ctl, int argc, char **argv)
{
	struct ctl_opt opts[] = {
		{"to", 0, true, NULL, false},
		{"remove", 0, false, NULL, false},
	};
	char **pos;
	int npos;
	int rc = ctl_parse(ctl, argc, argv, opts, 2, &pos, &npos);
	if (rc)
		return rc;
	if (npos != 1)
		return ctl_usage(ctl, "give exactly one barcode");
	const char *bc = pos[0];
	bool remove = opts[1].set;
	if (strlen(bc) > CAT_BARCODE_MAX || vtl_barcode_check(bc))
		return ctl_usage(ctl, "'%.40s' is not a barcode", bc);
	if ((rc = ctl_open_library(ctl)))
		return rc;
	bool online = ctl_daemon_up(ctl);
	struct cat_cartridge c;
	rc = catalog_cartridge_get(ctl->cat, bc, &c);
	if (rc == VTL_E_NOTFOUND)
		return ctl_err(ctl, VTLCTL_FAIL, "there is no cartridge %s (see 'vtlctl cartridge list')", bc);
	if (rc)
		return ctl_cat_err(ctl, rc, "reading %s", bc);
	if (c.library_id != ctl->lib.id)
		return ctl_err(ctl, VTLCTL_FAIL, "cartridge %s is outside the library already", bc);
	enum cat_elem_type t = c.element == CAT_NO_ELEMENT ? CAT_ELEM_ALL : libdoc_elem_type(&ctl->lib, c.element);
	if (t == CAT_ELEM_DRIVE || t == CAT_ELEM_TRANSPORT)
		return ctl_err(ctl, VTLCTL_FAIL, "cartridge %s is in %s %u; move it to a slot first ('vtlctl move %u "
			       "<slot>')", bc, ctl_elem_type_words(t), c.element, c.element);
	uint16_t from = c.element, ie = CAT_NO_ELEMENT;
	if (t == CAT_ELEM_IE) {
		if (!remove)
			return ctl_err(ctl, VTLCTL_FAIL, "cartridge %s is in mail slot %u already; add --remove to take it "
				       "out of the library", bc, c.element);
		if (opts[0].set)
			return ctl_usage(ctl, "--to: %s is in mail slot %u already", bc, c.element);
	} else if (ctl->lib.ies == 0 && remove && !opts[0].set) {
		/* No mail slots: the operator takes it straight out of its slot. */
		if (online)
			return ctl_err(ctl, VTLCTL_FAIL, "library %s has no mail slots: while vtld runs, cartridges leave "
				       "only through one", ctl->lib.name);
	} else {
		if ((rc = pick_mail_slot(ctl, opts[0].val, &ie)))
			return rc;
		if (online) {
			if (from == CAT_NO_ELEMENT)
				return ctl_err(ctl, VTLCTL_FAIL, "cartridge %s is in no element; stop vtld to place it", bc);
			if ((rc = daemon_move(ctl, from, ie)))
				return rc;
		} else {
			if (from != CAT_NO_ELEMENT) {
				if ((rc = offline_move(ctl, bc, from, ie)))
					return rc;
			} else if ((rc = ctl_place(ctl, bc, ie, c.state))) {
				return move_err(ctl, rc, bc, from, ie, NULL);
			}
		}
		from = ie;
	}
	if (remove) {
		rc = online ? ctl_request(ctl, &(struct ctlproto_request){.verb = CTLPROTO_EXPORT, .element = {from}, .elements = 1}, NULL, 0)
			    : ctl_place(ctl, bc, CAT_NO_ELEMENT, "exported");
		if (rc && online)
			return rc;
		if (rc) {
			if (ie != CAT_NO_ELEMENT)
				ctl_warn(ctl, "%s was moved to mail slot %u but could not be taken out of the library", bc, ie);
			return ctl_cat_err(ctl, rc, "taking %s out of the library", bc);
		}
		if (ctl->json) {
			struct json j;
			json_init(&j, stdout);
			json_obj(&j, NULL);
			json_str(&j, "action", "exported");
			json_str(&j, "barcode", bc);
			json_elem(&j, "from", &ctl->lib, c.element);
			json_elem(&j, "via", &ctl->lib, ie);
			json_null(&j, "to");
			json_obj_end(&j);
			json_end(&j);
			return 0;
		}
		char f[64], v[64];
		where_words(&ctl->lib, c.element, f, sizeof f);
		where_words(&ctl->lib, ie, v, sizeof v);
		if (ie != CAT_NO_ELEMENT)
			printf("exported %s: %s -> %s -> outside the library\n", bc, f, v);
		else
			printf("exported %s: %s -> outside the library\n", bc, f);
		printf("it stays in the catalog and the pool; 'vtlctl import %s' brings it back\n", bc);
		return 0;
	}
	print_moved(ctl, "exported", bc, c.element, ie, NULL);
	return 0;
}

/* ------------------------------------------------------------ load, unload */

int cmd_load(struct ctl *ctl, int argc, char **argv)
{
	char **pos;
	int npos;
	int rc = ctl_parse(ctl, argc, argv, NULL, 0, &pos, &npos);
	if (rc)
		return rc;
	struct ctlproto_request r = {.verb = CTLPROTO_LOAD, .elements = 1};
	if (npos != 2 || ctl_parse_address(pos[1], &r.element[0]) || ctlproto_item_parse(pos[0], &r.item))
		return ctl_usage(ctl, "give WHAT (a barcode or an element address) and the DRIVE's element address");
	if ((rc = ctl_open_library(ctl)))
		return rc;
	if (!ctl_daemon_up(ctl))
		return ctl_err(ctl, VTLCTL_FAIL, "vtld is not running: loading a drive needs the running library (or "
			       "use 'vtlctl move', which only records where the cartridge is)");
	char msg[256];
	if ((rc = ctl_request(ctl, &r, msg, sizeof msg)))
		return rc;
	printf("%s\n", msg);
	return 0;
}

int cmd_unload(struct ctl *ctl, int argc, char **argv)
{
	struct ctl_opt opts[] = {
		{"to", 0, true, NULL, false},
	};
	char **pos;
	int npos;
	int rc = ctl_parse(ctl, argc, argv, opts, 1, &pos, &npos);
	if (rc)
		return rc;
	uint16_t drive, slot = CAT_NO_ELEMENT;
	if (npos != 1 || ctl_parse_address(pos[0], &drive))
		return ctl_usage(ctl, "give the DRIVE's element address");
	if (opts[0].set && ctl_parse_address(opts[0].val, &slot))
		return ctl_usage(ctl, "--to %s is not an element address", opts[0].val);
	if ((rc = ctl_open_library(ctl)))
		return rc;
	if (!ctl_daemon_up(ctl))
		return ctl_err(ctl, VTLCTL_FAIL, "vtld is not running: unloading a drive needs the running library");
	char msg[256];
	struct ctlproto_request r = {.verb = CTLPROTO_UNLOAD, .element = {drive, slot},
				     .elements = slot == CAT_NO_ELEMENT ? 1 : 2};
	if ((rc = ctl_request(ctl, &r, msg, sizeof msg)))
		return rc;
	printf("%s\n", msg);
	return 0;
}

/* ------------------------------------------------------------------ status */

int cmd_status(struct ctl *ctl, int argc, char **argv)
{
	char **pos;
	int npos;
	int rc = ctl_parse(ctl, argc, argv, NULL, 0, &pos, &npos);
	if (rc)
		return rc;
	if (npos)
		return ctl_usage(ctl, "status takes no arguments");
	if ((rc = ctl_load_config(ctl)))
		return rc;
	if (!ctl_daemon_up(ctl))
		return ctl_err(ctl, VTLCTL_FAIL, "vtld is not running (nothing answers on %s)",
			       ctl->cfg->daemon.control_socket);
	static char answer[65536];
	if ((rc = ctl_request_raw(ctl, &(struct ctlproto_request){.verb = CTLPROTO_STATUS}, answer, sizeof answer)))
		return rc;
	if (strncmp(answer, "{\"ok\":true", 10) != 0)
		return ctl_err(ctl, VTLCTL_FAIL, "vtld answered: %s", answer);
	if (ctl->json) {
		printf("%s\n", answer);
		return 0;
	}
	char lib[128];
	ans_text(answer, "library", lib, sizeof lib);
	printf("library %s: vtld is running\n", lib);
	const char *pool = strstr(answer, "\"pool\":{");
	if (pool) {
		printf("pool: %.1f%% full; ", ans_real(pool, "fill_percent"));
		if (strstr(pool, "\"throttled\":true"))
			printf("host writes THROTTLED to %llu MB/s (pool at or above %llu%%)\n", ans_u64(pool, "throttle_rate"),
			       ans_u64(pool, "throttle"));
		else if (ans_u64(pool, "throttle"))
			printf("host writes at full speed (slowed to %llu MB/s from %llu%%)\n", ans_u64(pool, "throttle_rate"),
			       ans_u64(pool, "throttle"));
		else
			printf("host writes never throttled\n");
	}
	const char *ingest = strstr(answer, "\"ingest\":{");
	if (ingest) {
		const struct vtl_config *c = ctl->cfg;
		printf("hosts move %.1f MB/s through the drives", ans_real(ingest, "host_mb_s"));
		if (!strstr(ingest, "\"migrator\":true"))
			printf("\n");
		else if (c->migrator.pool_rate == VTL_CFG_POOL_RATE_AUTO)
			printf("; host ingest first: copies read what the pool gives besides the hosts, probed (pool_rate "
			       "auto), each at least its drive's lowest matched speed and %u MB/s (vtlctl jobs)\n",
			       c->migrator.copy_floor);
		else if (c->migrator.pool_rate)
			printf("; host ingest first: copies read what is left of %u MB/s, each at least its drive's lowest "
			       "matched speed and %u MB/s (vtlctl jobs)\n", c->migrator.pool_rate, c->migrator.copy_floor);
		else
			printf("; copies read the pool as fast as they go ([migrator] pool_rate 0)\n");
		if (c->migrator.pool_rate && strstr(ingest, "\"migrator\":true"))
			ctl_ingest_live(ctl); /* what the migrator measures now, under the rule's line */
	}
	const char *tcmu = strstr(answer, "\"tcmu\":{");
	if (tcmu)
		printf("tcmu: %llu LIO user backstores served\n", ans_u64(tcmu, "devices"));
	printf("%-4s %-7s %-8s %-9s %10s %6s %10s %14s %14s %8s %8s %6s %9s %-7s %s\n", "LUN", "ADDRESS", "STATE",
	       "BARCODE", "POSITION", "FILE", "EOD", "WRITTEN", "READ", "WR MB/s", "RD MB/s", "RD BUF", "WR BUF", "PREVENT",
	       "COMPRESSION");
	for (const char *d = strstr(answer, "{\"lun\""); d; d = strstr(d + 1, "{\"lun\"")) {
		char state[16], bc[40], comp[40];
		ans_text(d, "state", state, sizeof state);
		ans_text(d, "compression", comp, sizeof comp);
		ans_text(d, "barcode", bc, sizeof bc);
		/* The read buffer as a share of its size; the write buffer in MiB not yet synced. */
		unsigned long long rb = ans_u64(d, "read_buffer_bytes"), rs = ans_u64(d, "read_buffer_size");
		char rbuf[16] = "-";
		if (rs)
			snprintf(rbuf, sizeof rbuf, "%llu%%", rb * 100 / rs);
		printf("%-4llu %-7llu %-8s %-9s %10llu %6llu %10llu %14llu %14llu %8.1f %8.1f %6s %5.1f MiB %-7s %s\n",
		       ans_u64(d, "lun"), ans_u64(d, "address"), state, bc[0] ? bc : "-", ans_u64(d, "position"),
		       ans_u64(d, "file"), ans_u64(d, "eod"), ans_u64(d, "written_bytes"), ans_u64(d, "read_bytes"),
		       ans_real(d, "write_mb_s"), ans_real(d, "read_mb_s"), rbuf,
		       (double)ans_u64(d, "write_buffer_bytes") / (1 << 20),
		       strstr(d, "\"prevent\":true") && strstr(d, "\"prevent\":true") < strchr(d, '}') ? "yes" : "no",
		       comp[0] ? comp : "-");
	}
	return 0;
}
