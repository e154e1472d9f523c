/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer's entry points (https://llvm.org/docs/LibFuzzer.html), which
 * each target defines and libFuzzer's main calls.
 */
#ifndef VTL_TESTS_FUZZ_ENTRY_H
#define VTL_TESTS_FUZZ_ENTRY_H

#include <stddef.h>
#include <stdint.h>

/* Runs one input; returns 0 (libFuzzer reserves other values). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Optional: called once before the first input, with main's arguments; returns 0. */
int LLVMFuzzerInitialize(int *argc, char ***argv);

#endif
