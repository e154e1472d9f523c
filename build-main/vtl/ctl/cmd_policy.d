build-main/vtl/ctl/cmd_policy.o: vtl/ctl/cmd_policy.c common/vtl_error.h \
 vtl/ctl/ctl.h backend/pool.h catalog/catalog.h vtl/config.h
common/vtl_error.h:
vtl/ctl/ctl.h:
backend/pool.h:
catalog/catalog.h:
vtl/config.h:
