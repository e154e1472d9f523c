build-main/vtl/iscsi/text.o: vtl/iscsi/text.c vtl/iscsi/text.h
vtl/iscsi/text.h:
