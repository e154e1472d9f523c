build-main/vtl/config.o: vtl/config.c vtl/config.h backend/pool.h \
 common/vtl_error.h catalog/catalog.h vtl/media.h
vtl/config.h:
backend/pool.h:
common/vtl_error.h:
catalog/catalog.h:
vtl/media.h:
