build-main/vtl/ctl/cmd_cartridge.o: vtl/ctl/cmd_cartridge.c \
 backend/cartridge.h common/vtl_error.h backend/pool.h common/grow.h \
 vtl/ctl/ctl.h catalog/catalog.h vtl/config.h vtl/media.h
backend/cartridge.h:
common/vtl_error.h:
backend/pool.h:
common/grow.h:
vtl/ctl/ctl.h:
catalog/catalog.h:
vtl/config.h:
vtl/media.h:
