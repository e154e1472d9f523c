build-main/tests/unit/test_policy: tests/unit/test_policy.c \
 backend/cartridge.h common/vtl_error.h backend/pool.h migrator/policy.h \
 catalog/catalog.h vtl/config.h tests/unit/scsi_host.h \
 tests/unit/testlib.h vtl/scsi/ssc.h vtl/media.h vtl/scsi/cmd.h \
 vtl/scsi/sense.h vtl/scsi/spc.h common/bytes.h
backend/cartridge.h:
common/vtl_error.h:
backend/pool.h:
migrator/policy.h:
catalog/catalog.h:
vtl/config.h:
tests/unit/scsi_host.h:
tests/unit/testlib.h:
vtl/scsi/ssc.h:
vtl/media.h:
vtl/scsi/cmd.h:
vtl/scsi/sense.h:
vtl/scsi/spc.h:
common/bytes.h:
