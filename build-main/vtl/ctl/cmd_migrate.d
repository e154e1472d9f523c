build-main/vtl/ctl/cmd_migrate.o: vtl/ctl/cmd_migrate.c \
 common/vtl_error.h vtl/ctl/ctl.h backend/pool.h catalog/catalog.h \
 vtl/config.h
common/vtl_error.h:
vtl/ctl/ctl.h:
backend/pool.h:
catalog/catalog.h:
vtl/config.h:
