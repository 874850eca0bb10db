// A kernel library in a child process (kernel_worker.h). The parent and the worker share one
// memfd mapping: the worker's listing, then each call's regions (call_image.h), travel there;
// a SOCK_SEQPACKET socket pair carries the small fixed-size messages and tells the parent, by
// end of file, that the worker ended. The parent alone decides what that means.
#include "abi/kernel_worker.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>

#include "abi/abi_case.h"
#include "abi/builtin_kernels.h"
#include "abi/call_image.h"
#include "abi/kernel_descriptors.h"
#include "abi/kernel_library.h"

namespace ropecheck::abi {
namespace {

constexpr std::uint64_t initial_shared_bytes = std::uint64_t{1} << 20;

enum class op : std::uint32_t { call = 1 };

struct request {
  op what = op::call;
  std::uint32_t kernel = 0;
  std::uint64_t shared_bytes = 0;  // the mapping's size now: the worker maps it again if it grew
  ropecheck_rope_call call{};      // pointers already in the worker's mapping, as offsets
  std::int64_t offsets[7] = {};    // q.input, q.output, k.input, k.output, positions, θ, pair map
};

struct reply {
  std::int32_t status = 0;
  char message[512] = {};
};

// The worker's first message: the listing's size in the mapping, or an error text there.
struct hello {
  std::int32_t loaded = 0;
  std::uint64_t bytes = 0;
};

[[noreturn]] void worker_exit(int code) { ::_exit(code); }

bool send_all(int fd, const void* data, std::size_t size) {
  for (;;) {
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n == static_cast<ssize_t>(size)) return true;
    if (n < 0 && errno == EINTR) continue;
    return false;
  }
}

// Receives one message of exactly `size` bytes; false at end of file or on error.
bool receive(int fd, void* data, std::size_t size) {
  for (;;) {
    const ssize_t n = ::recv(fd, data, size, 0);
    if (n == static_cast<ssize_t>(size)) return true;
    if (n < 0 && errno == EINTR) continue;
    return false;
  }
}

// Serialises a listing into `out`: fixed-width fields, strings with their length.
void put(std::string& out, const void* p, std::size_t n) { out.append(static_cast<const char*>(p), n); }
void put_string(std::string& out, const std::string& s) {
  const auto n = static_cast<std::uint32_t>(s.size());
  put(out, &n, sizeof n);
  out += s;
}
template <class T>
bool take(const unsigned char*& p, const unsigned char* end, T& v) {
  if (static_cast<std::size_t>(end - p) < sizeof v) return false;
  std::memcpy(&v, p, sizeof v);
  p += sizeof v;
  return true;
}
bool take_string(const unsigned char*& p, const unsigned char* end, std::string& s) {
  std::uint32_t n = 0;
  if (!take(p, end, n) || static_cast<std::size_t>(end - p) < n) return false;
  s.assign(reinterpret_cast<const char*>(p), n);
  p += n;
  return true;
}

// At most this much of a kernel's name or description is read (names are checked against
// kernel_abi.h's 128 characters by the loader; descriptions are one line).
constexpr std::size_t max_listed_text = 1024;
std::string bounded(const char* s) { return std::string(s, ::strnlen(s, max_listed_text + 1)); }

// In the worker: dlopen, ask for the kernels (v3, else v2, else v1, as kernel_library::load
// does in process: kernel_descriptors.h), serialise them. Returns an error text, or "" with
// `out` filled.
std::string list_kernels(const std::string& path, std::string& out, kernel_table& table) {
  ropecheck_kernels_fn list = nullptr;
  if (path == builtin_library) {
    list = ropecheck_builtin_kernels;  // already in this (forked) process
  } else {
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) return fmt::format("{}: cannot load the kernel library: {}", path, ::dlerror());
    list = reinterpret_cast<ropecheck_kernels_fn>(::dlsym(handle, ROPECHECK_KERNELS_SYMBOL));
  }
  if (list == nullptr)
    return fmt::format("{}: symbol '{}': not exported (see ropecheck/kernel_abi.h)", path, ROPECHECK_KERNELS_SYMBOL);
  table = ask_for_kernels(list);
  if (table.count == 0)
    return fmt::format("{}: {}(abi_version {}, {} or {}): returned no kernels", path, ROPECHECK_KERNELS_SYMBOL,
                       ROPECHECK_KERNEL_ABI_VERSION, ROPECHECK_KERNEL_ABI_VERSION_2,
                       ROPECHECK_KERNEL_ABI_VERSION_1);
  if (table.count > max_listed_kernels)
    return fmt::format("{}: {}: reports {} kernels, more than the {} a library may list", path,
                       ROPECHECK_KERNELS_SYMBOL, table.count, max_listed_kernels);
  put(out, &table.version, sizeof table.version);
  const auto n = static_cast<std::uint64_t>(table.count);
  put(out, &n, sizeof n);
  for (std::size_t i = 0; i < table.count; ++i) {
    const ropecheck_kernel k = table.at(i);
    const std::uint8_t has_name = k.name != nullptr, has_apply = k.apply != nullptr;
    put(out, &has_name, 1);
    put_string(out, has_name ? bounded(k.name) : std::string());
    put_string(out, k.description != nullptr ? bounded(k.description) : std::string());
    put(out, &k.dtypes, sizeof k.dtypes);
    put(out, &k.pairings, sizeof k.pairings);
    put(out, &has_apply, 1);
    put(out, &k.limits, sizeof k.limits);
    put(out, &k.max_position, sizeof k.max_position);
  }
  return "";
}

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* abbrev = ::sigabbrev_np(sig);
    return fmt::format("signal {} (SIG{}){}", sig, abbrev != nullptr ? abbrev : "?",
                       sig == SIGABRT ? ": abort(), e.g. a failed assertion" : "");
  }
  if (WIFEXITED(status))
    return fmt::format("exit status {} (the kernel called exit or _exit)", WEXITSTATUS(status));
  return fmt::format("wait status {:#x}", status);
}

}  // namespace

struct kernel_worker::process {
  pid_t pid = -1;
  int socket = -1;
  int memfd = -1;
  unsigned char* map = nullptr;
  std::uint64_t bytes = 0;

  ~process() { stop(); }
  // Ends the worker (SIGKILL if it is still there) and returns its wait status.
  int stop() {
    int status = 0;
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      pid = -1;
    }
    if (socket >= 0) ::close(socket);
    if (map != nullptr) ::munmap(map, bytes);
    if (memfd >= 0) ::close(memfd);
    socket = memfd = -1;
    map = nullptr;
    return status;
  }
  // The worker's end, once the socket said it came (or should have): killed first in case it
  // only closed its socket and runs on, then how it ended.
  int reap() { return stop(); }
  // The mapping at `size` bytes (the file already that long, or made so). False when the
  // system refuses: the mapping is then gone and this process must not be used again.
  bool remap(std::uint64_t size, bool truncate) {
    if (map != nullptr) ::munmap(map, bytes);
    map = nullptr;
    if (truncate && ::ftruncate(memfd, static_cast<off_t>(size)) != 0) return false;
    void* m = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
    if (m == MAP_FAILED) return false;
    map = static_cast<unsigned char*>(m);
    bytes = size;
    return true;
  }
  bool grow(std::uint64_t needed) {
    if (needed <= bytes) return true;
    std::uint64_t size = bytes;
    while (size < needed) size *= 2;
    return remap(size, true);
  }
};

namespace {

// Waits up to `timeout_seconds` (0: for ever) for a message on `socket`; false on time-out.
bool wait_for_message(int socket, double timeout_seconds) {
  pollfd fd{socket, POLLIN, 0};
  const int timeout_ms = timeout_seconds > 0 ? static_cast<int>(std::min(timeout_seconds * 1000, 2.0e9)) : -1;
  int ready = 0;
  do {
    ready = ::poll(&fd, 1, timeout_ms);
  } while (ready < 0 && errno == EINTR);
  return ready != 0;
}

}  // namespace

namespace {

// The worker's life: list the kernels, then answer calls until the parent goes away.
[[noreturn]] void worker_main(const std::string& path, int socket, int memfd, unsigned char* map,
                              std::uint64_t bytes) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  // The worker dies of what the kernel does, by the signal's default action, so the parent sees
  // it: ropecheck's abort handler (which would call a kernel's abort() an internal error) and
  // any sanitizer's fault handlers are not the kernel's.
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGINT, SIGTERM, SIGPIPE})
    ::sigaction(sig, &default_action, nullptr);
  std::string listing;
  kernel_table table;
  const std::string error = list_kernels(path, listing, table);
  const std::string& text = error.empty() ? listing : error;
  if (text.size() > bytes) {  // a long listing: the mapping grows (the parent maps it again)
    ::munmap(map, bytes);
    bytes = text.size();
    void* m = ::ftruncate(memfd, static_cast<off_t>(bytes)) == 0
                  ? ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0)
                  : MAP_FAILED;
    if (m == MAP_FAILED) worker_exit(125);
    map = static_cast<unsigned char*>(m);
  }
  std::memcpy(map, text.data(), text.size());
  const hello h{error.empty() ? 1 : 0, text.size()};
  if (!send_all(socket, &h, sizeof h) || !error.empty()) worker_exit(0);
  request r;
  while (receive(socket, &r, sizeof r)) {
    if (r.shared_bytes != bytes) {
      ::munmap(map, bytes);
      void* m = ::mmap(nullptr, r.shared_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
      if (m == MAP_FAILED) worker_exit(124);
      map = static_cast<unsigned char*>(m);
      bytes = r.shared_bytes;
    }
    const auto at = [&](std::int64_t offset) -> unsigned char* { return offset < 0 ? nullptr : map + offset; };
    reply answer;
    ropecheck_rope_call c = r.call;
    c.q.input = at(r.offsets[0]);
    c.q.output = at(r.offsets[1]);
    c.k.input = at(r.offsets[2]);
    c.k.output = at(r.offsets[3]);
    c.positions = at(r.offsets[4]);
    c.inverse_frequencies = reinterpret_cast<const double*>(at(r.offsets[5]));
    if (c.abi_version >= 2) c.pair_streams = reinterpret_cast<const std::int32_t*>(at(r.offsets[6]));
    c.message = c.message_capacity > 0 ? answer.message : nullptr;
    c.message_capacity = c.message_capacity > 0 ? sizeof answer.message : 0;
    answer.status = r.kernel < table.count ? table.at(r.kernel).apply(&c) : ROPECHECK_STATUS_INVALID_ARGUMENT;
    answer.message[sizeof answer.message - 1] = '\0';
    if (!send_all(socket, &answer, sizeof answer)) break;
  }
  worker_exit(0);
}

}  // namespace

kernel_worker::kernel_worker(std::string path, double timeout_seconds)
    : path_(std::move(path)), timeout_seconds_(timeout_seconds) {
  start();
}

kernel_worker::~kernel_worker() = default;

void kernel_worker::start() {
  auto p = std::make_unique<process>();
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0)
    throw kernel_library_error(fmt::format("{}: cannot start a worker process: {}", path_, std::strerror(errno)));
  p->memfd = ::memfd_create("ropecheck-kernel-worker", MFD_CLOEXEC);
  if (p->memfd < 0 || ::ftruncate(p->memfd, initial_shared_bytes) != 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw kernel_library_error(fmt::format("{}: cannot start a worker process: {}", path_, std::strerror(errno)));
  }
  void* m = ::mmap(nullptr, initial_shared_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, p->memfd, 0);
  p->map = m == MAP_FAILED ? nullptr : static_cast<unsigned char*>(m);
  p->bytes = initial_shared_bytes;
  // Buffered output would be written twice: once by us, once by a kernel that calls exit().
  std::fflush(nullptr);
  const pid_t pid = p->map == nullptr ? -1 : ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    worker_main(path_, fds[1], p->memfd, p->map, p->bytes);
  }
  ::close(fds[1]);
  p->socket = fds[0];
  if (pid < 0) {
    throw kernel_library_error(fmt::format("{}: cannot start a worker process: {}", path_, std::strerror(errno)));
  }
  p->pid = pid;
  hello h;
  if (!wait_for_message(p->socket, timeout_seconds_)) {
    p->stop();
    throw kernel_library_error(fmt::format("{}: the library did not finish loading within {} s (--kernel-timeout): "
                                           "cannot gate it", path_, timeout_seconds_));
  }
  if (!receive(p->socket, &h, sizeof h)) {
    const int status = p->reap();
    throw kernel_library_error(fmt::format("{}: the library ended its process while loading ({}): cannot gate it",
                                           path_, describe_status(status)));
  }
  if (h.bytes > p->bytes && !p->remap(h.bytes, false))
    throw kernel_library_error(fmt::format("{}: cannot map the worker's listing of {} bytes", path_, h.bytes));
  const unsigned char* data = p->map;
  const unsigned char* end = data + std::min<std::uint64_t>(h.bytes, p->bytes);
  if (h.loaded == 0)
    throw kernel_library_error(std::string(reinterpret_cast<const char*>(data), static_cast<std::size_t>(end - data)));
  kernel_listing listing;
  std::uint64_t count = 0;
  bool ok = take(data, end, listing.abi_version) && take(data, end, count) && count <= max_listed_kernels;
  for (std::uint64_t i = 0; ok && i < count; ++i) {
    listed_kernel k;
    std::uint8_t has_name = 0, has_apply = 0;
    ok = take(data, end, has_name) && take_string(data, end, k.name) && take_string(data, end, k.description) &&
         take(data, end, k.dtypes) && take(data, end, k.pairings) && take(data, end, has_apply) &&
         take(data, end, k.limits) && take(data, end, k.max_position);
    k.has_name = has_name != 0;
    k.has_apply = has_apply != 0;
    listing.kernels.push_back(std::move(k));
  }
  if (!ok) throw kernel_library_error(fmt::format("{}: the worker's listing of the kernels is malformed", path_));
  // A restarted worker must list what the first one did: the kernels' contexts point into it.
  if (!listing_.kernels.empty() &&
      (listing.abi_version != listing_.abi_version || listing.kernels.size() != listing_.kernels.size()))
    throw kernel_library_error(fmt::format("{}: lists other kernels when loaded again", path_));
  listing_ = std::move(listing);
  process_ = std::move(p);
}

worker_answer kernel_worker::call(std::size_t index, const ropecheck_rope_call& call, std::size_t pairs) {
  if (!process_) start();
  process& p = *process_;
  const call_image image = image_of(call, pairs);
  std::uint64_t total = 0;
  const std::vector<std::uint64_t> offsets = layout_offsets(image, &total);
  if (!p.grow(total)) {  // the system refused the memory: this worker is done, the call is not made
    process_.reset();
    worker_answer a;
    a.status = ROPECHECK_STATUS_INVALID_ARGUMENT;
    a.message = fmt::format("cannot map {} bytes of shared memory for the call", total);
    return a;
  }
  std::memset(p.map, 0, zeroed_bytes);
  for (std::size_t r = 0; r < image.regions.size(); ++r)
    std::memcpy(p.map + offsets[r], image.regions[r].start, image.regions[r].bytes);
  request q;
  q.kernel = static_cast<std::uint32_t>(index);
  q.shared_bytes = p.bytes;
  q.call = call;
  const auto offset_of = [&](const call_image::place& place) -> std::int64_t {
    switch (place.kind) {
      case call_image::place::null: return -1;
      case call_image::place::zeroed: return 0;
      case call_image::place::in_region:
        return static_cast<std::int64_t>(offsets[static_cast<std::size_t>(place.region)] + place.offset);
    }
    return -1;
  };
  const call_image::place* places[7] = {&image.q_input, &image.q_output, &image.k_input, &image.k_output,
                                        &image.positions, &image.inverse_frequencies, &image.pair_streams};
  for (int i = 0; i < 7; ++i) q.offsets[i] = offset_of(*places[i]);
  q.call.message = nullptr;
  q.call.message_capacity = call.message != nullptr ? call.message_capacity : 0;

  const auto death = [&](std::string verdict, std::string cause) {
    worker_answer a;
    a.status = ROPECHECK_STATUS_INVALID_ARGUMENT;
    kernel_death d;
    d.verdict = std::move(verdict);
    d.cause = std::move(cause);
    d.call = describe_call(call);
    d.case_json = case_json(call, image, listing_.kernels[index].name, pairs);
    a.message = fmt::format("the kernel's process ended: {} ({})", d.verdict, d.cause);
    a.death = std::move(d);
    process_.reset();
    return a;
  };
  if (!send_all(p.socket, &q, sizeof q)) return death("crashed", describe_status(p.reap()));
  if (!wait_for_message(p.socket, timeout_seconds_)) {
    p.stop();
    return death("timed_out", fmt::format("no answer within {} s (--kernel-timeout)", timeout_seconds_));
  }
  reply answer;
  if (!receive(p.socket, &answer, sizeof answer)) return death("crashed", describe_status(p.reap()));
  for (std::size_t r = 0; r < image.regions.size(); ++r)
    if (image.regions[r].holds_output)
      std::memcpy(const_cast<unsigned char*>(image.regions[r].start), p.map + offsets[r], image.regions[r].bytes);
  worker_answer a;
  a.status = answer.status;
  answer.message[sizeof answer.message - 1] = '\0';
  a.message = answer.message;
  return a;
}

}  // namespace ropecheck::abi
