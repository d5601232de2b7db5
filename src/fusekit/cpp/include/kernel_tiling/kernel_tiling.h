// TCubeTiling, the high-level Matmul's tiling, for fusekit (written for fusekit from the Ascend C documentation,
// 高阶API/矩阵计算/Matmul-Tiling类/GetTiling.md and TCubeTiling结构体; not a CANN header).
//
// One struct serves the kernel (a __global__ parameter by value, or bytes copied from GM) and the host
// (matmul_tiling's GetTiling fills it; optiling::TCubeTiling adds GetDataSize / SaveToBuffer): int32 fields in the
// order of pyasc's asc.adv.TCubeTiling (fusekit.asc.adv.matmul.TCubeTiling), which the simulator reads them in.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

struct TCubeTiling {
    int32_t usedCoreNum = 0, M = 0, N = 0, Ka = 0, Kb = 0, singleCoreM = 0, singleCoreN = 0, singleCoreK = 0,
            baseM = 0, baseN = 0, baseK = 0, depthA1 = 0, depthB1 = 0, stepM = 0, stepN = 0, isBias = 0,
            transLength = 0, iterateOrder = 0, shareMode = 0, shareL1Size = 0, shareL0CSize = 0, shareUbSize = 0,
            batchM = 0, batchN = 0, singleBatchM = 0, singleBatchN = 0, stepKa = 0, stepKb = 0, depthAL1CacheUB = 0,
            depthBL1CacheUB = 0, dbL0A = 0, dbL0B = 0, dbL0C = 0, BatchNum = 0;
};
static_assert(sizeof(TCubeTiling) == 34 * sizeof(int32_t), "fusekit: TCubeTiling is pyasc's 34 int32 fields");

namespace AscendC::tiling {
using ::TCubeTiling;
}  // namespace AscendC::tiling

namespace optiling {
// the host's TCubeTiling (a TilingData struct): the same fields, saved as the bytes the kernel reads
struct TCubeTiling : ::TCubeTiling {
    size_t GetDataSize() const { return sizeof(::TCubeTiling); }
    void SaveToBuffer(void* buffer, size_t capacity) const {
        std::memcpy(buffer, static_cast<const ::TCubeTiling*>(this), capacity < GetDataSize() ? capacity : GetDataSize());
    }
};
}  // namespace optiling
