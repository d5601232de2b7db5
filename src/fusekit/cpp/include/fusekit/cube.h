// The cube unit's basic API (the AIC of Atlas A2/A3) for fusekit's simulator: written for fusekit from the Ascend
// C API documentation (asc-devkit docs/zh/api/SIMD-API/基础API/矩阵计算（ISASI）/, "AD-API" below); not a CANN header.
//
// Each call forwards to the pyasc function of the same name in fusekit.asc.cube (Mmad -> mmad, LoadData ->
// load_data, Fixpipe -> fixpipe), which checks the operands and the fields, runs the instruction and records it;
// a KernelError names the C++ call and its line. The parameter structs without constructors list their fields in
// the documented order (a braced list fills them so); MmadParams and FixpipeParamsV220, which the samples write in
// two positional forms, have a constructor per form. fusekit_fields hands the fields over in the order of
// fusekit.asc's struct of the same name. Integer fields are wide enough to hold a value past the documented range,
// so the simulator names it instead of the field wrapping.
// Included by kernel_operator.h, after the tensors.
#pragma once
#include <cstdint>
#include <type_traits>

#include "bridge.h"
#include "generated.h"

namespace AscendC {

// ---- Mmad (AD-API Mmad计算/Mmad.md 表4)
struct MmadParams {
    uint16_t m = 0, n = 0, k = 0;
    uint16_t unitFlag = 0;          // 0, 2, 3: Mmad / Fixpipe fine-grained overlap (UnitFlag.md)
    bool cmatrixSource = false;     // C starts from the bias table (C2), when cmatrixInitVal is false
    bool cmatrixInitVal = true;     // C starts from 0
    bool isBias = false;            // the older form: accumulate onto L0C (表4: 废弃)
    int32_t fmOffset = 0;           // the older form's unused fields (表4: "不做处理" from Atlas A2 on)
    bool enSsparse = false, enWinogradA = false, enWinogradB = false;
    bool kDirectionAlign = false;   // float: K aligned to 16 instead of 8 (K-方向对齐约束.md)

    MmadParams() = default;
    // {m, n, k, unitFlag, cmatrixSource, cmatrixInitVal}: the form asc-devkit's matmul_basic_api writes
    MmadParams(uint16_t mIn, uint16_t nIn, uint16_t kIn, uint16_t unitFlagIn = 0, bool cmatrixSourceIn = false,
               bool cmatrixInitValIn = true)
        : m(mIn), n(nIn), k(kIn), unitFlag(unitFlagIn), cmatrixSource(cmatrixSourceIn),
          cmatrixInitVal(cmatrixInitValIn) {}
    // {m, n, k, isBias, fmOffset, enSsparse, enWinogradA, enWinogradB}: the older form
    MmadParams(uint16_t mIn, uint16_t nIn, uint16_t kIn, bool isBiasIn, int32_t fmOffsetIn, bool enSsparseIn,
               bool enWinogradAIn, bool enWinogradBIn)
        : m(mIn), n(nIn), k(kIn), isBias(isBiasIn), fmOffset(fmOffsetIn), enSsparse(enSsparseIn),
          enWinogradA(enWinogradAIn), enWinogradB(enWinogradBIn) {}

    // fusekit.asc.MmadParams takes one form or the other: the older one when a kernel set one of its fields
    // (isBias then decides, with cmatrixInitVal at its default; Mmad.md 表4), else the current one
    fusekit::Arg fusekit_fields(fusekit::Call& c) const {
        if (isBias || fmOffset != 0 || enSsparse || enWinogradA || enWinogradB)
            return c.fields("MmadParams", m, n, k, isBias, fmOffset, enSsparse, enWinogradA, enWinogradB);
        return c.fields("MmadParams", m, n, k, unitFlag, cmatrixSource, cmatrixInitVal);
    }
};

namespace fusekit_detail {
// kDirectionAlign = true aligns float K to 16 in L0A / L0B, a layout fusekit's Mmad does not read: refused by name
// rather than run on the 8-aligned layout
inline void check_mmad(const MmadParams& p, const Site& s) {
    if (p.kDirectionAlign)
        fusekit::send("fusekit.unsupported", 0, s, static_cast<const char*>("Mmad"),
                      static_cast<const char*>("MmadParams.kDirectionAlign = true (float K aligned to ceil(K / 16) * 16 "
                                               "in L0A / L0B, K-方向对齐约束.md) is not simulated: fusekit reads float A "
                                               "and B with K aligned to 8 (the default, false)"));
}
}  // namespace fusekit_detail

// Mmad(dst CO1, fm A2, filter B2, params): C = A x B (+ C), C starting as MmadParams says (Mmad.md 函数原型)
template <typename T, typename U, typename S>
inline void Mmad(const LocalTensor<T>& dst, const LocalTensor<U>& fm, const LocalTensor<S>& filter,
                 const MmadParams& mmadParams, Site s = {}) {
    fusekit_detail::check_mmad(mmadParams, s);
    fusekit::send("Mmad", 0, s, dst, fm, filter, mmadParams);
}
// Mmad(dst, fm, filter, bias C2, params): C starts from the bias row, whatever cmatrixInitVal / cmatrixSource say
template <typename T, typename U, typename S, typename V>
inline void Mmad(const LocalTensor<T>& dst, const LocalTensor<U>& fm, const LocalTensor<S>& filter,
                 const LocalTensor<V>& bias, const MmadParams& mmadParams, Site s = {}) {
    fusekit_detail::check_mmad(mmadParams, s);
    fusekit::send("Mmad", 0, s, dst, fm, filter, bias, mmadParams);
}

// SetHF32Mode / SetHF32TransMode (Mmad计算辅助配置接口/SetHF32Mode.md, SetHF32TransMode.md): the documented enum
// arguments, and the bool ones of the earlier API. The pages name the enumerators without values; these are
// fusekit's, and stay on the C++ side (a bool travels).
enum class HF32Mode : int32_t { DISABLE = 0, ENABLE = 1 };
enum class HF32TransMode : int32_t { NEAREST_EVEN = 0, NEAREST_ZERO = 1 };
inline void SetHF32Mode(bool hf32Mode, Site s = {}) { fusekit::send("SetHF32Mode", 0, s, hf32Mode); }
inline void SetHF32Mode(HF32Mode mode, Site s = {}) { SetHF32Mode(mode == HF32Mode::ENABLE, s); }
// NEAREST_ZERO is the other rounding than to-even: fusekit.asc's set_hf32_trans_mode(True) (mmad.py's docstring)
inline void SetHF32TransMode(bool hf32TransMode, Site s = {}) { fusekit::send("SetHF32TransMode", 0, s, hf32TransMode); }
inline void SetHF32TransMode(HF32TransMode mode, Site s = {}) { SetHF32TransMode(mode == HF32TransMode::NEAREST_ZERO, s); }

// ---- LoadData, 2D: L1 -> L0A / L0B in 512 B fractals (矩阵计算的搬入/LoadData_2D.md 表2)
struct LoadData2DParams {
    uint32_t startIndex = 0;   // first source fractal, [0, 65535]
    uint32_t repeatTimes = 1;  // fractals, [0, 255]; 0 is a NOP
    uint32_t srcStride = 0;    // source fractals between repeats, [0, 65535]
    uint32_t sid = 0;          // reserved: 0
    uint32_t dstGap = 0;       // destination fractals left out between repeats, [0, 65535]
    bool ifTranspose = false; // transpose each (b16) fractal
    uint8_t addrMode = 0;     // 0: increasing index (1 is GM -> L1 only)
    fusekit::Arg fusekit_fields(fusekit::Call& c) const {
        return c.fields("LoadData2DParams", startIndex, repeatTimes, srcStride, sid, dstGap, ifTranspose, addrMode);
    }
};
template <typename T>
inline void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LoadData2DParams& loadDataParams,
                     Site s = {}) {
    fusekit::send("LoadData", 0, s, dst, src, loadDataParams);
}
// the GM source form of the page: the simulator refuses it, naming the call (GM -> L0 is not simulated)
template <typename T>
inline void LoadData(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const LoadData2DParams& loadDataParams,
                     Site s = {}) {
    fusekit::send("LoadData", 0, s, dst, src, loadDataParams);
}

// ---- LoadDataWithTranspose: square matrices of L1 transposed into L0A / L0B (矩阵计算的搬入/LoadDataWithTranspose.md
// 表3); fusekit.asc.load_data_with_transpose runs it (b16: one fractal a square; b32: two 16 x 8; b8: two 16 x 32)
struct LoadData2dTransposeParams {
    uint32_t startIndex = 0;    // first square, [0, 65535]
    uint32_t repeatTimes = 0;   // squares, [0, 255]; 0 is a NOP
    uint32_t srcStride = 0;     // source squares between repeats, [0, 65535]
    uint32_t dstGap = 0;        // 512 B fractals left out between repeats, [0, 65535]
    uint32_t dstFracGap = 0;    // 512 B fractals between a square's two transposed fractals (b8 / b32), [0, 65535]
    uint32_t addrMode = 0;      // false: increasing addresses (the page's default)
    LoadData2dTransposeParams() = default;
    LoadData2dTransposeParams(uint32_t startIndexIn, uint32_t repeatTimesIn, uint32_t srcStrideIn, uint32_t dstGapIn,
                              uint32_t dstFracGapIn, uint32_t addrModeIn = 0)
        : startIndex(startIndexIn), repeatTimes(repeatTimesIn), srcStride(srcStrideIn), dstGap(dstGapIn),
          dstFracGap(dstFracGapIn), addrMode(addrModeIn) {}
    fusekit::Arg fusekit_fields(fusekit::Call& c) const {
        return c.fields("LoadData2dTransposeParams", startIndex, repeatTimes, srcStride, dstGap, dstFracGap, addrMode);
    }
};
template <typename T>
inline void LoadDataWithTranspose(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                  const LoadData2dTransposeParams& loadDataParams, Site s = {}) {
    fusekit::send("LoadDataWithTranspose", 0, s, dst, src, loadDataParams);
}

// ---- LoadData 3Dv2: img2col of an NC1HWC0 feature map in L1 into L0A / L0B (矩阵计算的搬入/LoadData_3D.md 表4,
// 表5) and its registers (矩阵搬入辅助配置接口/SetFmatrix.md, SetLoadDataPaddingValue.md, SetLoadDataRepeat.md,
// SetLoadDataBoundary.md). fusekit.asc.cube.load3d runs them.
inline constexpr int32_t PAD_SIZE = 4;  // padList: left, right, top, bottom
// whether LoadData sets the FMATRIX (l1H, l1W, padList) and padding registers from its struct (表1 defaultConfig)
struct IsResetLoad3dConfig {
    bool isSetFMatrix = true;
    bool isSetPadding = true;
};
inline constexpr IsResetLoad3dConfig IS_RESER_LOAD3D_DEFAULT_CONFIG = {true, true};
enum class FmatrixMode : uint8_t { FMATRIX_LEFT = 0, FMATRIX_RIGHT = 1 };

template <typename T>
struct LoadData3DParamsV2 {
    uint8_t padList[PAD_SIZE] = {0, 0, 0, 0};
    uint32_t l1H = 0, l1W = 0, channelSize = 0, kExtension = 0, mExtension = 0, kStartPt = 0, mStartPt = 0;
    uint32_t strideW = 1, strideH = 1, filterW = 1, filterH = 1, dilationFilterW = 1, dilationFilterH = 1;
    bool enTranspose = false;
    bool enSmallK = false;
    T padValue = 0;
    bool filterSizeW = false, filterSizeH = false, fMatrixCtrl = false;

    LoadData3DParamsV2() = default;
    // the page's two constructors: up to padValue, and with filterSizeW, filterSizeH, fMatrixCtrl after it
    LoadData3DParamsV2(const uint8_t padListIn[PAD_SIZE], uint32_t l1HIn, uint32_t l1WIn, uint32_t channelSizeIn,
                       uint32_t kExtensionIn, uint32_t mExtensionIn, uint32_t kStartPtIn, uint32_t mStartPtIn,
                       uint32_t strideWIn, uint32_t strideHIn, uint32_t filterWIn, uint32_t filterHIn,
                       uint32_t dilationFilterWIn, uint32_t dilationFilterHIn, bool enTransposeIn, bool enSmallKIn,
                       T padValueIn, bool filterSizeWIn = false, bool filterSizeHIn = false, bool fMatrixCtrlIn = false)
        : l1H(l1HIn), l1W(l1WIn), channelSize(channelSizeIn), kExtension(kExtensionIn), mExtension(mExtensionIn),
          kStartPt(kStartPtIn), mStartPt(mStartPtIn), strideW(strideWIn), strideH(strideHIn), filterW(filterWIn),
          filterH(filterHIn), dilationFilterW(dilationFilterWIn), dilationFilterH(dilationFilterHIn),
          enTranspose(enTransposeIn), enSmallK(enSmallKIn), padValue(padValueIn), filterSizeW(filterSizeWIn),
          filterSizeH(filterSizeHIn), fMatrixCtrl(fMatrixCtrlIn) {
        for (int32_t i = 0; i < PAD_SIZE; ++i) padList[i] = padListIn[i];
    }
    fusekit::Arg fusekit_fields(fusekit::Call& c) const {
        return c.fields("LoadData3DParamsV2", padList, l1H, l1W, channelSize, kExtension, mExtension, kStartPt,
                        mStartPt, strideW, strideH, filterW, filterH, dilationFilterW, dilationFilterH, enTranspose,
                        padValue, filterSizeW, filterSizeH, fMatrixCtrl, enSmallK);
    }
};

struct LoadData3DParamsV2Pro {
    uint32_t channelSize = 0;
    bool enTranspose = false, enSmallK = false, filterSizeW = false, filterSizeH = false, fMatrixCtrl = false;
    uint64_t extConfig = 0;                    // mStartPt << 48 | kStartPt << 32 | mExtension << 16 | kExtension
    uint64_t filterConfig = 0x10101010101ULL;  // dilationH << 40 | dilationW << 32 | filterH << 24 | filterW << 16 | strideH << 8 | strideW
    fusekit::Arg fusekit_fields(fusekit::Call& c) const {
        return c.fields("LoadData3DParamsV2Pro", channelSize, enTranspose, enSmallK, filterSizeW, filterSizeH,
                        fMatrixCtrl, extConfig, filterConfig);
    }
};

// {repeatStride, repeatTime, repeatMode}: the C++ order (SetLoadDataRepeat.md 表2); pyasc's is time, stride, mode
struct LoadDataRepeatParam {
    uint32_t repeatStride = 0;
    uint32_t repeatTime = 1;
    uint32_t repeatMode = 0;
    uint8_t reserved = 0;
    fusekit::Arg fusekit_fields(fusekit::Call& c) const {
        return c.fields("LoadDataRepeatParam", repeatTime, repeatStride, repeatMode);
    }
};

namespace fusekit_detail {
// LoadData's IsResetLoad3dConfig as the keywords of fusekit.asc.load_data that are False
template <const IsResetLoad3dConfig& config>
constexpr const char* load3d_call() {
    if constexpr (!config.isSetFMatrix && !config.isSetPadding) return "LoadData@is_set_fmatrix@is_set_padding";
    else if constexpr (!config.isSetFMatrix) return "LoadData@is_set_fmatrix";
    else if constexpr (!config.isSetPadding) return "LoadData@is_set_padding";
    else return "LoadData";
}
}  // namespace fusekit_detail

template <typename T, const IsResetLoad3dConfig& defaultConfig = IS_RESER_LOAD3D_DEFAULT_CONFIG, typename U = T>
inline void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LoadData3DParamsV2<U>& loadDataParams,
                     Site s = {}) {
    static_assert(std::is_same_v<T, U>, "LoadData: LoadData3DParamsV2<U> takes the tensors' type (LoadData_3D.md 表1: U)");
    fusekit::send(fusekit_detail::load3d_call<defaultConfig>(), 0, s, dst, src, loadDataParams);
}
template <typename T>
inline void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LoadData3DParamsV2Pro& loadDataParams,
                     Site s = {}) {
    fusekit::send("LoadData", 0, s, dst, src, loadDataParams);
}
// the mode travels as its value: FmatrixMode stays on the C++ side, as HF32Mode does
inline void SetFmatrix(uint16_t l1H, uint16_t l1W, const uint8_t padList[PAD_SIZE], const FmatrixMode& fmatrixMode,
                       Site s = {}) {
    uint8_t pads[PAD_SIZE] = {padList[0], padList[1], padList[2], padList[3]};
    fusekit::send("SetFmatrix", 0, s, int32_t(l1H), int32_t(l1W), pads, static_cast<int32_t>(fmatrixMode));
}
template <typename T>
inline void SetLoadDataPaddingValue(const T padValue, Site s = {}) {
    fusekit::send("SetLoadDataPaddingValue", 0, s, padValue);
}
inline void SetLoadDataRepeat(const LoadDataRepeatParam& repeatParams, Site s = {}) {
    fusekit::send("SetLoadDataRepeat", 0, s, repeatParams);
}
inline void SetLoadDataBoundary(uint32_t boundaryValue, Site s = {}) {
    fusekit::send("SetLoadDataBoundary", 0, s, boundaryValue);
}

// ---- DataCopy GM -> L1 with ND2NZ (矩阵计算的搬入/DataCopy（GMToL1随路转换-ND2NZ搬运）.md 表3); the call is DataCopy's
// forwarding (generated.h): DataCopy(dst A1/B1, src GlobalTensor, Nd2NzParams)
struct Nd2NzParams {
    uint32_t ndNum = 1, nValue = 0, dValue = 0, srcNdMatrixStride = 0, srcDValue = 1, dstNzC0Stride = 1,
             dstNzNStride = 1, dstNzMatrixStride = 0;
    fusekit::Arg fusekit_fields(fusekit::Call& c) const {
        return c.fields("Nd2NzParams", ndNum, nValue, dValue, srcNdMatrixStride, srcDValue, dstNzC0Stride,
                        dstNzNStride, dstNzMatrixStride);
    }
};

// ---- Fixpipe: L0C -> GM / L1 with layout change, cast, quantisation, ReLU (矩阵计算的搬出/Fixpipe（L0C到GM数据搬运）.md)
struct FixpipeConfig {
    CO2Layout format = CO2Layout::ROW_MAJOR;
    bool isToUB = false;  // L0C -> UB (a mix kernel's path): the simulator refuses a UB destination
    fusekit::Arg fusekit_fields(fusekit::Call& c) const { return c.fields("FixpipeConfig", format); }
};
inline constexpr FixpipeConfig CFG_NZ = {CO2Layout::NZ};             // NZ2NZ
inline constexpr FixpipeConfig CFG_ROW_MAJOR = {CO2Layout::ROW_MAJOR};  // NZ2ND, the default

// FixpipeParamsV220 (表4). Two positional forms: the one asc-devkit's samples write, {nSize, mSize, srcStride,
// dstStride, reluEn, quantPre, deqScalar, ndNum, srcNdStride, dstNdStride, unitFlag} (matmul_basic_api.asc), and
// pyasc's order, with quantPre fifth (nSize, mSize, srcStride, dstStride, quantPre, deqScalar, ndNum, srcNdStride,
// dstNdStride, reluEn, unitFlag, isChannelSplit). A fifth argument of type QuantMode_t chooses the second.
struct FixpipeParamsV220 {
    uint32_t nSize = 0;       // [0, 4095]; 0 is a NOP
    uint32_t mSize = 0;       // [0, 65535] ([0, 8192] with NZ2ND)
    uint32_t srcStride = 0;   // L0C column blocks apart, in 16-element rows: ceil16(mSize)
    uint32_t dstStride = 0;   // ND: elements per row; NZ: 32 B units between column blocks; not 0
    QuantMode_t quantPre = QuantMode_t::NoQuant;
    uint64_t deqScalar = 0;   // the scalar scale of the quantising modes (随路量化.md 表1)
    uint32_t ndNum = 1, srcNdStride = 0, dstNdStride = 0;
    bool reluEn = false;
    uint32_t unitFlag = 0;
    bool isChannelSplit = false;

    FixpipeParamsV220() = default;
    FixpipeParamsV220(uint32_t nSizeIn, uint32_t mSizeIn, uint32_t srcStrideIn, uint32_t dstStrideIn,
                      bool reluEnIn = false, QuantMode_t quantPreIn = QuantMode_t::NoQuant, uint64_t deqScalarIn = 0,
                      uint32_t ndNumIn = 1, uint32_t srcNdStrideIn = 0, uint32_t dstNdStrideIn = 0,
                      uint32_t unitFlagIn = 0, bool isChannelSplitIn = false)
        : nSize(nSizeIn), mSize(mSizeIn), srcStride(srcStrideIn), dstStride(dstStrideIn), quantPre(quantPreIn),
          deqScalar(deqScalarIn), ndNum(ndNumIn), srcNdStride(srcNdStrideIn), dstNdStride(dstNdStrideIn),
          reluEn(reluEnIn), unitFlag(unitFlagIn), isChannelSplit(isChannelSplitIn) {}
    FixpipeParamsV220(uint32_t nSizeIn, uint32_t mSizeIn, uint32_t srcStrideIn, uint32_t dstStrideIn,
                      QuantMode_t quantPreIn, uint64_t deqScalarIn = 0, uint32_t ndNumIn = 1, uint32_t srcNdStrideIn = 0,
                      uint32_t dstNdStrideIn = 0, bool reluEnIn = false, uint32_t unitFlagIn = 0,
                      bool isChannelSplitIn = false)
        : FixpipeParamsV220(nSizeIn, mSizeIn, srcStrideIn, dstStrideIn, reluEnIn, quantPreIn, deqScalarIn, ndNumIn,
                            srcNdStrideIn, dstNdStrideIn, unitFlagIn, isChannelSplitIn) {}

    fusekit::Arg fusekit_fields(fusekit::Call& c) const {
        return c.fields("FixpipeParamsV220", nSize, mSize, srcStride, dstStride, quantPre, deqScalar, ndNum,
                        srcNdStride, dstNdStride, reluEn, unitFlag, isChannelSplit);
    }
};

// Fixpipe<T, U, config>(dst, src, params) and the cbufWorkspace form (per-column scales, uint64 in L1), to GM
// (GlobalTensor) or to L1 (Fixpipe（L0C到L1数据搬运）.md); T and U are the tensors' types, deduced when not given
template <typename T, typename U, const FixpipeConfig& config = CFG_ROW_MAJOR>
inline void Fixpipe(const GlobalTensor<T>& dst, const LocalTensor<U>& src, const FixpipeParamsV220& intriParams,
                    Site s = {}) {
    fusekit::send("Fixpipe", 0, s, dst, src, intriParams, config);
}
template <typename T, typename U, const FixpipeConfig& config = CFG_ROW_MAJOR, typename S = uint64_t>
inline void Fixpipe(const GlobalTensor<T>& dst, const LocalTensor<U>& src, const LocalTensor<S>& cbufWorkspace,
                    const FixpipeParamsV220& intriParams, Site s = {}) {
    static_assert(std::is_same_v<S, uint64_t>, "Fixpipe: cbufWorkspace is a LocalTensor<uint64_t> (Fixpipe page, 表1: S)");
    fusekit::send("Fixpipe", 0, s, dst, src, cbufWorkspace, intriParams, config);
}
template <typename T, typename U, const FixpipeConfig& config = CFG_ROW_MAJOR>
inline void Fixpipe(const LocalTensor<T>& dst, const LocalTensor<U>& src, const FixpipeParamsV220& intriParams,
                    Site s = {}) {
    fusekit::send("Fixpipe", 0, s, dst, src, intriParams, config);
}
template <typename T, typename U, const FixpipeConfig& config = CFG_ROW_MAJOR, typename S = uint64_t>
inline void Fixpipe(const LocalTensor<T>& dst, const LocalTensor<U>& src, const LocalTensor<S>& cbufWorkspace,
                    const FixpipeParamsV220& intriParams, Site s = {}) {
    static_assert(std::is_same_v<S, uint64_t>, "Fixpipe: cbufWorkspace is a LocalTensor<uint64_t> (Fixpipe page, 表1: S)");
    fusekit::send("Fixpipe", 0, s, dst, src, cbufWorkspace, intriParams, config);
}

}  // namespace AscendC
