build-main/vtl/ctl/cmd_move.o: vtl/ctl/cmd_move.c common/vtl_error.h \
 vtl/ctl/ctl.h backend/pool.h catalog/catalog.h vtl/config.h vtl/media.h
common/vtl_error.h:
vtl/ctl/ctl.h:
backend/pool.h:
catalog/catalog.h:
vtl/config.h:
vtl/media.h:
