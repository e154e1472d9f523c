build-main/vtl/scsi/sense.o: vtl/scsi/sense.c vtl/scsi/sense.h
vtl/scsi/sense.h:
