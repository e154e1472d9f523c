build-main/vtl/ctl/out.o: vtl/ctl/out.c common/vtl_error.h vtl/ctl/ctl.h \
 backend/pool.h catalog/catalog.h vtl/config.h
common/vtl_error.h:
vtl/ctl/ctl.h:
backend/pool.h:
catalog/catalog.h:
vtl/config.h:
