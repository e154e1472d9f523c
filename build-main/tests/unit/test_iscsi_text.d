build-main/tests/unit/test_iscsi_text: tests/unit/test_iscsi_text.c \
 tests/unit/testlib.h backend/cartridge.h common/vtl_error.h \
 backend/pool.h vtl/iscsi/text.h
tests/unit/testlib.h:
backend/cartridge.h:
common/vtl_error.h:
backend/pool.h:
vtl/iscsi/text.h:
