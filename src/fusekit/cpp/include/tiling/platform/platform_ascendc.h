// platform_ascendc::PlatformAscendC for fusekit: the SoC's core count and memory sizes a tiling function asks
// (written for fusekit from the CANN documentation "PlatformAscendC"; not a CANN header).
#pragma once
#include "../../register/op_def_registry.h"

namespace platform_ascendc {
enum class CoreMemType { L0_A, L0_B, L0_C, L1, L2, UB, HBM, RESERVED };
class PlatformAscendC {
public:
    explicit PlatformAscendC(const fe::PlatFormInfos* info) : info_(*info) {}
    uint32_t GetCoreNumAiv() const { return info_.aiv_cores; }
    uint32_t GetCoreNum() const { return info_.aiv_cores; }
    void GetCoreMemSize(CoreMemType type, uint64_t& size) const { size = type == CoreMemType::UB ? info_.ub_bytes : 0; }
private:
    fe::PlatFormInfos info_;
};
}  // namespace platform_ascendc
