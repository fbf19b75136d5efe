// SPDX-License-Identifier: Apache-2.0
// The declaration only (CLibFuzzer.h): the definition comes from compiler-rt when fuzzing.
