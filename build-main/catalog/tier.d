build-main/catalog/tier.o: catalog/tier.c catalog/cat_internal.h \
 common/grow.h catalog/catalog.h common/vtl_error.h
catalog/cat_internal.h:
common/grow.h:
catalog/catalog.h:
common/vtl_error.h:
