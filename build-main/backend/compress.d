build-main/backend/compress.o: backend/compress.c backend/compress.h \
 common/vtl_error.h backend/format.h backend/workers.h
backend/compress.h:
common/vtl_error.h:
backend/format.h:
backend/workers.h:
