// SPDX-License-Identifier: Apache-2.0
#include <stddef.h>
#include <stdint.h>

/// libFuzzer's driver (compiler-rt, LLVM 11 and later). Declared here so `signet-fuzz` can start
/// it from its own `main`: SwiftPM names an executable's entry point itself, so the `main` that
/// `-sanitize=fuzzer` brings cannot be the one that runs. Defined only in a `-sanitize=fuzzer` link.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
