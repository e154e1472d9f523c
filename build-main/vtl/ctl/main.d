build-main/vtl/ctl/main.o: vtl/ctl/main.c vtl/ctl/ctl.h backend/pool.h \
 common/vtl_error.h catalog/catalog.h vtl/config.h
vtl/ctl/ctl.h:
backend/pool.h:
common/vtl_error.h:
catalog/catalog.h:
vtl/config.h:
