build-main/tests/unit/test_cartridge: tests/unit/test_cartridge.c \
 backend/cartridge.h common/vtl_error.h backend/pool.h \
 tests/unit/testlib.h
backend/cartridge.h:
common/vtl_error.h:
backend/pool.h:
tests/unit/testlib.h:
