# `cmake --install`: every layer's static library, the public headers (include/reducetune/...,
# include/reducetune/db/...) and the CMake package, lib/cmake/reducetune. Included by the top
# CMakeLists.txt when REDUCETUNE_INSTALL is on (not in the Python build: the wheel carries the
# extension only). examples/cpp/ is an application of the installed package.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The layers are read from scripts/layers.txt, their one declaration: a layer added there and
# in CMake is installed with no edit here. Lines that name no target (tools, "= driver") are
# skipped.
file(STRINGS "${PROJECT_SOURCE_DIR}/scripts/layers.txt" rt_layer_lines REGEX "^[a-z]")
set(rt_install_targets "")
foreach(line IN LISTS rt_layer_lines)
  string(REGEX MATCH "^[a-z_]+" layer "${line}")
  if(TARGET reducetune_${layer})
    set_target_properties(reducetune_${layer} PROPERTIES EXPORT_NAME ${layer})
    list(APPEND rt_install_targets reducetune_${layer})
  endif()
endforeach()
# The umbrella: reducetune::core in this build, reducetune::reducetune once installed.
set_target_properties(reducetune_core PROPERTIES EXPORT_NAME reducetune)
list(APPEND rt_install_targets reducetune_core)

install(TARGETS ${rt_install_targets} EXPORT reducetuneTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
# The embedded templates and SQL are generated sources compiled into the libraries; every
# header is in the source tree.
foreach(dir IN ITEMS "${PROJECT_SOURCE_DIR}/tuner/reducetune" "${PROJECT_SOURCE_DIR}/db/reducetune")
  install(DIRECTORY "${dir}" DESTINATION include FILES_MATCHING PATTERN "*.hpp")
endforeach()

set(rt_cmake_dir "${CMAKE_INSTALL_LIBDIR}/cmake/reducetune")
install(EXPORT reducetuneTargets NAMESPACE reducetune:: DESTINATION "${rt_cmake_dir}")
configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/reducetuneConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/reducetuneConfig.cmake" INSTALL_DESTINATION "${rt_cmake_dir}")
# 0.x: a minor version may break the API.
write_basic_package_version_file("${PROJECT_BINARY_DIR}/reducetuneConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/reducetuneConfig.cmake"
              "${PROJECT_BINARY_DIR}/reducetuneConfigVersion.cmake"
              "${PROJECT_SOURCE_DIR}/cmake/NvJitLink.cmake"
        DESTINATION "${rt_cmake_dir}")
