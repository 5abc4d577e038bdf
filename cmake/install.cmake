# Install layout (`cmake --install build --prefix <p>`), shaped like a CANN toolkit prefix so
# unchanged HCCL programs build with ASCEND_HOME_PATH=<p> / ASCEND_DIR=<p>:
#   <p>/include/{hccl,acl,hostccl}/         public headers
#   <p>/lib64/libhccl.so*                   the library, plus libhcomm/libascendcl/libacl/
#                                           libacl_rt/libmsprofiler.so -> libhccl.so; <p>/lib -> lib64
#   <p>/bin/                                hcclrun, hccl_info, reduce_test, ... (those built)
#   <p>/set_env.sh                          exports ASCEND_HOME_PATH & co. (source it)
#   <p>/python/site-packages/hostccl/       the Python package, when built (python/CMakeLists.txt)
#   <p>/lib64/cmake/hostccl/                find_package(hostccl): hostccl::hccl, hostccl::ascendcl
#   <p>/lib64/pkgconfig/{hostccl,hccl}.pc   pkg-config --cflags --libs hostccl
# Every path is relative to the prefix, so an installed tree can be moved.
include(CMakePackageConfigHelpers)

set(HOSTCCL_INSTALL_LIBDIR lib64)
set(HOSTCCL_INSTALL_CMAKEDIR ${HOSTCCL_INSTALL_LIBDIR}/cmake/hostccl)

foreach(dir hccl acl hostccl)
  if(IS_DIRECTORY ${PROJECT_SOURCE_DIR}/include/${dir})
    install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/${dir} DESTINATION include
            FILES_MATCHING PATTERN "*.h")
  endif()
endforeach()

if(TARGET hccl)
  install(TARGETS hccl EXPORT hostcclTargets LIBRARY DESTINATION ${HOSTCCL_INSTALL_LIBDIR})
  # Alias names and the lib -> lib64 link; created at install time so DESTDIR is honoured.
  install(CODE "
    set(hostccl_lib \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${HOSTCCL_INSTALL_LIBDIR}\")
    foreach(alias ${HOSTCCL_ALIAS_NAMES})
      message(STATUS \"Installing: \${hostccl_lib}/lib\${alias}.so -> libhccl.so\")
      file(CREATE_LINK libhccl.so \"\${hostccl_lib}/lib\${alias}.so\" SYMBOLIC)
    endforeach()
    if(NOT EXISTS \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/lib\")
      file(CREATE_LINK ${HOSTCCL_INSTALL_LIBDIR} \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/lib\"
           SYMBOLIC)
    endif()")

  install(EXPORT hostcclTargets NAMESPACE hostccl:: DESTINATION ${HOSTCCL_INSTALL_CMAKEDIR})
  configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/hostcclConfig.cmake.in
                                ${CMAKE_BINARY_DIR}/hostcclConfig.cmake
                                INSTALL_DESTINATION ${HOSTCCL_INSTALL_CMAKEDIR})
  write_basic_package_version_file(${CMAKE_BINARY_DIR}/hostcclConfigVersion.cmake
                                   VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
  install(FILES ${CMAKE_BINARY_DIR}/hostcclConfig.cmake
                ${CMAKE_BINARY_DIR}/hostcclConfigVersion.cmake
          DESTINATION ${HOSTCCL_INSTALL_CMAKEDIR})

  foreach(pc hostccl hccl)
    set(HOSTCCL_PC_NAME ${pc})
    configure_file(${CMAKE_CURRENT_LIST_DIR}/hostccl.pc.in ${CMAKE_BINARY_DIR}/pkgconfig/${pc}.pc
                   @ONLY)
    install(FILES ${CMAKE_BINARY_DIR}/pkgconfig/${pc}.pc
            DESTINATION ${HOSTCCL_INSTALL_LIBDIR}/pkgconfig)
  endforeach()
endif()

# Programs: the named tools and hccl_test-style binaries that this build defines, plus every
# executable defined under tools/.
set(HOSTCCL_INSTALL_PROGRAMS hcclrun hccl_info reduce_test all_reduce_test broadcast_test
    all_gather_test all_gatherv_test reduce_scatter_test reduce_scatterv_test scatter_test
    alltoall_test alltoallv_test alltoallvc_test send_recv_test batch_send_recv_test
    barrier_test)
function(hostccl_collect_executables dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  set(found)
  foreach(t ${targets})
    get_target_property(type ${t} TYPE)
    if(type STREQUAL "EXECUTABLE")
      list(APPEND found ${t})
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub ${subdirs})
    hostccl_collect_executables(${sub} sub_found)
    list(APPEND found ${sub_found})
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()
get_property(hostccl_top_subdirs DIRECTORY ${PROJECT_SOURCE_DIR} PROPERTY SUBDIRECTORIES)
if(${PROJECT_SOURCE_DIR}/tools IN_LIST hostccl_top_subdirs)
  hostccl_collect_executables(${PROJECT_SOURCE_DIR}/tools hostccl_tool_exes)
  list(APPEND HOSTCCL_INSTALL_PROGRAMS ${hostccl_tool_exes})
endif()
list(REMOVE_DUPLICATES HOSTCCL_INSTALL_PROGRAMS)
# Test programs defined next to the tools are not for users.
list(FILTER HOSTCCL_INSTALL_PROGRAMS EXCLUDE REGEX "_unit_tests$")
foreach(prog ${HOSTCCL_INSTALL_PROGRAMS})
  if(TARGET ${prog})
    get_target_property(prog_rpath ${prog} INSTALL_RPATH)
    if(NOT prog_rpath)
      # Installed programs find lib64 without set_env.sh.
      set_target_properties(${prog} PROPERTIES INSTALL_RPATH "\$ORIGIN/../${HOSTCCL_INSTALL_LIBDIR}")
    endif()
    install(TARGETS ${prog} RUNTIME DESTINATION bin)
  endif()
endforeach()

configure_file(${CMAKE_CURRENT_LIST_DIR}/set_env.sh.in ${CMAKE_BINARY_DIR}/set_env.sh @ONLY)
install(PROGRAMS ${CMAKE_BINARY_DIR}/set_env.sh DESTINATION .)
