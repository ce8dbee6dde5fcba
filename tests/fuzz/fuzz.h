/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * libFuzzer harnesses: each tests/fuzz/fuzz-NAME.c defines the entry
 * point; clang links it with libFuzzer (make fuzz), the ordinary
 * compiler with replay-main.c, which replays the committed corpus in
 * make check. A harness aborts on any broken invariant, so a finding is
 * a crash either way.
 */

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input as a NUL-terminated string (it may hold NULs of its own); NULL when out of memory. */
char *fuzz_strndup(const uint8_t *data, size_t size);

/* Split at each "\n%%%\n" into at most max parts: several files from one input. Returns the count. */
size_t fuzz_split(char *text, size_t size, char **parts, size_t *sizes, size_t max);

/* A fresh empty directory of this process's own (tmpfs when there is one); the same path each call. */
const char *fuzz_scratch_dir(void);
/* Write size bytes to dir/name, making dir; abort() if it cannot. */
void fuzz_write_file(const char *dir, const char *name, const char *data, size_t size);
/* Empty dir again (files and one level of subdirectories). */
void fuzz_clear_dir(const char *dir);

/*
 * abort() unless s is printable: well-formed UTF-8 with no code point
 * unicode_is_unsafe() names (controls, DEL, bidi controls, separators;
 * the newline allowed if allow_newlines).
 */
void fuzz_assert_printable(const char *s, int allow_newlines);

#define FUZZ_ASSERT(x) do { if (!(x)) fuzz_fail(__FILE__, __LINE__, #x); } while (0)
_Noreturn void fuzz_fail(const char *file, int line, const char *what);
