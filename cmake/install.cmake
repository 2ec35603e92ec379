# `cmake --install`: the public headers (with the configured version.h), every layer's static
# library, the tool, and a CMake package, so that another project writes
#   find_package(fusedgemm REQUIRED)
#   target_link_libraries(app PRIVATE fusedgemm::fusedgemm)
# (tests/install/consumer_build.sh builds examples/cpp/ that way in CI).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(DIRECTORY include/fusedgemm DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
install(FILES ${PROJECT_BINARY_DIR}/include/fusedgemm/version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/fusedgemm)

set(FUSEDGEMM_EXPORTED_TARGETS
  fusedgemm fusedgemm_api fusedgemm_graph fusedgemm_fusion fusedgemm_recipe fusedgemm_jit
  fusedgemm_codegen fusedgemm_numeric fusedgemm_runtime fusedgemm_fallback)
install(TARGETS ${FUSEDGEMM_EXPORTED_TARGETS} EXPORT fusedgemmTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
if(FUSEDGEMM_BUILD_TOOL)
  # The installed tool finds NVRTC where the build found it (the toolkit's library folder is
  # seldom on the loader's path).
  get_filename_component(FUSEDGEMM_NVRTC_DIR ${FUSEDGEMM_NVRTC_LIBRARY} DIRECTORY)
  set_target_properties(fusedgemm_tool PROPERTIES INSTALL_RPATH ${FUSEDGEMM_NVRTC_DIR})
  install(TARGETS fusedgemm_tool RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

set(FUSEDGEMM_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/fusedgemm)
install(EXPORT fusedgemmTargets NAMESPACE fusedgemm:: DESTINATION ${FUSEDGEMM_CMAKE_DIR})
configure_package_config_file(cmake/fusedgemmConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/fusedgemmConfig.cmake
                              INSTALL_DESTINATION ${FUSEDGEMM_CMAKE_DIR})
# Before 1.0.0 a minor version may change the API (CHANGELOG.md): same minor only.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/fusedgemmConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/fusedgemmConfig.cmake
              ${PROJECT_BINARY_DIR}/fusedgemmConfigVersion.cmake
        DESTINATION ${FUSEDGEMM_CMAKE_DIR})
