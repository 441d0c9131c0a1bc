// A minimal HTTP/1.0 GET to 127.0.0.1, for scraping fairqd's /metrics in
// tests: one request per connection, the whole response read until the
// server closes, bounded by a timeout.
//
// Stateless; safe from any thread.
#ifndef FAIRQ_TESTS_INTEGRATION_HTTP_GET_H_
#define FAIRQ_TESTS_INTEGRATION_HTTP_GET_H_

#include <string>

namespace fairq::testing {

// The body of http://127.0.0.1:<port><path> when the status is 200. On any
// failure returns false with the reason in *error.
bool HttpGet(int port, const std::string& path, std::string* body,
             std::string* error, int timeout_seconds = 10);

}  // namespace fairq::testing

#endif  // FAIRQ_TESTS_INTEGRATION_HTTP_GET_H_
