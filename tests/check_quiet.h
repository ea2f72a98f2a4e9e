/*
 * check_quiet.h -- Check's assertions without a write(2) when they pass.
 *
 * Check's ck_assert_msg (and every ck_assert_* built on it) calls
 * _mark_point on success, which writes the file and line to the pipe or
 * file through which a forked test reports back: a system call per passing
 * assertion.  A test that asserts on every element of a million-element
 * buffer spends most of its time there (test_verify: 18.5 million writes,
 * 24 of its 25 seconds).  Included after <check.h>, this redefines
 * ck_assert_msg to test the same expression and fail the same way, with the
 * same message, but to call into Check only when it fails.  What is lost:
 * a test that crashes between two assertions is reported at its start
 * instead of at the last assertion it passed.
 *
 * Check 0.13 dropped the NULL that ended _ck_assert_failed's arguments;
 * with an older Check the assertions stay as they are.
 */
#ifndef KF_CHECK_QUIET_H
#define KF_CHECK_QUIET_H

#include <check.h>

#if CHECK_MAJOR_VERSION > 0 || CHECK_MINOR_VERSION >= 13
#undef ck_assert_msg
#define ck_assert_msg(expr, ...) \
    ((expr) ? (void)0 : _ck_assert_failed(__FILE__, __LINE__, "Assertion '" #expr "' failed", ##__VA_ARGS__))
#endif

#endif
