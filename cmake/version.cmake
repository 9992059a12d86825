# SWAPLAB_VERSION_STRING: project()'s version, plus the commit when the
# source is a git checkout (`git describe` at configure time: the tag, the
# commits since it and the abbreviated hash, "-dirty" with local changes).
# A source tarball has no .git: the version alone.
set(SWAPLAB_GIT_DESCRIBE "")
find_package(Git QUIET)
if(GIT_FOUND AND EXISTS ${PROJECT_SOURCE_DIR}/.git)
  execute_process(
    COMMAND ${GIT_EXECUTABLE} describe --always --dirty --abbrev=12
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    OUTPUT_VARIABLE SWAPLAB_GIT_DESCRIBE
    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET
    RESULT_VARIABLE SWAPLAB_GIT_RESULT)
  if(NOT SWAPLAB_GIT_RESULT EQUAL 0)
    set(SWAPLAB_GIT_DESCRIBE "")
  endif()
endif()
set(SWAPLAB_VERSION_STRING ${PROJECT_VERSION})
if(SWAPLAB_GIT_DESCRIBE)
  string(APPEND SWAPLAB_VERSION_STRING " (git ${SWAPLAB_GIT_DESCRIBE})")
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/version.h.in ${CMAKE_BINARY_DIR}/generated/swaplab_version.h
               @ONLY)
