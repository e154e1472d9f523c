build-main/tests/unit/test_damage: tests/unit/test_damage.c \
 backend/cartridge.h common/vtl_error.h backend/pool.h backend/format.h \
 tests/unit/testlib.h
backend/cartridge.h:
common/vtl_error.h:
backend/pool.h:
backend/format.h:
tests/unit/testlib.h:
