build-main/tests/bench/bench_iscsi: tests/bench/bench_iscsi.c \
 tests/integration/hostlib.h
tests/integration/hostlib.h:
