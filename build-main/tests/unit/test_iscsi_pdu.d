build-main/tests/unit/test_iscsi_pdu: tests/unit/test_iscsi_pdu.c \
 tests/unit/testlib.h backend/cartridge.h common/vtl_error.h \
 backend/pool.h vtl/iscsi/pdu.h
tests/unit/testlib.h:
backend/cartridge.h:
common/vtl_error.h:
backend/pool.h:
vtl/iscsi/pdu.h:
