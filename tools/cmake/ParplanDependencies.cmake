# Finds the Debian-packaged dependencies and the optional CUDA toolkit, NCCL, CUPTI and MPI.
# Results: PARPLAN_HAVE_{CUDA,NCCL,CUPTI,MPI} and targets nlohmann_json::nlohmann_json,
# Eigen3::Eigen, CLI11::CLI11, MPI::MPI_CXX, CUDA::*, parplan::nccl.
# PARPLAN_DEPS_DIR: a folder written by tools/gpu_check_prepare.sh (the header-only packages
# and the GoogleTest sources copied from a Debian machine), searched before the system, for a
# bare GPU machine without those packages (tools/gpu_check.sh). Empty: the system only.
set(PARPLAN_DEPS_DIR "" CACHE PATH "Folder from tools/gpu_check_prepare.sh (empty: system packages)")
if(PARPLAN_DEPS_DIR)
  if(NOT EXISTS "${PARPLAN_DEPS_DIR}/include")
    message(FATAL_ERROR "PARPLAN_DEPS_DIR=${PARPLAN_DEPS_DIR} has no include/: write it with "
      "tools/gpu_check_prepare.sh on a machine with the Debian packages (tools/deps.sh)")
  endif()
  list(PREPEND CMAKE_PREFIX_PATH "${PARPLAN_DEPS_DIR}")
endif()
set(_parplan_deps_hint "install it (tools/deps.sh), or on a machine without the packages "
  "configure with -DPARPLAN_DEPS_DIR=DIR, DIR written by tools/gpu_check_prepare.sh")
find_package(nlohmann_json 3.10)
find_package(Eigen3 3.3 NO_MODULE)
find_package(CLI11)
foreach(_parplan_dep nlohmann_json Eigen3 CLI11)
  if(NOT ${_parplan_dep}_FOUND)
    message(FATAL_ERROR "no ${_parplan_dep} found: " ${_parplan_deps_hint})
  endif()
endforeach()
find_package(Threads REQUIRED)

set(PARPLAN_HAVE_MPI OFF)
if(PARPLAN_ENABLE_MPI)
  find_package(MPI COMPONENTS CXX)
  if(MPI_CXX_FOUND)
    set(PARPLAN_HAVE_MPI ON)
  endif()
endif()

set(PARPLAN_HAVE_CUDA OFF)
set(PARPLAN_HAVE_NCCL OFF)
set(PARPLAN_HAVE_CUPTI OFF)
if(PARPLAN_ENABLE_CUDA)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # Explicit architectures: A100 (80) and H100/H200 (90). Never "native": CI has no GPU.
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 80 90)
    endif()
    enable_language(CUDA)
    set(CMAKE_CUDA_STANDARD 20)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    find_package(CUDAToolkit REQUIRED)
    set(PARPLAN_HAVE_CUDA ON)
    if(TARGET CUDA::cupti)
      set(PARPLAN_HAVE_CUPTI ON)
    endif()
    set(NCCL_HOME "" CACHE PATH "Folder holding include/nccl.h and lib/libnccl.so (or libnccl.so.2)")
    find_path(PARPLAN_NCCL_INCLUDE nccl.h
      HINTS ${NCCL_HOME}/include ${CUDAToolkit_INCLUDE_DIRS} /usr/include)
    if(NCCL_HOME)
      # NCCL_HOME's own library first; pip's nvidia-nccl-cu* wheels (PyTorch's venv) ship only
      # libnccl.so.2, no libnccl.so link.
      find_library(PARPLAN_NCCL_LIBRARY NAMES nccl libnccl.so.2 NAMES_PER_DIR
        PATHS ${NCCL_HOME}/lib ${NCCL_HOME}/lib64 NO_DEFAULT_PATH)
    endif()
    find_library(PARPLAN_NCCL_LIBRARY nccl
      HINTS ${NCCL_HOME}/lib ${NCCL_HOME}/lib64 ${CUDAToolkit_LIBRARY_DIR} /usr/lib/x86_64-linux-gnu)
    if(PARPLAN_NCCL_INCLUDE AND PARPLAN_NCCL_LIBRARY)
      add_library(parplan_nccl INTERFACE)
      add_library(parplan::nccl ALIAS parplan_nccl)
      target_include_directories(parplan_nccl INTERFACE ${PARPLAN_NCCL_INCLUDE})
      target_link_libraries(parplan_nccl INTERFACE ${PARPLAN_NCCL_LIBRARY})
      set(PARPLAN_HAVE_NCCL ON)
    endif()
  endif()
endif()

file(MAKE_DIRECTORY "${PROJECT_BINARY_DIR}/generated/parplan")
configure_file("${PROJECT_SOURCE_DIR}/tools/cmake/parplan_config.h.in"
               "${PROJECT_BINARY_DIR}/generated/parplan/parplan_config.h")
