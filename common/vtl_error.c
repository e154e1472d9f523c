/* SPDX-License-Identifier: Apache-2.0 */
#include "common/vtl_error.h"

const char *vtl_strerror(int err)
{
	switch (err) {
	case VTL_OK: return "success";
	case VTL_W_EARLY_WARNING: return "early warning: the end of the medium is near";
	case VTL_W_FILEMARK: return "a filemark was read";
	case VTL_E_INVAL: return "invalid argument";
	case VTL_E_IO: return "I/O error";
	case VTL_E_NOMEM: return "out of memory";
	case VTL_E_EXISTS: return "already exists";
	case VTL_E_NOTFOUND: return "not found";
	case VTL_E_BUSY: return "in use by another opener";
	case VTL_E_EOM: return "end of medium: the cartridge is full";
	case VTL_E_POOL_FULL: return "the disk pool is full";
	case VTL_E_MEDIUM: return "medium error: a record failed its checksum";
	case VTL_E_READONLY: return "opened read-only";
	case VTL_E_WORM: return "WORM medium: overwriting is not allowed";
	case VTL_E_CORRUPT: return "on-disk structure is corrupt";
	case VTL_E_CONFIG: return "configuration error";
	case VTL_E_EOD: return "end of data";
	case VTL_E_SRC_EMPTY: return "the source element is empty";
	case VTL_E_DST_FULL: return "the destination element is full";
	case VTL_E_INCOMPATIBLE: return "the drive cannot read this medium";
	case VTL_E_INACCESSIBLE: return "the robot cannot reach the element now";
	case VTL_E_ENCRYPTED: return "the block is encrypted and no key to decrypt it is set";
	case VTL_E_KEY: return "the block was encrypted with another key";
	case VTL_E_AUTH: return "the encrypted block failed its integrity check";
	case VTL_E_PLAIN: return "the block is not encrypted";
	}
	return "unknown error";
}
