// property_runner: RapidCheck driven without its global configuration (which would print a
// random seed on stderr and ignore ours) and without its global listener (which prints at exit).
#include "properties/property_runner.h"

#include <rapidcheck/detail/TestListener.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "io/decimal_text.h"
#include "properties/summarise_runs.h"

namespace ropecheck::properties {

namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool sanitized_build = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool sanitized_build = true;
#else
constexpr bool sanitized_build = false;
#endif
#else
constexpr bool sanitized_build = false;
#endif

constexpr int sanitizer_case_divisor = 4;

// Progress of a long run, on stderr. On a terminal: a bar redrawn in place (after the first
// second, so that short properties draw nothing) and erased when the property ends. Elsewhere
// (a CI log, ctest): deep profile only, after 10 s and then every minute, one line with the
// cases done, the rate, the time left and the worst ratio so far (what a time-capped run
// reports). A shard counts its own block's cases only.
class progress_listener : public rc::detail::TestListener {
 public:
  progress_listener(const std::string& id, const observation& seen, bool deep, case_block block)
      : id_(id), seen_(seen), block_(block), terminal_(isatty(STDERR_FILENO) != 0),
        report_(terminal_ || deep), start_(std::chrono::steady_clock::now()), last_(start_) {}
  ~progress_listener() override {
    if (drawn_) std::fprintf(stderr, "\r\033[K");  // erase the bar
  }
  progress_listener(const progress_listener&) = delete;
  progress_listener& operator=(const progress_listener&) = delete;

  void onTestCaseFinished(const rc::detail::CaseDescription&) override {
    if (++stream_case_ <= block_.begin || stream_case_ > block_.end || !report_ ||
        (stream_case_ & 15) != 0)
      return;
    const auto now = std::chrono::steady_clock::now();
    const auto since_start = now - start_, since_last = now - last_;
    if (terminal_) {
      if (since_start < std::chrono::seconds(1) || since_last < std::chrono::milliseconds(250)) return;
    } else if (since_last < (reported_ ? std::chrono::seconds(60) : std::chrono::seconds(10))) {
      return;
    }
    last_ = now;
    reported_ = true;
    const std::int64_t done = stream_case_ - block_.begin, total = block_.end - block_.begin;
    const double seconds = std::chrono::duration<double>(since_start).count();
    const double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0;
    const std::string left =
        rate > 0 ? duration_text(static_cast<double>(std::max<std::int64_t>(total - done, 0)) / rate) : "?";
    if (terminal_) {
      constexpr int width = 30;
      const int filled = total > 0 ? static_cast<int>(std::min<std::int64_t>(done * width / total, width)) : width;
      std::fprintf(stderr, "\r\033[K%s [%s%s] %lld/%lld cases, %.0f/s, %s left, worst/bound %.3g",
                   id_.c_str(), std::string(static_cast<std::size_t>(filled), '#').c_str(),
                   std::string(static_cast<std::size_t>(width - filled), '.').c_str(),
                   static_cast<long long>(done), static_cast<long long>(total), rate, left.c_str(),
                   seen_.worst_over_bound);
      drawn_ = true;
    } else {
      std::fprintf(stderr,
                   "[ progress ] %s: %lld of %lld cases, %.0f cases/s, about %s left; worst/bound "
                   "so far %.4g at %s; worst/documented target %.4g\n",
                   id_.c_str(), static_cast<long long>(done), static_cast<long long>(total), rate,
                   left.c_str(), seen_.worst_over_bound,
                   seen_.worst_case.empty() ? "-" : seen_.worst_case.c_str(), seen_.worst_over_target);
    }
    std::fflush(stderr);
  }
  void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}

 private:
  // "1h02m", "3m05s", "42s".
  static std::string duration_text(double seconds) {
    const auto s = static_cast<long long>(seconds + 0.5);
    char text[32];
    if (s >= 3600) std::snprintf(text, sizeof text, "%lldh%02lldm", s / 3600, s % 3600 / 60);
    else if (s >= 60) std::snprintf(text, sizeof text, "%lldm%02llds", s / 60, s % 60);
    else std::snprintf(text, sizeof text, "%llds", s);
    return text;
  }

  const std::string& id_;
  const observation& seen_;
  case_block block_;
  bool terminal_;
  bool report_;
  std::chrono::steady_clock::time_point start_, last_;
  bool reported_ = false;
  bool drawn_ = false;
  std::int64_t stream_case_ = 0;  // cases of the stream finished, the skipped ones included
};

// `property` for a shard: the cases of the stream outside the block pass without being
// generated. RapidCheck still runs the whole stream, drawing each case's split of the random
// and its size from the same count as the unsharded run, which keeps case i — and the
// reproduce=… token of a failure, which records the size — the same in every shard.
rc::detail::Property block_only(const rc::detail::Property& property, case_block block,
                                std::int64_t total) {
  if (block.begin == 0 && block.end == total) return property;
  auto seen = std::make_shared<std::int64_t>(0);
  return rc::Gen<rc::detail::CaseDescription>(
      [property, seen, block](const rc::Random& random, int size) {
        const std::int64_t i = (*seen)++;
        if (i < block.begin || i >= block.end) {
          rc::detail::CaseDescription skipped;
          skipped.result = rc::detail::CaseResult(rc::detail::CaseResult::Type::Success, "");
          skipped.example = [] { return rc::detail::Example(); };
          return rc::shrinkable::just(std::move(skipped));
        }
        return property(random, size);
      });
}

std::string rc_params() {
  const char* value = std::getenv("RC_PARAMS");
  return value == nullptr ? std::string() : std::string(value);
}

// A value from the environment made safe for a one-line message.
std::string shown(std::string_view text) {
  std::string out;
  for (const char c : text.substr(0, 80)) {
    if (c >= 0x20 && c < 0x7f) {
      out += c;
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(c));
      out += hex;
    }
  }
  return text.size() > 80 ? out + "..." : out;
}

[[noreturn]] void refuse(std::string_view problem, std::string_view value, std::string_view note = {}) {
  throw std::runtime_error("RC_PARAMS: " + std::string(problem) + " '" + shown(value) + "'" +
                           (note.empty() ? "" : " (" + std::string(note) + ")"));  // exit 2
}

// RapidCheck's configuration syntax (its MapParser): key=value pairs separated by white space,
// a key or value optionally quoted with ' or " (backslash escapes inside quotes), a key alone
// meaning an empty value.
std::vector<std::pair<std::string, std::string>> rc_param_pairs(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> pairs;
  std::size_t i = 0;
  const auto space = [&] { return i < text.size() && std::isspace(static_cast<unsigned char>(text[i])) != 0; };
  const auto word = [&](bool key) {
    std::string out;
    if (i < text.size() && (text[i] == '\'' || text[i] == '"')) {
      const char quote = text[i++];
      bool escape = false;
      for (; i < text.size(); ++i) {
        if (!escape && text[i] == '\\') {
          escape = true;
        } else if (!escape && text[i] == quote) {
          ++i;
          return out;
        } else {
          out += text[i];
          escape = false;
        }
      }
      refuse("a quoted string does not end", text);
    }
    while (i < text.size() && !space() && !(key && text[i] == '=')) out += text[i++];
    return out;
  };
  for (;;) {
    while (space()) ++i;
    if (i >= text.size()) return pairs;
    std::pair<std::string, std::string> pair;
    pair.first = word(true);
    while (space()) ++i;
    if (i < text.size() && text[i] == '=') {
      ++i;
      while (space()) ++i;
      pair.second = word(false);
    }
    if (pair.first.empty()) refuse("a value has no key", text);
    pairs.push_back(std::move(pair));
  }
}

// A plain decimal (io/decimal_text.h: no sign, space, leading zero or base prefix) within
// lo ... hi.
std::uint64_t rc_param_number(const std::string& key, const std::string& value, std::uint64_t lo,
                              std::uint64_t hi) {
  std::uint64_t n = 0;
  const char* end = value.data() + value.size();
  const auto [stop, error] = std::from_chars(value.data(), end, n);
  if (!plain_decimal_digits(value) || error != std::errc() || stop != end || n < lo || n > hi)
    refuse(key + " is not a decimal integer in " + std::to_string(lo) + " ... " + std::to_string(hi),
           key + "=" + value,
           key == "max_success" && value == "0" ? "a run of no cases would pass without checking anything" : "");
  return n;
}

}  // namespace

rc_params_values read_rc_params() {
  const std::string text = rc_params();
  rc_params_values out;
  std::vector<std::string> seen;
  for (const auto& [key, value] : rc_param_pairs(text)) {
    if (std::find(seen.begin(), seen.end(), key) != seen.end())
      refuse("key " + key + " is given twice", text);
    seen.push_back(key);
    if (key == "seed") {
      out.seed = rc_param_number(key, value, 0, std::numeric_limits<std::uint64_t>::max());
    } else if (key == "max_success") {
      out.max_success = static_cast<int>(rc_param_number(key, value, 1, std::numeric_limits<int>::max()));
    } else if (key == "noshrink") {
      if (value != "0" && value != "1") refuse("noshrink is not 0 or 1", key + "=" + value);
      out.noshrink = value == "1";
    } else if (key == "reproduce") {
      if (value.empty()) refuse("reproduce is empty", key + "=");
    } else if (key == "max_size" || key == "max_discard_ratio" || key == "verbose_progress" ||
               key == "verbose_shrinking") {
      refuse("key " + key + " has no effect in ropecheck (its generators ignore the size, and it "
             "reports progress and discards its own way)",
             key + "=" + value, "ropecheck honours seed, max_success, noshrink and reproduce");
    } else {
      refuse("unknown key " + key, key + "=" + value,
             "ropecheck honours RapidCheck's seed, max_success, noshrink and reproduce");
    }
  }
  if (std::find(seen.begin(), seen.end(), "reproduce") != seen.end()) {
    // RapidCheck's own decoding of its reproduce token.
    rc::detail::Configuration decoded;
    try {
      decoded = rc::detail::configFromString(text, decoded);
    } catch (const rc::detail::ConfigurationException& e) {
      refuse(std::string("reproduce does not decode: ") + e.what(), text);
    }
    if (decoded.reproduce.empty()) refuse("reproduce names no failure", text);
    out.reproduce = std::move(decoded.reproduce);
  }
  return out;
}

namespace {

// "reproduce=…" for one failure, in RapidCheck's own encoding.
std::string reproduce_token(const std::string& id, const rc::detail::Reproduce& reproduce) {
  rc::detail::Configuration only_reproduce;
  only_reproduce.reproduce.emplace(id, reproduce);
  std::istringstream words(rc::detail::configToMinimalString(only_reproduce));
  std::string word;
  while (words >> word) {
    if (word.rfind("reproduce=", 0) == 0) return word;
  }
  return {};
}


// The counterexample as reported: RapidCheck's header and shrunk values (every generated value
// shown), then the seed, then the case's message as the last line.
std::string describe_failure(const rc::detail::FailureResult& failure, std::uint64_t seed) {
  std::ostringstream os;
  const std::size_t shrinks = failure.reproduce.shrinkPath.size();
  os << "Falsifiable after " << failure.numSuccess + 1 << " tests";
  if (shrinks > 0) os << " and " << shrinks << " shrink" << (shrinks > 1 ? "s" : "");
  os << " (seed " << seed << ")\n\n";
  for (const auto& [type, value] : failure.counterExample)
    os << type << ":\n" << summarise_runs(value) << "\n\n";
  os << case_message(failure.description);
  return os.str();
}

}  // namespace

// What a failed or discarded case says. RapidCheck's macros record
// "<file>:<line>:\nRC_FAIL(<the expression's source text>)\n\n<message>"; a report that shows
// the description (or its last line) then shows source text, and with RC_ASSERT/RC_PRE no
// message at all. Keep the message: drop the location line and the macro line; an assertion
// without a message keeps its location and expansion, on one line, so the last line of a
// counterexample is always what failed.
std::string case_message(const std::string& description) {
  std::string text = description;
  const auto first_end = text.find('\n');
  const auto is_location = [&] {
    if (first_end == std::string::npos || first_end < 2 || text[first_end - 1] != ':') return false;
    const auto colon = text.rfind(':', first_end - 2);
    return colon != std::string::npos && colon + 1 < first_end - 1 &&
           text.find_first_not_of("0123456789", colon + 1) == first_end - 1;
  };
  std::string location;
  if (is_location()) {
    location = text.substr(0, first_end - 1);
    text.erase(0, first_end + 1);
  }
  if (text.rfind("RC_", 0) == 0) {
    const auto macro_end = text.find('\n');
    const std::string macro = text.substr(0, macro_end);
    text.erase(0, macro_end == std::string::npos ? text.size() : macro_end + 1);
    while (!text.empty() && text.front() == '\n') text.erase(0, 1);
    const std::string expands = "Expands to:\n";
    if (text.empty() || text.rfind(expands, 0) == 0) {
      text = location + ": " + macro + " failed" +
             (text.empty() ? "" : "; expands to: " + text.substr(expands.size()));
    }
  }
  while (!text.empty() && text.back() == '\n') text.pop_back();
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

std::string_view to_string(profile p) { return p == profile::quick ? "quick" : "deep"; }

profile profile_from_environment() {
  const char* value = std::getenv("ROPECHECK_PROFILE");
  const std::string name = value == nullptr ? "" : value;
  if (name.empty() || name == "quick") return profile::quick;
  if (name == "deep") return profile::deep;
  throw std::invalid_argument("ROPECHECK_PROFILE: '" + name + "' is not quick or deep");
}

std::uint64_t seed_from_environment() { return read_rc_params().seed.value_or(default_seed); }

run_settings settings_from_rc_params(profile level, std::uint64_t seed,
                                     std::string replay_command) {
  rc_params_values given = read_rc_params();
  run_settings s;
  s.level = level;
  s.seed = seed;
  s.max_success_override = given.max_success;
  s.disable_shrinking = given.noshrink;
  s.reproduce = std::move(given.reproduce);
  s.replay_command = std::move(replay_command);
  return s;
}

int case_count(const run_settings& settings, int quick_cases) {
  if (settings.max_success_override > 0) return settings.max_success_override;
  if (settings.level == profile::deep) return settings.deep_cases;
  return sanitized_build ? std::max(quick_cases / sanitizer_case_divisor, 1) : quick_cases;
}

bool skipped_by_reproduce(const run_settings& settings, const std::string& id) {
  return !settings.reproduce.empty() && settings.reproduce.count(id) == 0;
}

std::function<void()> failing_above(std::string property, double limit, observation& into,
                                    std::function<void(observation&)> run_case) {
  return [property = std::move(property), limit, &into, run_case = std::move(run_case)] {
    observation one;  // this case alone: its worst ratio, where, and its first violation
    std::string first;
    try {
      run_case(one);
    } catch (const rc::detail::CaseResult& r) {
      if (r.type != rc::detail::CaseResult::Type::Failure) throw;
      if (one.worst_over_bound == 0) {  // no ratio measured: the failure is itself
        into.failures.insert(one.failures.begin(), one.failures.end());
        throw;
      }
      first = case_message(r.description);
    }
    if (!(one.worst_over_bound > limit)) return;  // within what the baseline had
    std::ostringstream message;
    message << property << " regressed past the --baseline ratchet: this case's worst/bound "
            << one.worst_over_bound << " > " << limit << " at " << one.worst_location.text;
    if (!first.empty()) message << "; first violation in the case: " << first;
    const auto inputs = one.failures.find(first);
    failed_case f{one.worst_location, inputs == one.failures.end() ? std::string() : inputs->second.inputs,
                  one.worst_data};
    into.failures[message.str()] = std::move(f);
    RC_FAIL(message.str());
  };
}

property_result run_property(const std::string& id, const std::string& name,
                             const rc::detail::Property& property, int quick_cases,
                             const run_settings& settings, const observation& seen) {
  rc::detail::TestMetadata metadata;
  metadata.id = id;
  metadata.description = id;
  rc::detail::TestParams params;
  params.seed = settings.seed;
  const int total = case_count(settings, quick_cases);
  const case_block block = settings.reproduce.empty()
                               ? shard_block(total, settings.shard_index, settings.shard_count)
                               : case_block{0, total};  // a replay is one case: not sharded
  params.maxSuccess = total;
  params.maxSize = rc::kNominalSize;  // the generators ignore size (generators.h)
  params.disableShrinking = settings.disable_shrinking;
  progress_listener listener(id, seen, settings.level == profile::deep, block);

  const rc::detail::TestResult result = rc::detail::checkProperty(
      block_only(property, block, total), metadata, params, listener, settings.reproduce);
  // The block's cases among the stream's first `stream_cases`.
  const auto own = [&block](std::int64_t stream_cases) {
    return std::clamp<std::int64_t>(stream_cases, block.begin, block.end) - block.begin;
  };

  property_result out;
  out.name = name;
  out.worst_over_bound = seen.worst_over_bound;
  rc::detail::SuccessResult success;
  rc::detail::FailureResult failure;
  rc::detail::GaveUpResult gave_up;
  rc::detail::Error error;
  const std::string replay_prefix = "RC_PARAMS=\"seed=" + std::to_string(settings.seed);
  const std::string replay_suffix = "\" ROPECHECK_PROFILE=" + std::string(to_string(settings.level)) +
                                    " " + settings.replay_command;
  if (result.match(success)) {
    out.cases = own(success.numSuccess);
    return out;
  }
  out.passed = false;
  out.replay = replay_prefix + replay_suffix;  // the same cases again, from the same seed
  if (result.match(failure)) {
    out.cases = own(failure.numSuccess + 1);
    out.counterexample = describe_failure(failure, settings.seed);
    out.message = case_message(failure.description);
    out.replay = replay_prefix + " " + reproduce_token(id, failure.reproduce) + replay_suffix;
  } else if (result.match(gave_up)) {
    out.cases = own(gave_up.numSuccess);
    out.counterexample = "Gave up after " + std::to_string(gave_up.numSuccess) +
                         " tests: too many generated cases were discarded (seed " +
                         std::to_string(settings.seed) + ")\nlast discarded: " +
                         case_message(gave_up.description);
    out.message = "gave up: too many generated cases were discarded";
  } else if (result.match(error)) {
    out.counterexample = "RapidCheck could not run the property (seed " +
                         std::to_string(settings.seed) + ")\nerror: " + case_message(error.description);
    out.message = "error: " + case_message(error.description);
  }
  return out;
}

}  // namespace ropecheck::properties
