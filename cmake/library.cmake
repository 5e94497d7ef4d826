# library.cmake - Kettle for others: one library of the engine's layers
# (base .. perform, and their GPU objects when the build has CUDA) as
# libkettle.so with a versioned SONAME and libkettle.a, the public headers
# under include/kettle/, kettle.pc, the CMake package (find_package(Kettle)
# -> Kettle::kettle), man pages made from the program's --help texts, the
# docs, and a Debian package (cpack -G DEB).  Included by CMakeLists.txt.
include(GNUInstallDirs)

# The headers a program using Kettle needs, and nothing that shows a layer's
# inside: the room and its parameters (kettle.h), the drum (timpani.h),
# scores and rendering (kt_score.h, kt_render.h), sparse formats
# (kt_linalg.h), spectra (kt_spectrum.h), status codes and constants.
# tests/public_headers.sh compiles each alone, in C and C++.
set(KETTLE_PUBLIC_HEADERS
  base/include/kt_base.h base/include/kt_physics.h linalg/include/kt_linalg.h
  room/include/kettle.h instruments/include/timpani.h perform/include/kt_score.h
  perform/include/kt_render.h perform/include/kt_spectrum.h)
set(KETTLE_LIBRARY_LAYERS kettle_base kettle_linalg kettle_room kettle_instruments kettle_perform)

set(kettle_objects "")
foreach(layer ${KETTLE_LIBRARY_LAYERS})
  list(APPEND kettle_objects $<TARGET_OBJECTS:${layer}>)
endforeach()
# The shared library exports the functions the public headers declare and
# nothing else (cmake/libkettle.map.in); the static one is the same objects.
set(KETTLE_EXPORTS "")
foreach(header ${KETTLE_PUBLIC_HEADERS})
  file(READ ${header} text)
  string(REGEX MATCHALL "\n[a-zA-Z][^\n(]*[ *](kt_[a-z0-9_]+|[a-z]+Timpani)\\(" decls "${text}")
  foreach(decl ${decls})
    if(decl MATCHES "^\nstatic ")    # an inline helper: nothing to export
      continue()
    endif()
    string(REGEX MATCH "(kt_[a-z0-9_]+|[a-z]+Timpani)\\($" name "${decl}")
    string(REPLACE "(" ";" name "${name}")
    string(APPEND KETTLE_EXPORTS "        ${name}\n")
  endforeach()
endforeach()
set(KETTLE_MAP ${CMAKE_CURRENT_BINARY_DIR}/libkettle.map)
configure_file(cmake/libkettle.map.in ${KETTLE_MAP} @ONLY)
add_library(kettle_shared SHARED ${kettle_objects})
add_library(kettle_static STATIC ${kettle_objects})
set_target_properties(kettle_shared PROPERTIES OUTPUT_NAME kettle EXPORT_NAME kettle VERSION ${PROJECT_VERSION}
  SOVERSION ${PROJECT_VERSION_MAJOR}
  LINK_DEPENDS ${KETTLE_MAP})
set_target_properties(kettle_static PROPERTIES OUTPUT_NAME kettle)
target_link_options(kettle_shared PRIVATE
  -Wl,--version-script=${KETTLE_MAP} -Wl,--no-undefined)
# Every archive's symbols are in the objects already, so linking the top
# layer adds only what the layers link: libsndfile, CSparse, OpenMP, CUDA...
target_link_libraries(kettle_shared PRIVATE kettle_perform)
target_include_directories(kettle_shared INTERFACE
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/kettle>)
# kt_linalg.h includes cs.h.  A CSparse unpacked inside the source tree (the
# GPU machine's .deps, see DEVELOPERS.md) cannot go into an installed
# package's paths, and CMake refuses to generate with it: left out there.
string(FIND "${CSPARSE_INCLUDE_DIR}/" "${CMAKE_SOURCE_DIR}/" csparse_in_tree)
if(NOT csparse_in_tree EQUAL 0)
  target_include_directories(kettle_shared INTERFACE $<INSTALL_INTERFACE:${CSPARSE_INCLUDE_DIR}>)
endif()
if(KETTLE_HAVE_CUDA)
  set_target_properties(kettle_shared PROPERTIES LINKER_LANGUAGE CUDA)
endif()

# ---- pkg-config: the private part is for `pkg-config --static` ----
# (plain -l flags, not Requires.private, whose packages pkg-config would
# look for even without --static)
set(KETTLE_PC_LIBS_PRIVATE
  "-lcxsparse -lsndfile -lsamplerate -lsmf -lglib-2.0 -lfftw3 -lpng16 -lz -fopenmp -lm")
if(KETTLE_HAVE_CUDA)
  string(APPEND KETTLE_PC_LIBS_PRIVATE
    " -L${CUDAToolkit_LIBRARY_DIR} -lcudart -lcusparse -lcublas -lstdc++")
endif()
if(KETTLE_HAVE_MPI)
  string(APPEND KETTLE_PC_LIBS_PRIVATE " -lmpi")
endif()
# The prefix is found from the .pc file's own place, so the tree works
# wherever `cmake --install --prefix` or a package puts it.
file(RELATIVE_PATH KETTLE_PC_TO_PREFIX
  /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(cmake/kettle.pc.in ${CMAKE_CURRENT_BINARY_DIR}/kettle.pc @ONLY)

# ---- CMake package ----
include(CMakePackageConfigHelpers)
set(KETTLE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Kettle)
configure_package_config_file(cmake/KettleConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/KettleConfig.cmake INSTALL_DESTINATION ${KETTLE_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/KettleConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)

# ---- man pages: help2man over `kettle --help` and each command's ----
find_program(HELP2MAN help2man)
if(HELP2MAN)
  set(KETTLE_MAN_DIR ${CMAKE_CURRENT_BINARY_DIR}/man)
  add_custom_command(OUTPUT ${KETTLE_MAN_DIR}/kettle.1.gz
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cmake/man.sh $<TARGET_FILE:kettle> ${HELP2MAN}
            ${PROJECT_VERSION} ${KETTLE_MAN_DIR}
    DEPENDS kettle ${CMAKE_CURRENT_SOURCE_DIR}/cmake/man.sh
    COMMENT "Man pages from the kettle program's --help texts")
  add_custom_target(kettle_man ALL DEPENDS ${KETTLE_MAN_DIR}/kettle.1.gz)
else()
  message(STATUS "Kettle: no help2man, so no man pages (Debian: help2man)")
endif()

# ---- install ----
install(TARGETS kettle RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS kettle_shared EXPORT KettleTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS kettle_static ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${KETTLE_PUBLIC_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kettle)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/kettle.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
install(EXPORT KettleTargets NAMESPACE Kettle:: DESTINATION ${KETTLE_CMAKE_DIR})
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/KettleConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/KettleConfigVersion.cmake DESTINATION ${KETTLE_CMAKE_DIR})
if(HELP2MAN)
  install(DIRECTORY ${KETTLE_MAN_DIR}/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endif()
install(FILES README.md DEVELOPERS.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY examples/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
install(DIRECTORY scores/ DESTINATION ${CMAKE_INSTALL_DATADIR}/kettle/scores)

# ---- Debian package: `cpack -G DEB` in the build folder ----
# The CPU build is the package `kettle`; a build with CUDA is `kettle-cuda`,
# which replaces it (the same files, with the GPU objects inside): NVIDIA's
# CUDA runtime, cuSPARSE and cuBLAS come from NVIDIA's repository, not from
# Debian, so its Depends name only the Debian libraries.
set(CPACK_PACKAGE_NAME kettle)
set(CPACK_PACKAGE_VENDOR "Kettle")
set(CPACK_PACKAGE_CONTACT "Kettle developers <kettle@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "physical-modelling timpani in a 3D FDTD room")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION sound)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
if(KETTLE_HAVE_CUDA)
  set(CPACK_PACKAGE_NAME kettle-cuda)
  set(CPACK_DEBIAN_PACKAGE_CONFLICTS kettle)
  set(CPACK_DEBIAN_PACKAGE_REPLACES kettle)
  set(CPACK_DEBIAN_PACKAGE_PROVIDES kettle)
  # dpkg-shlibdeps finds no Debian package owning the CUDA libraries
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${CUDAToolkit_LIBRARY_DIR})
endif()
# compiling against it: kt_linalg.h includes CSparse's cs.h
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "libsuitesparse-dev, pkg-config")
include(CPack)
