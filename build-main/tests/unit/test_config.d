build-main/tests/unit/test_config: tests/unit/test_config.c \
 common/vtl_error.h tests/unit/testlib.h backend/cartridge.h \
 backend/pool.h vtl/config.h catalog/catalog.h
common/vtl_error.h:
tests/unit/testlib.h:
backend/cartridge.h:
backend/pool.h:
vtl/config.h:
catalog/catalog.h:
