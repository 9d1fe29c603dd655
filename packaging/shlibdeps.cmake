# CPack pre-build step (CPACK_PRE_BUILD_SCRIPTS): the package's Depends, from dpkg-shlibdeps over every ELF file
# it carries — the programs and the bundled LibTorch/CUDA libraries, whose own needs (libgomp's, libstdc++'s, ...)
# a user's machine must meet too. CPack's own CPACK_DEBIAN_PACKAGE_SHLIBDEPS cannot be used: one bundled library
# (libcaffe2_nvrtc, loaded with dlopen on a GPU) needs the NVIDIA driver's libcuda.so.1, which no package
# provides, and dpkg-shlibdeps stops at a library it cannot find. Such files are left out here: the driver that
# provides libcuda provides what they need.
set(stage "${CPACK_TEMPORARY_DIRECTORY}")
file(GLOB_RECURSE candidates LIST_DIRECTORIES false "${stage}/usr/bin/*" "${stage}/usr/lib/tokamak/*")
set(args)
foreach(f ${candidates})
  if(IS_SYMLINK "${f}")
    continue()
  endif()
  execute_process(COMMAND objdump -p "${f}" OUTPUT_VARIABLE headers ERROR_QUIET RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR NOT headers MATCHES "NEEDED")
    continue()  # not a dynamically linked ELF file
  endif()
  if(headers MATCHES "NEEDED +(libcuda\\.so|libnvidia-)")
    continue()
  endif()
  list(APPEND args "-e${f}")
endforeach()
# dpkg-shlibdeps wants a debian/control where it runs and a DEBIAN folder to find the package root for $ORIGIN.
file(MAKE_DIRECTORY "${stage}/debian" "${stage}/DEBIAN")
file(WRITE "${stage}/debian/control" "")
execute_process(COMMAND dpkg-shlibdeps -O --ignore-missing-info "-l${stage}/usr/lib/tokamak" ${args}
                WORKING_DIRECTORY "${stage}" OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
file(REMOVE_RECURSE "${stage}/debian")
if(NOT rc EQUAL 0 OR NOT out MATCHES "shlibs:Depends=([^\n]*)")
  message(FATAL_ERROR "tokamak package: dpkg-shlibdeps failed (${rc}): ${err}")
endif()
set(CPACK_DEBIAN_PACKAGE_DEPENDS "${CMAKE_MATCH_1}, ${CPACK_DEBIAN_PACKAGE_DEPENDS}")
list(LENGTH args n)
message(STATUS "tokamak package: Depends from ${n} ELF files: ${CPACK_DEBIAN_PACKAGE_DEPENDS}")
