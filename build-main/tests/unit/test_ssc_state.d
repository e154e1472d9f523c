build-main/tests/unit/test_ssc_state: tests/unit/test_ssc_state.c \
 tests/unit/scsi_host.h tests/unit/testlib.h backend/cartridge.h \
 common/vtl_error.h backend/pool.h catalog/catalog.h vtl/scsi/ssc.h \
 vtl/media.h vtl/scsi/cmd.h vtl/scsi/sense.h vtl/scsi/spc.h \
 common/bytes.h
tests/unit/scsi_host.h:
tests/unit/testlib.h:
backend/cartridge.h:
common/vtl_error.h:
backend/pool.h:
catalog/catalog.h:
vtl/scsi/ssc.h:
vtl/media.h:
vtl/scsi/cmd.h:
vtl/scsi/sense.h:
vtl/scsi/spc.h:
common/bytes.h:
