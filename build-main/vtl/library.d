build-main/vtl/library.o: vtl/library.c vtl/library.h backend/pool.h \
 common/vtl_error.h catalog/catalog.h vtl/scsi/ssc.h vtl/media.h \
 vtl/scsi/cmd.h vtl/scsi/sense.h vtl/scsi/spc.h common/bytes.h \
 backend/cartridge.h common/ctlsock.h common/log.h vtl/config.h
vtl/library.h:
backend/pool.h:
common/vtl_error.h:
catalog/catalog.h:
vtl/scsi/ssc.h:
vtl/media.h:
vtl/scsi/cmd.h:
vtl/scsi/sense.h:
vtl/scsi/spc.h:
common/bytes.h:
backend/cartridge.h:
common/ctlsock.h:
common/log.h:
vtl/config.h:
