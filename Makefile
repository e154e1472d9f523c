# SPDX-License-Identifier: Apache-2.0
# The build and test contract: `make run`, `make check`, `make asan`, `make bench`, `make soak`.

CC      ?= cc
BUILD   ?= build
OPT     ?= -O2
CFLAGS_BASE := -std=c11 -Wall -Wextra -Werror -g $(OPT) -D_GNU_SOURCE -I. -pthread
CFLAGS_EXTRA ?=
CFLAGS_ALL = $(CFLAGS_BASE) $(CFLAGS_EXTRA)
LDLIBS  := -lsqlite3 -llz4 -liscsi -lsgutils2 -lm -lpthread
TEST_LDLIBS := -lcmocka $(LDLIBS)

COMMON_SRC  := $(wildcard common/*.c)
BACKEND_SRC := $(wildcard backend/*.c)
CATALOG_SRC := $(wildcard catalog/*.c)
VTL_SRC     := $(wildcard vtl/*.c vtl/scsi/*.c vtl/iscsi/*.c vtl/tcmu/*.c)
# The migrator's modules (physical tape access, streaming engine, copies); main.c is the daemon.
MIGRATOR_SRC := $(filter-out migrator/main.c,$(wildcard migrator/*.c))
LIB_SRC     := $(COMMON_SRC) $(BACKEND_SRC) $(CATALOG_SRC) $(VTL_SRC) $(MIGRATOR_SRC)
LIB_OBJ     := $(LIB_SRC:%.c=$(BUILD)/%.o)
LIB         := $(BUILD)/libvtl.a

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

.PHONY: all deps check unit integration kernel fuzz asan bench soak run clean
PROGRAMS    := $(if $(VTLCTL_SRC),$(VTLCTL)) $(if $(VTLD_SRC),$(VTLD)) $(if $(MIGRATOR_MAIN),$(MIGRATOR))
all: $(LIB) $(PROGRAMS) $(UNIT_BIN) $(BENCH_BIN) $(INTEG_BIN) $(KERNEL_CHECK)

deps:
	@scripts/install-deps

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

$(LIB): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

# Every unit test program is linked with the shared test helpers (tests/unit/testlib.h).
$(UNIT_BIN): $(BUILD)/tests/unit/%: tests/unit/%.c $(TESTLIB_OBJ) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP $< -o $@ $(TESTLIB_OBJ) $(LIB) $(TEST_LDLIBS)

$(VTLCTL): $(VTLCTL_SRC:%.c=$(BUILD)/%.o) $(LIB)
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDLIBS)

$(VTLD): $(VTLD_SRC:%.c=$(BUILD)/%.o) $(LIB)
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDLIBS)

$(MIGRATOR): $(MIGRATOR_MAIN:%.c=$(BUILD)/%.o) $(LIB)
	$(CC) $(CFLAGS_ALL) $^ -o $@ $(LDLIBS)

# libFuzzer needs clang; each target is built with all the library sources under ASan + UBSan.
FUZZ_LIB_SRC := $(LIB_SRC)
$(BUILD)/fuzz/%: tests/fuzz/%.c $(FUZZ_LIB_SRC) $(wildcard tests/fuzz/*.h)
	@mkdir -p $(dir $@)
	clang $(CFLAGS_BASE) -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		$< $(FUZZ_LIB_SRC) -o $@ $(LDLIBS)

fuzz: $(FUZZ_BIN)
	@tests/run-fuzz $(BUILD) $(FUZZ_SECONDS) $(FUZZ_BIN)

$(BUILD)/tests/bench/%: tests/bench/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP $< -o $@ $(LIB) $(LDLIBS)

# The iSCSI benchmark is a host: it uses libiscsi, not the library (bench_iscsi.sh starts vtld for it).
$(BUILD)/tests/bench/bench_iscsi: tests/bench/bench_iscsi.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP $< -o $@ -liscsi -llz4

# Every tier this machine can run: unit (cmocka), integration (the programs, end to end), kernel
# and a short fuzz run (libFuzzer, FUZZ_CHECK_SECONDS per target).
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
	$(CC) $(CFLAGS_ALL) -MMD -MP $< -o $@ -liscsi

# A library-side client (e.g. the migrator's iSCSI physical library against vtld) links libvtl.
ifneq ($(INTEG_VTL),)
$(INTEG_VTL): $(BUILD)/tests/integration/%: tests/integration/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP $< -o $@ $(LIB) $(LDLIBS)
endif

# A shim is preloaded into a libiscsi program (see its header comment). It is built without
# CFLAGS_EXTRA: a sanitizer runtime cannot be preloaded into a program built without it.
$(BUILD)/tests/integration/%_shim.so: tests/integration/%_shim.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) -shared -fPIC -MMD -MP $< -o $@ -ldl

-include $(INTEG_BIN:=.d)

$(KERNEL_CHECK): $(BUILD)/tests/kernel/%: tests/kernel/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP $< -o $@ $(LIB) $(LDLIBS)

-include $(KERNEL_CHECK:=.d)

# The kernel tier: a real Linux (the host's Debian kernel in qemu) as an iSCSI host (tests/kernel/).
# The power cuts of the kernel tier (tests/kernel/test_powercut.sh): POWERCUT_TRIALS in make kernel,
# 3 of every 10 during vtl-migrator's copy, release and recall (iscsi_recall is their host).
POWERCUT_TRIALS ?= 10
POWERCUT_HOST := $(BUILD)/tests/integration/iscsi_crashwrite $(BUILD)/tests/integration/iscsi_recall
kernel: $(PROGRAMS) $(KERNEL_CHECK) $(POWERCUT_HOST)
	@POWERCUT_TRIALS=$(POWERCUT_TRIALS) sh tests/kernel/test_kernel.sh $(BUILD)

# The long runs, not part of make check: the kill -9 test of vtld (20 trials in make integration) with
# SOAK_TRIALS, the kill -9 test of vtl-migrator (10 trials in make integration) with MIGKILL_SOAK_TRIALS,
# then the power cuts (POWERCUT_TRIALS in make kernel, the migrator's among them) with SOAK_POWERCUT_TRIALS
# and their controls (a vtld without syncs must lose acknowledged data; a vtl-migrator whose tape files are
# never synced must leave a copy called good that is not); all run, any failing fails it.
SOAK_TRIALS ?= 200
MIGKILL_SOAK_TRIALS ?= 100
SOAK_POWERCUT_TRIALS ?= 40
soak: deps
	@$(MAKE) --no-print-directory $(PROGRAMS) $(INTEG_BIN)
	@rc=0; sh tests/integration/test_crash_kill.sh $(BUILD) $(SOAK_TRIALS) || rc=1; \
		sh tests/integration/test_migrator_kill.sh $(BUILD) $(MIGKILL_SOAK_TRIALS) || rc=1; \
		VTL_POWERCUT_CONTROL=1 sh tests/kernel/test_powercut.sh $(BUILD) $(SOAK_POWERCUT_TRIALS) || rc=1; exit $$rc

unit: $(UNIT_BIN)
	@tests/run-unit $(UNIT_BIN)

asan: deps
	@$(MAKE) --no-print-directory BUILD=build-asan OPT=-O1 \
		CFLAGS_EXTRA="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
		LDLIBS="-fsanitize=address,undefined -lsqlite3 -llz4 -liscsi -lsgutils2 -lm -lpthread" unit integration

bench: deps
	@$(MAKE) --no-print-directory $(BENCH_BIN) $(PROGRAMS)
	@tests/bench/run $(BENCH_BIN)

# Creates a default library under $(VTL_HOME) (default ./var) on first run and starts vtld in the
# foreground on 127.0.0.1:$(VTL_PORT) (default 3260).
run: deps all
	@scripts/vtl-run $(BUILD)

clean:
	rm -rf build build-asan

-include $(VTLCTL_SRC:%.c=$(BUILD)/%.d) $(VTLD_SRC:%.c=$(BUILD)/%.d) $(MIGRATOR_MAIN:%.c=$(BUILD)/%.d) $(LIB_OBJ:.o=.d) $(TESTLIB_OBJ:.o=.d) $(UNIT_BIN:=.d) $(BENCH_BIN:=.d)
