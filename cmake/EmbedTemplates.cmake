# Embeds every file under kernel_templates/ into a generated C++ source, so that the library
# carries its templates and needs no install tree. At run time REDUCETUNE_TEMPLATE_DIR may
# point at a folder instead, for iterating on templates without rebuilding.
#
# Files are written as byte arrays (not raw string literals) so that no template content can
# ever terminate the literal early.

function(reducetune_embed_templates target template_dir)
  file(GLOB_RECURSE files CONFIGURE_DEPENDS RELATIVE "${template_dir}"
       "${template_dir}/*.cuh" "${template_dir}/*.json" "${template_dir}/*.h")
  list(SORT files)
  set(out "${CMAKE_CURRENT_BINARY_DIR}/embedded_templates.cpp")
  set(abs_files "")
  foreach(f IN LISTS files)
    list(APPEND abs_files "${template_dir}/${f}")
  endforeach()
  add_custom_command(
    OUTPUT "${out}"
    COMMAND "${CMAKE_COMMAND}" -DTEMPLATE_DIR=${template_dir} "-DFILES=${files}"
            -DOUT=${out} -P "${PROJECT_SOURCE_DIR}/cmake/embed_templates_script.cmake"
    DEPENDS ${abs_files} "${PROJECT_SOURCE_DIR}/cmake/embed_templates_script.cmake"
    COMMENT "Embedding kernel templates"
    VERBATIM)
  target_sources(${target} PRIVATE "${out}")
endfunction()
