# Writes OUT: schema.sql (IN) as the C++ string ktune::db::schema_sql (db/schema_sql.hpp).
file(READ ${IN} sql)
set(delim "ktune_schema_sql")
string(FIND "${sql}" ")${delim}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${IN} contains the raw-string terminator )${delim}\"")
endif()
file(WRITE ${OUT}.tmp "// Generated from db/schema.sql by db/embed_schema.cmake. Do not edit.\n"
     "#include \"db/schema_sql.hpp\"\n\n"
     "namespace ktune::db {\n"
     "const std::string_view schema_sql = R\"${delim}(${sql})${delim}\";\n"
     "}  // namespace ktune::db\n")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
