build-main/catalog/library.o: catalog/library.c catalog/cat_internal.h \
 common/grow.h catalog/catalog.h common/vtl_error.h
catalog/cat_internal.h:
common/grow.h:
catalog/catalog.h:
common/vtl_error.h:
