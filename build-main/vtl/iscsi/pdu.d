build-main/vtl/iscsi/pdu.o: vtl/iscsi/pdu.c vtl/iscsi/pdu.h \
 common/crc32c.h
vtl/iscsi/pdu.h:
common/crc32c.h:
