// SPDX-License-Identifier: MIT
// clang thread-safety analysis macros (no-ops elsewhere).
#pragma once

#if defined(__clang__)
#define SWAPLAB_TSA(x) __attribute__((x))
#else
#define SWAPLAB_TSA(x)
#endif

#define CAPABILITY(x) SWAPLAB_TSA(capability(x))
#define SCOPED_CAPABILITY SWAPLAB_TSA(scoped_lockable)
#define GUARDED_BY(x) SWAPLAB_TSA(guarded_by(x))
#define PT_GUARDED_BY(x) SWAPLAB_TSA(pt_guarded_by(x))
#define REQUIRES(...) SWAPLAB_TSA(requires_capability(__VA_ARGS__))
#define ACQUIRE(...) SWAPLAB_TSA(acquire_capability(__VA_ARGS__))
#define RELEASE(...) SWAPLAB_TSA(release_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) SWAPLAB_TSA(try_acquire_capability(__VA_ARGS__))
#define EXCLUDES(...) SWAPLAB_TSA(locks_excluded(__VA_ARGS__))
#define ASSERT_CAPABILITY(x) SWAPLAB_TSA(assert_capability(x))
#define NO_THREAD_SAFETY_ANALYSIS SWAPLAB_TSA(no_thread_safety_analysis)
