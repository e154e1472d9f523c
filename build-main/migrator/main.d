build-main/migrator/main.o: migrator/main.c common/ctlsock.h common/log.h \
 common/vtl_error.h migrator/daemon.h vtl/config.h backend/pool.h \
 catalog/catalog.h
common/ctlsock.h:
common/log.h:
common/vtl_error.h:
migrator/daemon.h:
vtl/config.h:
backend/pool.h:
catalog/catalog.h:
