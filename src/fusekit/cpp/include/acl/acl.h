// The ACL runtime calls of a host program, for fusekit's simulator (written for fusekit from the ACL API
// documentation, "acl API reference" on hiascend.com; not a CANN header).
//
// Device memory (aclrtMalloc) lives in the simulator, at addresses no host memory uses: a host program hands
// them to aclrtMemcpy and to kernel<<<...>>>(...) launches, and dereferencing one on the host faults, as it
// does on the NPU's host. Streams run their work at once (a launch returns when the kernel has run), so
// aclrtSynchronizeStream has nothing to wait for. An ACL call used wrongly returns the documented error code
// and prints why, naming the call's file:line.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "../fusekit/bridge.h"
#include "../fusekit/half.h"

typedef int aclError;
typedef void* aclrtStream;
typedef void* aclrtContext;
typedef void* aclrtEvent;
typedef uint16_t aclFloat16;

static constexpr aclError ACL_SUCCESS = 0;
static constexpr aclError ACL_ERROR_NONE = 0;
static constexpr aclError ACL_ERROR_INVALID_PARAM = 100000;
static constexpr aclError ACL_ERROR_UNINITIALIZE = 100001;
static constexpr aclError ACL_ERROR_REPEAT_INITIALIZE = 100002;
static constexpr aclError ACL_ERROR_BAD_ALLOC = 200000;
static constexpr aclError ACL_ERROR_INVALID_DEVICE = 107001;

enum aclrtMemMallocPolicy {
    ACL_MEM_MALLOC_HUGE_FIRST, ACL_MEM_MALLOC_HUGE_ONLY, ACL_MEM_MALLOC_NORMAL_ONLY,
    ACL_MEM_MALLOC_HUGE_FIRST_P2P, ACL_MEM_MALLOC_HUGE_ONLY_P2P, ACL_MEM_MALLOC_NORMAL_ONLY_P2P,
};
enum aclrtMemcpyKind {
    ACL_MEMCPY_HOST_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_DEVICE_TO_DEVICE,
    ACL_MEMCPY_DEFAULT,
};
enum aclrtRunMode { ACL_DEVICE, ACL_HOST };

namespace fusekit::acl {
// one ACL call answered by the simulator (fusekit/cpp/acl.py): its result's integer
template <class... A> int64_t call(const char* name, const Site& site, const A&... args) {
    return send(name, 0, site, args...).i;
}
inline const char*& last_error() { static const char* text = ""; return text; }
}  // namespace fusekit::acl

inline aclError aclInit(const char* configPath, fusekit::Site s = {}) {
    return aclError(fusekit::acl::call("fusekit.acl.aclInit", s));
}
inline aclError aclFinalize(fusekit::Site s = {}) { return aclError(fusekit::acl::call("fusekit.acl.aclFinalize", s)); }
inline aclError aclrtSetDevice(int32_t deviceId, fusekit::Site s = {}) {
    return aclError(fusekit::acl::call("fusekit.acl.aclrtSetDevice", s, deviceId));
}
inline aclError aclrtResetDevice(int32_t deviceId, fusekit::Site s = {}) {
    return aclError(fusekit::acl::call("fusekit.acl.aclrtResetDevice", s, deviceId));
}
inline aclError aclrtGetDevice(int32_t* deviceId) { *deviceId = 0; return ACL_SUCCESS; }
inline aclError aclrtGetDeviceCount(uint32_t* count) { *count = 1; return ACL_SUCCESS; }
inline aclError aclrtGetRunMode(aclrtRunMode* mode) { *mode = ACL_HOST; return ACL_SUCCESS; }
inline aclError aclrtCreateContext(aclrtContext* context, int32_t) {
    static int token;
    *context = &token;
    return ACL_SUCCESS;
}
inline aclError aclrtDestroyContext(aclrtContext) { return ACL_SUCCESS; }
inline aclError aclrtSetCurrentContext(aclrtContext) { return ACL_SUCCESS; }
inline aclError aclrtCreateStream(aclrtStream* stream) {
    static int token;
    *stream = &token;
    return ACL_SUCCESS;
}
inline aclError aclrtDestroyStream(aclrtStream) { return ACL_SUCCESS; }
inline aclError aclrtSynchronizeStream(aclrtStream) { return ACL_SUCCESS; }  // launches have run already
inline aclError aclrtSynchronizeDevice() { return ACL_SUCCESS; }

inline aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy policy, fusekit::Site s = {}) {
    if (devPtr == nullptr) return ACL_ERROR_INVALID_PARAM;
    int64_t address = fusekit::acl::call("fusekit.acl.aclrtMalloc", s, uint64_t(size));
    *devPtr = reinterpret_cast<void*>(static_cast<uintptr_t>(address));
    return address ? ACL_SUCCESS : ACL_ERROR_BAD_ALLOC;
}
inline aclError aclrtFree(void* devPtr, fusekit::Site s = {}) {
    return aclError(fusekit::acl::call("fusekit.acl.aclrtFree", s, static_cast<const void*>(devPtr)));
}
inline aclError aclrtMallocHost(void** hostPtr, size_t size) {
    if (hostPtr == nullptr) return ACL_ERROR_INVALID_PARAM;
    *hostPtr = std::aligned_alloc(64, (size + 63) / 64 * 64 + 64);  // never 0 bytes: a valid pointer for size 0
    return *hostPtr ? ACL_SUCCESS : ACL_ERROR_BAD_ALLOC;
}
inline aclError aclrtFreeHost(void* hostPtr) { std::free(hostPtr); return ACL_SUCCESS; }

// every kind goes to the simulator, which knows which addresses are device memory and checks the kind against them
inline aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind,
                            fusekit::Site s = {}) {
    return aclError(fusekit::acl::call("fusekit.acl.aclrtMemcpy", s, static_cast<const void*>(dst), uint64_t(destMax),
                                       src, uint64_t(count), int32_t(kind)));
}
inline aclError aclrtMemcpyAsync(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind,
                                 aclrtStream, fusekit::Site s = {}) {
    return aclrtMemcpy(dst, destMax, src, count, kind, s);
}
inline aclError aclrtMemset(void* devPtr, size_t maxCount, int32_t value, size_t count, fusekit::Site s = {}) {
    return aclError(fusekit::acl::call("fusekit.acl.aclrtMemset", s, static_cast<const void*>(devPtr),
                                       uint64_t(maxCount), value, uint64_t(count)));
}
inline const char* aclGetRecentErrMsg() { return fusekit::acl::last_error(); }

inline float aclFloat16ToFloat(aclFloat16 value) { return fusekit::half_to_float(value); }
inline aclFloat16 aclFloatToFloat16(float value) { return fusekit::half_from_float(value); }
