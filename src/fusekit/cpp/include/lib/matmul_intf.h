// The high-level Matmul's kernel API for fusekit's simulator: Matmul<A, B, C, BIAS, MM_CFG>, MatmulType,
// MatmulConfig, REGIST_MATMUL_OBJ, GetSysWorkSpacePtr (written for fusekit from asc-devkit's pages
// docs/zh/api/SIMD-API/高阶API/矩阵计算/Matmul-Kernel侧接口/ and 基础API/资源管理/workspace/; not a CANN header).
//
// Every call forwards to the ONE implementation, pyasc's asc.adv.Matmul in fusekit.asc.adv.matmul (bridge.py maps the
// C++ names), which issues the basic instructions the API is documented to (DataCopy ND2NZ, LoadData, Mmad,
// Fixpipe, their flags; in a mix kernel the AIV -> AIC messages): the sanitizer and the timing model see those.
// What the simulator does not run is refused at the call, naming it: a layout other than ND, a transposed A, partial
// sums, asynchronous calls, the quantised and HF32 settings, the MatmulConfig options that change what is computed.
#pragma once
#include <cstdint>
#include <cstring>

#include "../kernel_operator.h"
#include "../kernel_tiling/kernel_tiling.h"

#ifndef __kfc_workspace__  // the attribute of the mix kernels' workspace parameter: nothing to a host compiler
#define __kfc_workspace__
#endif

// CubeFormat (Matmul模板参数.md, MatmulType): Ascend C's members in its order; the simulator runs ND
enum class CubeFormat : int32_t { ND = 0, NZ, ZN, ZZ, NN, ND_ALIGN, SCALAR, VECTOR, ROW_MAJOR, COLUMN_MAJOR };
enum class LayoutMode : int32_t { NONE = 0, BSNGD, SBNGD, BNGS1S2, NORMAL };

// MatmulConfig (MatmulConfig.md): the options the template is built with. Most choose how the API caches and
// schedules (the Norm, MDL, IBShare templates), not what it computes: fusekit runs its one data path for them.
// The ones that change the result or the cores' roles are refused by Matmul's constructor.
struct MatmulConfig {
    bool doNorm = true, doBasicBlock = false, doMultiDataLoad = false;
    uint32_t basicM = 0, basicN = 0, basicK = 0;
    bool intrinsicsCheck = false, isNBatch = false, enVecND2NZ = false, doSpecialBasicBlock = false;
    uint32_t doMTE2Preload = 0;
    uint32_t singleCoreM = 0, singleCoreN = 0, singleCoreK = 0, stepM = 0, stepN = 0, baseMN = 0, singleCoreMN = 0;
    bool enUnitFlag = true, isPerTensor = false, hasAntiQuantOffset = false, doIBShareNorm = false,
         doSpecialMDL = false, enableInit = true;
    bool enableEnd = true, enableGetTensorC = true, enableSetOrgShape = true, enableSetBias = true,
         enableSetTail = true, enableQuantVector = true, enableSetDefineData = true;
    uint8_t iterateMode = 0;
    bool enableReuse = true, enableUBReuse = false, enableL1CacheUB = false, intraBlockPartSum = false;
    bool isPartialOutput = false, enableMixDualMaster = false, isA2B2Shared = false, isEnableChannelSplit = false;
};
// the templates' configurations (MatmulConfig.md: GetNormalConfig, GetMDLConfig, GetIBShareNormConfig,
// GetSpecialMDLConfig): their cache and schedule arguments are taken and change nothing fusekit computes
template <class... Options> constexpr MatmulConfig GetNormalConfig(Options...) { return MatmulConfig{}; }
template <class... Options> constexpr MatmulConfig GetMDLConfig(Options...) {
    MatmulConfig c{};
    c.doNorm = false, c.doMultiDataLoad = true;
    return c;
}
template <class... Options> constexpr MatmulConfig GetSpecialMDLConfig(Options...) {
    MatmulConfig c{};
    c.doNorm = false, c.doSpecialMDL = true;
    return c;
}
template <class... Options> constexpr MatmulConfig GetIBShareNormConfig(Options...) {
    MatmulConfig c{};
    c.doNorm = false, c.doIBShareNorm = true;
    return c;
}
inline constexpr MatmulConfig CFG_NORM = GetNormalConfig();
inline constexpr MatmulConfig CFG_MDL = GetMDLConfig();
inline constexpr MatmulConfig CFG_IBSHARE_NORM = GetIBShareNormConfig();

namespace AscendC {
using ::CubeFormat, ::LayoutMode, ::MatmulConfig, ::CFG_NORM, ::CFG_MDL, ::CFG_IBSHARE_NORM;
using ::GetNormalConfig, ::GetMDLConfig, ::GetSpecialMDLConfig, ::GetIBShareNormConfig;

// the system workspace (workspace/GetSysWorkSpacePtr.md, SetSysWorkSpace.md): fusekit answers the kernel's GM
// parameter named workspace until SetSysWorkspace sets another (fusekit.cpp.bridge.set_sys_workspace)
inline __gm__ uint8_t* GetSysWorkSpacePtr(Site s = {}) {
    return fusekit::value_of<__gm__ uint8_t*>(fusekit::send("GetSysWorkSpacePtr", 0, s));
}
inline void SetSysWorkspace(GM_ADDR workspace, Site s = {}) { fusekit::send("SetSysWorkspace", 0, s, workspace); }

// MatmulType<POSITION, FORMAT, TYPE, ISTRANS, LAYOUT, IBSHARE> (Matmul模板参数.md): where a matrix is, its layout,
// its element type, whether it is stored transposed
template <TPosition POSITION, CubeFormat FORMAT, class TYPE, bool ISTRANS = false, LayoutMode LAYOUT = LayoutMode::NONE,
          bool IBSHARE = false>
struct MatmulType {
    constexpr static TPosition pos = POSITION;
    constexpr static CubeFormat format = FORMAT;
    using T = TYPE;
    constexpr static bool isTrans = ISTRANS;
    constexpr static LayoutMode layout = LAYOUT;
    constexpr static bool ibShare = IBSHARE;
};

namespace fusekit_detail {
inline void refuse(const char* call, const char* why, const Site& s) {
    fusekit::send("fusekit.unsupported", 0, s, call, why);
}
// a MatmulConfig option that changes what the Matmul computes, or which core drives it, names itself
inline void check_config(const MatmulConfig& c, const Site& s) {
    if (c.intraBlockPartSum) refuse("Matmul", "MatmulConfig.intraBlockPartSum (the two AIVs' partial sums) is not simulated yet", s);
    if (c.isPartialOutput) refuse("Matmul", "MatmulConfig.isPartialOutput (C per K step) is not simulated yet", s);
    if (c.enableMixDualMaster) refuse("Matmul", "MatmulConfig.enableMixDualMaster (AIC and AIV both drive the Matmul) is not simulated yet", s);
    if (c.isNBatch) refuse("Matmul", "MatmulConfig.isNBatch (batch matmuls) is not simulated yet", s);
    if (c.isEnableChannelSplit) refuse("Matmul", "MatmulConfig.isEnableChannelSplit is not simulated yet", s);
    if (c.doBasicBlock || c.doSpecialBasicBlock)
        refuse("Matmul", "MatmulConfig's BasicBlock templates (constant base blocks) are not simulated yet", s);
}
inline void tiling_words(const TCubeTiling* tiling, int32_t (&words)[sizeof(TCubeTiling) / 4]) {
    std::memcpy(words, tiling, sizeof(TCubeTiling));
}
}  // namespace fusekit_detail

// Matmul<A_TYPE, B_TYPE, C_TYPE, BIAS_TYPE = C_TYPE, MM_CFG = CFG_NORM> (Matmul-Kernel侧接口): C = A x B (+ bias) over
// this core's share, in the tiling's base blocks
template <class A_TYPE, class B_TYPE, class C_TYPE, class BIAS_TYPE = C_TYPE, const auto& MM_CFG = CFG_NORM,
          class... Policy>
class Matmul : public fusekit::Object {
    using SrcAT = typename A_TYPE::T;
    using SrcBT = typename B_TYPE::T;
    using DstT = typename C_TYPE::T;
    using BiasT = typename BIAS_TYPE::T;

public:
    Matmul(Site s = {}) {
        fusekit_detail::check_config(MM_CFG, s);
        handle = fusekit::send("Matmul", 0, s, A_TYPE::pos, int32_t(A_TYPE::format), dtype<SrcAT>(), A_TYPE::isTrans,
                               B_TYPE::pos, int32_t(B_TYPE::format), dtype<SrcBT>(), B_TYPE::isTrans, C_TYPE::pos,
                               int32_t(C_TYPE::format), dtype<DstT>(), false, BIAS_TYPE::pos,
                               int32_t(BIAS_TYPE::format), dtype<BiasT>(), false).i;
    }
    // Init(&tiling[, &pipe]) (Init-85.md): the tiling the calls work with (REGIST_MATMUL_OBJ with a tiling does it)
    void Init(const TCubeTiling* cubeTiling, TPipe* tpipe = nullptr, Site s = {}) {
        int32_t words[sizeof(TCubeTiling) / 4];
        fusekit_detail::tiling_words(cubeTiling, words);
        fusekit::send("MatmulInit", handle, s, words);
    }
    // SetOrgShape (SetOrgShape.md): the whole matrices' M, N, K (Ka, Kb), C's row length Kc
    void SetOrgShape(int orgM, int orgN, int orgK, Site s = {}) { SetOrgShape(orgM, orgN, orgK, orgK, 0, s); }
    void SetOrgShape(int orgM, int orgN, int orgKa, int orgKb, int orgKc = 0, Site s = {}) {
        fusekit::send("SetOrgShape", handle, s, orgM, orgN, orgKa, orgKb, orgKc);
    }
    // SetSingleShape / SetTail (SetSingleShape.md, SetTail.md): this core's M, N, K (-1: the tiling's)
    void SetSingleShape(int singleM, int singleN, int singleK, Site s = {}) {
        fusekit::send("SetSingleShape", handle, s, singleM, singleN, singleK);
    }
    void SetTail(int tailM = -1, int tailN = -1, int tailK = -1, Site s = {}) {
        fusekit::send("SetTail", handle, s, tailM, tailN, tailK);
    }
    // SetTensorA / SetTensorB (SetTensorA.md, SetTensorB.md): the matrices in GM, B transposed (N x K) on request
    void SetTensorA(const GlobalTensor<SrcAT>& gm, bool isTransposeA = false, Site s = {}) {
        fusekit::send("SetTensorA", handle, s, gm, isTransposeA);
    }
    void SetTensorB(const GlobalTensor<SrcBT>& gm, bool isTransposeB = false, Site s = {}) {
        fusekit::send("SetTensorB", handle, s, gm, isTransposeB);
    }
    void SetTensorA(const LocalTensor<SrcAT>&, bool = false, Site s = {}) {
        fusekit_detail::refuse("SetTensorA", "A in a local tensor (TSCM / UB input) is not simulated yet: pass A in GM", s);
    }
    void SetTensorB(const LocalTensor<SrcBT>&, bool = false, Site s = {}) {
        fusekit_detail::refuse("SetTensorB", "B in a local tensor (TSCM / UB input) is not simulated yet: pass B in GM", s);
    }
    // SetBias (SetBias.md): a row of N added once; DisableBias / ClearBias: none
    void SetBias(const GlobalTensor<BiasT>& biasGlobal, Site s = {}) { fusekit::send("SetBias", handle, s, biasGlobal); }
    void DisableBias(Site s = {}) { fusekit::send("DisableBias", handle, s); }
    void ClearBias(Site s = {}) { fusekit::send("DisableBias", handle, s); }
    // SetLocalWorkspace (SetLocalWorkspace.md): UB the API may stage in (fusekit's data path does not need it)
    void SetLocalWorkspace(const LocalTensor<uint8_t>& tmpBuffer, Site s = {}) {
        fusekit::send("SetLocalWorkspace", handle, s, tmpBuffer);
    }
    // Iterate<sync>(enPartialSum) (Iterate.md): the next base block into L0C; false when none is left
    template <bool sync = true> bool Iterate(bool enPartialSum = false, Site s = {}) {
        if (enPartialSum) fusekit_detail::refuse("Iterate", "Iterate(enPartialSum = true) is not simulated yet", s);
        return fusekit::value_of<bool>(fusekit::send("MatmulIterate", handle, s, sync));
    }
    // IterateAll<sync>(gm, enAtomic, ...) (IterateAll.md): every block of the share into C in GM
    template <bool sync = true>
    void IterateAll(const GlobalTensor<DstT>& gm, uint8_t enAtomic = 0, bool enSequentialWrite = false,
                    bool waitIterateAll = false, bool fakeMsg = false, Site s = {}) {
        if (enSequentialWrite || fakeMsg)
            fusekit_detail::refuse("IterateAll", "IterateAll with enSequentialWrite or fakeMsg is not simulated yet", s);
        fusekit::send("IterateAll", handle, s, gm, enAtomic, sync);
    }
    template <bool sync = true> void IterateAll(const LocalTensor<DstT>& ubCmatrix, uint8_t enAtomic = 0, Site s = {}) {
        fusekit::send("IterateAll", handle, s, ubCmatrix, enAtomic, sync);
    }
    // GetTensorC<sync>(dst, enAtomic, enSequentialWrite) (GetTensorC.md): the last Iterate's block into dst
    template <bool sync = true>
    void GetTensorC(const LocalTensor<DstT>& c, uint8_t enAtomic = 0, bool enSequentialWrite = false, Site s = {}) {
        fusekit::send("GetTensorC", handle, s, c, enAtomic, enSequentialWrite, sync);
    }
    template <bool sync = true>
    void GetTensorC(const GlobalTensor<DstT>& gm, uint8_t enAtomic = 0, bool enSequentialWrite = false, Site s = {}) {
        fusekit::send("GetTensorC", handle, s, gm, enAtomic, enSequentialWrite, sync);
    }
    // End (End.md)
    void End(Site s = {}) { fusekit::send("End", handle, s); }
    // settings of the quantised and HF32 matmuls: refused by name
    void SetHF32(bool, int32_t = 0, Site s = {}) { fusekit_detail::refuse("SetHF32", "Matmul::SetHF32 is not simulated yet", s); }
    void SetQuantScalar(uint64_t, Site s = {}) {
        fusekit_detail::refuse("SetQuantScalar", "a quantised Matmul output (SetQuantScalar) is not simulated yet", s);
    }
    void SetQuantVector(const GlobalTensor<uint64_t>&, Site s = {}) {
        fusekit_detail::refuse("SetQuantVector", "a quantised Matmul output (SetQuantVector) is not simulated yet", s);
    }

private:
    template <class U> static fusekit::Arg dtype() { return {fusekit::ARG_DTYPE, 0, 0, 0.0, fusekit::Dtype<U>::name, nullptr}; }
};

namespace fusekit_detail {
// REGIST_MATMUL_OBJ(&pipe, workspace, mm[, &tiling], ...) (REGIST_MATMUL_OBJ.md): each object with its tiling
template <class M> void regist_matmul(const Site& s, TPipe* pipe, __gm__ uint8_t* workspace, M& mm) {
    fusekit::send("RegistMatmulObj", 0, s, *pipe, workspace, mm);
}
template <class M, class... Rest>
void regist_matmul(const Site& s, TPipe* pipe, __gm__ uint8_t* workspace, M& mm, const TCubeTiling* tiling,
                   Rest&&... rest) {
    if (tiling == nullptr) {
        fusekit::send("RegistMatmulObj", 0, s, *pipe, workspace, mm);
    } else {
        int32_t words[sizeof(TCubeTiling) / 4];
        tiling_words(tiling, words);
        fusekit::send("RegistMatmulObj", 0, s, *pipe, workspace, mm, words);
    }
    if constexpr (sizeof...(Rest) > 0) regist_matmul(s, pipe, workspace, rest...);
}
}  // namespace fusekit_detail
}  // namespace AscendC

#define REGIST_MATMUL_OBJ(...) ::AscendC::fusekit_detail::regist_matmul(::fusekit::Site(__FILE__, __LINE__), __VA_ARGS__)
#define REGISTER_MATMUL_OBJ(...) REGIST_MATMUL_OBJ(__VA_ARGS__)

// namespace matmul: the API's older home; `using namespace matmul;` reaches AscendC's names through it (the samples
// call GetBlockIdx() so)
namespace matmul {
using namespace AscendC;
}  // namespace matmul
using AscendC::GetSysWorkSpacePtr;
using AscendC::SetSysWorkspace;
