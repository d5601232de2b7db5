// fusekit: acl/acl_rt.h is part of acl/acl.h
#pragma once
#include "acl.h"
