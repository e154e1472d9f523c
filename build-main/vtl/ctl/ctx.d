build-main/vtl/ctl/ctx.o: vtl/ctl/ctx.c backend/cartridge.h \
 common/vtl_error.h backend/pool.h common/ctlsock.h vtl/ctl/ctl.h \
 catalog/catalog.h vtl/config.h
backend/cartridge.h:
common/vtl_error.h:
backend/pool.h:
common/ctlsock.h:
vtl/ctl/ctl.h:
catalog/catalog.h:
vtl/config.h:
