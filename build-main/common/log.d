build-main/common/log.o: common/log.c common/log.h
common/log.h:
