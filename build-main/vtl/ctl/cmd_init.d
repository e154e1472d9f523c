build-main/vtl/ctl/cmd_init.o: vtl/ctl/cmd_init.c backend/cartridge.h \
 common/vtl_error.h backend/pool.h vtl/ctl/ctl.h catalog/catalog.h \
 vtl/config.h
backend/cartridge.h:
common/vtl_error.h:
backend/pool.h:
vtl/ctl/ctl.h:
catalog/catalog.h:
vtl/config.h:
