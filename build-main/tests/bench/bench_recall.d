build-main/tests/bench/bench_recall: tests/bench/bench_recall.c \
 backend/cartridge.h common/vtl_error.h backend/pool.h catalog/catalog.h \
 common/crc32c.h migrator/migrate.h vtl/config.h migrator/copy.h \
 migrator/phys.h migrator/stream.h migrator/phys_sim.h migrator/policy.h \
 vtl/media.h tests/bench/bench_util.h
backend/cartridge.h:
common/vtl_error.h:
backend/pool.h:
catalog/catalog.h:
common/crc32c.h:
migrator/migrate.h:
vtl/config.h:
migrator/copy.h:
migrator/phys.h:
migrator/stream.h:
migrator/phys_sim.h:
migrator/policy.h:
vtl/media.h:
tests/bench/bench_util.h:
