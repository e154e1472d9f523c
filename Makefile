# SPDX-License-Identifier: Apache-2.0
# The build and test contract: `make run`, `make check`, `make asan`, `make bench`, `make soak`.

CC      ?= cc
BUILD   ?= build
OPT     ?= -O2
CFLAGS_BASE := -std=c11 -Wall -Wextra -Werror -Wmissing-prototypes -Wshadow -g $(OPT) -D_GNU_SOURCE -I. -pthread
CFLAGS_EXTRA ?=
CFLAGS_ALL = $(CFLAGS_BASE) $(CFLAGS_EXTRA)

# Libraries come from pkg-config (every one the programs link ships a .pc file with its Debian package).
# Looked up when a program is linked, not when make starts, so that `make deps` can install them first.
PKG_CONFIG ?= pkg-config
pkg_libs = $(if $(shell command -v $(PKG_CONFIG)),,$(error $(PKG_CONFIG) not found: run `make deps` (scripts/install-deps installs it)))$(foreach p,$(1),$(if $(shell $(PKG_CONFIG) --exists $(p) && echo yes),,$(error $(PKG_CONFIG) finds no $(p).pc: install its -dev package (`make deps`))))$(shell $(PKG_CONFIG) --libs $(1))
LDFLAGS_EXTRA ?=
LDLIBS   = $(LDFLAGS_EXTRA) $(call pkg_libs,sqlite3 liblz4 libiscsi libmicrohttpd libcrypto) -lm -lpthread
TEST_LDLIBS = $(call pkg_libs,cmocka) $(LDLIBS)

