// FileStore: one file per key in a shared directory. Set writes a temporary file and renames it
// into place (readers see all of a value or none); Add serializes through flock on a per-key
// lock file; Get polls with a short backoff.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "bootstrap/ranktable.h"
#include "bootstrap/store.h"
#include "common/env.h"
#include "common/log.h"

namespace hostccl::boot {
namespace {

// Keys may hold '/' and any byte: escape them; long keys become a hash.
std::string EncodeKey(const std::string& key) {
  std::string out = "k_";
  for (unsigned char c : key) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '_' || c == '.') {
      out += static_cast<char>(c);
    } else {
      out += StrFormat("%%%02X", c);
    }
  }
  if (out.size() <= 200) return out;
  uint8_t h[16];
  HashBytes128(key, h);
  out = "h_";
  for (uint8_t b : h) out += StrFormat("%02x", b);
  return out;
}

Status MakeDirs(const std::string& dir) {
  for (size_t pos = 1; pos <= dir.size(); ++pos) {
    if (pos != dir.size() && dir[pos] != '/') continue;
    std::string part = dir.substr(0, pos);
    if (mkdir(part.c_str(), 0700) != 0 && errno != EEXIST) {
      int err = errno;
      return MakeStatus(Code::kSyscall, "file store: cannot create directory '%s': %s",
                        part.c_str(), strerror(err));
    }
  }
  return Status::Ok();
}

Status ReadFile(const std::string& path, const std::string& key, bool* found, std::string* out) {
  *found = false;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Status::Ok();
    int err = errno;
    return MakeStatus(Code::kSyscall, "file store: cannot open '%s' (key '%s'): %s", path.c_str(),
                      key.c_str(), strerror(err));
  }
  out->clear();
  char buf[8192];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out->append(buf, static_cast<size_t>(n));
    if (out->size() > kMaxStoreValueBytes) {
      close(fd);
      return CheckStoreValue(key, out->size());
    }
  }
  close(fd);
  *found = true;
  return Status::Ok();
}

class FileStore final : public Store {
 public:
  explicit FileStore(std::string dir) : dir_(std::move(dir)) {}

  Status Set(const std::string& key, const std::string& value) override {
    HOSTCCL_RETURN_IF_ERROR(CheckStoreKey(key));
    HOSTCCL_RETURN_IF_ERROR(CheckStoreValue(key, value.size()));
    return WriteAtomic(key, value);
  }

  Status Get(const std::string& key, Deadline deadline, std::string* value) override {
    HOSTCCL_RETURN_IF_ERROR(CheckStoreKey(key));
    std::string path = PathOf(key);
    int sleep_us = 200;
    for (;;) {
      bool found = false;
      HOSTCCL_RETURN_IF_ERROR(ReadFile(path, key, &found, value));
      if (found) return Status::Ok();
      if (deadline.Expired())
        return MakeStatus(Code::kTimeout,
                          "file store '%s': key '%s' did not appear before the deadline",
                          dir_.c_str(), key.c_str());
      StoreBackoff(deadline, &sleep_us);
    }
  }

  Status Add(const std::string& key, int64_t delta, int64_t* new_value) override {
    HOSTCCL_RETURN_IF_ERROR(CheckStoreKey(key));
    std::string lock_path = dir_ + "/.lock." + EncodeKey(key);
    int fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0 && errno == ENOENT) {
      HOSTCCL_RETURN_IF_ERROR(MakeDirs(dir_));
      fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    }
    if (fd < 0) {
      int err = errno;
      return MakeStatus(Code::kSyscall, "file store: cannot open lock '%s': %s", lock_path.c_str(),
                        strerror(err));
    }
    Deadline deadline = Deadline::AfterMs(kStoreOpTimeoutMs);
    while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      if ((errno != EWOULDBLOCK && errno != EINTR) || deadline.Expired()) {
        close(fd);
        return MakeStatus(Code::kTimeout, "file store: could not lock key '%s' in %lld ms",
                          key.c_str(), static_cast<long long>(kStoreOpTimeoutMs));
      }
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    bool found = false;
    std::string text;
    Status st = ReadFile(PathOf(key), key, &found, &text);
    int64_t v = 0;
    if (st.ok() && found) {
      auto parsed = ParseInt(text);
      if (!parsed)
        st = MakeStatus(Code::kPara, "file store: Add on key '%s' whose value is not an integer",
                        key.c_str());
      else
        v = *parsed;
    }
    if (st.ok()) {
      v += delta;
      st = WriteAtomic(key, std::to_string(v));
    }
    flock(fd, LOCK_UN);
    close(fd);
    if (st.ok() && new_value != nullptr) *new_value = v;
    return st;
  }

  Status Delete(const std::string& key) override {
    HOSTCCL_RETURN_IF_ERROR(CheckStoreKey(key));
    unlink(PathOf(key).c_str());
    unlink((dir_ + "/.lock." + EncodeKey(key)).c_str());
    return Status::Ok();
  }

  Status Check(const std::string& key, bool* present) override {
    HOSTCCL_RETURN_IF_ERROR(CheckStoreKey(key));
    *present = access(PathOf(key).c_str(), F_OK) == 0;
    return Status::Ok();
  }

 private:
  std::string PathOf(const std::string& key) const { return dir_ + "/" + EncodeKey(key); }

  Status WriteAtomic(const std::string& key, const std::string& value) {
    static std::atomic<uint64_t> counter{0};
    std::string tmp = StrFormat("%s/.tmp.%d.%llu", dir_.c_str(), static_cast<int>(getpid()),
                                static_cast<unsigned long long>(counter.fetch_add(1)));
    int fd = -1;
    // The directory may have been removed by a rank cleaning up an earlier round: recreate it once.
    for (int attempt = 0; attempt < 2 && fd < 0; ++attempt) {
      fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      if (fd < 0 && errno == ENOENT && attempt == 0) HOSTCCL_RETURN_IF_ERROR(MakeDirs(dir_));
    }
    if (fd < 0) {
      int err = errno;
      return MakeStatus(Code::kSyscall, "file store: cannot create '%s': %s", tmp.c_str(),
                        strerror(err));
    }
    size_t off = 0;
    while (off < value.size()) {
      ssize_t n = write(fd, value.data() + off, value.size() - off);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        int err = errno;
        close(fd);
        unlink(tmp.c_str());
        return MakeStatus(Code::kSyscall, "file store: writing key '%s' failed: %s", key.c_str(),
                          strerror(err));
      }
      off += static_cast<size_t>(n);
    }
    close(fd);
    if (rename(tmp.c_str(), PathOf(key).c_str()) != 0) {
      int err = errno;
      unlink(tmp.c_str());
      return MakeStatus(Code::kSyscall, "file store: publishing key '%s' failed: %s", key.c_str(),
                        strerror(err));
    }
    return Status::Ok();
  }

  std::string dir_;
};

}  // namespace

Status NewFileStore(const std::string& dir, std::unique_ptr<Store>* out) {
  if (dir.empty()) return MakeStatus(Code::kPara, "file store: empty directory path");
  HOSTCCL_RETURN_IF_ERROR(MakeDirs(dir));
  *out = std::make_unique<FileStore>(dir);
  return Status::Ok();
}

void RemoveFileStoreDir(const std::string& dir) {
  if (rmdir(dir.c_str()) != 0 && errno != ENOENT && errno != ENOTEMPTY && errno != EEXIST)
    HLOG_DEBUG(kBoot, "file store: cannot remove '%s': %s", dir.c_str(), strerror(errno));
}

}  // namespace hostccl::boot
