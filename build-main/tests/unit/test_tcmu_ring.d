build-main/tests/unit/test_tcmu_ring: tests/unit/test_tcmu_ring.c \
 vtl/tcmu/uapi.h common/vtl_error.h tests/unit/scsi_host.h \
 tests/unit/testlib.h backend/cartridge.h backend/pool.h \
 catalog/catalog.h vtl/scsi/ssc.h vtl/media.h vtl/scsi/cmd.h \
 vtl/scsi/sense.h vtl/scsi/spc.h common/bytes.h vtl/tcmu/front.h \
 vtl/lu_worker.h vtl/tcmu/ring.h
vtl/tcmu/uapi.h:
common/vtl_error.h:
tests/unit/scsi_host.h:
tests/unit/testlib.h:
backend/cartridge.h:
backend/pool.h:
catalog/catalog.h:
vtl/scsi/ssc.h:
vtl/media.h:
vtl/scsi/cmd.h:
vtl/scsi/sense.h:
vtl/scsi/spc.h:
common/bytes.h:
vtl/tcmu/front.h:
vtl/lu_worker.h:
vtl/tcmu/ring.h:
