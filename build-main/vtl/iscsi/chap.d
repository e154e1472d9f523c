build-main/vtl/iscsi/chap.o: vtl/iscsi/chap.c vtl/iscsi/chap.h \
 common/md5.h common/vtl_error.h
vtl/iscsi/chap.h:
common/md5.h:
common/vtl_error.h:
