# Test fixture, never shipped: a gfx90a package of qk_rope_cache made from the committed H200
# results with the runs renamed to gfx90a (arch, backend, device, compiler) and, for key {heads=16
# fp8 cache, fp8 q_out, full NeoX rope, 64 tokens}, the fused measurements removed, so that the
# unfused baseline wins it. No gfx90a device measured these rows: they only give the engine tests
# (tests/package/runtime_multiarch_test.cpp) a second arch to select from and an unfused winner to
# launch, on the CPU with a fake GPU API. Needs hipRTC (KTUNE_WITH_HIP); without it those tests
# skip (KTUNE_RUNTIME_FIXTURE=0).
if(KTUNE_WITH_HIP)
  set(root ${CMAKE_CURRENT_BINARY_DIR}/fixture_packages)
  set(unfused_key "heads=16,kv_dtype=1,q_dtype=1,rope=0,is_neox=1,tokens=64")
  ktune_runtime_package(
    ROOT ${root} FAMILY qk_rope_cache ARCH gfx90a SQL ${PROJECT_SOURCE_DIR}/results/nvidia-h200/qk_rope_cache.sql
    TARGET ktune_fixture_package_qk_rope_cache_gfx90a
    EDIT "UPDATE runs SET arch = 'gfx90a', backend = 'hip', device_name = 'test fixture (H200 rows renamed gfx90a)', compiler_version = 'hiprtc (test fixture)'"
         "DELETE FROM measurements WHERE key = '${unfused_key}' AND config LIKE '%fused=1'")
  set(fixture_packages qk_rope_cache-gfx90a)
  # The same rows renamed gfx942 and gfx950 and packaged by the offline AMD compiler (clang 20 or
  # later knows gfx950; Debian's hipRTC knows neither): the HIP runtime path with MI300 and MI355
  # code objects. No AMD device compiled here ran or timed anything.
  find_program(KTUNE_FIXTURE_AMD_CLANG NAMES clang-22 clang-21 clang-20)
  if(KTUNE_FIXTURE_AMD_CLANG)
    foreach(arch gfx942 gfx950)
      ktune_runtime_package(
        ROOT ${root} FAMILY qk_rope_cache ARCH ${arch} SQL ${PROJECT_SOURCE_DIR}/results/nvidia-h200/qk_rope_cache.sql
        TARGET ktune_fixture_package_qk_rope_cache_${arch}
        EDIT "UPDATE runs SET arch = '${arch}', backend = 'hip', device_name = 'test fixture (H200 rows renamed ${arch})', compiler_version = 'clang (test fixture)'"
             "DELETE FROM measurements WHERE key = '${unfused_key}' AND config LIKE '%fused=1'")
      list(APPEND fixture_packages qk_rope_cache-${arch})
    endforeach()
    target_compile_definitions(ktune_package_tests PRIVATE KTUNE_RUNTIME_CLANG_FIXTURE=1)
  else()
    target_compile_definitions(ktune_package_tests PRIVATE KTUNE_RUNTIME_CLANG_FIXTURE=0)
  endif()
  ktune_runtime_tables(ktune_runtime_fixture_tables REGISTRY fixture_tables ROOT ${root}
                       PACKAGES ${fixture_packages})
  foreach(name ${fixture_packages})
    string(REPLACE "-" "_" target ${name})
    add_dependencies(ktune_runtime_fixture_tables ktune_fixture_package_${target})
  endforeach()
  target_link_libraries(ktune_runtime_fixture_tables PUBLIC ktune_runtime_core)
  target_link_libraries(ktune_package_tests PRIVATE ktune_runtime_fixture_tables)
  target_compile_definitions(ktune_package_tests PRIVATE KTUNE_RUNTIME_FIXTURE=1
                             KTUNE_RUNTIME_FIXTURE_ROOT="${root}")
else()
  target_compile_definitions(ktune_package_tests PRIVATE KTUNE_RUNTIME_FIXTURE=0 KTUNE_RUNTIME_CLANG_FIXTURE=0)
endif()
