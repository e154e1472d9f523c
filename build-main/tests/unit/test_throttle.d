build-main/tests/unit/test_throttle: tests/unit/test_throttle.c \
 backend/cartridge.h common/vtl_error.h backend/pool.h \
 tests/unit/testlib.h vtl/throttle.h vtl/scsi/cmd.h vtl/scsi/sense.h
backend/cartridge.h:
common/vtl_error.h:
backend/pool.h:
tests/unit/testlib.h:
vtl/throttle.h:
vtl/scsi/cmd.h:
vtl/scsi/sense.h:
