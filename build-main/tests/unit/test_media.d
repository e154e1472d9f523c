build-main/tests/unit/test_media: tests/unit/test_media.c \
 common/vtl_error.h tests/unit/testlib.h backend/cartridge.h \
 backend/pool.h vtl/media.h catalog/catalog.h
common/vtl_error.h:
tests/unit/testlib.h:
backend/cartridge.h:
backend/pool.h:
vtl/media.h:
catalog/catalog.h:
