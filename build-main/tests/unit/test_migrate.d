build-main/tests/unit/test_migrate: tests/unit/test_migrate.c \
 backend/internal.h backend/cartridge.h common/vtl_error.h backend/pool.h \
 backend/format.h migrator/migrate.h catalog/catalog.h vtl/config.h \
 migrator/copy.h migrator/phys.h migrator/stream.h migrator/phys_sim.h \
 migrator/policy.h tests/unit/scsi_host.h tests/unit/testlib.h \
 vtl/scsi/ssc.h vtl/media.h vtl/scsi/cmd.h vtl/scsi/sense.h \
 vtl/scsi/spc.h common/bytes.h
backend/internal.h:
backend/cartridge.h:
common/vtl_error.h:
backend/pool.h:
backend/format.h:
migrator/migrate.h:
catalog/catalog.h:
vtl/config.h:
migrator/copy.h:
migrator/phys.h:
migrator/stream.h:
migrator/phys_sim.h:
migrator/policy.h:
tests/unit/scsi_host.h:
tests/unit/testlib.h:
vtl/scsi/ssc.h:
vtl/media.h:
vtl/scsi/cmd.h:
vtl/scsi/sense.h:
vtl/scsi/spc.h:
common/bytes.h:
