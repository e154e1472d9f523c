build-main/common/grow.o: common/grow.c common/grow.h common/vtl_error.h
common/grow.h:
common/vtl_error.h:
