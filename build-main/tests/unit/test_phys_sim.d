build-main/tests/unit/test_phys_sim: tests/unit/test_phys_sim.c \
 common/vtl_error.h migrator/phys_sim.h migrator/phys.h backend/pool.h \
 tests/unit/testlib.h backend/cartridge.h
common/vtl_error.h:
migrator/phys_sim.h:
migrator/phys.h:
backend/pool.h:
tests/unit/testlib.h:
backend/cartridge.h:
