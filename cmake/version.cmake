# SPDX-License-Identifier: MIT
# SWAPLAB_VERSION_STRING: project()'s version, plus the commit when the
# source is a git checkout (`git describe`: the tag, the commits since it and
# the abbreviated hash, "-dirty" with local changes). A source tarball has
# no .git: the version alone.
#
# Included from CMakeLists.txt it writes generated/swaplab_version.h once
# and adds the target swaplab_version, which runs this file as a script
# (cmake -P) at every build: the header is rewritten only when the string
# changes, so a commit after configuring shows in `swaplab --version` and
# nothing else is rebuilt.
function(swaplab_write_version source_dir binary_dir version)
  set(describe "")
  find_package(Git QUIET)
  if(GIT_FOUND AND EXISTS ${source_dir}/.git)
    execute_process(
      COMMAND ${GIT_EXECUTABLE} describe --always --dirty --abbrev=12
      WORKING_DIRECTORY ${source_dir}
      OUTPUT_VARIABLE describe
      OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET
      RESULT_VARIABLE result)
    if(NOT result EQUAL 0)
      set(describe "")
    endif()
  endif()
  set(PROJECT_VERSION ${version})
  set(SWAPLAB_VERSION_STRING ${version})
  if(describe)
    string(APPEND SWAPLAB_VERSION_STRING " (git ${describe})")
  endif()
  configure_file(${source_dir}/cmake/version.h.in ${binary_dir}/generated/swaplab_version.h @ONLY)
endfunction()

if(CMAKE_SCRIPT_MODE_FILE)
  swaplab_write_version(${SOURCE_DIR} ${BINARY_DIR} ${VERSION})
else()
  swaplab_write_version(${PROJECT_SOURCE_DIR} ${CMAKE_BINARY_DIR} ${PROJECT_VERSION})
  add_custom_target(swaplab_version
    COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR} -DBINARY_DIR=${CMAKE_BINARY_DIR}
            -DVERSION=${PROJECT_VERSION} -P ${CMAKE_CURRENT_LIST_FILE}
    BYPRODUCTS ${CMAKE_BINARY_DIR}/generated/swaplab_version.h
    COMMENT "swaplab_version.h: git describe")
endif()
