build-main/tests/bench/bench_hostile: tests/bench/bench_hostile.c \
 tests/bench/bench_util.h tests/integration/attack.h \
 tests/integration/rawlib.h
tests/bench/bench_util.h:
tests/integration/attack.h:
tests/integration/rawlib.h:
