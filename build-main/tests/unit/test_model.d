build-main/tests/unit/test_model: tests/unit/test_model.c \
 backend/cartridge.h common/vtl_error.h backend/pool.h \
 tests/unit/testlib.h
backend/cartridge.h:
common/vtl_error.h:
backend/pool.h:
tests/unit/testlib.h:
