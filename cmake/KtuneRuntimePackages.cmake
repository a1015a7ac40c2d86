# The packages ktune_runtime compiles in, made at build time or given, and the tables made from
# them. One package is one (family, arch): the directory `ktune package` writes, named
# <family>-<arch> under a package root.
#
#   ktune_runtime_result_arches(<out> SQL <dump> FAMILY <family>)
#       The arches a committed SQL dump (results/<device>/<family>.sql) has runs or gaps of, read
#       at configure time with sqlite3: a package exists only for an arch the results measured.
#   ktune_runtime_package(ROOT <root> FAMILY <family> ARCH <arch> SQL <dump> TARGET <out> [EDIT <statement>...])
#       Build step: the dump into a database (EDIT: SQL statements run on it after loading, one
#       per argument: test fixtures only), then `ktune package` into <root>/<family>-<arch>.
#       <out>: the custom target's name.
#   ktune_runtime_given_package(<out-name> ROOT <root> DIR <dir>)
#       A package made elsewhere (`ktune package`), copied into <root> at configure time under the
#       name its manifest gives (<out-name>).
#   ktune_runtime_tables(<library> REGISTRY <function> ROOT <root> PACKAGES <name>... [DEPENDS <targets>])
#       Adds to <library> (a static library, made when absent) one translation unit per package
#       (dispatch/runtime/package_table.cpp.in) and `std::span<const CompiledTable* const>
#       <function>()` listing them.

function(ktune_runtime_result_arches out)
  cmake_parse_arguments(A "" "SQL;FAMILY" "" ${ARGN})
  execute_process(
    COMMAND ${KTUNE_SQLITE3} -batch :memory: ".read ${A_SQL}"
            "select arch from runs where family = '${A_FAMILY}' union select arch from gaps where family = '${A_FAMILY}' order by 1;"
    OUTPUT_VARIABLE arches RESULT_VARIABLE failed OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(failed)
    message(FATAL_ERROR "ktune: cannot read ${A_SQL} with ${KTUNE_SQLITE3}")
  endif()
  string(REPLACE "\n" ";" arches "${arches}")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${A_SQL})
  set(${out} "${arches}" PARENT_SCOPE)
endfunction()

function(ktune_runtime_package)
  cmake_parse_arguments(A "" "ROOT;FAMILY;ARCH;SQL;TARGET" "EDIT" ${ARGN})
  set(name ${A_FAMILY}-${A_ARCH})
  set(dir ${A_ROOT}/${name})
  set(db ${A_ROOT}/${name}.db)
  set(edit)
  foreach(statement ${A_EDIT})
    list(APPEND edit COMMAND ${KTUNE_SQLITE3} ${db} "${statement};")
  endforeach()
  # --allow-stale: the committed results were measured with the templates of their sweep; the
  # manifest records both template hashes.
  add_custom_command(
    OUTPUT ${dir}/${A_FAMILY}_package.hpp ${dir}/manifest.json
    COMMAND ${CMAKE_COMMAND} -E rm -rf ${dir} ${db}
    COMMAND ${KTUNE_SQLITE3} -batch ${db} ".read ${A_SQL}"
    # A dump of an older schema version reads as today's (the copy, not the dump, is migrated).
    COMMAND $<TARGET_FILE:ktune> --quiet migrate --db ${db}
    ${edit}
    COMMAND $<TARGET_FILE:ktune> --quiet package --db ${db} --kernel ${A_FAMILY} --arch ${A_ARCH} --allow-stale
            --no-cache --out ${dir}
    DEPENDS ktune ${A_SQL}
    COMMENT "Packaging ${A_SQL} for ${A_ARCH} (ktune_runtime)"
    VERBATIM)
  add_custom_target(${A_TARGET} DEPENDS ${dir}/${A_FAMILY}_package.hpp)
endfunction()

function(ktune_runtime_given_package out)
  cmake_parse_arguments(A "" "ROOT;DIR" "" ${ARGN})
  file(READ ${A_DIR}/manifest.json manifest)
  string(JSON family GET "${manifest}" family)
  string(JSON arch GET "${manifest}" arch)
  file(REMOVE_RECURSE ${A_ROOT}/${family}-${arch})
  file(COPY ${A_DIR}/ DESTINATION ${A_ROOT}/${family}-${arch})
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${A_DIR}/manifest.json)
  set(${out} ${family}-${arch} PARENT_SCOPE)
endfunction()

function(ktune_runtime_tables library)
  cmake_parse_arguments(A "" "REGISTRY;ROOT" "PACKAGES;DEPENDS" ${ARGN})
  set(sources)
  set(declarations)
  set(entries)
  foreach(name ${A_PACKAGES})
    string(REGEX MATCH "^([a-z0-9_]+)-([a-z0-9_]+)$" matched ${name})
    if(NOT matched)
      message(FATAL_ERROR "ktune: package name '${name}' is not <family>-<arch>")
    endif()
    set(KTUNE_FAMILY ${CMAKE_MATCH_1})
    set(arch ${CMAKE_MATCH_2})
    # mla_decode -> kMlaDecode: the family's RuntimeFamily (dispatch/runtime/family.hpp).
    string(REPLACE "_" ";" words ${KTUNE_FAMILY})
    set(KTUNE_FAMILY_VARIABLE k)
    foreach(w ${words})
      string(SUBSTRING ${w} 0 1 first)
      string(TOUPPER ${first} first)
      string(SUBSTRING ${w} 1 -1 rest)
      string(APPEND KTUNE_FAMILY_VARIABLE ${first}${rest})
    endforeach()
    set(KTUNE_PACKAGE_NAME ${name})
    set(KTUNE_PACKAGE_HEADER ${A_ROOT}/${name}/${KTUNE_FAMILY}_package.hpp)
    set(KTUNE_TABLE_FUNCTION ${A_REGISTRY}_${KTUNE_FAMILY}_${arch})
    set(source ${CMAKE_CURRENT_BINARY_DIR}/${library}/${KTUNE_FAMILY}_${arch}.cpp)
    configure_file(${PROJECT_SOURCE_DIR}/dispatch/runtime/package_table.cpp.in ${source} @ONLY)
    set_source_files_properties(${source} PROPERTIES OBJECT_DEPENDS ${KTUNE_PACKAGE_HEADER})
    list(APPEND sources ${source})
    string(APPEND declarations "const CompiledTable& ${KTUNE_TABLE_FUNCTION}() noexcept;\n")
    string(APPEND entries "&${KTUNE_TABLE_FUNCTION}(), ")
  endforeach()
  set(registry ${CMAKE_CURRENT_BINARY_DIR}/${library}/registry.cpp)
  file(CONFIGURE OUTPUT ${registry} @ONLY CONTENT
"// Generated by cmake/KtuneRuntimePackages.cmake: do not edit. The compiled-in tables of ${library}.
#include \"dispatch/runtime/compiled_table.hpp\"

namespace ktune::runtime {

${declarations}
std::span<const CompiledTable* const> ${A_REGISTRY}() noexcept {
  static const CompiledTable* const tables[] = {${entries}};
  return tables;
}

}  // namespace ktune::runtime
")
  if(NOT TARGET ${library})
    add_library(${library} STATIC)
  endif()
  target_sources(${library} PRIVATE ${sources} ${registry})
  if(A_DEPENDS)
    add_dependencies(${library} ${A_DEPENDS})
  endif()
endfunction()
