build-main/vtl/ctl/cmd_catalog.o: vtl/ctl/cmd_catalog.c \
 backend/cartridge.h common/vtl_error.h backend/pool.h vtl/ctl/ctl.h \
 catalog/catalog.h vtl/config.h vtl/media.h
backend/cartridge.h:
common/vtl_error.h:
backend/pool.h:
vtl/ctl/ctl.h:
catalog/catalog.h:
vtl/config.h:
vtl/media.h:
