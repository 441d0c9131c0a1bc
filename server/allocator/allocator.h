// The daemon's memory allocator. fairqd links jemalloc, which replaces
// glibc's malloc for the whole process (RocksDB, gRPC and protobuf too);
// the clients and the libraries do not. Why: on the cycle benchmark glibc's
// malloc (malloc_consolidate, _int_malloc) was 16% of the apply thread, and
// jemalloc raised the rate 13-21% with RSS at 2M jobs still under 300 MB
// (docs/benchmarks.md). Its settings live in allocator.cc.
//
// Thread-safe.
#ifndef FAIRQ_SERVER_ALLOCATOR_ALLOCATOR_H_
#define FAIRQ_SERVER_ALLOCATOR_ALLOCATOR_H_

#include <string>

namespace fairq::server {

// "jemalloc <version> (dirty_decay_ms N, muzzy_decay_ms M,
// background_thread B)" as the running allocator reports it, for the
// startup log.
std::string DescribeAllocator();

}  // namespace fairq::server

#endif  // FAIRQ_SERVER_ALLOCATOR_ALLOCATOR_H_
