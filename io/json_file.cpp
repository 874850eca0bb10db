// json_file: a strict JSON reader (see json_file.h). nlohmann::json's SAX interface parses;
// strict_builder builds the document as json_sax_dom_parser does, but knows the path of every
// value, so a repeated key or an out-of-range number is reported where it is.
#include "io/json_file.h"

#include <fmt/format.h>

#include <string>
#include <utility>
#include <vector>

#include "io/file_bytes.h"
#include "io/io_error.h"

namespace ropecheck {
namespace {

using json = nlohmann::json;

class strict_builder {
 public:
  strict_builder(std::string_view file, std::string_view part) : file_(file), part_(part) {}

  json take() { return std::move(root_); }

  bool null() { return add(json(nullptr)); }
  bool boolean(bool value) { return add(json(value)); }
  bool number_integer(json::number_integer_t value) { return add(json(value)); }
  bool number_unsigned(json::number_unsigned_t value) { return add(json(value)); }
  bool number_float(json::number_float_t value, const json::string_t&) { return add(json(value)); }
  bool string(json::string_t& value) { return add(json(std::move(value))); }
  bool binary(json::binary_t&) { return add(json(nullptr)); }  // JSON text has no binary values
  bool start_object(std::size_t) { return open(json::object()); }
  bool start_array(std::size_t) { return open(json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(json::string_t& name) {
    frame& top = stack_.back();
    if (top.node->contains(name)) {
      throw io_error(file_, field(child_path(top, name)), "duplicate key", name,
                     "a key may appear once in an object");
    }
    top.key = std::move(name);
    return true;
  }

  bool parse_error(std::size_t position, const std::string& last_token, const json::exception& e) {
    if (e.id == 406) {  // out_of_range.406: a number beyond double's range
      throw io_error(file_, field(pending_path()), "number out of range", last_token,
                     "beyond the largest finite double");
    }
    // "[json.exception.parse_error.101] parse error at line 1, column 6: syntax error ...;
    // last read: '…'": keep the part a person reads, the token goes in the value.
    std::string message = e.what();
    if (const auto end_of_id = message.find("] "); end_of_id != std::string::npos)
      message.erase(0, end_of_id + 2);
    if (const auto last_read = message.find("; last read:"); last_read != std::string::npos)
      message.erase(last_read);
    throw io_error(file_, part_.empty() ? std::string_view("JSON") : part_, fmt::format("invalid JSON (byte {}): {}", position, message),
                   last_token);
  }

 private:
  struct frame {
    json* node;
    std::string path;  // of this container; empty for the document itself
    std::string key;   // the key whose value comes next (objects)
  };

  std::string field(const std::string& path) const {
    const std::string named = path.empty() ? std::string("document") : fmt::format("field '{}'", path);
    return part_.empty() ? named : fmt::format("{} {}", part_, named);
  }

  static std::string child_path(const frame& parent, const std::string& key) {
    return parent.path.empty() ? key : parent.path + "." + key;
  }

  // The path of the value the parser is about to deliver.
  std::string pending_path() const {
    if (stack_.empty()) return {};
    const frame& top = stack_.back();
    if (top.node->is_array()) return fmt::format("{}[{}]", top.path, top.node->size());
    return child_path(top, top.key);
  }

  json* insert(json value) {
    if (stack_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    frame& top = stack_.back();
    if (top.node->is_array()) {
      top.node->push_back(std::move(value));
      return &top.node->back();  // stable: nothing is added to this array while it is open
    }
    json& slot = (*top.node)[top.key];
    slot = std::move(value);
    return &slot;
  }

  bool add(json value) {
    insert(std::move(value));
    return true;
  }

  bool open(json container) {
    std::string path = pending_path();
    if (static_cast<int>(stack_.size()) >= json_max_depth) {
      throw io_error(file_, field(path), "nested too deeply", fmt::format("depth {}", stack_.size() + 1),
                     fmt::format("limit {}", json_max_depth));
    }
    json* node = insert(std::move(container));
    stack_.push_back({node, std::move(path), {}});
    return true;
  }

  bool close() {
    stack_.pop_back();
    return true;
  }

  std::string_view file_;
  std::string_view part_;
  json root_;
  std::vector<frame> stack_;
};

}  // namespace

json parse_json_strict(std::string_view text, std::string_view file, std::string_view part) {
  strict_builder builder(file, part);
  const char* begin = text.empty() ? "" : text.data();  // never a null iterator
  json::sax_parse(begin, begin + text.size(), &builder);
  return builder.take();
}

json read_json_file(const std::filesystem::path& path, std::size_t max_bytes) {
  const file_bytes file = load_file(path, max_bytes);
  const auto bytes = file.bytes();
  return parse_json_strict(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                           path.string());
}

}  // namespace ropecheck
