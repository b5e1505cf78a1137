// The CPU reference backend of Compute (executor/compute.h): host memory, Eigen GEMMs, one
// thread per rank. Tested in tests/executor/cpu_ops_test.cpp.
#pragma once

#include <memory>

#include "executor/compute.h"

namespace parplan::executor {

template <typename T>
std::unique_ptr<Compute<T>> make_cpu_compute();

}  // namespace parplan::executor
