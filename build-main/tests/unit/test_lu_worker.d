build-main/tests/unit/test_lu_worker: tests/unit/test_lu_worker.c \
 tests/unit/testlib.h backend/cartridge.h common/vtl_error.h \
 backend/pool.h vtl/lu_worker.h vtl/scsi/cmd.h vtl/scsi/sense.h
tests/unit/testlib.h:
backend/cartridge.h:
common/vtl_error.h:
backend/pool.h:
vtl/lu_worker.h:
vtl/scsi/cmd.h:
vtl/scsi/sense.h:
