// fusekit: device assert for fusekit's simulator (asc-devkit Utils-API 调测接口/assert-291.md): a false condition
// stops the launch with a KernelError naming the line, where the NPU prints "[ASSERT] file:line: Assertion `expr'
// failed" and fails the operator; the standard assert would abort fusekit's process instead. kernel_operator.h
// includes this header, as asc-devkit's samples expect (fixpipe_l0c2gm calls assert without including it). The
// page's rule holds here too: include <cassert> before this header, or it takes assert back.
#pragma once
#include <cassert>
#include "kernel_operator.h"
#undef assert
#define assert(expr) ::fusekit::kernel_assert(bool(expr), #expr, ::fusekit::Site(__FILE__, __LINE__))
