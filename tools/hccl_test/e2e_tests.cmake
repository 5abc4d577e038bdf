# End-to-end smoke runs of the hccl_test tools under hcclrun (label "e2e"; they need the whole stack).
if(EXISTS ${PROJECT_SOURCE_DIR}/tools/hcclrun/CMakeLists.txt)
  set(libdir ${CMAKE_LIBRARY_OUTPUT_DIRECTORY})
  add_test(NAME hccl_test_e2e_reduce_4ranks_fp32
    COMMAND $<TARGET_FILE:hcclrun> -n 4 --timeout 90 $<TARGET_FILE:reduce_test>
            -b 8 -e 4M -f 4 -d fp32 -o sum -r 1 -c 1)
  add_test(NAME hccl_test_e2e_reduce_3ranks_all_types_ops
    COMMAND $<TARGET_FILE:hcclrun> -n 3 --timeout 90 $<TARGET_FILE:reduce_test>
            -b 8 -e 64K -f 8 -d all -o all -r 2 -n 3 -w 1 -W 1 -c 2)
  add_test(NAME hccl_test_e2e_reduce_isolated_budget_json
    COMMAND $<TARGET_FILE:hcclrun> -n 2 --timeout 90 $<TARGET_FILE:reduce_test>
            --sizes 8,4K,1M -I -T 0.05 -W 1 --json ${CMAKE_CURRENT_BINARY_DIR}/e2e_reduce.json)
  add_test(NAME hccl_test_e2e_reduce_no_launcher COMMAND $<TARGET_FILE:reduce_test> -b 1K -e 64K -f 4 -d bfp16 -o max)
  # sendBuf == recvBuf: the root's buffer gets the fold, the others' keep their input.
  add_test(NAME hccl_test_e2e_reduce_in_place
    COMMAND $<TARGET_FILE:hcclrun> -n 3 --timeout 90 $<TARGET_FILE:reduce_test>
            -b 8 -e 1M -f 8 -d all -o all -r 1 -n 2 -w 1 -W 1 -c 2 --in-place)
  set(e2e hccl_test_e2e_reduce_4ranks_fp32 hccl_test_e2e_reduce_3ranks_all_types_ops
      hccl_test_e2e_reduce_isolated_budget_json hccl_test_e2e_reduce_no_launcher
      hccl_test_e2e_reduce_in_place)

  # all_reduce_test and broadcast_test: the same runs. Both operators exist, so these runs do not
  # pass --skip-unimplemented (docs/tools.md): any error, HCCL_E_NOT_SUPPORT included, fails them.
  add_test(NAME hccl_test_e2e_all_reduce_4ranks_fp32
    COMMAND $<TARGET_FILE:hcclrun> -n 4 --timeout 90 $<TARGET_FILE:all_reduce_test>
            -b 8 -e 4M -f 4 -d fp32 -o sum -r 1 -c 1)
  add_test(NAME hccl_test_e2e_all_reduce_3ranks_all_types_ops
    COMMAND $<TARGET_FILE:hcclrun> -n 3 --timeout 90 $<TARGET_FILE:all_reduce_test>
            -b 8 -e 64K -f 8 -d all -o all -r 2 -n 3 -w 1 -W 1 -c 2)
  add_test(NAME hccl_test_e2e_all_reduce_isolated_budget_json
    COMMAND $<TARGET_FILE:hcclrun> -n 2 --timeout 90 $<TARGET_FILE:all_reduce_test>
            --sizes 8,4K,1M -I -T 0.05 -W 1 --json ${CMAKE_CURRENT_BINARY_DIR}/e2e_all_reduce.json)
  add_test(NAME hccl_test_e2e_all_reduce_in_place
    COMMAND $<TARGET_FILE:hcclrun> -n 3 --timeout 90 $<TARGET_FILE:all_reduce_test>
            -b 8 -e 1M -f 8 -d all -o all -r 1 -n 2 -w 1 -W 1 -c 2 --in-place)
  add_test(NAME hccl_test_e2e_all_reduce_no_launcher
    COMMAND $<TARGET_FILE:all_reduce_test> -b 1K -e 64K -f 4 -d bfp16 -o max)
  add_test(NAME hccl_test_e2e_broadcast_4ranks_fp32
    COMMAND $<TARGET_FILE:hcclrun> -n 4 --timeout 90 $<TARGET_FILE:broadcast_test>
            -b 8 -e 4M -f 4 -d fp32 -r 1 -c 1)
  add_test(NAME hccl_test_e2e_broadcast_3ranks_all_types
    COMMAND $<TARGET_FILE:hcclrun> -n 3 --timeout 90 $<TARGET_FILE:broadcast_test>
            -b 16 -e 64K -f 8 -d all -r 2 -n 3 -w 1 -W 1 -c 2)
  add_test(NAME hccl_test_e2e_broadcast_isolated_host_buffers
    COMMAND $<TARGET_FILE:hcclrun> -n 2 --timeout 90 $<TARGET_FILE:broadcast_test>
            --sizes 8,4K,1M -I -n 5 -w 1 -W 1 --host-buffers -r 1)
  add_test(NAME hccl_test_e2e_broadcast_no_launcher
    COMMAND $<TARGET_FILE:broadcast_test> -b 1K -e 64K -f 4 -d int8)
  set(e2e_new hccl_test_e2e_all_reduce_4ranks_fp32 hccl_test_e2e_all_reduce_3ranks_all_types_ops
      hccl_test_e2e_all_reduce_isolated_budget_json hccl_test_e2e_all_reduce_in_place
      hccl_test_e2e_all_reduce_no_launcher
      hccl_test_e2e_broadcast_4ranks_fp32 hccl_test_e2e_broadcast_3ranks_all_types
      hccl_test_e2e_broadcast_isolated_host_buffers hccl_test_e2e_broadcast_no_launcher)
  list(APPEND e2e ${e2e_new})
  # The AlltoAll family: shared memory (4 ranks, fp32 sweep), every movable type (3 ranks), TCP with
  # malloc'd buffers (isolated calls), and one rank with no launcher.
  foreach(t alltoall alltoallv alltoallvc)
    add_test(NAME hccl_test_e2e_${t}_4ranks_fp32
      COMMAND $<TARGET_FILE:hcclrun> -n 4 --timeout 90 $<TARGET_FILE:${t}_test> -b 8 -e 4M -f 4 -d fp32 -c 1)
    add_test(NAME hccl_test_e2e_${t}_3ranks_all_types
      COMMAND $<TARGET_FILE:hcclrun> -n 3 --timeout 90 $<TARGET_FILE:${t}_test>
              -b 16 -e 64K -f 8 -d all -n 3 -w 1 -W 1 -c 2)
    add_test(NAME hccl_test_e2e_${t}_tcp_host_buffers
      COMMAND $<TARGET_FILE:hcclrun> -n 2 --timeout 90 $<TARGET_FILE:${t}_test>
              --sizes 8,4K,1M -I -n 5 -w 1 -W 1 --host-buffers)
    add_test(NAME hccl_test_e2e_${t}_no_launcher COMMAND $<TARGET_FILE:${t}_test> -b 1K -e 64K -f 4 -d int8)
    set_tests_properties(hccl_test_e2e_${t}_tcp_host_buffers PROPERTIES ENVIRONMENT
      "LD_LIBRARY_PATH=${libdir};HOSTCCL_TRANSPORT=tcp")
    list(APPEND e2e hccl_test_e2e_${t}_4ranks_fp32 hccl_test_e2e_${t}_3ranks_all_types
         hccl_test_e2e_${t}_no_launcher)
    set_tests_properties(hccl_test_e2e_${t}_tcp_host_buffers PROPERTIES TIMEOUT 120 LABELS "tools;e2e"
      FAIL_REGULAR_EXPRESSION "failed")
    set_tests_properties(hccl_test_e2e_${t}_4ranks_fp32 PROPERTIES
      PASS_REGULAR_EXPRESSION "the minbytes is 8, maxbytes is 4194304, iters is 20, warmup_iters is 10.*data_size\\(Bytes\\): \\| aveg_time\\(us\\): \\| alg_bandwidth\\(GB/s\\): \\| check_result:"
      FAIL_REGULAR_EXPRESSION "failed")
  endforeach()
  # reduce_scatter_test and reduce_scatterv_test (every rank checks its block of the fold).
  add_test(NAME hccl_test_e2e_reduce_scatter_4ranks_fp32
    COMMAND $<TARGET_FILE:hcclrun> -n 4 --timeout 90 $<TARGET_FILE:reduce_scatter_test>
            -b 8 -e 4M -f 4 -d fp32 -o sum -c 1)
  add_test(NAME hccl_test_e2e_reduce_scatter_3ranks_all_types_ops
    COMMAND $<TARGET_FILE:hcclrun> -n 3 --timeout 90 $<TARGET_FILE:reduce_scatter_test>
            -b 8 -e 64K -f 8 -d all -o all -n 3 -w 1 -W 1 -c 2)
  add_test(NAME hccl_test_e2e_reduce_scatterv_4ranks_all_types_ops
    COMMAND $<TARGET_FILE:hcclrun> -n 4 --timeout 90 $<TARGET_FILE:reduce_scatterv_test>
            -b 8 -e 1M -f 16 -d all -o all -n 2 -w 1 -W 1 -c 2)
  add_test(NAME hccl_test_e2e_reduce_scatterv_no_launcher
    COMMAND $<TARGET_FILE:reduce_scatterv_test> -b 1K -e 64K -f 4 -d bfp16 -o max)
  list(APPEND e2e hccl_test_e2e_reduce_scatter_4ranks_fp32 hccl_test_e2e_reduce_scatter_3ranks_all_types_ops
       hccl_test_e2e_reduce_scatterv_4ranks_all_types_ops hccl_test_e2e_reduce_scatterv_no_launcher)
  # all_gather_test, all_gatherv_test and scatter_test: a sweep, every movable type, in place (all_gather), malloc'd
  # buffers between processes (re-plans to TCP), and a run without a launcher.
  add_test(NAME hccl_test_e2e_all_gather_4ranks_fp32
    COMMAND $<TARGET_FILE:hcclrun> -n 4 --timeout 90 $<TARGET_FILE:all_gather_test>
            -b 8 -e 4M -f 4 -d fp32 -c 1)
  add_test(NAME hccl_test_e2e_all_gather_3ranks_all_types_in_place
    COMMAND $<TARGET_FILE:hcclrun> -n 3 --timeout 90 $<TARGET_FILE:all_gather_test>
            -b 16 -e 64K -f 8 -d all -n 3 -w 1 -W 1 -c 2 --in-place)
  add_test(NAME hccl_test_e2e_all_gather_isolated_host_buffers
    COMMAND $<TARGET_FILE:hcclrun> -n 2 --timeout 90 $<TARGET_FILE:all_gather_test>
            --sizes 8,4K,1M -I -n 5 -w 1 -W 1 --host-buffers)
  add_test(NAME hccl_test_e2e_all_gather_no_launcher
    COMMAND $<TARGET_FILE:all_gather_test> -b 1K -e 64K -f 4 -d int8)
  add_test(NAME hccl_test_e2e_all_gatherv_4ranks_fp32
    COMMAND $<TARGET_FILE:hcclrun> -n 4 --timeout 90 $<TARGET_FILE:all_gatherv_test>
            -b 8 -e 4M -f 4 -d fp32 -c 1)
  add_test(NAME hccl_test_e2e_all_gatherv_3ranks_all_types
    COMMAND $<TARGET_FILE:hcclrun> -n 3 --timeout 90 $<TARGET_FILE:all_gatherv_test>
            -b 16 -e 64K -f 8 -d all -n 3 -w 1 -W 1 -c 2)
  add_test(NAME hccl_test_e2e_scatter_4ranks_fp32
    COMMAND $<TARGET_FILE:hcclrun> -n 4 --timeout 90 $<TARGET_FILE:scatter_test>
            -b 8 -e 4M -f 4 -d fp32 -r 1 -c 1)
  add_test(NAME hccl_test_e2e_scatter_3ranks_all_types
    COMMAND $<TARGET_FILE:hcclrun> -n 3 --timeout 90 $<TARGET_FILE:scatter_test>
            -b 16 -e 64K -f 8 -d all -r 2 -n 3 -w 1 -W 1 -c 2)
  add_test(NAME hccl_test_e2e_scatter_isolated_host_buffers
    COMMAND $<TARGET_FILE:hcclrun> -n 2 --timeout 90 $<TARGET_FILE:scatter_test>
            --sizes 8,4K,1M -I -n 5 -w 1 -W 1 --host-buffers -r 1)
  add_test(NAME hccl_test_e2e_scatter_no_launcher
    COMMAND $<TARGET_FILE:scatter_test> -b 1K -e 64K -f 4 -d bfp16)
  set(e2e_ag hccl_test_e2e_all_gather_4ranks_fp32 hccl_test_e2e_all_gather_3ranks_all_types_in_place
      hccl_test_e2e_all_gather_isolated_host_buffers hccl_test_e2e_all_gather_no_launcher
      hccl_test_e2e_all_gatherv_4ranks_fp32 hccl_test_e2e_all_gatherv_3ranks_all_types
      hccl_test_e2e_scatter_4ranks_fp32 hccl_test_e2e_scatter_3ranks_all_types
      hccl_test_e2e_scatter_isolated_host_buffers hccl_test_e2e_scatter_no_launcher)
  list(APPEND e2e ${e2e_ag})
  # send_recv_test: ping-pong 8 B .. 1 MiB between processes (shared memory), checked.
  add_test(NAME hccl_test_e2e_send_recv_2ranks
    COMMAND $<TARGET_FILE:hcclrun> -n 2 --timeout 90 $<TARGET_FILE:send_recv_test>
            -b 8 -e 1M -f 8 -n 20 -w 2 -c 1)
  add_test(NAME hccl_test_e2e_send_recv_3ranks_tcp_host_buffers
    COMMAND $<TARGET_FILE:hcclrun> -n 3 --timeout 90 $<TARGET_FILE:send_recv_test>
            --sizes 8,4K,300K -n 5 -w 1 --host-buffers)
  set_tests_properties(hccl_test_e2e_send_recv_3ranks_tcp_host_buffers PROPERTIES ENVIRONMENT
    "LD_LIBRARY_PATH=${libdir};HOSTCCL_TRANSPORT=tcp" TIMEOUT 120 LABELS "tools;e2e")
  list(APPEND e2e hccl_test_e2e_send_recv_2ranks)
  # More ranks than the small folds keep on the stack (algo/rank_scratch.h, 64): the root's inline
  # Reduce, AllReduce and the inline ReduceScatter take their per-rank scratch from the heap.
  foreach(t reduce all_reduce reduce_scatter)
    add_test(NAME hccl_test_e2e_${t}_66ranks_small
      COMMAND $<TARGET_FILE:hcclrun> -n 66 --timeout 90 $<TARGET_FILE:${t}_test>
              -b 8 -e 1K -f 8 -d fp32 -o sum -n 2 -w 1 -c 1)
    list(APPEND e2e hccl_test_e2e_${t}_66ranks_small)
  endforeach()
  set_tests_properties(${e2e} PROPERTIES TIMEOUT 120 LABELS "tools;e2e"
    ENVIRONMENT "LD_LIBRARY_PATH=${libdir}")
  # HOSTCCL_ACCUMULATE=fp32: the checked results of fp16/bf16 sum/prod follow the variable (check.cc),
  # over shared memory and over TCP (Reduce chain and AllReduce rs_ag with several chunks).
  foreach(t reduce all_reduce)
    add_test(NAME hccl_test_e2e_${t}_accumulate_fp32
      COMMAND $<TARGET_FILE:hcclrun> -n 5 --timeout 90 $<TARGET_FILE:${t}_test>
              -b 8 -e 1M -f 16 -d fp16 -o sum -n 2 -w 1 -c 1)
    add_test(NAME hccl_test_e2e_${t}_accumulate_fp32_tcp
      COMMAND $<TARGET_FILE:hcclrun> -n 5 --timeout 90 $<TARGET_FILE:${t}_test>
              -b 8 -e 1M -f 16 -d bfp16 -o prod -n 2 -w 1 -c 1)
    set_tests_properties(hccl_test_e2e_${t}_accumulate_fp32 PROPERTIES TIMEOUT 120 LABELS "tools;e2e"
      ENVIRONMENT "LD_LIBRARY_PATH=${libdir};HOSTCCL_ACCUMULATE=fp32" FAIL_REGULAR_EXPRESSION "failed")
    set_tests_properties(hccl_test_e2e_${t}_accumulate_fp32_tcp PROPERTIES TIMEOUT 120 LABELS "tools;e2e"
      ENVIRONMENT "LD_LIBRARY_PATH=${libdir};HOSTCCL_ACCUMULATE=fp32;HOSTCCL_TRANSPORT=tcp;HOSTCCL_CHUNK_BYTES=65536"
      FAIL_REGULAR_EXPRESSION "failed")
  endforeach()
  # -z 1 (zero copy: buffers activated inside a range set with HcclCommSetMemoryRange) and -m 1
  # (symmetric memory: buffers in a window registered with HcclCommSymWinRegister), checked bit-exact,
  # growing the range/window across the sweep; reduce with 3 ranks, all_reduce with 4 (in place too).
  foreach(t reduce all_reduce)
    foreach(flag z m)
      add_test(NAME hccl_test_e2e_${t}_${flag}1
        COMMAND $<TARGET_FILE:hcclrun> -n 3 --timeout 90 $<TARGET_FILE:${t}_test>
                -b 8 -e 4M -f 8 -d fp32 -o sum -r 1 -n 3 -w 1 -c 1 -${flag} 1)
      list(APPEND e2e_reg hccl_test_e2e_${t}_${flag}1)
    endforeach()
  endforeach()
  add_test(NAME hccl_test_e2e_all_reduce_z1_4ranks_all_ops_in_place
    COMMAND $<TARGET_FILE:hcclrun> -n 4 --timeout 90 $<TARGET_FILE:all_reduce_test>
            -b 8 -e 1M -f 16 -d all -o all -n 2 -w 1 -c 2 -z 1 --in-place)
  add_test(NAME hccl_test_e2e_all_reduce_m1_4ranks_all_ops
    COMMAND $<TARGET_FILE:hcclrun> -n 4 --timeout 90 $<TARGET_FILE:all_reduce_test>
            -b 8 -e 1M -f 16 -d all -o all -n 2 -w 1 -c 2 -m 1)
  list(APPEND e2e_reg hccl_test_e2e_all_reduce_z1_4ranks_all_ops_in_place hccl_test_e2e_all_reduce_m1_4ranks_all_ops)
  set_tests_properties(${e2e_reg} PROPERTIES TIMEOUT 120 LABELS "tools;e2e" ENVIRONMENT "LD_LIBRARY_PATH=${libdir}"
    PASS_REGULAR_EXPRESSION "check_result:.*success" FAIL_REGULAR_EXPRESSION "failed|not supported|rank [0-9]+: ")
  # The output format must stay hccl_test's (parsers depend on it): the header echoes -b/-e (the
  # split tools align them to the rank count first; 8 and 4M already are multiples of 4), not the
  # last size of the -f 4 sweep (2 MiB), then the table.
  set_tests_properties(hccl_test_e2e_reduce_4ranks_fp32 hccl_test_e2e_all_reduce_4ranks_fp32
                       hccl_test_e2e_broadcast_4ranks_fp32 hccl_test_e2e_all_gather_4ranks_fp32
                       hccl_test_e2e_all_gatherv_4ranks_fp32 hccl_test_e2e_scatter_4ranks_fp32 PROPERTIES
    PASS_REGULAR_EXPRESSION "the minbytes is 8, maxbytes is 4194304, iters is 20, warmup_iters is 10.*data_size\\(Bytes\\): \\| aveg_time\\(us\\): \\| alg_bandwidth\\(GB/s\\): \\| check_result:"
    FAIL_REGULAR_EXPRESSION "failed")
  if(TARGET reduce_test_mpi)
    find_program(HOSTCCL_MPIRUN_OPENMPI mpirun.openmpi)
  endif()
  if(TARGET reduce_test_mpi AND HOSTCCL_MPIRUN_OPENMPI)
    set(mpirun ${HOSTCCL_MPIRUN_OPENMPI} --allow-run-as-root --oversubscribe -np 3 -x LD_LIBRARY_PATH)
    add_test(NAME hccl_test_e2e_reduce_mpi_openmpi
      COMMAND ${mpirun} $<TARGET_FILE:reduce_test_mpi> -b 8 -e 1M -f 16 -d fp16 -o sum -r 2)
    add_test(NAME hccl_test_e2e_all_reduce_mpi_openmpi
      COMMAND ${mpirun} $<TARGET_FILE:all_reduce_test_mpi> -b 8 -e 1M -f 16 -d fp16 -o sum -r 2)
    add_test(NAME hccl_test_e2e_broadcast_mpi_openmpi
      COMMAND ${mpirun} $<TARGET_FILE:broadcast_test_mpi> -b 8 -e 1M -f 16 -d fp16 -r 2)
    add_test(NAME hccl_test_e2e_all_gather_mpi_openmpi
      COMMAND ${mpirun} $<TARGET_FILE:all_gather_test_mpi> -b 8 -e 1M -f 16 -d fp16)
    add_test(NAME hccl_test_e2e_scatter_mpi_openmpi
      COMMAND ${mpirun} $<TARGET_FILE:scatter_test_mpi> -b 8 -e 1M -f 16 -d fp16 -r 2)
    set_tests_properties(hccl_test_e2e_reduce_mpi_openmpi hccl_test_e2e_all_reduce_mpi_openmpi
                         hccl_test_e2e_broadcast_mpi_openmpi hccl_test_e2e_all_gather_mpi_openmpi
                         hccl_test_e2e_scatter_mpi_openmpi PROPERTIES TIMEOUT 120 LABELS "tools;e2e"
      ENVIRONMENT "LD_LIBRARY_PATH=${libdir}" FAIL_REGULAR_EXPRESSION "failed")
  endif()
endif()
