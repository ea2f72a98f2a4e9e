/*
 * deps.h -- the files a source reads besides itself: its folder, and the
 * headers it includes from there.
 *
 * A source compiled from a user's file says where that file is by a line
 * "//!kforge include-dir DIR" (RTC_INCLUDE_DIRECTIVE, an absolute folder).
 * NVRTC then compiles it as if it were a file in DIR (the program's name is
 * DIR/<name>: a quoted #include is looked for beside the including file,
 * never in the current directory) with --include-path=DIR, so
 * `#include "helper.h"` beside the .cu is found from any directory.
 *
 * NVRTC (13.0) has no dependency output and no preprocess-only mode, so the
 * files are found the way NVRTC finds them: every #include line of the
 * source and, recursively, of each file found (inside #if blocks too: more
 * files than the compile reads, never fewer); a quoted name beside the
 * including file, then in DIR; an angle-bracket name in DIR.  A name not
 * found there is a system header (the CUDA toolkit's, which the NVRTC
 * version in the cache key stands for).  An #include whose operand is a
 * macro cannot be followed: then every regular file in DIR counts.
 */
#ifndef KF_DEPS_H
#define KF_DEPS_H

#include <stdbool.h>
#include <stddef.h>

#define RTC_INCLUDE_DIRECTIVE "//!kforge include-dir "

/* The folder of src's first include-dir line (len bytes at most): false if
 * it has none (or it does not fit). */
bool rtc_include_dir(const char *src, char *dir, size_t len);

/* The files src reads besides itself, a line "PATH LEN HASH" each (in the
 * order found), "" when src has no include-dir line.  malloc'd; NULL out of
 * memory. */
char *rtc_deps_text(const char *src);

#endif
