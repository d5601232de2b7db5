// Ascend C's kernel API for fusekit's simulator (written for fusekit from the Ascend C API documentation; not a
// CANN header). Each call forwards to the simulator that runs pyasc kernels (fusekit/bridge.h), so the same
// instruction has one implementation of its semantics and rules; scalar code (loops, index arithmetic, tiling
// structs) is compiled and runs natively.
#pragma once
#include <cstdarg>
#include <cstdint>
#include <cstdio>

#include "fusekit/bridge.h"
#include "fusekit/half.h"
#include "fusekit/generated.h"
#include "fusekit/std.h"

// Function and address-space qualifiers of the Ascend C dialect: nothing to a host compiler.
#ifndef __global__  // fusekit's compile defines it as a marker its glue finds the kernels by
#define __global__
#endif
#define __aicore__
#define __vector__
// A kernel's type (AD 核函数: __cube__ runs it on AIC cores, __mix__(c, v) on an AIC and its AIVs): fusekit's compile
// defines these two as marker words its glue reads the kernel type by (fusekit/cpp/glue.py), deleted after
#ifndef __cube__
#define __cube__
#endif
#ifndef __mix__
#define __mix__(...)
#endif
#define __gm__
#define __ubuf__
#define __inline__ inline
#define GM_ADDR __gm__ uint8_t*
#ifndef __CCE_KT_TEST__
#define __CCE_KT_TEST__ 0
#endif
// The core kind a kernel's code runs on (`if ASCEND_IS_AIV { ... }`): the launch's (AIC for a __cube__ kernel),
// asked of the simulator at the line that reads it, as pyasc's ascend_is_aiv() / ascend_is_aic()
#define ASCEND_IS_AIV (::fusekit::value_of<bool>(::fusekit::send("AscendIsAiv", 0, ::fusekit::Site(__FILE__, __LINE__))))
#define ASCEND_IS_AIC (::fusekit::value_of<bool>(::fusekit::send("AscendIsAic", 0, ::fusekit::Site(__FILE__, __LINE__))))

namespace AscendC {

using fusekit::Site;

// int4b_t, two 4-bit integers a byte (Mmad.md 数据类型: s4 x s4 -> s32 on A2/A3): declared so that a source naming it
// (IsSameType<T, int4b_t>) compiles; a tensor of it is refused when the compiler instantiates one (fusekit has no
// 4-bit dtype)
struct int4b_t { int8_t storage; };
template <class T> inline constexpr bool fusekit_not_int4 = !std::is_same_v<T, int4b_t>;

// ---- parameter structs (fields in the documented order; fusekit_fields lists them as fusekit.asc's struct takes them)
struct DataCopyParams {
    uint16_t blockCount = 1, blockLen = 0, srcStride = 0, dstStride = 0;
    fusekit::Arg fusekit_fields(fusekit::Call& c) const {
        return c.fields("DataCopyParams", blockCount, blockLen, srcStride, dstStride);
    }
};
struct DataCopyExtParams {
    uint16_t blockCount = 1;
    uint32_t blockLen = 0, srcStride = 0, dstStride = 0, rsv = 0;
    fusekit::Arg fusekit_fields(fusekit::Call& c) const {
        return c.fields("DataCopyExtParams", blockCount, blockLen, srcStride, dstStride, rsv);
    }
};
template <class T> struct DataCopyPadExtParams {
    bool isPad = false;
    uint8_t leftPadding = 0, rightPadding = 0;
    T paddingValue = T(0);
    fusekit::Arg fusekit_fields(fusekit::Call& c) const {
        return c.fields("DataCopyPadExtParams", fusekit::Arg{fusekit::ARG_DTYPE, 0, 0, 0.0, fusekit::Dtype<T>::name, nullptr},
                        isPad, leftPadding, rightPadding, paddingValue);
    }
};
struct DataCopyPadParams {
    bool isPad = false;
    uint8_t leftPadding = 0, rightPadding = 0;
    uint64_t paddingValue = 0;
    fusekit::Arg fusekit_fields(fusekit::Call& c) const {
        return c.fields("DataCopyPadParams", isPad, leftPadding, rightPadding, paddingValue);
    }
};
struct BinaryRepeatParams {
    uint8_t dstBlkStride = 1, src0BlkStride = 1, src1BlkStride = 1, dstRepStride = 8, src0RepStride = 8,
            src1RepStride = 8;
    fusekit::Arg fusekit_fields(fusekit::Call& c) const {
        return c.fields("BinaryRepeatParams", dstBlkStride, src0BlkStride, src1BlkStride, dstRepStride, src0RepStride,
                        src1RepStride);
    }
};
struct UnaryRepeatParams {
    uint16_t dstBlkStride = 1, srcBlkStride = 1;
    uint8_t dstRepStride = 8, srcRepStride = 8;
    fusekit::Arg fusekit_fields(fusekit::Call& c) const {
        return c.fields("UnaryRepeatParams", dstBlkStride, srcBlkStride, dstRepStride, srcRepStride);
    }
};

struct BrcbRepeatParams {
    uint16_t dstBlkStride = 1, dstRepStride = 8;
    fusekit::Arg fusekit_fields(fusekit::Call& c) const {
        return c.fields("BrcbRepeatParams", dstBlkStride, dstRepStride);
    }
};
struct GatherRepeatParams {
    uint16_t dstBlkStride = 1, dstRepStride = 8;
    fusekit::Arg fusekit_fields(fusekit::Call& c) const {
        return c.fields("GatherRepeatParams", dstBlkStride, dstRepStride);
    }
};
struct CopyRepeatParams {
    uint16_t dstStride = 0, srcStride = 0, dstRepeatSize = 0, srcRepeatSize = 0;
    fusekit::Arg fusekit_fields(fusekit::Call& c) const {
        return c.fields("CopyRepeatParams", dstStride, srcStride, dstRepeatSize, srcRepeatSize);
    }
};

// ---- tensors
template <class T> class LocalTensor : public fusekit::Object {
    static_assert(fusekit_not_int4<T>, "AscendC::int4b_t tensors (4-bit integers) are not simulated by fusekit: "
                                       "the simulator has no 4-bit dtype; use int8_t");

public:
    using PrimType = T;
    LocalTensor() = default;
    explicit LocalTensor(int64_t h) { handle = h; }
    // static tensor programming (LocalTensor构造函数.md): tileSize elements at byte addr of the position's memory
    LocalTensor(TPosition pos, uint32_t addr, uint32_t tileSize, Site s = {}) {
        handle = fusekit::send("LocalTensor", 0, s, dtype<T>(), pos, addr, tileSize).i;
    }
    LocalTensor operator[](uint32_t offset) const {
        return LocalTensor(fusekit::send("operator[]", handle, Site("", 0), offset).i);
    }
    T GetValue(uint32_t index, Site s = {}) const { return fusekit::value_of<T>(fusekit::send("GetValue", handle, s, index)); }
    void SetValue(uint32_t index, T value, Site s = {}) const { fusekit::send("SetValue", handle, s, index, value); }
    uint32_t GetSize(Site s = {}) const { return fusekit::value_of<uint32_t>(fusekit::send("GetSize", handle, s)); }
    uint32_t GetLength(Site s = {}) const { return fusekit::value_of<uint32_t>(fusekit::send("GetLength", handle, s)); }
    void SetSize(uint32_t size, Site s = {}) { fusekit::send("SetSize", handle, s, size); }
    template <class U> LocalTensor<U> ReinterpretCast(Site s = {}) const {
        return LocalTensor<U>(fusekit::send("ReinterpretCast", handle, s, dtype<U>()).i);
    }
    template <class U> static fusekit::Arg dtype() { return {fusekit::ARG_DTYPE, 0, 0, 0.0, fusekit::Dtype<U>::name, nullptr}; }
};

template <class T> class GlobalTensor : public fusekit::Object {
    static_assert(fusekit_not_int4<T>, "AscendC::int4b_t tensors (4-bit integers) are not simulated by fusekit: "
                                       "the simulator has no 4-bit dtype; use int8_t");

public:
    using PrimType = T;
    GlobalTensor() = default;
    void SetGlobalBuffer(__gm__ T* buffer, uint64_t bufferSize, Site s = {}) {
        handle = fusekit::send("SetGlobalBuffer", handle, s, buffer, bufferSize).i;
    }
    void SetGlobalBuffer(__gm__ T* buffer, Site s = {}) { handle = fusekit::send("SetGlobalBuffer", handle, s, buffer).i; }
    GlobalTensor operator[](uint64_t offset) const {
        GlobalTensor sub;
        sub.handle = fusekit::send("operator[]", handle, Site("", 0), offset).i;
        return sub;
    }
    T GetValue(uint64_t offset, Site s = {}) const { return fusekit::value_of<T>(fusekit::send("GetValue", handle, s, offset)); }
    void SetValue(uint64_t offset, T value, Site s = {}) const { fusekit::send("SetValue", handle, s, offset, value); }
    uint64_t GetSize(Site s = {}) const { return fusekit::value_of<uint64_t>(fusekit::send("GetSize", handle, s)); }
    __gm__ T* GetPhyAddr(uint64_t offset = 0, Site s = {}) const {
        return fusekit::value_of<__gm__ T*>(fusekit::send("GetPhyAddr", handle, s, offset));
    }
};

// ---- memory management: TPipe, TQue, TQueBind, TBuf
template <class T> fusekit::Arg DtypeArg() { return {fusekit::ARG_DTYPE, 0, 0, 0.0, fusekit::Dtype<T>::name, nullptr}; }

template <TPosition src, TPosition dst, int32_t depth, auto... options> class TQueBind : public fusekit::Object {
public:
    TQueBind(Site s = {}) { handle = fusekit::send("TQueBind", 0, s, src, dst, depth).i; }
    template <class T> LocalTensor<T> AllocTensor(Site s = {}) {
        return LocalTensor<T>(fusekit::send("AllocTensor", handle, s, DtypeArg<T>()).i);
    }
    template <class T> bool EnQue(const LocalTensor<T>& tensor, Site s = {}) { fusekit::send("EnQue", handle, s, tensor); return true; }
    template <class T> LocalTensor<T> DeQue(Site s = {}) {
        return LocalTensor<T>(fusekit::send("DeQue", handle, s, DtypeArg<T>()).i);
    }
    template <class T> void FreeTensor(LocalTensor<T>& tensor, Site s = {}) { fusekit::send("FreeTensor", handle, s, tensor); }
    bool VacantInQue(Site s = {}) { return fusekit::value_of<bool>(fusekit::send("VacantInQue", handle, s)); }
    bool HasTensorInQue(Site s = {}) { return fusekit::value_of<bool>(fusekit::send("HasTensorInQue", handle, s)); }
    int32_t GetTensorCountInQue(Site s = {}) {
        return fusekit::value_of<int32_t>(fusekit::send("GetTensorCountInQue", handle, s));
    }
    bool HasIdleBuffer(Site s = {}) { return fusekit::value_of<bool>(fusekit::send("HasIdleBuffer", handle, s)); }
    void FreeAllEvent(Site s = {}) { fusekit::send("FreeAllEvent", handle, s); }

protected:
    explicit TQueBind(int64_t h) { handle = h; }
};

template <TPosition pos, int32_t depth, auto... options> class TQue : public TQueBind<pos, pos, depth> {
public:
    TQue(Site s = {}) : TQueBind<pos, pos, depth>(fusekit::send("TQue", 0, s, pos, depth).i) {}
};

template <TPosition pos = TPosition::VECCALC> class TBuf : public fusekit::Object {
public:
    TBuf(Site s = {}) { handle = fusekit::send("TBuf", 0, s, pos).i; }
    template <class T> LocalTensor<T> Get(Site s = {}) { return LocalTensor<T>(fusekit::send("Get", handle, s, DtypeArg<T>()).i); }
    template <class T> LocalTensor<T> Get(uint32_t len, Site s = {}) {
        return LocalTensor<T>(fusekit::send("Get", handle, s, DtypeArg<T>(), len).i);
    }
    template <class T> LocalTensor<T> GetWithOffset(uint32_t size, uint32_t bufOffset, Site s = {}) {
        return LocalTensor<T>(fusekit::send("GetWithOffset", handle, s, size, bufOffset, DtypeArg<T>()).i);
    }
};

class TPipe;
namespace fusekit_detail {
inline TPipe*& current_pipe() { thread_local TPipe* pipe = nullptr; return pipe; }  // GetTPipePtr's answer
}  // namespace fusekit_detail

class TPipe : public fusekit::Object {
public:
    TPipe(Site s = {}) {
        handle = fusekit::send("TPipe", 0, s).i;
        fusekit_detail::current_pipe() = this;
    }
    ~TPipe() {
        if (fusekit_detail::current_pipe() == this) fusekit_detail::current_pipe() = nullptr;
    }
    TPipe(const TPipe&) = delete;
    TPipe& operator=(const TPipe&) = delete;
    template <class Q> bool InitBuffer(Q& que, uint8_t num, uint32_t len, Site s = {}) {
        fusekit::send("InitBuffer", handle, s, que, num, len);
        return true;
    }
    template <TPosition pos> bool InitBuffer(TBuf<pos>& buf, uint32_t len, Site s = {}) {
        fusekit::send("InitBuffer", handle, s, buf, len);
        return true;
    }
    void Reset(Site s = {}) { fusekit::send("Reset", handle, s); }
    void Destroy(Site s = {}) { fusekit::send("Destroy", handle, s); }
    template <HardEvent event> int32_t AllocEventID(Site s = {}) {
        return fusekit::value_of<int32_t>(fusekit::send("AllocEventID", handle, s, event));
    }
    template <HardEvent event> int32_t FetchEventID(Site s = {}) {
        return fusekit::value_of<int32_t>(fusekit::send("FetchEventID", handle, s, event));
    }
    template <HardEvent event> void ReleaseEventID(int32_t id, Site s = {}) { fusekit::send("ReleaseEventID", handle, s, id, event); }
    // the run-time forms: the event as an argument
    int32_t AllocEventID(HardEvent event, Site s = {}) {
        return fusekit::value_of<int32_t>(fusekit::send("AllocEventID", handle, s, event));
    }
    int32_t FetchEventID(HardEvent event, Site s = {}) {
        return fusekit::value_of<int32_t>(fusekit::send("FetchEventID", handle, s, event));
    }
};

// the TPipe the kernel made (its constructor registers it), as the kernel's other code reaches it
inline TPipe* GetTPipePtr() { return fusekit_detail::current_pipe(); }

// ---- core identity and synchronisation
inline int64_t GetBlockIdx(Site s = {}) { return fusekit::value_of<int64_t>(fusekit::send("GetBlockIdx", 0, s)); }
inline int64_t GetBlockNum(Site s = {}) { return fusekit::value_of<int64_t>(fusekit::send("GetBlockNum", 0, s)); }
inline int64_t GetSubBlockIdx(Site s = {}) { return fusekit::value_of<int64_t>(fusekit::send("GetSubBlockIdx", 0, s)); }
inline int64_t GetSubBlockNum(Site s = {}) { return fusekit::value_of<int64_t>(fusekit::send("GetSubBlockNum", 0, s)); }
inline int64_t GetTaskRatio(Site s = {}) { return fusekit::value_of<int64_t>(fusekit::send("GetTaskRatio", 0, s)); }
// block_idx and block_num, the kernel's global variables (AD 核函数): read through GetBlockIdx / GetBlockNum
struct BlockIdxVariable {
    operator int64_t() const { return GetBlockIdx(Site("", 0)); }
};
struct BlockNumVariable {
    operator int64_t() const { return GetBlockNum(Site("", 0)); }
};
template <pipe_t pipe> inline void PipeBarrier(Site s = {}) { fusekit::send("PipeBarrier", 0, s, pipe); }
template <HardEvent event> inline void SetFlag(int32_t eventID, Site s = {}) { fusekit::send("SetFlag", 0, s, event, eventID); }
template <HardEvent event> inline void WaitFlag(int32_t eventID, Site s = {}) { fusekit::send("WaitFlag", 0, s, event, eventID); }
inline void SyncAll(Site s = {}) { fusekit::send("SyncAll", 0, s); }
// flags between the cores of a mix kernel's AI Core, or of one kind (核间同步/CrossCoreSetFlag(ISASI).md,
// CrossCoreWaitFlag(ISASI).md): a set reports the pipe's work done on flagId, a wait blocks until the sets it needs
template <uint8_t modeId, pipe_t pipe> inline void CrossCoreSetFlag(uint16_t flagId, Site s = {}) {
    fusekit::send("CrossCoreSetFlag", 0, s, flagId, modeId, pipe);
}
template <uint8_t modeId = 0, pipe_t pipe = PIPE_S> inline void CrossCoreWaitFlag(uint16_t flagId, Site s = {}) {
    fusekit::send("CrossCoreWaitFlag", 0, s, flagId, modeId, pipe);
}

// ---- vector mask and registers
template <class T, MaskMode mode = MaskMode::NORMAL> inline void SetVectorMask(uint64_t maskHigh, uint64_t maskLow, Site s = {}) {
    fusekit::send("SetVectorMask", 0, s, DtypeArg<T>(), maskHigh, maskLow, mode);
}
template <class T, MaskMode mode = MaskMode::NORMAL> inline void SetVectorMask(int32_t len, Site s = {}) {
    fusekit::send("SetVectorMask", 0, s, DtypeArg<T>(), len, mode);
}
inline void ResetMask(Site s = {}) { fusekit::send("ResetMask", 0, s); }
inline void SetMaskCount(Site s = {}) { fusekit::send("SetMaskCount", 0, s); }
inline void SetMaskNorm(Site s = {}) { fusekit::send("SetMaskNorm", 0, s); }

// ---- static tensor programming: LocalMemAllocator (no TPipe)
template <Hardware hard = Hardware::UB> class LocalMemAllocator : public fusekit::Object {
public:
    LocalMemAllocator(Site s = {}) { handle = fusekit::send("LocalMemAllocator", 0, s, hard).i; }
    uint32_t GetCurAddr(Site s = {}) { return fusekit::value_of<uint32_t>(fusekit::send("GetCurAddr", handle, s)); }
    // the forms without pos take the memory's own position (Alloc.md: pos may be left out), A1 for L1
    static constexpr TPosition kPos = hard == Hardware::L1 ? TPosition::A1 : hard == Hardware::L0A ? TPosition::A2
                                    : hard == Hardware::L0B ? TPosition::B2 : hard == Hardware::L0C ? TPosition::CO1
                                    : hard == Hardware::BIAS ? TPosition::C2 : TPosition::VECCALC;
    template <class T, uint32_t tileSize> LocalTensor<T> Alloc(Site s = {}) { return Alloc<kPos, T>(tileSize, s); }
    template <class T> LocalTensor<T> Alloc(uint32_t tileSize, Site s = {}) { return Alloc<kPos, T>(tileSize, s); }
    template <TPosition pos, class T, uint32_t tileSize> LocalTensor<T> Alloc(Site s = {}) {
        return Alloc<pos, T>(tileSize, s);
    }
    template <TPosition pos, class T> LocalTensor<T> Alloc(uint32_t tileSize, Site s = {}) {
        return LocalTensor<T>(fusekit::send("Alloc", handle, s, pos, DtypeArg<T>(), tileSize).i);
    }
};

// ---- GM atomics of DataCopy UB -> GM (SetAtomicAdd<T>() ... SetAtomicNone())
template <class T> inline void SetAtomicAdd(Site s = {}) { fusekit::send("SetAtomicAdd", 0, s, DtypeArg<T>()); }
template <class T> inline void SetAtomicMax(Site s = {}) { fusekit::send("SetAtomicMax", 0, s, DtypeArg<T>()); }
template <class T> inline void SetAtomicMin(Site s = {}) { fusekit::send("SetAtomicMin", 0, s, DtypeArg<T>()); }
template <class T> inline void SetAtomicType(Site s = {}) { fusekit::send("SetAtomicType", 0, s, DtypeArg<T>()); }
inline void SetAtomicNone(Site s = {}) { fusekit::send("SetAtomicNone", 0, s); }
inline void DisableDmaAtomic(Site s = {}) { fusekit::send("SetAtomicNone", 0, s); }  // the DMA's atomic mode off

// ---- a constant and a type test the API pages' samples use (Fixpipe（L0C到L1数据搬运）.md, DataCopy（L0C到L1数据搬运）.md)
constexpr uint32_t ONE_BLK_SIZE = 32;  // one data block, bytes (pyasc's asc.ONE_BLK_SIZE)
constexpr uint32_t BLOCK_CUBE = 16;    // rows of a cube fractal (AD impl kernel_utils_constants.h; set_loaddata_boundary)
template <class T, class U> struct IsSameType { static constexpr bool value = std::is_same_v<T, U>; };

// ---- system state
inline void InitSocState(Site s = {}) { fusekit::send("InitSocState", 0, s); }
inline int64_t GetSystemCycle(Site s = {}) { return fusekit::value_of<int64_t>(fusekit::send("GetSystemCycle", 0, s)); }
template <class T> inline void SetPadValue(T value, Site s = {}) { fusekit::send("SetPadValue", 0, s, value); }

// ---- device printf: formatted here, printed per core when the launch ends
inline void printf_at(const Site& s, const char* format, ...) {
    char text[4096];
    va_list args;
    va_start(args, format);
    std::vsnprintf(text, sizeof text, format, args);
    va_end(args);
    fusekit::send("printf", 0, s, static_cast<const char*>(text));
}

// AscendC::printf(format, ...): the format's conversion captures the call site
struct Format {
    const char* text;
    Site site;
    Format(const char* t, const char* f = __builtin_FILE(), int l = __builtin_LINE()) : text(t), site(f, l) {}
};
template <class... A> inline void printf(Format format, A... args) { printf_at(format.site, format.text, args...); }
template <class... A> inline void PRINTF(Format format, A... args) { printf_at(format.site, format.text, args...); }

// DataCacheCleanAndInvalid<T, entireType[, dcciDst]>(dst) (DataCacheCleanAndInvalid.md): the options are template
// arguments in C++, arguments in pyasc
template <typename T, CacheLine entireType, DcciDst... dcciDst>
inline void DataCacheCleanAndInvalid(const GlobalTensor<T>& dst, Site s = {}) {
    fusekit::send("DataCacheCleanAndInvalid", 0, s, entireType, dst, dcciDst...);
}

// GatherMask (GatherMask.md): the parameters by struct (often braced, which a forwarding template cannot deduce), and
// rsvdCnt, the count of elements kept, written back; the mode template argument (reserved) is taken and ignored
struct GatherMaskParams {
    uint8_t src0BlockStride = 1;
    uint16_t repeatTimes = 1, src0RepeatStride = 0;
    uint8_t src1RepeatStride = 0;
    fusekit::Arg fusekit_fields(fusekit::Call& c) const {
        return c.fields("GatherMaskParams", src0BlockStride, repeatTimes, src0RepeatStride, src1RepeatStride);
    }
};
template <typename T, typename U, auto... Mode>
inline void GatherMask(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<U>& src1Pattern,
                       const bool reduceMode, const uint32_t mask, const GatherMaskParams& params, uint64_t& rsvdCnt,
                       Site s = {}) {
    rsvdCnt = fusekit::value_of<uint64_t>(fusekit::send("GatherMask", 0, s, dst, src0, src1Pattern, reduceMode, mask,
                                                        params));
}
template <typename T, auto... Mode>
inline void GatherMask(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const uint8_t src1Pattern,
                       const bool reduceMode, const uint32_t mask, const GatherMaskParams& params, uint64_t& rsvdCnt,
                       Site s = {}) {
    rsvdCnt = fusekit::value_of<uint64_t>(fusekit::send("GatherMask", 0, s, dst, src0, src1Pattern, reduceMode, mask,
                                                        params));
}

}  // namespace AscendC

#include "fusekit/cube.h"

using AscendC::GetTPipePtr;
inline constexpr AscendC::BlockIdxVariable block_idx{};
inline constexpr AscendC::BlockNumVariable block_num{};

// the event IDs of SetFlag / WaitFlag (event_t)
enum event_t : int32_t { EVENT_ID0, EVENT_ID1, EVENT_ID2, EVENT_ID3, EVENT_ID4, EVENT_ID5, EVENT_ID6, EVENT_ID7 };
namespace AscendC {
using ::event_t;
using ::EVENT_ID0, ::EVENT_ID1, ::EVENT_ID2, ::EVENT_ID3, ::EVENT_ID4, ::EVENT_ID5, ::EVENT_ID6, ::EVENT_ID7;
}  // namespace AscendC

// ---- an operator project's kernel entry (CANN "核函数定义": GET_TILING_DATA, TILING_KEY_IS,
// KERNEL_TASK_TYPE_DEFAULT): the tiling struct is the one the host's REGISTER_TILING_DATA_CLASS names, its bytes
// are read from the GM buffer `tiling` points at, the tiling key is the one the host's tiling function set
extern "C" uint64_t fusekit_tiling_key;  // set by fusekit before the launch (fusekit/cpp/project.py)
namespace fusekit {
template <class T> void read_tiling(T* out, const void* tiling, Site site = {}) {
    send("fusekit.read_gm", 0, site, tiling, static_cast<const void*>(out), uint64_t(sizeof(T)));
}
}  // namespace fusekit
// KernelMetaType as 设置Kernel类型.md lists it. KERNEL_TASK_TYPE_DEFAULT(type) names the kernel's type in its body:
// fusekit's glue reads it from the preprocessed source, and the launch runs the cores of that type as it runs a
// pyasc kernel's (KERNEL_TYPE_AIC_ONLY: AIC cores; MIX_AIC_1_2: an AIC and two AIVs per block; a type fusekit does
// not simulate is refused, naming the kernel and its line); the call itself does nothing
enum KernelMetaType { KERNEL_TYPE_AIV_ONLY, KERNEL_TYPE_AIC_ONLY, KERNEL_TYPE_MIX_AIV_1_0, KERNEL_TYPE_MIX_AIC_1_0,
                      KERNEL_TYPE_MIX_AIC_1_1, KERNEL_TYPE_MIX_AIC_1_2, KERNEL_TYPE_AICORE, KERNEL_TYPE_VECTORCORE,
                      KERNEL_TYPE_MIX_AICORE, KERNEL_TYPE_MIX_VECTOR_CORE, KERNEL_TYPE_MAX };
namespace fusekit {
inline void kernel_task_type(KernelMetaType) {}
}  // namespace fusekit
#define KERNEL_TASK_TYPE_DEFAULT(type) ::fusekit::kernel_task_type(type)
#define GET_TILING_DATA(var, tiling) \
    ::optiling::fusekit_registered_tiling var; \
    ::fusekit::read_tiling(&var, tiling)
#define GET_TILING_DATA_WITH_STRUCT(type, var, tiling) \
    type var; \
    ::fusekit::read_tiling(&var, tiling)
#define TILING_KEY_IS(key) (fusekit_tiling_key == uint64_t(key))

// ASSERT(condition) in kernel code: a false condition stops the launch with a KernelError naming the line
namespace fusekit {
inline void kernel_assert(bool holds, const char* text, Site site) {
    if (!holds) send("fusekit.assert", 0, site, text);
}
}  // namespace fusekit
#define ASSERT(condition) ::fusekit::kernel_assert(bool(condition), #condition, ::fusekit::Site(__FILE__, __LINE__))

// ascendc_assert(condition[, format, ...]): the same check as a function (the condition's conversion captures
// the line; the message is the format when one is given)
namespace AscendC {
struct Assertion {
    bool holds;
    fusekit::Site site;
    Assertion(bool h, const char* f = __builtin_FILE(), int l = __builtin_LINE()) : holds(h), site(f, l) {}
};
template <class... A> inline void ascendc_assert(Assertion a, const char* format = "the condition", A...) {
    fusekit::kernel_assert(a.holds, format, a.site);
}
}  // namespace AscendC
using AscendC::ascendc_assert;

#include "utils/debug/asc_assert.h"
