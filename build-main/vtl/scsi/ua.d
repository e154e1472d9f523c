build-main/vtl/scsi/ua.o: vtl/scsi/ua.c vtl/scsi/ua.h vtl/scsi/sense.h
vtl/scsi/ua.h:
vtl/scsi/sense.h:
