// Loads a kernel library (dlopen), checks its ropecheck_kernels() table against the ABI header
// (include/ropecheck/kernel_abi.h) and wraps each kernel as a fast::kernel_info.
#include "abi/kernel_library.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <array>
#include <cstdio>
#include <optional>
#include <set>
#include <system_error>
#include <string_view>

#include "abi/abi_dtype.h"
#include "abi/kernel_descriptors.h"
#include "abi/kernel_worker.h"
#include "io/file_bytes.h"
#include "io/io_error.h"
#include "ropecheck/kernel_abi.h"

namespace ropecheck::abi {
namespace {

ropecheck_tensor abi_tensor(const fast::rope_tensor& t) {
  return {t.input, t.output, t.heads, t.input_token_stride, t.input_head_stride,
          t.output_token_stride, t.output_head_stride};
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

// What a wrapped kernel's context points at: its descriptor (in process) or its index in the
// worker's listing, the ABI version its library speaks (calls are laid out for that version),
// and its library.
struct abi_kernel {
  int (*apply)(const ropecheck_rope_call*) = nullptr;  // in process only
  std::uint32_t abi_version = ROPECHECK_KERNEL_ABI_VERSION;
  kernel_library::loaded* library = nullptr;
  std::size_t index = 0;
  std::string name;
};

struct kernel_library::loaded {
  std::string path;
  void* handle = nullptr;                      // in process
  std::unique_ptr<kernel_worker> worker;       // isolated
  std::vector<abi_kernel> kernels;             // sized once: kernel_info contexts point in
  std::vector<std::vector<dtype>> dtypes;      // one per kernel, stable for kernel_info's spans
  std::vector<std::vector<pairing>> pairings;
  std::vector<std::optional<kernel_death>> deaths;  // per kernel: what ended its worker
  kernel_listing listing;                      // names and descriptions the infos view
  ~loaded() {
    worker.reset();
    if (handle != nullptr) dlclose(handle);
  }
};

bool is_valid_kernel_name(std::string_view name) {
  if (name.empty() || name.size() > max_kernel_name_length) return false;
  for (const char c : name) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

fast::status call_abi_kernel(const void* context, const fast::rope_call& call,
                             const fast::rope_angles& angles) {
  const auto& wrapped = *static_cast<const abi_kernel*>(context);
  const std::string& name = wrapped.name;
  if (wrapped.abi_version < 2 && call.position_streams != 1)
    return fast::status::error(fast::status_code::unsupported,
                               fmt::format("{}: its library speaks kernel ABI v1, which has one "
                                           "position stream per call ({} given)",
                                           name, call.position_streams));
  if (wrapped.abi_version < 2 && call.output_scale != 1.0f)
    return fast::status::error(fast::status_code::unsupported,
                               fmt::format("{}: its library speaks kernel ABI v1, which has no "
                                           "output_scale ({} given)",
                                           name, call.output_scale));
  std::array<char, 512> message{};
  const auto& frequencies = angles.frequencies();
  if (static_cast<std::int64_t>(frequencies.inverse_frequencies.size()) * 2 != call.rotary_dim &&
      call.rotary_dim >= 2 && call.rotary_dim % 2 == 0)
    return fast::status::error(fast::status_code::invalid_argument,
                               "rotary_dim does not match the prepared frequencies");
  const ropecheck_rope_call abi_call{
      wrapped.abi_version,
      abi_code(call.storage),
      call.pair == pairing::adjacent ? ROPECHECK_PAIRING_ADJACENT : ROPECHECK_PAIRING_HALF,
      call.dir == fast::direction::forward ? ROPECHECK_DIRECTION_FORWARD : ROPECHECK_DIRECTION_INVERSE,
      call.head_dim,
      call.rotary_dim,
      call.tokens,
      abi_tensor(call.q),
      abi_tensor(call.k),
      call.positions,
      abi_code(call.position_type),
      frequencies.inverse_frequencies.data(),
      frequencies.attention_factor,
      message.data(),
      message.size(),
      // v2 fields; a v1 kernel never reads them.
      call.position_streams,
      call.position_stream_stride,
      call.pair_streams,
      call.output_scale};
  int status = ROPECHECK_STATUS_OK;
  if (kernel_library::loaded* library = wrapped.library; library->worker) {
    auto& death = library->deaths[wrapped.index];
    if (death)  // the run of this kernel is over: every later call is refused at once
      return fast::status::error(fast::status_code::invalid_argument,
                                 fmt::format("{}: its process ended earlier in this run ({}: {})", name,
                                             death->verdict, death->cause));
    worker_answer answer = library->worker->call(wrapped.index, abi_call, frequencies.inverse_frequencies.size());
    if (answer.death) {
      death = std::move(answer.death);
      return fast::status::error(fast::status_code::invalid_argument, fmt::format("{}: {}", name, answer.message));
    }
    status = answer.status;
    std::snprintf(message.data(), message.size(), "%s", answer.message.c_str());
  } else {
    status = wrapped.apply(&abi_call);
  }
  if (status == ROPECHECK_STATUS_OK) return fast::status::success();
  message.back() = '\0';
  return fast::status::error(status_code_of(status), fmt::format("{}: {}", name, message.data()));
}

namespace {

// The library's own table, in process, as the worker would list it.
kernel_listing list_in_process(kernel_library::loaded& state, const std::string& where,
                               std::vector<ropecheck_kernel>& table) {
  state.handle = dlopen(where.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (state.handle == nullptr)
    throw kernel_library_error(fmt::format("{}: cannot load the kernel library: {}", state.path, dlerror()));
  auto* list = reinterpret_cast<ropecheck_kernels_fn>(dlsym(state.handle, ROPECHECK_KERNELS_SYMBOL));
  if (list == nullptr)
    throw kernel_library_error(fmt::format("{}: symbol '{}': not exported (see ropecheck/kernel_abi.h)",
                                           state.path, ROPECHECK_KERNELS_SYMBOL));
  // A library built for v2 or v1 still loads: its descriptors are read in their own layout.
  const kernel_table kernels = ask_for_kernels(list);
  if (kernels.count == 0)
    throw kernel_library_error(fmt::format("{}: {}(abi_version {}, {} or {}): returned no kernels",
                                           state.path, ROPECHECK_KERNELS_SYMBOL,
                                           ROPECHECK_KERNEL_ABI_VERSION, ROPECHECK_KERNEL_ABI_VERSION_2,
                                           ROPECHECK_KERNEL_ABI_VERSION_1));
  if (kernels.count > max_listed_kernels)
    throw kernel_library_error(fmt::format("{}: {}: reports {} kernels, more than the {} a library may list",
                                           state.path, ROPECHECK_KERNELS_SYMBOL, kernels.count, max_listed_kernels));
  kernel_listing listing;
  listing.abi_version = kernels.version;
  for (std::size_t i = 0; i < kernels.count; ++i) {
    const ropecheck_kernel k = kernels.at(i);
    listing.kernels.push_back({k.name != nullptr, k.name != nullptr ? k.name : "",
                               k.description != nullptr ? k.description : "", k.dtypes, k.pairings,
                               k.apply != nullptr, k.limits, k.max_position});
    table.push_back(k);
  }
  return listing;
}

// A v3 descriptor's limits as the domain the properties and fixtures keep to.
fast::kernel_domain domain_of(const listed_kernel& k) {
  fast::kernel_domain d;
  d.negative_positions = (k.limits & ROPECHECK_LIMIT_NONNEGATIVE_POSITIONS) == 0;
  d.inverse = (k.limits & ROPECHECK_LIMIT_NO_INVERSE) == 0;
  d.attention_factor = (k.limits & ROPECHECK_LIMIT_NO_ATTENTION_FACTOR) == 0;
  d.partial_rotary = (k.limits & ROPECHECK_LIMIT_NO_PARTIAL_ROTARY) == 0;
  d.absent_tensor = (k.limits & ROPECHECK_LIMIT_NO_ABSENT_TENSOR) == 0;
  d.max_position = k.max_position;
  return d;
}

}  // namespace

kernel_library kernel_library::load(const std::filesystem::path& path, const isolation& how) {
  auto state = std::make_shared<loaded>();
  state->path = path.string();
  // dlopen would block on a FIFO or read a device; io_error names the file and what it is.
  // (A missing file is left to dlopen, whose message says where it looked.)
  const bool builtins = path == builtin_library;
  if (builtins && !how.isolate)
    throw kernel_library_error("the built-in kernels run in process unless isolated (--isolate always)");
  std::error_code missing;
  if (!builtins && std::filesystem::exists(path, missing)) {
    try {
      require_regular_file(path);
    } catch (const io_error& e) {
      throw kernel_library_error(e.what());
    }
  }
  // A bare file name would make dlopen search the system paths: always pass a path.
  const std::string where = builtins || path.has_parent_path() ? path.string() : "./" + path.string();
  std::vector<ropecheck_kernel> table;  // in process: the descriptors, as v3 ones
  kernel_listing listing;
  if (how.isolate) {
    state->worker = std::make_unique<kernel_worker>(where, how.timeout_seconds);
    listing = state->worker->listing();
  } else {
    listing = list_in_process(*state, where, table);
  }
  const std::size_t count = listing.kernels.size();
  const std::uint32_t version = listing.abi_version;
  kernel_library library;
  std::set<std::string_view> names;
  state->dtypes.resize(count);
  state->pairings.resize(count);
  state->kernels.resize(count);
  state->deaths.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
    const listed_kernel& k = listing.kernels[i];
    if (!k.has_name || !k.has_apply)
      throw kernel_library_error(fmt::format("{}: kernel [{}]: null name or apply function", state->path, i));
    state->kernels[i] = {how.isolate ? nullptr : table[i].apply, version, state.get(), i, k.name};
    const std::string_view name(state->kernels[i].name);
    if (!is_valid_kernel_name(name))
      throw kernel_library_error(fmt::format(
          "{}: kernel [{}]: field 'name': not 1 to {} characters of [A-Za-z0-9_.-] (kernel_abi.h) '{}'",
          state->path, i, max_kernel_name_length, printable(name)));
    if (!names.insert(name).second)
      throw kernel_library_error(fmt::format(
          "{}: kernel [{}]: field 'name': a second kernel of this name (names are unique within a "
          "library) '{}'",
          state->path, i, name));
    for (dtype t : storage_dtypes)
      if (k.dtypes & (1u << abi_code(t))) state->dtypes[i].push_back(t);
    if (k.pairings & (1u << ROPECHECK_PAIRING_HALF)) state->pairings[i].push_back(pairing::half_split);
    if (k.pairings & (1u << ROPECHECK_PAIRING_ADJACENT)) state->pairings[i].push_back(pairing::adjacent);
    if (state->dtypes[i].empty() || state->pairings[i].empty())
      throw kernel_library_error(fmt::format("{}: kernel '{}': field 'dtypes'/'pairings': {:#x}/{:#x} "
                                             "names no storage dtype or no pairing",
                                             state->path, name, k.dtypes, k.pairings));
    // Unknown limit bits are refused as unknown dtype bits are: a limit this ropecheck does not
    // know is a call it might send.
    if ((k.limits & ~std::uint32_t{ROPECHECK_KNOWN_LIMITS}) != 0)
      throw kernel_library_error(fmt::format("{}: kernel '{}': field 'limits': unknown bits {:#x} (known: {:#x}, "
                                             "kernel_abi.h ropecheck_limit)",
                                             state->path, name, k.limits & ~std::uint32_t{ROPECHECK_KNOWN_LIMITS},
                                             ROPECHECK_KNOWN_LIMITS));
    if (k.max_position < 0)
      throw kernel_library_error(fmt::format("{}: kernel '{}': field 'max_position': negative ({}; 0 is no bound)",
                                             state->path, name, k.max_position));
    // Designated, so that a field added to kernel_info cannot shift these into the wrong one
    // (a positional `version >= 2` once landed in rounds_once).
    library.infos_.push_back({.name = state->kernels[i].name,
                              .description = k.description,
                              .strategy = fast::angle_strategy::on_the_fly,
                              .dtypes = state->dtypes[i],
                              .pairings = state->pairings[i],
                              .entry = call_abi_kernel,
                              .context = &state->kernels[i],
                              .rounds_once = false,
                              .multi_stream = version >= 2,
                              .takes_output_scale = version >= 2,
                              .domain = domain_of(k)});
  }
  // The built-ins keep the claim their kernel_info makes beyond the ABI: one rounding per
  // output. (Their angle strategy stays the ABI's: through it a cache kernel builds its table
  // from the call's positions, so it has no table bound to refuse past.)
  if (builtins)
    for (auto& info : library.infos_)
      if (const fast::kernel_info* own = fast::find_kernel(info.name)) info.rounds_once = own->rounds_once;
  // The descriptions live in the listing: keep it.
  state->listing = std::move(listing);
  for (std::size_t i = 0; i < count; ++i) library.infos_[i].description = state->listing.kernels[i].description;
  library.state_ = std::move(state);
  return library;
}

worker_answer kernel_library::call_raw(std::string_view kernel, const ropecheck_rope_call& call,
                                      std::size_t pairs) const {
  for (std::size_t i = 0; i < state_->kernels.size(); ++i) {
    const abi_kernel& k = state_->kernels[i];
    if (k.name != kernel) continue;
    if (state_->worker) return state_->worker->call(i, call, pairs);
    worker_answer answer;
    answer.status = k.apply(&call);
    if (call.message != nullptr && call.message_capacity > 0) {
      call.message[call.message_capacity - 1] = '\0';
      answer.message = call.message;
    }
    return answer;
  }
  throw kernel_library_error(fmt::format("{}: has no kernel named '{}'", state_->path, printable(kernel)));
}

std::optional<kernel_death> kernel_library::death_of(std::string_view kernel) const {
  for (std::size_t i = 0; i < state_->kernels.size(); ++i)
    if (state_->kernels[i].name == kernel) return state_->deaths[i];
  return std::nullopt;
}

}  // namespace ropecheck::abi
