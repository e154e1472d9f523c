/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vtlctl: the operator's command-line tool (docs/operations.md).
 *
 *   vtlctl [-c FILE] [--json] COMMAND [ARGS]
 *
 * Commands work on the catalog and the pool named by the configuration
 * file, offline: commands that need the running daemon (vtld, not written
 * yet) will talk to it over its control socket.
 */
#include <stdlib.h>
#include <string.h>

#include "vtl/ctl/ctl.h"

#include "common/grow.h"

static const struct ctl_cmd commands[] = {
	{"init", "init [--catalog-only]", "create the catalog and the pool's folders from the configuration file",
	 "Reads the configuration file, creates the pool's member folders that are missing, checks that the pool\n"
	 "opens, then creates the catalog with the library, its elements (robot, drives, storage slots, mail\n"
	 "slots, all empty) and its drives.\n"
	 "\n"
	 "It never overwrites: if the catalog file exists, init fails and changes nothing. A plain init also\n"
	 "refuses a pool that already holds cartridges.\n"
	 "\n"
	 "  --catalog-only  recreate only the catalog, for a pool whose catalog was lost: the pool's members\n"
	 "                  must exist (they are not created) and may hold cartridges; then run\n"
	 "                  'vtlctl catalog rebuild' to put them back into the catalog.",
	 cmd_init},
	{"library show", "library show", "the library: identity, element addresses, how full it is",
	 "Prints the library of the configuration file as the catalog knows it: name, SCSI identity (vendor,\n"
	 "product, revision, serial), the element address ranges, how many slots and mail slots are full, the\n"
	 "cartridges and the pool's members with their space.",
	 cmd_library_show},
	{"drive list", "drive list", "the drives and the cartridge each holds",
	 "One line per drive: element address, number, vendor, model, serial, LUN, state and the cartridge in it.",
	 cmd_drive_list},
	{"slot list", "slot list [--type all|slot|ie|drive|transport] [--full|--empty]",
	 "every element and the cartridge it holds, like 'mtx status'",
	 "One line per element in address order: address, type (transport = the robot, drive, ie = mail slot,\n"
	 "slot = storage), its number among its type, full or empty, the barcode it holds and the element the\n"
	 "cartridge came from.\n"
	 "\n"
	 "  --type T   only elements of type T (default: all)\n"
	 "  --full     only the elements that hold a cartridge\n"
	 "  --empty    only the empty ones",
	 cmd_slot_list},
	{"cartridge add",
	 "cartridge add --barcode BARCODE [--count N | --to BARCODE] [--media M] [--capacity SIZE] [--slot ADDR]",
	 "create cartridges: an empty one in the pool, its row in the catalog, in a slot",
	 "Creates each cartridge blank in the pool and adds it to the catalog in the first empty storage slot\n"
	 "(or --slot ADDR, a storage or mail slot). Barcodes follow LTO label rules: 6 characters A-Z/0-9 and a\n"
	 "2-character media suffix: L5..L9 (LTO-5..9 data), M8 (LTO-7 Type M), LV..LZ (LTO-5..9 WORM), or a\n"
	 "cleaning label CLNxxxCU / CLNxxxL1..L9.\n"
	 "\n"
	 "  --barcode BC     the (first) barcode, e.g. A00001L8 (the BARCODE may also come without --barcode)\n"
	 "  --count N        add N cartridges counting up the numeric end of the serial: A00001L8, A00002L8, ...\n"
	 "  --to BC          add the range up to BC inclusive, e.g. --barcode A00001L8 --to A00020L8\n"
	 "  --media M        LTO5..LTO10, LTO5W..LTO9W, LTO7M, CLN; must agree with the suffix, which decides it\n"
	 "                   when --media is not given\n"
	 "  --capacity SIZE  capacity instead of the nominal native one (LTO-8 12 TB, ...); K, M, G, T are\n"
	 "                   powers of 1000 (KiB, MiB, GiB, TiB: of 1024), e.g. 500G\n"
	 "  --slot ADDR      put the (single) cartridge into this element\n"
	 "\n"
	 "Everything is checked first (labels, duplicates in the catalog and the pool, enough empty slots): if\n"
	 "anything is wrong nothing is added. Each cartridge is then added whole or not at all.",
	 cmd_cartridge_add},
	{"cartridge list", "cartridge list", "every cartridge: media, capacity, use, where it is",
	 "One line per cartridge in barcode order: media, nominal capacity, bytes stored, location (slot, drive,\n"
	 "ie = mail slot, with the element address; 'outside' for an exported cartridge; 'none' for one in the\n"
	 "library but in no element) and state.",
	 cmd_cartridge_list},
	{"cartridge show", "cartridge show BARCODE", "everything about one cartridge",
	 "The catalog's record of the cartridge, and what the pool holds for it (objects, filemarks, bytes,\n"
	 "segment files) when the pool can be read.",
	 cmd_cartridge_show},
	{"cartridge remove", "cartridge remove BARCODE... [--force]",
	 "delete cartridges: their pool files and catalog rows",
	 "Deletes each cartridge from the pool and the catalog. It refuses a cartridge that is in a drive, or\n"
	 "whose pool copy holds data, unless --force is given. A cartridge that vtld has open is always refused.\n"
	 "\n"
	 "  -f, --force  delete even a cartridge in a drive or one that holds data (the data is lost)",
	 cmd_cartridge_remove},
	{"move", "move FROM TO", "move a cartridge between two elements, as the robot would",
	 "Moves the cartridge in element FROM into the empty element TO (element addresses, see 'slot list').\n"
	 "FROM may also be the barcode of the cartridge. Both must be elements of the library; moves into and\n"
	 "out of drives, slots and mail slots are all allowed.",
	 cmd_move},
	{"status", "status", "what vtld's drives are doing (vtld must run)",
	 "Each drive: its LUN and element address, state (empty, loaded, ejected, cleaning), the cartridge,\n"
	 "position (logical object), file number, end of data, and the bytes written and read this load.",
	 cmd_status},
	{"load", "load WHAT DRIVE", "have the robot load a cartridge into a drive (vtld must run)",
	 "WHAT is a barcode in the library or the element address holding it; DRIVE the drive's element\n"
	 "address. vtld moves it, the drive loads it and hosts see the drive become ready.",
	 cmd_load},
	{"unload", "unload DRIVE [--to SLOT]", "unload a drive and put its cartridge back (vtld must run)",
	 "The drive unloads (refused while a host prevents medium removal) and the robot takes the cartridge\n"
	 "to the slot it came from, or --to SLOT.",
	 cmd_unload},
	{"import", "import BARCODE [--new [--media M] [--capacity SIZE]] [--to ADDR]",
	 "put a cartridge from outside into a mail slot",
	 "The operator puts a cartridge into a mail slot (import/export element): an exported cartridge\n"
	 "('outside' in 'cartridge list'), or with --new a new blank one (created as 'cartridge add' would).\n"
	 "It goes into the first empty mail slot, or --to ADDR. Move it on into a storage slot with\n"
	 "'vtlctl move'.\n"
	 "\n"
	 "  --new            create the cartridge (it must not exist); --media and --capacity as in\n"
	 "                   'cartridge add'\n"
	 "  --to ADDR        the mail slot to use",
	 cmd_import},
	{"export", "export BARCODE [--to ADDR] [--remove]", "move a cartridge to a mail slot, or out of the library",
	 "Moves the cartridge from its storage slot into the first empty mail slot (or --to ADDR).\n"
	 "\n"
	 "  --remove   also take it out of the library, as the operator takes it out of the mail slot: it stays\n"
	 "             in the catalog and the pool, 'outside', until 'vtlctl import' brings it back. Works on a\n"
	 "             cartridge in a slot or already in a mail slot (a library without mail slots: directly\n"
	 "             from its slot).\n"
	 "\n"
	 "A cartridge in a drive is refused: move it to a slot first.",
	 cmd_export},
	{"events", "events [--since ID] [--limit N]", "the event log, oldest first",
	 "The catalog's event log: id, time, actor (vtlctl:<user>, vtld, ...) and what happened.\n"
	 "\n"
	 "  --since ID  only events after the one with this id\n"
	 "  --limit N   at most N events",
	 cmd_events},
	{"catalog rebuild", "catalog rebuild", "recreate missing cartridge rows from the pool",
	 "For an operator who lost the catalog database: every cartridge in the pool that the catalog does not\n"
	 "know gets a row, its media from the barcode suffix, its bytes stored and end of data read from its\n"
	 "self-describing segment files, in the first empty storage slot (or in no element when the slots are\n"
	 "full). Rows already there are left alone. Catalog rows without a cartridge in the pool are reported.\n"
	 "\n"
	 "The catalog must hold the library: after losing the database run 'vtlctl init --catalog-only' first.\n"
	 "The host byte count (before compression) cannot be recovered from the pool and starts at 0.",
	 cmd_catalog_rebuild},
	{"catalog check", "catalog check", "check the catalog's integrity and that it agrees with the pool",
	 "Offline (vtld stopped): SQLite's integrity and foreign-key checks, every element holding exactly the\n"
	 "cartridge whose row points at it, every cartridge of the pool in the catalog, and every resident or\n"
	 "premigrated cartridge in the pool with the end of data and bytes stored that the catalog recorded\n"
	 "(vtld records them when a cartridge leaves a drive and when it stops). Prints each problem, one line\n"
	 "per cartridge, and exits 1 if there is any. Changes nothing.",
	 cmd_catalog_check},
	{"physical list", "physical list", "the physical tapes copies go to: state, files, bytes used",
	 "Every physical tape in the catalog: its library ([physical] name), pool, slot, state (scratch, filling, full,\n"
	 "error: a tape that failed a write is not used again), tape files (copies) and bytes used.",
	 cmd_physical_list},
	{"physical add", "physical add [--barcode BC --capacity SIZE [--pool POOL] [--library NAME]]",
	 "add physical tapes to the catalog",
	 "Without options vtl-migrator (it must run) reads each physical library's inventory and adds every tape\n"
	 "the catalog does not know, as scratch, in the library's first pool (default unless its pools line\n"
	 "names others). --barcode BC --capacity SIZE adds one tape by hand, in pool POOL if given, in physical\n"
	 "library NAME (default: the first).",
	 cmd_physical_add},
	{"physical pool", "physical pool POOL BARCODE...", "put empty physical tapes in a pool",
	 "Puts each tape in pool POOL: the pools [policy] copy_pools names get one copy of each cartridge each\n"
	 "(e.g. default and vault, for a second copy kept elsewhere). Only a tape without copies changes pool.",
	 cmd_physical_pool},
	{"physical inventory", "physical inventory [--library NAME]",
	 "the physical libraries' elements and tapes (vtl-migrator must run)",
	 "What each physical library's changer reports (LIBRARY): every drive, mail slot and slot with its\n"
	 "tape's barcode, each drive busy with its job, idle or unused.\n"
	 "\n"
	 "  --library NAME  that library's only ([physical NAME] in the configuration)",
	 cmd_physical_inventory},
	{"physical drives", "physical drives [--library NAME]",
	 "every physical drive: its job, tape, MB/s, ring, waits, back-hitches (vtl-migrator must run)",
	 "Each drive of each physical library (LIBRARY) with its number: busy with a job (its id, kind and\n"
	 "cartridge), idle or unused (beyond [migrator] drives), and the physical tape its changer shows in it.\n"
	 "A busy drive also shows its rate (MB/s over the last second), the fill of its job's ring (full\n"
	 "buffers of all, and their bytes), WAITS: how often and how long the drive's writer waited for a full\n"
	 "buffer (the drive starved), and BACK-HITCHES: counted by a simulated drive since its tape was\n"
	 "loaded, else estimated (~) from the writer's waits of a second or more.\n"
	 "\n"
	 "  --library NAME  that library's drives only ([physical NAME] in the configuration)",
	 cmd_physical_drives},
	{"migrate", "migrate BARCODE [--native] [--drive N] [--rate MB/s] [--library NAME]",
	 "copy a cartridge to physical tape",
	 "Queues a job that copies the cartridge (stacked: many per physical tape) to a tape of the physical\n"
	 "library, verifies it when [migrator] verify = yes, and records it. A cartridge a host has loaded is\n"
	 "refused. With vtl-migrator running the job starts at once; otherwise it waits in the catalog.\n"
	 "\n"
	 "  --drive N     the physical drive to use (from 0)\n"
	 "  --rate MB/s   at most this rate for this job\n"
	 "  --library NAME  to that physical library (with several: by default the one whose pools has the next\n"
	 "                copy pool the cartridge needs; --drive N is a drive of it)\n"
	 "  --native      a native export copy: the host's blocks and filemarks one to one on a scratch tape of\n"
	 "                its own, readable by the backup application in any library",
	 cmd_migrate},
	{"verify", "verify BARCODE [--library NAME]", "read a cartridge's copies back and check their digests",
	 "Queues a job that reads every good copy of the cartridge from physical tape and checks each block,\n"
	 "record and the digest; a copy that fails is marked bad. With several physical libraries, one job in\n"
	 "each library holding a good copy, or in --library NAME only.",
	 cmd_verify},
	{"recall", "recall BARCODE [--library NAME]", "stage a migrated cartridge back from physical tape",
	 "Queues a job that stages the cartridge (cache state migrated: its data is on physical tape only)\n"
	 "back into the pool from its newest good stacked copy, falling back to older copies when one fails\n"
	 "its checks; the cartridge is then premigrated. With several physical libraries it reads in the\n"
	 "library of the newest good copy that has a free drive (or in --library NAME first), and when every\n"
	 "copy there fails it goes on in the next library holding a good copy.",
	 cmd_recall},
	{"jobs", "jobs", "the migrator's jobs, with live progress",
	 "Every job: kind, cartridge, state, bytes done, its physical library (LIBRARY), error. With vtl-migrator running, the running job also\n"
	 "shows its rate (MB/s over the last second), the ring's fill (full buffers of all), how often the\n"
	 "writer waited for a full buffer and the readers for an empty one, and the time left.",
	 cmd_jobs},
	{"policy", "policy", "the cache policy: pool fill, water marks, what the last pass did (vtl-migrator must run)",
	 "The disk pool's fill now, the high- and low-water marks and the throttle of [policy], the rules that\n"
	 "make a cartridge a candidate for a copy, and what the last policy pass did: copies queued by each\n"
	 "rule or for pool pressure, disk copies released, cartridges skipped because they were open elsewhere,\n"
	 "releases refused because a disk copy did not match its tape copies (vtlctl events says why), and\n"
	 "verifies queued to record the block size of copies made before schema 5.",
	 cmd_policy},
	{"release", "release BARCODE [--force]", "give up a premigrated cartridge's disk copy (vtl-migrator must run)",
	 "Releases the disk copy of a premigrated cartridge (one with a verified copy on physical tape): it\n"
	 "becomes migrated and its space in the pool is freed; a host that loads it later waits for a recall.\n"
	 "A cartridge that is not premigrated, is loaded in a drive or has a job is refused. So is one whose\n"
	 "disk copy is not what its good tape copies hold (bytes to end of data, digest), or is damaged; a\n"
	 "copy recorded without its block size (before schema 5) needs a vtlctl verify first.\n"
	 "\n"
	 "  --force   give up a damaged disk copy too, so that a recall restores the cartridge whole: only when\n"
	 "            every good tape copy holds the bytes the catalog recorded before the damage, one of them\n"
	 "            is verified, and the disk copy holds nothing more; logged as forced in the event log. A\n"
	 "            disk copy whose records are sound is never forced.",
	 cmd_release},
	{"cancel", "cancel JOB", "cancel a queued or running job (vtl-migrator must run)",
	 "A queued job fails at once; a running one stops after the block it is writing. Nothing partial is\n"
	 "recorded as a copy.",
	 cmd_cancel},
	{"reload", "reload [--vtld] [--migrator]", "have the running daemons read the configuration file again",
	 "vtld and vtl-migrator read the file again and apply what can change while they run, or, when\n"
	 "anything else changed or the file does not parse, nothing (each says which keys need a restart).\n"
	 "vtld applies log_level, the CHAP credentials ([iscsi], [initiator NAME]), the allowed initiators and\n"
	 "the throttle; vtl-migrator its log_level, rate, window, window_rate and [policy]'s marks, rules,\n"
	 "idle and interval. New logins use the new credentials; logged-in sessions stay. Each daemon that\n"
	 "runs is asked unless one is named. The same as SIGHUP (systemctl reload). See docs/operations.md.\n"
	 "\n"
	 "  --vtld      only vtld\n"
	 "  --migrator  only vtl-migrator",
	 cmd_reload},
};
#define NCMDS (VTL_ARRAY_SIZE(commands))

