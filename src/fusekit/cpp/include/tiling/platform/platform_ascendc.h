// platform_ascendc::PlatformAscendC for fusekit: the SoC's core count and memory sizes a tiling function asks
// (written for fusekit from the CANN documentation "PlatformAscendC"; not a CANN header).
#pragma once
#include "../../register/op_def_registry.h"

namespace platform_ascendc {
enum class CoreMemType { L0_A, L0_B, L0_C, L1, L2, UB, HBM, RESERVED };
enum class SocVersion { ASCEND910 = 0, ASCEND910B = 1, ASCEND310P = 2, ASCEND310B = 3, ASCEND910_93 = 4, RESERVED_VERSION };
class PlatformAscendC {
public:
    explicit PlatformAscendC(const fe::PlatFormInfos* info) : info_(*info) {}
    uint32_t GetCoreNumAiv() const { return info_.aiv_cores; }
    uint32_t GetCoreNum() const { return info_.aiv_cores; }
    uint32_t GetCoreNumAic() const { return info_.aic_cores; }
    SocVersion GetSocVersion() const { return SocVersion(info_.soc_version); }
    void GetCoreMemSize(CoreMemType type, uint64_t& size) const { size = type == CoreMemType::UB ? info_.ub_bytes : 0; }
private:
    fe::PlatFormInfos info_;
};
}  // namespace platform_ascendc
