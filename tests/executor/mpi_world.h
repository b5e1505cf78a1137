// The world communicator of an mpi test executable (see mpi_test_main.cpp).
#pragma once

#include "executor/backends.h"

namespace parplan::executor::testing {
Comm& world();
}  // namespace parplan::executor::testing
