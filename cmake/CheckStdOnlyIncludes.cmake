# Fails when a file under the given folders includes anything but a standard
# C++ header or a header of the allowed fairq modules. Run at build time by
# the fairq_sched target: the scheduling core must stay free of gRPC, RocksDB,
# threads and clocks so the daemon, the simulator and the tests all run the
# same code. fairq_metrics runs it too: the metric hooks the broker calls
# stay free of prometheus-cpp.
#
# Usage: cmake -DDIRS="a;b" -DALLOWED_PREFIXES="base/;sched/"
#              [-DEXCLUDE=regex] -P this-file
# EXCLUDE names files of those folders that may include more (an adapter
# beside the interface it implements).
cmake_minimum_required(VERSION 3.25)
# The lists arrive with their separators escaped ("a\;b": add_custom_target
# escapes them); read that as a list, not as one path that globs nothing.
string(REPLACE "\\;" ";" DIRS "${DIRS}")
string(REPLACE "\\;" ";" ALLOWED_PREFIXES "${ALLOWED_PREFIXES}")
set(STD_HEADERS
  algorithm any array atomic bit bitset cassert cctype cerrno cfloat charconv
  chrono cinttypes climits cmath compare concepts cstddef cstdint cstdio
  cstdlib cstring deque exception functional initializer_list iomanip ios
  iosfwd iostream istream iterator limits list map memory memory_resource
  new numbers numeric optional ostream queue random ranges set span sstream
  stdexcept string string_view system_error tuple type_traits typeinfo
  unordered_map unordered_set utility variant vector)
# Not allowed even though standard: the core must not read clocks or start
# threads (time is passed in; one thread owns the scheduler).
set(FORBIDDEN_STD chrono thread mutex condition_variable future atomic)

set(problems "")
foreach(dir IN LISTS DIRS)
  file(GLOB_RECURSE files "${dir}/*.h" "${dir}/*.cc")
  foreach(file IN LISTS files)
    # Tests and their helpers may include the test framework.
    if(file MATCHES "_test(_util)?\\.(cc|h)$" OR
       (EXCLUDE AND file MATCHES "${EXCLUDE}"))
      continue()
    endif()
    file(STRINGS "${file}" lines REGEX "^[ \t]*#[ \t]*include")
    foreach(line IN LISTS lines)
      if(line MATCHES "<([^>]+)>")
        set(header "${CMAKE_MATCH_1}")
        if(NOT header IN_LIST STD_HEADERS OR header IN_LIST FORBIDDEN_STD)
          list(APPEND problems "${file}: <${header}> is not allowed here")
        endif()
      elseif(line MATCHES "\"([^\"]+)\"")
        set(header "${CMAKE_MATCH_1}")
        set(ok FALSE)
        foreach(prefix IN LISTS ALLOWED_PREFIXES)
          string(FIND "${header}" "${prefix}" at)
          if(at EQUAL 0)
            set(ok TRUE)
          endif()
        endforeach()
        if(NOT ok)
          list(APPEND problems "${file}: \"${header}\" is not allowed here")
        endif()
      endif()
    endforeach()
  endforeach()
endforeach()

if(problems)
  list(JOIN problems "\n  " text)
  message(FATAL_ERROR "These files may include only standard headers and "
                      "the fairq headers of ${ALLOWED_PREFIXES}:\n  ${text}")
endif()
