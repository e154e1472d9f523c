build-main/backend/pool.o: backend/pool.c backend/pool.h \
 common/vtl_error.h backend/internal.h backend/cartridge.h \
 backend/format.h backend/workers.h
backend/pool.h:
common/vtl_error.h:
backend/internal.h:
backend/cartridge.h:
backend/format.h:
backend/workers.h:
