/*
 * time_limit.h -- for tests that guard against quadratic or per-item-slow
 * work with a wall-time bound: the bound in a plain build; 10 times it under
 * sanitizers and 50 times under valgrind (`make valgrind` preloads its
 * vgpreload library), where everything is slower but a blow-up is still far
 * beyond it.
 */
#ifndef KF_TEST_TIME_LIMIT_H
#define KF_TEST_TIME_LIMIT_H

#include <stdlib.h>
#include <string.h>

static inline double time_limit(double limit)
{
    const char *pre = getenv("LD_PRELOAD");
    if (pre && strstr(pre, "vgpreload"))
        return 50 * limit;
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    return 10 * limit;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
    return 10 * limit;
#endif
#endif
    return limit;
}

#endif
