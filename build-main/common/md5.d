build-main/common/md5.o: common/md5.c common/md5.h
common/md5.h:
