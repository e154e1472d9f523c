build-main/tests/bench/bench_migrate: tests/bench/bench_migrate.c \
 backend/cartridge.h common/vtl_error.h backend/pool.h migrator/copy.h \
 migrator/phys.h migrator/stream.h tests/bench/bench_util.h \
 migrator/phys_sim.h
backend/cartridge.h:
common/vtl_error.h:
backend/pool.h:
migrator/copy.h:
migrator/phys.h:
migrator/stream.h:
tests/bench/bench_util.h:
migrator/phys_sim.h:
