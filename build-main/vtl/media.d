build-main/vtl/media.o: vtl/media.c vtl/media.h catalog/catalog.h \
 common/vtl_error.h
vtl/media.h:
catalog/catalog.h:
common/vtl_error.h:
