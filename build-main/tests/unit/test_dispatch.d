build-main/tests/unit/test_dispatch: tests/unit/test_dispatch.c \
 vtl/scsi/dispatch.h vtl/scsi/cmd.h vtl/scsi/sense.h vtl/scsi/reserve.h
vtl/scsi/dispatch.h:
vtl/scsi/cmd.h:
vtl/scsi/sense.h:
vtl/scsi/reserve.h:
