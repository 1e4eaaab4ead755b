# `cmake --install`: libkc, its public headers, kc-opt and kc-run, the CMake
# package (find_package(kc) gives the imported targets kc::kc, kc::kc-opt,
# kc::kc-run) and a pkg-config file. Paths inside the installed files are
# relative to where they land, so the tree can be moved.
set(KC_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/kc)

# Installed binaries find libkc beside them; libkc keeps the RUNPATH to
# OpenBLAS's directory (INSTALL_RPATH_USE_LINK_PATH).
file(RELATIVE_PATH KC_BIN_TO_LIB ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}
     ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR})
set_target_properties(kc-opt kc-run PROPERTIES INSTALL_RPATH "$ORIGIN/${KC_BIN_TO_LIB}"
                                               INSTALL_RPATH_USE_LINK_PATH ON)
set_target_properties(kc PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)

install(TARGETS kc EXPORT kcTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS kc-opt kc-run EXPORT kcTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY include/kc DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h" PATTERN "*.def")
install(FILES ${PROJECT_BINARY_DIR}/include/kc/Support/Version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kc/Support)

install(EXPORT kcTargets NAMESPACE kc:: DESTINATION ${KC_CMAKE_DIR})
configure_package_config_file(cmake/kcConfig.cmake.in ${PROJECT_BINARY_DIR}/kcConfig.cmake
                              INSTALL_DESTINATION ${KC_CMAKE_DIR})
# Before 1.0 only the same minor release is compatible (as the SONAME says).
write_basic_package_version_file(${PROJECT_BINARY_DIR}/kcConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/kcConfig.cmake ${PROJECT_BINARY_DIR}/kcConfigVersion.cmake
        DESTINATION ${KC_CMAKE_DIR})

# kc.pc: the same compile and link needs for builds without CMake.
file(RELATIVE_PATH KC_PC_TO_PREFIX ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig
     ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" KC_PC_TO_PREFIX "${KC_PC_TO_PREFIX}")
configure_file(cmake/kc.pc.in ${PROJECT_BINARY_DIR}/kc.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/kc.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
