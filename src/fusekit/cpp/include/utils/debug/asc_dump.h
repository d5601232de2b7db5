// fusekit: DumpTensor for fusekit's simulator (declared in kernel_operator.h)
#pragma once
#include "kernel_operator.h"
