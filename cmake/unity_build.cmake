# Unity builds by source folder: the sources of one folder of a target are compiled as one translation
# unit. They share heavy headers (onnx's protobuf classes, nlohmann json, the standard library) and the
# templates those instantiate, which is where most of a file's compile time goes, so a fresh build takes
# a fraction of the time (docs/testing.md has the figures). The costs: changing one file recompiles its
# folder, and names at file scope — anonymous namespaces included — must be unique within a folder
# (each unit test file puts its helpers in a namespace named after the file). tools/test.sh --sanitize
# builds without it, so every file still compiles on its own includes.

option(RNNSTATE_UNITY_BUILD "Compile the sources of each folder of a target as one translation unit" ON)

# rnnstate_unity_by_folder(TARGET): when RNNSTATE_UNITY_BUILD is on, TARGET's sources grouped by folder
# (the groups are named after the folders, relative to the project: "src/graph", "tests/unit/find").
function(rnnstate_unity_by_folder target)
  if(NOT RNNSTATE_UNITY_BUILD)
    return()
  endif()
  set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_MODE GROUP)
  get_target_property(sources ${target} SOURCES)
  get_target_property(source_dir ${target} SOURCE_DIR)
  foreach(source IN LISTS sources)
    get_filename_component(path ${source} ABSOLUTE BASE_DIR ${source_dir})
    get_filename_component(folder ${path} DIRECTORY)
    file(RELATIVE_PATH group ${PROJECT_SOURCE_DIR} ${folder})
    set_property(SOURCE ${source} DIRECTORY ${source_dir} PROPERTY UNITY_GROUP "${group}")
  endforeach()
endfunction()
