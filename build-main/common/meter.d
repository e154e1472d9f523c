build-main/common/meter.o: common/meter.c common/meter.h
common/meter.h:
