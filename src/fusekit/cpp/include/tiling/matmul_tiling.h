// The high-level Matmul's host tiling for fusekit: matmul_tiling::MatmulApiTiling and MultiCoreMatmulTiling
// (written for fusekit from asc-devkit's pages docs/zh/api/SIMD-API/高阶API/矩阵计算/Matmul-Tiling类/; not a CANN
// header). The object keeps its settings; GetTiling sends them to fusekit's one tiling (fusekit.pyasc.shim.host,
// the tiling pyasc's asc.lib.host gets: fusekit.asc.adv.matmul_tiling), which fills the TCubeTiling.
#pragma once
#include <cstdint>
#include <iostream>  // the samples report a failed GetTiling on std::cout

#include "../fusekit/bridge.h"
#include "../kernel_tiling/kernel_tiling.h"
#include "../register/op_def_registry.h"
#include "platform/platform_ascendc.h"

namespace matmul_tiling {
// the host enums (Matmul-Tiling类/SetAType.md), with the values of fusekit.pyasc.shim.host's
enum class TPosition : int32_t { GM = 0, A1, A2, B1, B2, C1, C2, CO1, CO2, VECIN, VECOUT, VECCALC, LCM, SPM, SHM, TSCM, MAX };
enum class CubeFormat : int32_t { ND = 0, NZ, ZN, ZZ, NN, ND_ALIGN, SCALAR, VECTOR, ROW_MAJOR, COLUMN_MAJOR };
using DataType = ge::DataType;
enum class MatrixTraverse : int32_t { NOSET = 0, FIRSTM = 1, FIRSTN = 2 };

class MatmulApiTiling {
public:
    MatmulApiTiling() = default;
    explicit MatmulApiTiling(const platform_ascendc::PlatformAscendC&) {}
    // the matrices' position, format, dtype and transposition (SetAType.md, SetBType.md, SetCType.md, SetBiasType.md)
    int32_t SetAType(TPosition p, CubeFormat f, DataType t, bool isTrans = false) { return set(0, p, f, t, isTrans); }
    int32_t SetBType(TPosition p, CubeFormat f, DataType t, bool isTrans = false) { return set(1, p, f, t, isTrans); }
    int32_t SetCType(TPosition p, CubeFormat f, DataType t) { return set(2, p, f, t, false); }
    int32_t SetBiasType(TPosition p, CubeFormat f, DataType t) { return set(3, p, f, t, false); }
    // the shapes (SetShape.md, SetOrgShape.md: (M, N, K) or (M, N, Ka, Kb))
    int32_t SetShape(int32_t m, int32_t n, int32_t k) { shape_[0] = m, shape_[1] = n, shape_[2] = k; return 0; }
    int32_t SetOrgShape(int32_t m, int32_t n, int32_t k) { return SetOrgShape(m, n, k, k); }
    int32_t SetOrgShape(int32_t m, int32_t n, int32_t ka, int32_t kb) {
        org_[0] = m, org_[1] = n, org_[2] = ka, org_[3] = kb;
        return 0;
    }
    int32_t EnableBias(bool isBiasIn = false) { bias_ = isBiasIn; return 0; }
    int32_t SetBias(bool isBiasIn = false) { return EnableBias(isBiasIn); }
    // SetFixSplit.md: base blocks fixed (-1: chosen)
    int32_t SetFixSplit(int32_t baseMIn = -1, int32_t baseNIn = -1, int32_t baseKIn = -1) {
        fixed_[0] = baseMIn, fixed_[1] = baseNIn, fixed_[2] = baseKIn;
        return 0;
    }
    // SetBufferSpace.md: fusekit's tiling takes the SoC's buffers (fusekit.asc.adv.matmul_tiling)
    int32_t SetBufferSpace(int32_t l1Size = -1, int32_t l0CSize = -1, int32_t ubSize = -1, int32_t btSize = -1) { return 0; }
    int32_t SetTraverse(MatrixTraverse traverse) { traverse_ = int32_t(traverse); return 0; }
    // GetTiling.md: 0, or -1 when the settings give no tiling
    int64_t GetTiling(TCubeTiling& tiling, fusekit::Site s = {}) {
        int64_t status = fusekit::value_of<int64_t>(fusekit::send("MatmulTiling", 0, s, multiCore_, dim_, types_, shape_,
                                                                  org_, bias_, fixed_, traverse_,
                                                                  static_cast<const void*>(&tiling)));
        if (status == 0) last_ = tiling;
        return status;
    }
    int32_t GetBaseM() const { return done() ? last_.baseM : -1; }
    int32_t GetBaseN() const { return done() ? last_.baseN : -1; }
    int32_t GetBaseK() const { return done() ? last_.baseK : -1; }

protected:
    bool done() const { return last_.baseM > 0; }
    int32_t set(int which, TPosition p, CubeFormat f, DataType t, bool isTrans) {
        int32_t* row = types_ + 5 * which;
        row[0] = 1, row[1] = int32_t(p), row[2] = int32_t(f), row[3] = int32_t(t), row[4] = isTrans;
        return 0;
    }
    bool multiCore_ = false;
    int32_t dim_ = 0;
    int32_t types_[20] = {};  // per matrix: set, position, format, dtype, transposed
    int32_t shape_[3] = {-1, -1, -1}, org_[4] = {-1, -1, -1, -1}, fixed_[3] = {-1, -1, -1};
    int32_t traverse_ = 0;
    bool bias_ = false;
    TCubeTiling last_{};
};

class MultiCoreMatmulTiling : public MatmulApiTiling {
public:
    MultiCoreMatmulTiling() { multiCore_ = true; }
    explicit MultiCoreMatmulTiling(const platform_ascendc::PlatformAscendC& platform) {
        multiCore_ = true;
        dim_ = int32_t(platform.GetCoreNumAic());
    }
    // SetDim.md: the cores the tiling may use
    int32_t SetDim(int32_t dim) { dim_ = dim; return 0; }
    // GetCoreNum.md, GetSingleShape.md: of the last GetTiling
    int32_t GetCoreNum() const { return done() ? last_.usedCoreNum : -1; }
    int32_t GetSingleShape(int32_t& m, int32_t& n, int32_t& k) const {
        m = last_.singleCoreM, n = last_.singleCoreN, k = last_.singleCoreK;
        return done() ? 0 : -1;
    }
};
}  // namespace matmul_tiling
