// See text_file.h. Plain POSIX reads: std::ifstream hands a directory to nlohmann::json, whose
// streambuf reads throw std::ios_base::failure (EISDIR) past every ConfigError handler.
#include "config/text_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/errors.h"

namespace expiry {
namespace {

// Closes the descriptor on every path out of read_text_file.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

[[noreturn]] void throw_unreadable(const std::string& what, const std::string& path, int err) {
  throw ConfigError("cannot read " + what + " " + path + ": " + std::strerror(err));
}

}  // namespace

std::string read_text_file(const std::string& path, const std::string& what) {
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) throw_unreadable(what, path, errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw_unreadable(what, path, errno);
  if (S_ISDIR(st.st_mode)) throw ConfigError(what + " " + path + " is a directory");
  std::string data;
  char buf[8192];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_unreadable(what, path, errno);
    }
    data.append(buf, static_cast<size_t>(n));
  }
  return data;
}

}  // namespace expiry
