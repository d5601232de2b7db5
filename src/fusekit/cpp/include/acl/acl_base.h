// fusekit: acl/acl_base.h is part of acl/acl.h
#pragma once
#include "acl.h"