static void print_usage(FILE *f)
{
	fputs("vtlctl " VTLCTL_VERSION " - the operator's tool of the virtual tape library\n"
	      "\n"
	      "usage: vtlctl [-c FILE] [--json] COMMAND [ARGS]\n"
	      "\n"
	      "commands:\n",
	      f);
	size_t w = 0;
	for (size_t i = 0; i < NCMDS; i++)
		if (strlen(commands[i].name) > w)
			w = strlen(commands[i].name);
	for (size_t i = 0; i < NCMDS; i++)
		fprintf(f, "  %-*s  %s\n", (int)w, commands[i].name, commands[i].summary);
	fputs("\n"
	      "options (anywhere on the line):\n"
	      "  -c, --config FILE  the library's configuration file (default: $VTL_CONFIG, else the installed one)\n"
	      "  --json             print one JSON document on stdout instead of tables\n"
	      "  -h, --help         this help; 'vtlctl help COMMAND' or 'vtlctl COMMAND --help' for a command\n"
	      "\n"
	      "exit status: 0 success, 1 the operation failed, 2 a usage error.\n"
	      "See docs/operations.md.\n",
	      f);
}

void ctl_print_help(const struct ctl_cmd *cmd, FILE *f)
{
	if (!cmd) {
		print_usage(f);
		return;
	}
	fprintf(f, "usage: vtlctl [-c FILE] [--json] %s\n\n%s\n\n%s\n", cmd->synopsis, cmd->summary, cmd->help);
}

