# SPDX-License-Identifier: MIT
# `cpack -G DEB` in the build directory: swaplab (the tool, its man page and
# completion) and swaplab-dev (headers, static libraries, CMake package,
# pkg-config file). The tool's Depends come from dpkg-shlibdeps (dpkg-dev);
# swaplab-dev depends on the -dev packages its CMake package and
# swaplab.pc find.
# Each package's /usr/share/doc/<package>: copyright and, the packages
# being native, changelog.gz (Debian policy 12.5, 12.7).
configure_file(${PROJECT_SOURCE_DIR}/cmake/debian/changelog.in ${CMAKE_BINARY_DIR}/doc/changelog
               @ONLY)
execute_process(COMMAND gzip -9 -n -c ${CMAKE_BINARY_DIR}/doc/changelog
                OUTPUT_FILE ${CMAKE_BINARY_DIR}/doc/changelog.gz)
foreach(component runtime dev)
  if(component STREQUAL "runtime")
    set(package swaplab)
  else()
    set(package swaplab-dev)
  endif()
  install(FILES ${PROJECT_SOURCE_DIR}/cmake/debian/copyright ${CMAKE_BINARY_DIR}/doc/changelog.gz
          DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${package} COMPONENT ${component})
endforeach()

set(CPACK_PACKAGE_NAME swaplab)
set(CPACK_PACKAGE_VENDOR "swaplab maintainers")
set(CPACK_PACKAGE_CONTACT "swaplab maintainers <maintainers@users.noreply.a-seed-77de5594.example>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Linux swap slot allocator and hibernation image path in user space")
set(CPACK_PACKAGE_DESCRIPTION
    "swaplab re-implements the Linux swap slot allocator (mm/swapfile.c) and the\n"
    "hibernation image path (kernel/power/swap.c) in user space, runs them on real\n"
    "swap areas and simulated devices, and reproduces mailing-list experiments.")
string(JOIN "" CPACK_PACKAGE_DESCRIPTION ${CPACK_PACKAGE_DESCRIPTION})
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_STRIP_FILES ON)
set(CPACK_GENERATOR DEB)
set(CPACK_COMPONENTS_ALL runtime dev)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME swaplab)
set(CPACK_DEBIAN_DEV_PACKAGE_NAME swaplab-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS
    "libfmt-dev, nlohmann-json3-dev, liburing-dev, liblz4-dev, liblzo2-dev, zlib1g-dev, libblkid-dev, pkg-config")
# CPack puts CPACK_PACKAGE_DESCRIPTION_SUMMARY before each description.
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION "${CPACK_PACKAGE_DESCRIPTION}")
set(CPACK_COMPONENT_DEV_DESCRIPTION
    "Development files: the static libraries, headers, CMake package and\n"
    "pkg-config file of swaplab; the swap slot allocator as a thread-safe C++20\n"
    "library, and the layers the swaplab tool is built from.")
string(JOIN "" CPACK_COMPONENT_DEV_DESCRIPTION ${CPACK_COMPONENT_DEV_DESCRIPTION})
include(CPack)