# The layers, lowest first (docs/testing.md, "Layers"). Each is an archive, $(BUILD)/lib<layer>.a, whose
# objects may use only their own layer and the ones in <layer>_USES (written highest first, the link
# order): scripts/check-layers fails the build otherwise, and each program links only what it may use.
# <layer>_HDR are its headers: scripts/check-includes fails the build when a layer's file includes a
# header of a layer it may not use (a type or an inline function, which nm cannot see).
LAYERS := common backend catalog config scsi drive library changer front migrator
common_SRC    := $(wildcard common/*.c)
common_HDR    := $(wildcard common/*.h)
common_USES   :=
backend_SRC   := $(wildcard backend/*.c)
backend_HDR   := $(wildcard backend/*.h)
backend_USES  := common
catalog_SRC   := $(wildcard catalog/*.c)
catalog_HDR   := $(wildcard catalog/*.h)
catalog_USES  := common
# The configuration file and the LTO media rules it checks drives against: read by all three programs.
config_SRC    := $(wildcard config/*.c)
config_HDR    := $(wildcard config/*.h)
config_USES   := catalog backend common
# The transport-independent SCSI core (its vocabulary and sense data are common/scsi_*): dispatch, SPC
# and its log and mode pages, reservations, unit attentions, the device base every emulated device is
# built on.
scsi_SRC      := $(wildcard vtl/scsi/*.c)
scsi_HDR      := $(wildcard vtl/scsi/*.h)
scsi_USES     := common
# The emulated devices, each above the one before: the tape drive (ssc*) over the pool; the library
# model, which loads the drives and keeps the elements in the catalog, and the write throttle, which
# slows all its drives together; the medium changer (smc*), which makes its moves through the model.
drive_SRC     := $(wildcard vtl/drive/*.c)
drive_HDR     := $(wildcard vtl/drive/*.h)
drive_USES    := scsi config backend common
library_SRC   := $(wildcard vtl/library/*.c)
library_HDR   := $(wildcard vtl/library/*.h)
library_USES  := drive scsi config catalog backend common
changer_SRC   := $(wildcard vtl/changer/*.c)
changer_HDR   := $(wildcard vtl/changer/*.h)
changer_USES  := library scsi common
# The front ends: the iSCSI target, TCMU, and the per-LU worker they both hand commands to. They reach
# the devices only through the callbacks vtld gives them.
front_SRC     := $(wildcard vtl/iscsi/*.c vtl/tcmu/*.c) vtl/lu_worker.c
front_HDR     := $(wildcard vtl/iscsi/*.h vtl/tcmu/*.h) vtl/lu_worker.h
front_USES    := scsi common
# The migrator's modules (physical tape access, streaming engine, copies, policy); main.c is the daemon.
migrator_SRC  := $(filter-out migrator/main.c,$(wildcard migrator/*.c))
migrator_HDR  := $(wildcard migrator/*.h)
migrator_USES := config catalog backend common
# The programs, above every layer: what each may link (vtld and vtlctl never the migrator, vtl-migrator
# no SCSI emulation; vtlctl the library model for its offline moves, vtl/library/library.h, and what
# the model links, but no changer).
vtld_USES     := front changer library drive scsi config catalog backend common
vtlctl_USES   := library drive scsi config catalog backend common
vtl-migrator_USES := migrator config catalog backend common

reverse  = $(if $(1),$(call reverse,$(wordlist 2,$(words $(1)),$(1))) $(firstword $(1)))
# $(call archives,TREE,LAYERS): the archives of LAYERS in TREE.
archives = $(foreach l,$(2),$(1)/lib$(l).a)
LIB_SRC  := $(foreach l,$(LAYERS),$($(l)_SRC))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
# Every library layer, highest first: what the tests link.
LIBS     := $(call archives,$(BUILD),$(call reverse,$(LAYERS)))
# A source under the library's folders that no layer names would be left out of every program.
UNLAYERED := $(filter-out $(LIB_SRC) migrator/main.c,$(wildcard common/*.c backend/*.c catalog/*.c config/*.c \
	vtl/*.c vtl/scsi/*.c vtl/drive/*.c vtl/library/*.c vtl/changer/*.c vtl/iscsi/*.c vtl/tcmu/*.c migrator/*.c))
ifneq ($(UNLAYERED),)
$(error $(UNLAYERED): in no layer: add each to one of the LAYERS in the Makefile)
endif
LIB_HDR  := $(foreach l,$(LAYERS),$($(l)_HDR))
UNLAYERED_HDR := $(filter-out $(LIB_HDR),$(wildcard common/*.h backend/*.h catalog/*.h \
	config/*.h vtl/*.h vtl/scsi/*.h vtl/drive/*.h vtl/library/*.h vtl/changer/*.h vtl/iscsi/*.h vtl/tcmu/*.h \
	migrator/*.h))
ifneq ($(UNLAYERED_HDR),)
$(error $(UNLAYERED_HDR): in no layer: add each to the <layer>_HDR of one of the LAYERS in the Makefile)
endif

UNIT_SRC    := $(wildcard tests/unit/test_*.c)
UNIT_BIN    := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/unit/%)
TESTLIB_SRC := tests/unit/testlib.c tests/unit/scsi_host.c
TESTLIB_OBJ := $(TESTLIB_SRC:%.c=$(BUILD)/%.o)
VTLCTL_SRC  := $(wildcard vtl/ctl/*.c)
VTLCTL      := $(BUILD)/vtlctl
VTLD_SRC    := $(wildcard vtl/vtld/*.c)
VTLD        := $(BUILD)/vtld
MIGRATOR_MAIN := $(wildcard migrator/main.c)
MIGRATOR    := $(BUILD)/vtl-migrator
INTEG_TESTS := $(wildcard tests/integration/test_*.sh)
# Every tests/integration/*.c is a host program, except the LD_PRELOAD shims (*_shim.c -> .so) and
# the programs that drive vtld through the library's own code (*_vtl.c, linked with libvtl).
INTEG_SHIM_SRC := $(wildcard tests/integration/*_shim.c)
INTEG_SHIM  := $(INTEG_SHIM_SRC:tests/integration/%.c=$(BUILD)/tests/integration/%.so)
INTEG_VTL_SRC := $(wildcard tests/integration/*_vtl.c)
INTEG_VTL   := $(INTEG_VTL_SRC:tests/integration/%.c=$(BUILD)/tests/integration/%)
INTEG_SRC   := $(filter-out $(INTEG_SHIM_SRC) $(INTEG_VTL_SRC),$(wildcard tests/integration/*.c))
INTEG_BIN   := $(INTEG_SRC:tests/integration/%.c=$(BUILD)/tests/integration/%) $(INTEG_SHIM) $(INTEG_VTL)
FUZZ_SRC    := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN    := $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/fuzz/%)
# Seconds per fuzz target: FUZZ_SECONDS for `make fuzz`, FUZZ_CHECK_SECONDS within `make check`.
FUZZ_SECONDS ?= 120
FUZZ_CHECK_SECONDS ?= 15
# Programs a kernel-tier guest runs (tests/kernel/*_check.c): built here, since the guest sees build/ read-only.
KERNEL_CHECK_SRC := $(wildcard tests/kernel/*_check.c)
KERNEL_CHECK := $(KERNEL_CHECK_SRC:tests/kernel/%.c=$(BUILD)/tests/kernel/%)
BENCH_SRC   := $(wildcard tests/bench/bench_*.c)
BENCH_BIN   := $(BENCH_SRC:tests/bench/%.c=$(BUILD)/tests/bench/%)

.PHONY: all deps check layers unit integration kernel fuzz asan bench soak run clean
PROGRAMS    := $(if $(VTLCTL_SRC),$(VTLCTL)) $(if $(VTLD_SRC),$(VTLD)) $(if $(MIGRATOR_MAIN),$(MIGRATOR))
all: $(LIBS) $(BUILD)/layers.ok $(BUILD)/includes.ok $(PROGRAMS) $(UNIT_BIN) $(BENCH_BIN) $(INTEG_BIN) $(KERNEL_CHECK)

deps:
	@scripts/install-deps

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

# $(call archive_rule,TREE,LAYER): TREE/libLAYER.a from the layer's objects in TREE.
define archive_rule
$(1)/lib$(2).a: $$($(2)_SRC:%.c=$(1)/%.o)
	@rm -f $$@
	ar rcs $$@ $$^
endef
$(foreach l,$(LAYERS),$(eval $(call archive_rule,$(BUILD),$(l))))

# The layering check (scripts/check-layers): every layer's objects and the programs', each with what
# it may use; the stamp makes it run again only when an object changed.
PROGRAM_OBJ := $(VTLCTL_SRC:%.c=$(BUILD)/%.o) $(VTLD_SRC:%.c=$(BUILD)/%.o) $(MIGRATOR_MAIN:%.c=$(BUILD)/%.o)
comma := ,
empty :=
space := $(empty) $(empty)
commas = $(subst $(space),$(comma),$(strip $(1)))
LAYER_SPECS := $(foreach l,$(LAYERS),$(l):$(call commas,$($(l)_USES)):$(call commas,$($(l)_SRC:%.c=$(BUILD)/%.o))) \
	vtld:$(call commas,$(vtld_USES)):$(call commas,$(VTLD_SRC:%.c=$(BUILD)/%.o)) \
	vtlctl:$(call commas,$(vtlctl_USES)):$(call commas,$(VTLCTL_SRC:%.c=$(BUILD)/%.o)) \
	vtl-migrator:$(call commas,$(vtl-migrator_USES)):$(call commas,$(MIGRATOR_MAIN:%.c=$(BUILD)/%.o))
$(BUILD)/layers.ok: $(LIB_OBJ) $(PROGRAM_OBJ) scripts/check-layers
	@scripts/check-layers $(BUILD) $(LAYER_SPECS)
	@touch $@

# The same layers over the includes (scripts/check-includes): every layer's sources and headers, and
# the programs', each with what it may use.
VTLD_HDR    := $(wildcard vtl/vtld/*.h)
VTLCTL_HDR  := $(wildcard vtl/ctl/*.h)
INCLUDE_SPECS := $(foreach l,$(LAYERS),$(l):$(call commas,$($(l)_USES)):$(call commas,$($(l)_SRC) $($(l)_HDR))) \
	vtld:$(call commas,$(vtld_USES)):$(call commas,$(VTLD_SRC) $(VTLD_HDR)) \
	vtlctl:$(call commas,$(vtlctl_USES)):$(call commas,$(VTLCTL_SRC) $(VTLCTL_HDR)) \
	vtl-migrator:$(call commas,$(vtl-migrator_USES)):$(call commas,$(MIGRATOR_MAIN))
$(BUILD)/includes.ok: $(LIB_SRC) $(LIB_HDR) $(VTLD_SRC) $(VTLD_HDR) $(VTLCTL_SRC) $(VTLCTL_HDR) $(MIGRATOR_MAIN) \
		scripts/check-includes Makefile
	@mkdir -p $(dir $@)
	@scripts/check-includes $(INCLUDE_SPECS)
	@touch $@

layers: $(BUILD)/layers.ok $(BUILD)/includes.ok

# Every unit test program is linked with the shared test helpers (tests/unit/testlib.h).
$(UNIT_BIN): $(BUILD)/tests/unit/%: tests/unit/%.c $(TESTLIB_OBJ) $(LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP $< -o $@ $(TESTLIB_OBJ) $(LIBS) $(TEST_LDLIBS)

# Each program links only the archives it may use, highest first, so a call into another links no more.
$(VTLCTL): $(VTLCTL_SRC:%.c=$(BUILD)/%.o) $(call archives,$(BUILD),$(vtlctl_USES))
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDLIBS)

# The web console's files, built into vtld (vtl/vtld/console_files.h): nothing to install beside it.
CONSOLE_FILES := console/console.html console/console.js console/console.css
$(BUILD)/gen/console_files.c: $(CONSOLE_FILES) scripts/embed-files
	@mkdir -p $(dir $@)
	scripts/embed-files $@ console_html=console/console.html console_js=console/console.js \
		console_css=console/console.css
$(BUILD)/gen/console_files.o: $(BUILD)/gen/console_files.c
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(VTLD): $(VTLD_SRC:%.c=$(BUILD)/%.o) $(BUILD)/gen/console_files.o $(call archives,$(BUILD),$(vtld_USES))
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDLIBS)

$(MIGRATOR): $(MIGRATOR_MAIN:%.c=$(BUILD)/%.o) $(call archives,$(BUILD),$(vtl-migrator_USES))
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDLIBS)

# libFuzzer needs clang. One tree of objects instrumented for it (ASan + UBSan, coverage), with their
# dependency files, and its archives, which every target links.
FUZZ_TREE   := $(BUILD)/fuzz/obj
FUZZ_CFLAGS := $(CFLAGS_BASE) -O1 -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_LIBS   := $(call archives,$(FUZZ_TREE),$(call reverse,$(LAYERS)))
FUZZ_OBJ    := $(LIB_SRC:%.c=$(FUZZ_TREE)/%.o) $(FUZZ_SRC:%.c=$(FUZZ_TREE)/%.o)
$(FUZZ_TREE)/%.o: %.c
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@

$(foreach l,$(LAYERS),$(eval $(call archive_rule,$(FUZZ_TREE),$(l))))

$(FUZZ_BIN): $(BUILD)/fuzz/%: $(FUZZ_TREE)/tests/fuzz/%.o $(FUZZ_LIBS)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer $^ -o $@ $(LDLIBS)

-include $(FUZZ_OBJ:.o=.d)

fuzz: $(FUZZ_BIN)
	@tests/run-fuzz $(BUILD) $(FUZZ_SECONDS) $(FUZZ_BIN)

$(BUILD)/tests/bench/%: tests/bench/%.c $(LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP $< -o $@ $(LIBS) $(LDLIBS)

# The iSCSI benchmark is a host: it uses libiscsi, not the library (bench_iscsi.sh starts vtld for it).
$(BUILD)/tests/bench/bench_iscsi: tests/bench/bench_iscsi.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP $< -o $@ $(call pkg_libs,libiscsi liblz4)

# The library benchmark's host likewise (bench_library.sh starts vtld and vtl-migrator for it).
$(BUILD)/tests/bench/bench_library: tests/bench/bench_library.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP $< -o $@ $(call pkg_libs,libiscsi)

# Every tier this machine can run: the build (with the layering check), unit (cmocka), integration
# (the programs, end to end), kernel and a short fuzz run (libFuzzer, FUZZ_CHECK_SECONDS per target).
check: deps
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory unit
	@$(MAKE) --no-print-directory integration
	@$(MAKE) --no-print-directory kernel
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(FUZZ_CHECK_SECONDS)

integration: $(PROGRAMS) $(INTEG_BIN)
	@tests/run-integration $(BUILD) $(INTEG_TESTS)

# Integration clients are hosts: they use libiscsi, not the library.
$(BUILD)/tests/integration/%: tests/integration/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP $< -o $@ $(call pkg_libs,libiscsi)

# A library-side client (e.g. the migrator's iSCSI physical library against vtld) links the library.
ifneq ($(INTEG_VTL),)
$(INTEG_VTL): $(BUILD)/tests/integration/%: tests/integration/%.c $(LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP $< -o $@ $(LIBS) $(LDLIBS)
endif

# A shim is preloaded into a libiscsi program (see its header comment). It is built without
# CFLAGS_EXTRA: a sanitizer runtime cannot be preloaded into a program built without it. Its
# dependency file is named like every other program's (X.so.d), which the include below reads.
$(BUILD)/tests/integration/%_shim.so: tests/integration/%_shim.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) -shared -fPIC -MMD -MP -MF $@.d $< -o $@ -ldl

-include $(INTEG_BIN:=.d)

$(KERNEL_CHECK): $(BUILD)/tests/kernel/%: tests/kernel/%.c $(LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP $< -o $@ $(LIBS) $(LDLIBS)

-include $(KERNEL_CHECK:=.d)

# The kernel tier: a real Linux (the host's Debian kernel in qemu) as an iSCSI host (tests/kernel/).
# The power cuts of the kernel tier (tests/kernel/test_powercut.sh): POWERCUT_TRIALS in make kernel,
# one of each kind in turn (POWERCUT_KINDS: three of vtld alone, and vtl-migrator's copy, release and
# recall, with iscsi_recall as their host; make soak runs 40 in test_powercut.sh's own mix), on a disk
# whose cache mode is POWERCUT_CACHE (volatile: a write cache that loses unflushed writes at the cut).
POWERCUT_TRIALS ?= 6
POWERCUT_KINDS ?= early copy random release ack recall
POWERCUT_CACHE ?= volatile
POWERCUT_HOST := $(BUILD)/tests/integration/iscsi_crashwrite $(BUILD)/tests/integration/iscsi_recall
kernel: $(PROGRAMS) $(KERNEL_CHECK) $(POWERCUT_HOST)
	@POWERCUT_TRIALS=$(POWERCUT_TRIALS) VTL_POWERCUT_KINDS="$(POWERCUT_KINDS)" VTL_POWERCUT_CACHE=$(POWERCUT_CACHE) sh tests/kernel/test_kernel.sh $(BUILD)

# The long runs, not part of make check: the kill -9 test of vtld (20 trials in make integration) with
# SOAK_TRIALS, the kill -9 test of vtl-migrator (10 trials in make integration) with MIGKILL_SOAK_TRIALS,
# then the check of the volatile disk's model (test_volatile_nbd.sh), the power cuts (POWERCUT_TRIALS in
# make kernel, the migrator's among them) with SOAK_POWERCUT_TRIALS and their controls (a vtld without
# syncs, and with the volatile cache an ext4 mounted nobarrier, must lose acknowledged data; a
# vtl-migrator whose tape files are never synced must leave a copy called good that is not), and the
# kernel tier's systemd guest (the Debian package under systemd as PID 1: about 5 minutes with the
# package build, more than make check's budget holds); all run, any failing fails it.
SOAK_TRIALS ?= 200
MIGKILL_SOAK_TRIALS ?= 100
SOAK_POWERCUT_TRIALS ?= 40
soak: deps
	@$(MAKE) --no-print-directory $(PROGRAMS) $(INTEG_BIN)
	@rc=0; sh tests/integration/test_crash_kill.sh $(BUILD) $(SOAK_TRIALS) || rc=1; \
		sh tests/integration/test_migrator_kill.sh $(BUILD) $(MIGKILL_SOAK_TRIALS) || rc=1; \
		sh tests/kernel/test_volatile_nbd.sh || rc=1; \
		VTL_POWERCUT_CONTROL=1 VTL_POWERCUT_CACHE=$(POWERCUT_CACHE) sh tests/kernel/test_powercut.sh $(BUILD) \
		$(SOAK_POWERCUT_TRIALS) || rc=1; \
		scripts/install-deps deb && sh tests/kernel/test_kernel.sh $(BUILD) systemd || rc=1; exit $$rc

unit: $(UNIT_BIN)
	@tests/run-unit $(UNIT_BIN)

ASAN_BUILD := build-asan
asan: deps
	@$(MAKE) --no-print-directory BUILD=$(ASAN_BUILD) OPT=-O1 \
		CFLAGS_EXTRA="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
		LDFLAGS_EXTRA="-fsanitize=address,undefined" unit integration

# bench_iscsi's peer, tgt, is installed for the benchmarks only; without it bench_iscsi says why and
# measures vtld alone (docs/benchmarks.md).
bench: deps
	@scripts/install-deps bench || echo "make bench: tgt could not be installed: bench_iscsi will measure vtld without its peer"
	@$(MAKE) --no-print-directory $(BENCH_BIN) $(PROGRAMS)
	@tests/bench/run $(BENCH_BIN)

# Creates a default library under $(VTL_HOME) (default ./var) on first run and starts vtld in the
# foreground on 127.0.0.1:$(VTL_PORT) (default 3260).
run: deps all
	@scripts/vtl-run $(BUILD)

# The trees besides $(BUILD): make asan's, and the clang build's (`make CC=clang BUILD=build-clang`,
# README.md), which make clean removes too.
OTHER_TREES := $(ASAN_BUILD) build-clang
clean:
	rm -rf $(BUILD) $(filter-out $(BUILD),$(OTHER_TREES))

-include $(VTLCTL_SRC:%.c=$(BUILD)/%.d) $(VTLD_SRC:%.c=$(BUILD)/%.d) $(MIGRATOR_MAIN:%.c=$(BUILD)/%.d) $(LIB_OBJ:.o=.d) $(TESTLIB_OBJ:.o=.d) $(UNIT_BIN:=.d) $(BENCH_BIN:=.d)

# make install / make uninstall (docs/install.md): the GNU directory variables. With PREFIX=/usr the
# configuration and state go to /etc, /var and /run (as a distribution package puts them), else under PREFIX.
PREFIX        ?= /usr/local
prefix        ?= $(PREFIX)
exec_prefix   ?= $(prefix)
bindir        ?= $(exec_prefix)/bin
sbindir       ?= $(exec_prefix)/sbin
datarootdir   ?= $(prefix)/share
mandir        ?= $(datarootdir)/man
docdir        ?= $(datarootdir)/doc/vtl
sysconfdir    ?= $(if $(filter /usr,$(prefix)),/etc,$(prefix)/etc)
localstatedir ?= $(if $(filter /usr,$(prefix)),/var,$(prefix)/var)
runstatedir   ?= $(if $(filter /usr,$(prefix)),/run,$(localstatedir)/run)
# systemd's folders: Debian 12 packages put units in /lib/systemd/system (`pkg-config
# --variable=systemdsystemunitdir systemd` there) and sysusers.d files in /usr/lib/sysusers.d.
systemdsystemunitdir ?= $(if $(filter /usr,$(prefix)),/lib/systemd/system,$(prefix)/lib/systemd/system)
sysusersdir   ?= $(if $(filter /usr,$(prefix)),/usr/lib/sysusers.d,$(prefix)/lib/sysusers.d)
bashcompletiondir ?= $(datarootdir)/bash-completion/completions
DESTDIR       ?=
INSTALL       ?= install

# The programs find the installed configuration: config.o is rebuilt when sysconfdir changes. The
# define goes into CFLAGS_ALL, not CFLAGS_EXTRA: a CFLAGS_EXTRA given on the command line (make asan,
# debian/rules) overrides every assignment to it, a target-specific += included, and would drop it.
SYSCONFDIR_STAMP := $(BUILD)/sysconfdir.txt
$(shell mkdir -p $(BUILD) && { [ "$$(cat $(SYSCONFDIR_STAMP) 2>/dev/null)" = '$(sysconfdir)' ] || echo '$(sysconfdir)' >$(SYSCONFDIR_STAMP); })
$(BUILD)/config/config.o: CFLAGS_ALL += -DVTL_SYSCONFDIR='"$(sysconfdir)"'
$(BUILD)/config/config.o: $(SYSCONFDIR_STAMP)

MAN8 := $(wildcard man/*.8)
MAN5 := $(BUILD)/man/vtl.conf.5
DOCS := README.md LICENSE $(wildcard docs/*.md) $(wildcard docs/img/*.png)
# vtl.conf(5) is made from docs/configuration.md, so the two cannot drift apart.
$(MAN5): docs/configuration.md scripts/gen-vtl-conf-man
	@mkdir -p $(dir $@)
	scripts/gen-vtl-conf-man docs/configuration.md >$@.tmp && mv $@.tmp $@
all: $(MAN5)

# The systemd units (systemd/) keep their state in StateDirectory=vtl and their sockets in
# RuntimeDirectory=vtl, which systemd always puts under /var/lib and /run: they are installed only when
# the installed configuration's paths are those (localstatedir=/var, runstatedir=/run, as PREFIX=/usr
# sets), with ExecStart's /usr/sbin and /etc/vtl rewritten to sbindir and sysconfdir.
UNITS := systemd/vtld.service systemd/vtl-migrator.service
WITH_UNITS := $(and $(filter /var,$(localstatedir)),$(filter /run,$(runstatedir)))
SED_UNITS := -e 's|/usr/sbin/|$(sbindir)/|g' -e 's|/etc/vtl/|$(sysconfdir)/vtl/|g'
# Every file install puts down, and so every file uninstall removes (vtl.conf aside: see uninstall).
INSTALLED := $(sbindir)/vtld $(sbindir)/vtl-migrator $(sbindir)/vtl-lio-setup $(bindir)/vtlctl \
	$(sysconfdir)/vtl/vtl.conf.example $(MAN8:man/%=$(mandir)/man8/%) $(mandir)/man5/vtl.conf.5 \
	$(DOCS:%=$(docdir)/%) $(bashcompletiondir)/vtlctl $(if $(WITH_UNITS),$(UNITS:systemd/%=$(systemdsystemunitdir)/%) $(sysusersdir)/vtl.conf)
# The example with its paths made absolute: state under localstatedir, sockets under runstatedir.
SED_PATHS := -e 's|\.\./var/vtld\.sock|$(runstatedir)/vtl/vtld.sock|' -e 's|\.\./var/migrator\.sock|$(runstatedir)/vtl/migrator.sock|' \
	-e 's|\.\./var/|$(localstatedir)/lib/vtl/|'
.PHONY: install uninstall install-files
install: $(PROGRAMS) $(MAN5)
	$(INSTALL) -d $(DESTDIR)$(sbindir) $(DESTDIR)$(bindir) $(DESTDIR)$(sysconfdir)/vtl $(DESTDIR)$(mandir)/man8 \
		$(DESTDIR)$(mandir)/man5 $(DESTDIR)$(docdir)/docs $(DESTDIR)$(docdir)/docs/img
	$(INSTALL) -d -m 0750 $(DESTDIR)$(localstatedir)/lib/vtl
	$(INSTALL) -m 0755 $(VTLD) $(MIGRATOR) $(DESTDIR)$(sbindir)/
	$(INSTALL) -m 0755 $(VTLCTL) $(DESTDIR)$(bindir)/
	sed -e 's|conf=$${VTL_CONFIG:-\./vtl\.conf}|conf=$${VTL_CONFIG:-$(sysconfdir)/vtl/vtl.conf}|' \
		-e 's|else \./vtl\.conf)|else $(sysconfdir)/vtl/vtl.conf)|' scripts/vtl-lio-setup >$(BUILD)/vtl-lio-setup
	$(INSTALL) -m 0755 $(BUILD)/vtl-lio-setup $(DESTDIR)$(sbindir)/vtl-lio-setup
	sed $(SED_PATHS) etc/vtl.conf.example >$(BUILD)/vtl.conf.installed
	$(INSTALL) -m 0644 $(BUILD)/vtl.conf.installed $(DESTDIR)$(sysconfdir)/vtl/vtl.conf.example
	@if [ -e $(DESTDIR)$(sysconfdir)/vtl/vtl.conf ]; then echo "kept $(DESTDIR)$(sysconfdir)/vtl/vtl.conf"; \
		else $(INSTALL) -m 0644 $(BUILD)/vtl.conf.installed $(DESTDIR)$(sysconfdir)/vtl/vtl.conf; fi
	$(INSTALL) -m 0644 $(MAN8) $(DESTDIR)$(mandir)/man8/
	$(INSTALL) -m 0644 $(MAN5) $(DESTDIR)$(mandir)/man5/
	$(INSTALL) -m 0644 README.md LICENSE $(DESTDIR)$(docdir)/
	$(INSTALL) -m 0644 $(wildcard docs/*.md) $(DESTDIR)$(docdir)/docs/
	$(INSTALL) -m 0644 $(wildcard docs/img/*.png) $(DESTDIR)$(docdir)/docs/img/
	$(INSTALL) -d $(DESTDIR)$(bashcompletiondir)
	$(INSTALL) -m 0644 completion/vtlctl.bash $(DESTDIR)$(bashcompletiondir)/vtlctl
ifneq ($(WITH_UNITS),)
	$(INSTALL) -d $(DESTDIR)$(systemdsystemunitdir) $(DESTDIR)$(sysusersdir)
	for u in $(UNITS); do sed $(SED_UNITS) $$u >$(BUILD)/$${u#systemd/} && \
		$(INSTALL) -m 0644 $(BUILD)/$${u#systemd/} $(DESTDIR)$(systemdsystemunitdir)/ || exit 1; done
	$(INSTALL) -m 0644 systemd/vtl.sysusers $(DESTDIR)$(sysusersdir)/vtl.conf
else
	@echo "systemd units not installed: they need localstatedir=/var and runstatedir=/run (docs/install.md)"
endif

# Removes what install put down. vtl.conf goes only while it equals the example; an edited one stays
# (and so do its folder and the state folder while they hold anything).
uninstall:
	rm -f $(INSTALLED:%=$(DESTDIR)%)
	@c=$(DESTDIR)$(sysconfdir)/vtl/vtl.conf; if [ -e "$$c" ]; then \
		if sed $(SED_PATHS) etc/vtl.conf.example | cmp -s - "$$c"; then rm -f "$$c"; \
		else echo "kept $$c: it differs from the installed example"; fi; fi
	-rmdir $(DESTDIR)$(docdir)/docs/img $(DESTDIR)$(docdir)/docs $(DESTDIR)$(docdir) $(DESTDIR)$(sysconfdir)/vtl $(DESTDIR)$(localstatedir)/lib/vtl 2>/dev/null

# The programs and their manual pages, no test: what a package build needs (debian/rules), with the
# layering checks the build always runs.
.PHONY: programs deb
programs: $(BUILD)/layers.ok $(BUILD)/includes.ok $(PROGRAMS) $(MAN5)

# The Debian package (docs/install.md, "Debian package"): built by scripts/build-deb from a clean copy
# of the tree in $(BUILD)/deb/src, left as $(BUILD)/deb/vtl_*.deb and checked by lintian; built again
# only when a file of the tree changed.
deb: deb-deps
	@scripts/build-deb $(BUILD)
.PHONY: deb-deps
deb-deps:
	@scripts/install-deps deb
