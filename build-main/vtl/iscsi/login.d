build-main/vtl/iscsi/login.o: vtl/iscsi/login.c vtl/iscsi/login.h \
 vtl/iscsi/chap.h common/md5.h vtl/iscsi/pdu.h vtl/iscsi/text.h
vtl/iscsi/login.h:
vtl/iscsi/chap.h:
common/md5.h:
vtl/iscsi/pdu.h:
vtl/iscsi/text.h:
