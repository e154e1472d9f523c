build-main/tests/unit/test_log: tests/unit/test_log.c common/log.h \
 tests/unit/testlib.h backend/cartridge.h common/vtl_error.h \
 backend/pool.h
common/log.h:
tests/unit/testlib.h:
backend/cartridge.h:
common/vtl_error.h:
backend/pool.h:
