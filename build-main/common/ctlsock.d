build-main/common/ctlsock.o: common/ctlsock.c common/ctlsock.h \
 common/jsonout.h common/log.h common/vtl_error.h
common/ctlsock.h:
common/jsonout.h:
common/log.h:
common/vtl_error.h:
