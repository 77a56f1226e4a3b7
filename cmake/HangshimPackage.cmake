# What `cmake --install BUILD --prefix P` adds besides the executables, the shim and the gdb
# extension (installed by their own directories): the collector scripts, the pyframes library
# with its public headers, and a CMake package so that other projects can
#     find_package(hangshim CONFIG REQUIRED)
#     target_link_libraries(app PRIVATE hangshim::pyframes)
# The package is relocatable: every path in it is relative to where it was installed.
include(CMakePackageConfigHelpers)

set(HANGSHIM_CMAKE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/hangshim)

# Collectors and checks: the hang-dump* scripts and core-setup next to pyframes and hangshim in
# bin/ (hang-dump finds them there); gpu-comm-check.py runs under torchrun, so it is data.
install(PROGRAMS ${PROJECT_SOURCE_DIR}/scripts/hang-dump ${PROJECT_SOURCE_DIR}/scripts/hang-dump-slurm
                 ${PROJECT_SOURCE_DIR}/scripts/hang-dump-pdsh ${PROJECT_SOURCE_DIR}/scripts/core-setup
        DESTINATION ${CMAKE_INSTALL_BINDIR})
install(PROGRAMS ${PROJECT_SOURCE_DIR}/scripts/gpu-comm-check.py DESTINATION ${CMAKE_INSTALL_DATADIR}/hangshim)

# libpyframes.a (static, position-independent) and include/pyframes/*.h. The headers need
# C++17; users get that requirement with the target.
set_property(TARGET pyframes APPEND PROPERTY INTERFACE_COMPILE_FEATURES cxx_std_17)
install(TARGETS pyframes EXPORT hangshimTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/pyframes/include/pyframes DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
install(EXPORT hangshimTargets NAMESPACE hangshim:: DESTINATION ${HANGSHIM_CMAKE_INSTALL_DIR})

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/hangshimConfig.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/hangshimConfig.cmake
                              INSTALL_DESTINATION ${HANGSHIM_CMAKE_INSTALL_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/hangshimConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/hangshimConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/hangshimConfigVersion.cmake
        DESTINATION ${HANGSHIM_CMAKE_INSTALL_DIR})
