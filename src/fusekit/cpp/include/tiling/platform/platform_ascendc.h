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
    // the system workspace the high-level APIs (Matmul) take (GetLibApiWorkSpaceSize.md): 16 MiB, what pyasc's
    // matmul tutorials reserve; fusekit's Matmul uses one base block of C per AIV of it
    uint32_t GetLibApiWorkSpaceSize() const { return 16u * 1024 * 1024; }
private:
    fe::PlatFormInfos info_;
};
// PlatformAscendCManager::GetInstance([socVersion]) (PlatformAscendCManager.md): the platform a host program's own
// tiling asks, fusekit's default SoC (Ascend910B1: 24 AIC, 48 AIV, 192 KiB UB) whatever the name
class PlatformAscendCManager {
public:
    static PlatformAscendC* GetInstance(const char* = nullptr) {
        static fe::PlatFormInfos info;
        static PlatformAscendC platform(&info);
        return &platform;
    }
};
}  // namespace platform_ascendc
