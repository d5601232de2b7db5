// fusekit: the tiling API a host tiling function includes (gert::TilingContext in register/op_def_registry.h)
#pragma once
#include "../register/op_def_registry.h"
#include "platform/platform_ascendc.h"
#include "matmul_tiling.h"
