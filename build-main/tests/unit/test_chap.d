build-main/tests/unit/test_chap: tests/unit/test_chap.c common/md5.h \
 tests/unit/testlib.h backend/cartridge.h common/vtl_error.h \
 backend/pool.h vtl/iscsi/chap.h
common/md5.h:
tests/unit/testlib.h:
backend/cartridge.h:
common/vtl_error.h:
backend/pool.h:
vtl/iscsi/chap.h:
