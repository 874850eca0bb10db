// Loads a kernel library (dlopen), checks its ropecheck_kernels() table against the ABI header
// (include/ropecheck/kernel_abi.h) and wraps each kernel as a fast::kernel_info.
#include "abi/kernel_library.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <array>
#include <set>
#include <system_error>
#include <string_view>

#include "io/file_bytes.h"
#include "io/io_error.h"
#include "ropecheck/kernel_abi.h"

namespace ropecheck::abi {
namespace {

int32_t abi_dtype(dtype t) {
  switch (t) {
    case dtype::float32: return ROPECHECK_DTYPE_FLOAT32;
    case dtype::float16: return ROPECHECK_DTYPE_FLOAT16;
    case dtype::bfloat16: return ROPECHECK_DTYPE_BFLOAT16;
    case dtype::int32: return ROPECHECK_DTYPE_INT32;
    case dtype::int64: return ROPECHECK_DTYPE_INT64;
    case dtype::float8_e4m3fn: return ROPECHECK_DTYPE_FLOAT8_E4M3FN;
    case dtype::float8_e5m2: return ROPECHECK_DTYPE_FLOAT8_E5M2;
    case dtype::float64: return 0;  // not an ABI storage type
  }
  return 0;
}

ropecheck_tensor abi_tensor(const fast::rope_tensor& t) {
  return {t.input, t.output, t.heads, t.input_token_stride, t.input_head_stride,
          t.output_token_stride, t.output_head_stride};
}

// kernel_abi.h: a name is [A-Za-z0-9_.-], unique within the library. It is printed in replay
// command lines, Markdown tables and file names, so anything else is refused, not escaped.
// 128 characters is far beyond any real kernel's name and keeps a table readable.
constexpr std::size_t max_kernel_name_length = 128;

bool is_valid_kernel_name(std::string_view name) {
  if (name.empty() || name.size() > max_kernel_name_length) return false;
  for (const char c : name) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

fast::status_code status_code_of(int status) {
  switch (status) {
    case ROPECHECK_STATUS_OK: return fast::status_code::ok;
    case ROPECHECK_STATUS_OUT_OF_RANGE: return fast::status_code::out_of_range;
    case ROPECHECK_STATUS_UNSUPPORTED: return fast::status_code::unsupported;
    default: return fast::status_code::invalid_argument;
  }
}

}  // namespace

// What a wrapped kernel's context points at: its descriptor and the ABI version its library
// speaks (calls are laid out for that version).
struct abi_kernel {
  const ropecheck_kernel* kernel = nullptr;
  std::uint32_t abi_version = ROPECHECK_KERNEL_ABI_VERSION;
};

struct kernel_library::loaded {
  std::string path;
  void* handle = nullptr;
  std::vector<abi_kernel> kernels;             // sized once: kernel_info contexts point in
  std::vector<std::vector<dtype>> dtypes;      // one per kernel, stable for kernel_info's spans
  std::vector<std::vector<pairing>> pairings;
  ~loaded() {
    if (handle != nullptr) dlclose(handle);
  }
};

fast::status call_abi_kernel(const void* context, const fast::rope_call& call,
                             const fast::rope_angles& angles) {
  const auto& wrapped = *static_cast<const abi_kernel*>(context);
  const ropecheck_kernel* kernel = wrapped.kernel;
  if (wrapped.abi_version < 2 && call.position_streams != 1)
    return fast::status::error(fast::status_code::unsupported,
                               fmt::format("{}: its library speaks kernel ABI v1, which has one "
                                           "position stream per call ({} given)",
                                           kernel->name, call.position_streams));
  if (wrapped.abi_version < 2 && call.output_scale != 1.0f)
    return fast::status::error(fast::status_code::unsupported,
                               fmt::format("{}: its library speaks kernel ABI v1, which has no "
                                           "output_scale ({} given)",
                                           kernel->name, call.output_scale));
  std::array<char, 512> message{};
  const auto& frequencies = angles.frequencies();
  if (static_cast<std::int64_t>(frequencies.inverse_frequencies.size()) * 2 != call.rotary_dim &&
      call.rotary_dim >= 2 && call.rotary_dim % 2 == 0)
    return fast::status::error(fast::status_code::invalid_argument,
                               "rotary_dim does not match the prepared frequencies");
  const ropecheck_rope_call abi_call{
      wrapped.abi_version,
      abi_dtype(call.storage),
      call.pair == pairing::adjacent ? ROPECHECK_PAIRING_ADJACENT : ROPECHECK_PAIRING_HALF,
      call.dir == fast::direction::forward ? ROPECHECK_DIRECTION_FORWARD : ROPECHECK_DIRECTION_INVERSE,
      call.head_dim,
      call.rotary_dim,
      call.tokens,
      abi_tensor(call.q),
      abi_tensor(call.k),
      call.positions,
      abi_dtype(call.position_type),
      frequencies.inverse_frequencies.data(),
      frequencies.attention_factor,
      message.data(),
      message.size(),
      // v2 fields; a v1 kernel never reads them.
      call.position_streams,
      call.position_stream_stride,
      call.pair_streams,
      call.output_scale};
  const int status = kernel->apply(&abi_call);
  if (status == ROPECHECK_STATUS_OK) return fast::status::success();
  message.back() = '\0';
  return fast::status::error(status_code_of(status),
                             fmt::format("{}: {}", kernel->name, message.data()));
}

kernel_library kernel_library::load(const std::filesystem::path& path) {
  auto state = std::make_shared<loaded>();
  state->path = path.string();
  // dlopen would block on a FIFO or read a device; io_error names the file and what it is.
  // (A missing file is left to dlopen, whose message says where it looked.)
  std::error_code missing;
  if (std::filesystem::exists(path, missing)) {
    try {
      require_regular_file(path);
    } catch (const io_error& e) {
      throw kernel_library_error(e.what());
    }
  }
  // A bare file name would make dlopen search the system paths: always pass a path.
  const std::string where = path.has_parent_path() ? path.string() : "./" + path.string();
  state->handle = dlopen(where.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (state->handle == nullptr)
    throw kernel_library_error(fmt::format("{}: cannot load the kernel library: {}", state->path, dlerror()));
  auto* list = reinterpret_cast<ropecheck_kernels_fn>(dlsym(state->handle, ROPECHECK_KERNELS_SYMBOL));
  if (list == nullptr)
    throw kernel_library_error(fmt::format("{}: symbol '{}': not exported (see ropecheck/kernel_abi.h)",
                                           state->path, ROPECHECK_KERNELS_SYMBOL));
  std::size_t count = 0;
  std::uint32_t version = ROPECHECK_KERNEL_ABI_VERSION;
  const ropecheck_kernel* kernels = list(version, &count);
  if (kernels == nullptr || count == 0) {  // a library built for v1 still loads (single stream)
    count = 0;
    version = ROPECHECK_KERNEL_ABI_VERSION_1;
    kernels = list(version, &count);
  }
  if (kernels == nullptr || count == 0)
    throw kernel_library_error(fmt::format("{}: {}(abi_version {} or {}): returned no kernels",
                                           state->path, ROPECHECK_KERNELS_SYMBOL,
                                           ROPECHECK_KERNEL_ABI_VERSION, ROPECHECK_KERNEL_ABI_VERSION_1));
  kernel_library library;
  std::set<std::string_view> names;
  state->dtypes.resize(count);
  state->pairings.resize(count);
  state->kernels.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
    const ropecheck_kernel& k = kernels[i];
    if (k.name == nullptr || k.apply == nullptr)
      throw kernel_library_error(fmt::format("{}: kernel [{}]: null name or apply function", state->path, i));
    const std::string_view name(k.name);
    if (!is_valid_kernel_name(name))
      throw kernel_library_error(fmt::format(
          "{}: kernel [{}]: field 'name': not 1 to {} characters of [A-Za-z0-9_.-] (kernel_abi.h) '{}'",
          state->path, i, max_kernel_name_length, printable(name)));
    if (!names.insert(name).second)
      throw kernel_library_error(fmt::format(
          "{}: kernel [{}]: field 'name': a second kernel of this name (names are unique within a "
          "library) '{}'",
          state->path, i, name));
    for (dtype t : {dtype::float32, dtype::float16, dtype::bfloat16, dtype::float8_e4m3fn,
                    dtype::float8_e5m2})
      if (k.dtypes & (1u << abi_dtype(t))) state->dtypes[i].push_back(t);
    if (k.pairings & (1u << ROPECHECK_PAIRING_HALF)) state->pairings[i].push_back(pairing::half_split);
    if (k.pairings & (1u << ROPECHECK_PAIRING_ADJACENT)) state->pairings[i].push_back(pairing::adjacent);
    if (state->dtypes[i].empty() || state->pairings[i].empty())
      throw kernel_library_error(fmt::format("{}: kernel '{}': field 'dtypes'/'pairings': {:#x}/{:#x} "
                                             "names no storage dtype or no pairing",
                                             state->path, k.name, k.dtypes, k.pairings));
    state->kernels[i] = {&k, version};
    // Designated, so that a field added to kernel_info cannot shift these into the wrong one
    // (a positional `version >= 2` once landed in rounds_once).
    library.infos_.push_back({.name = k.name,
                              .description = k.description != nullptr ? k.description : "",
                              .strategy = fast::angle_strategy::on_the_fly,
                              .dtypes = state->dtypes[i],
                              .pairings = state->pairings[i],
                              .entry = call_abi_kernel,
                              .context = &state->kernels[i],
                              .rounds_once = false,
                              .multi_stream = version >= 2,
                              .takes_output_scale = version >= 2});
  }
  library.state_ = std::move(state);
  return library;
}

}  // namespace ropecheck::abi
