#include "tests/integration/http_get.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace fairq::testing {

bool HttpGet(int port, const std::string& path, std::string* body,
             std::string* error, int timeout_seconds) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) {
    *error = std::string("socket: ") + std::strerror(errno);
    return false;
  }
  timeval timeout{timeout_seconds, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string response;
  std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) !=
          0 ||
      send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
          static_cast<ssize_t>(request.size())) {
    *error = std::string("connect/send: ") + std::strerror(errno);
    close(fd);
    return false;
  }
  char buffer[16384];
  ssize_t n;
  while ((n = recv(fd, buffer, sizeof(buffer), 0)) > 0) {
    response.append(buffer, static_cast<size_t>(n));
  }
  int recv_errno = errno;
  close(fd);
  if (n < 0) {
    *error = std::string("recv: ") + std::strerror(recv_errno);
    return false;
  }
  size_t header_end = response.find("\r\n\r\n");
  if (response.compare(0, 9, "HTTP/1.1 ") != 0 &&
      response.compare(0, 9, "HTTP/1.0 ") != 0) {
    *error = "not an HTTP response: " + response.substr(0, 80);
    return false;
  }
  if (response.compare(9, 3, "200") != 0 || header_end == std::string::npos) {
    *error = "HTTP status: " + response.substr(0, response.find("\r\n"));
    return false;
  }
  *body = response.substr(header_end + 4);
  return true;
}

}  // namespace fairq::testing
