build-main/tests/unit/test_pool: tests/unit/test_pool.c \
 backend/cartridge.h common/vtl_error.h backend/pool.h \
 tests/unit/testlib.h
backend/cartridge.h:
common/vtl_error.h:
backend/pool.h:
tests/unit/testlib.h:
