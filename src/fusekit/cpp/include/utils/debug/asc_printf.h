// fusekit: device printf for fusekit's simulator (AscendC::printf, declared in kernel_operator.h). A kernel's
// printf goes to the simulator, which prints it per core when the launch ends; called from host code, it prints at once.
#pragma once
#include <cstdio>
#include "kernel_operator.h"
#define printf(...) ::AscendC::printf(__VA_ARGS__)
