build-main/migrator/stream.o: migrator/stream.c migrator/stream.h \
 common/vtl_error.h
migrator/stream.h:
common/vtl_error.h:
