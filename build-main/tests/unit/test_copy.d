build-main/tests/unit/test_copy: tests/unit/test_copy.c backend/format.h \
 common/vtl_error.h backend/internal.h backend/cartridge.h backend/pool.h \
 migrator/copy.h migrator/phys.h migrator/stream.h migrator/phys_sim.h \
 tests/unit/testlib.h
backend/format.h:
common/vtl_error.h:
backend/internal.h:
backend/cartridge.h:
backend/pool.h:
migrator/copy.h:
migrator/phys.h:
migrator/stream.h:
migrator/phys_sim.h:
tests/unit/testlib.h:
