# CMake < 3.26 has no CUDA::nvJitLink target (Debian 12 ships 3.25): make it from the toolkit.
# Included by the top CMakeLists.txt and, installed, by reducetuneConfig.cmake: reducetune::jit
# links CUDA::nvJitLink, so a consumer needs the same target the build made. Needs
# find_package(CUDAToolkit) first.
if(NOT TARGET CUDA::nvJitLink)
  find_library(RT_NVJITLINK_LIBRARY nvJitLink HINTS "${CUDAToolkit_LIBRARY_DIR}" REQUIRED)
  add_library(CUDA::nvJitLink SHARED IMPORTED)
  set_target_properties(CUDA::nvJitLink PROPERTIES
    IMPORTED_LOCATION "${RT_NVJITLINK_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${CUDAToolkit_INCLUDE_DIRS}")
endif()
