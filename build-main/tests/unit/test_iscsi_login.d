build-main/tests/unit/test_iscsi_login: tests/unit/test_iscsi_login.c \
 tests/unit/testlib.h backend/cartridge.h common/vtl_error.h \
 backend/pool.h vtl/iscsi/login.h vtl/iscsi/chap.h common/md5.h \
 vtl/iscsi/pdu.h vtl/iscsi/text.h
tests/unit/testlib.h:
backend/cartridge.h:
common/vtl_error.h:
backend/pool.h:
vtl/iscsi/login.h:
vtl/iscsi/chap.h:
common/md5.h:
vtl/iscsi/pdu.h:
vtl/iscsi/text.h:
