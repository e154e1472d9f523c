build-main/tests/unit/test_ctlsock: tests/unit/test_ctlsock.c \
 common/ctlsock.h common/vtl_error.h tests/unit/testlib.h \
 backend/cartridge.h backend/pool.h
common/ctlsock.h:
common/vtl_error.h:
tests/unit/testlib.h:
backend/cartridge.h:
backend/pool.h:
