build-main/tests/unit/test_catalog: tests/unit/test_catalog.c \
 catalog/catalog.h common/vtl_error.h tests/unit/testlib.h \
 backend/cartridge.h backend/pool.h
catalog/catalog.h:
common/vtl_error.h:
tests/unit/testlib.h:
backend/cartridge.h:
backend/pool.h:
