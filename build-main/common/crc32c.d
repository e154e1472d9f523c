build-main/common/crc32c.o: common/crc32c.c common/crc32c.h
common/crc32c.h:
