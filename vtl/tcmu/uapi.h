/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kernel's TCMU UAPI header, with glibc's struct iovec: the header pulls
 * in <linux/uio.h>, whose own struct iovec clashes with <sys/uio.h>'s (the
 * layout is the same), so that one is kept out.
 */
#ifndef VTL_TCMU_UAPI_H
#define VTL_TCMU_UAPI_H

#include <sys/uio.h>
#ifndef __LINUX_UIO_H
#define __LINUX_UIO_H
#endif
#include <linux/types.h>
#include <linux/target_core_user.h>

#endif
