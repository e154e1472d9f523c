build-main/tests/unit/test_meter: tests/unit/test_meter.c common/meter.h
common/meter.h:
