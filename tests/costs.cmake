# Each test's seconds in a full run of the sanitized build (ctest -j2 on
# 2 cores, quiet): ctest starts the longest first, so that no long test is
# left running alone at the end. It learns the times itself
# (Testing/Temporary/CTestCostData.txt), but CI starts from a fresh
# checkout without them, where ctest would start the tests in the order
# they were added: the units first, the 40 s simulation and the bats
# suites that hold a minute last. A test not listed costs 0 (a few
# seconds at most); refresh the figures from CTestCostData.txt when a test
# grows by much. perfgate_test_costs() sets them on the tests the calling
# directory added.
set(PERFGATE_TEST_COSTS
  bats/buildkite 74  bats/hooks 67  bats/ab 45  bats/mock_server 62
  bats/secrets 51  bats/run_startup 32  bats/cli 47  bats/deployments 46
  bats/history 44  bats/bisect 40  sim/gate-sim 41  bats/trends 41  bats/look 38
  bats/vllm_files 36  bats/sessions 34  bats/telemetry 32
  bats/history_fleet 32  bats/gate 30  py/test_mock_connections 27
  bats/buildkite_trust 26  bats/run_lifecycle 24  bats/run_demo 22
  bench/history-fleet 21  plugin/command 20  unit/check_proc 18
  unit/check_runner 17  bats/report_import 17  py/test_loadgen_tls 16
  bats/gate_agree 16  bats/tails 13  bats/run_sweep 13  bats/run_dryrun 12
  sim/ab-sim 11  bats/thresholds_files 10  unit/check_loadstats 9
  unit/check_foundation 8  plugin/post-command 8  unit/check_config_errors 7
  lint/purity 7  unit/check_step 6  unit/check_gate 6  sim/frontier-sim 6
  plugin/pre-exit 6  py/test_bench_replay 6  py/test_plugin_schema 5
  unit/check_thresholds 4
  unit/check_loadgen 6  unit/check_history 4  py/test_vllm_compare 4
  py/test_buildkite_schemas 4  lint/format 4  unit/check_plugin_config 3
  unit/check_import 3  unit/check_annotation 3)

function(perfgate_test_costs)
  set(costs ${PERFGATE_TEST_COSTS})
  list(LENGTH costs n)
  math(EXPR last "${n} - 1")
  foreach(i RANGE 0 ${last} 2)
    math(EXPR j "${i} + 1")
    list(GET costs ${i} name)
    list(GET costs ${j} seconds)
    if(TEST ${name})
      set_tests_properties(${name} PROPERTIES COST ${seconds})
    endif()
  endforeach()
endfunction()