/* The command named by words[0] (and words[1]); *used = how many words its name took. */
static const struct ctl_cmd *find_cmd(int n, char **words, int *used)
{
	for (size_t i = 0; i < NCMDS; i++) {
		const char *name = commands[i].name;
		const char *sp = strchr(name, ' ');
		if (!sp) {
			if (strcmp(words[0], name) == 0) {
				*used = 1;
				return &commands[i];
			}
		} else if (n >= 2 && strlen(words[0]) == (size_t)(sp - name) && strncmp(words[0], name, (size_t)(sp - name)) == 0 &&
			   strcmp(words[1], sp + 1) == 0) {
			*used = 2;
			return &commands[i];
		}
	}
	return NULL;
}

/* "add, list, show, remove" for group "cartridge"; empty if it is no group. */
static void group_members(const char *group, char *buf, size_t len)
{
	size_t n = 0, gl = strlen(group);
	buf[0] = 0;
	for (size_t i = 0; i < NCMDS; i++) {
		const char *name = commands[i].name;
		if (strncmp(name, group, gl) == 0 && name[gl] == ' ') {
			int w = snprintf(buf + n, len - n, "%s%s", n ? ", " : "", name + gl + 1);
			if (w < 0 || (size_t)w >= len - n)
				break;
			n += (size_t)w;
		}
	}
}

static int unknown_cmd(struct ctl *ctl, int n, char **words)
{
	char members[128];
	group_members(words[0], members, sizeof members);
	if (members[0] && n < 2)
		return ctl_usage(ctl, "'%s' needs a subcommand: %s", words[0], members);
	if (members[0])
		return ctl_usage(ctl, "unknown %s command '%s'; %s commands are: %s", words[0], words[1], words[0],
				 members);
	return ctl_usage(ctl, "unknown command '%s'", words[0]);
}

static int help(struct ctl *ctl, int n, char **words)
{
	if (n == 0) {
		print_usage(stdout);
		return 0;
	}
	int used = 0;
	const struct ctl_cmd *cmd = find_cmd(n, words, &used);
	if (!cmd)
		return unknown_cmd(ctl, n, words);
	ctl_print_help(cmd, stdout);
	return 0;
}

int main(int argc, char **argv)
{
	struct ctl ctl;
	memset(&ctl, 0, sizeof ctl);
	const char *env = getenv("VTL_CONFIG");
	ctl.config_path = vtl_config_default_path();
	ctl.config_from_default = !(env && env[0]);

	/* Global options before the command; the command's parser accepts them after it too. */
	int i = 1;
	for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--json") == 0) {
			ctl.json = true;
		} else if (strcmp(a, "-c") == 0 || strcmp(a, "--config") == 0) {
			if (i + 1 >= argc)
				return ctl_usage(&ctl, "option %s needs a value", a);
			ctl.config_path = argv[++i];
			ctl.config_from_default = false;
		} else if (strncmp(a, "--config=", 9) == 0 || (a[1] == 'c' && a[2])) {
			ctl.config_path = a[1] == 'c' ? a + 2 : a + 9;
			ctl.config_from_default = false;
		} else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			print_usage(stdout);
			return 0;
		} else if (strcmp(a, "--version") == 0) {
			printf("vtlctl %s\n", VTLCTL_VERSION);
			return 0;
		} else if (strcmp(a, "--") == 0) {
			i++;
			break;
		} else {
			return ctl_usage(&ctl, "unknown option '%s' (before the command)", a);
		}
	}
	if (i >= argc) {
		print_usage(stderr);
		return VTLCTL_USAGE;
	}
	int rc;
	if (strcmp(argv[i], "help") == 0) {
		rc = help(&ctl, argc - i - 1, argv + i + 1);
	} else {
		int used = 0;
		const struct ctl_cmd *cmd = find_cmd(argc - i, argv + i, &used);
		if (!cmd)
			return unknown_cmd(&ctl, argc - i, argv + i);
		ctl.cmd = cmd;
		rc = cmd->run(&ctl, argc - i - used, argv + i + used);
		if (rc < 0) /* --help was printed */
			rc = 0;
	}
	ctl_close(&ctl);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		ctl.cmd = NULL;
		return ctl_err(&ctl, VTLCTL_FAIL, "cannot write the output");
	}
	return rc;
}
