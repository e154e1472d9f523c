build-main/tests/unit/testlib.o: tests/unit/testlib.c \
 tests/unit/testlib.h backend/cartridge.h common/vtl_error.h \
 backend/pool.h
tests/unit/testlib.h:
backend/cartridge.h:
common/vtl_error.h:
backend/pool.h:
