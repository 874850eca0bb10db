// ropecheck identify --x X --pos POS --y Y [--dtype STORAGE_DTYPE]
//                    [--streams 1|2|3|4] [--spec-out SPEC.json] [--x-name N] [--y-name N] [--pos-name N]
//                    [REPORT FLAGS]
// Infers the RoPE convention from the data alone (audit/identify.h) and writes a spec that
// `ropecheck audit` accepts unchanged. Exit 0 when the audit of Y against the inferred spec
// passes, 1 when it does not (the convention was found but the output is not accurate), 2 bad
// input. Positions [3, tokens] / [2, tokens] (or [streams, batch, tokens]) are position streams
// (M-RoPE, 2-D vision): identify then also names the stream layout. The stream count is read
// from the positions' shape when it can only mean streams; `--streams` says it where the shape
// is also a batch of one-stream positions ([k, tokens] with a 4-D X of batch k).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "audit/identify.h"
#include "cli/commands.h"
#include "cli/decimal_options.h"
#include "cli/exit_codes.h"
#include "cli/report_flags.h"
#include "core/rope_inputs.h"
#include "io/atomic_file.h"
#include "io/io_error.h"
#include "io/read_tensor.h"

namespace ropecheck::cli {
namespace {

struct identify_options {
  std::string x, positions, y, dtype_name, spec_out;
  int streams = 0;  // --streams; 0: from the positions' shape
  std::optional<std::string> x_name, y_name, positions_name;
  reports::report_paths paths;
};

// One file of the set identify writes (empty path: not asked for).
void plan(std::vector<planned_file>& files, const std::string& path, std::string text) {
  if (path.empty()) return;
  files.push_back({path, [text = std::move(text)](std::ostream& out) {
                     out.write(text.data(), static_cast<std::streamsize>(text.size()));
                   }});
}

// Position streams from the positions' rank: one more dimension than one-stream positions
// ([tokens] for a 3-D X, [batch, tokens] or [tokens] for a 4-D X) is the stream dimension. A
// 4-D X with [k, tokens] positions, k = batch and k 2, 3 or 4, could be either: refused, naming
// --streams.
int streams_of(const std::vector<std::int64_t>& pos, const std::vector<std::int64_t>& x, const std::string& file) {
  const bool batched = x.size() == 4;
  if (pos.size() == (batched ? 3u : 2u)) return static_cast<int>(pos[0]);
  const bool stream_count = pos.size() == 2 && pos[0] >= 2 && pos[0] <= 4;
  if (batched && stream_count && pos[0] != x[0]) return static_cast<int>(pos[0]);
  if (batched && stream_count)
    throw io_error(file, "shape", "is [batch, tokens] one-stream positions or [streams, tokens] position streams",
                   format_shape(pos), "say which with --streams 1 or --streams " + std::to_string(pos[0]));
  return 1;
}

int run_identify_command(const identify_options& o) {
  // Every output, --spec-out included, is checked before anything is read (io/output_paths.h).
  check_report_outputs(o.paths, {{"--x", o.x}, {"--y", o.y}, {"--pos", o.positions}}, {{"--spec-out", o.spec_out}});
  std::optional<dtype> raw16;
  std::optional<dtype> judged;
  if (!o.dtype_name.empty()) {
    judged = parse_dtype(o.dtype_name);
    if (*judged == dtype::bfloat16 || is_float8(*judged)) raw16 = *judged;
  }
  audit::identify_input in;
  in.x = read_tensor(o.x, o.x_name, raw16);
  in.y = read_tensor(o.y, o.y_name, raw16);
  const auto& shape = in.x.shape;
  if (!is_floating(in.x.type))
    throw io_error(o.x, "dtype", "is not a floating type", std::string(to_string(in.x.type)));
  if (!is_floating(in.y.type))
    throw io_error(o.y, "dtype", "is not a floating type", std::string(to_string(in.y.type)));
  if (shape.size() != 3 && shape.size() != 4)
    throw io_error(o.x, "shape", "is not [tokens, heads, head_dim] or [batch, tokens, heads, head_dim]",
                   format_shape(shape));
  if (in.y.shape != shape)
    throw io_error(o.y, "shape", "does not match X", format_shape(in.y.shape),
                   fmt::format("X {} has shape {}", o.x, format_shape(shape)));
  const tensor pos = read_tensor(o.positions, o.positions_name, std::nullopt);
  in.streams = o.streams > 0 ? o.streams : streams_of(pos.shape, shape, o.positions);
  in.positions = positions_of_rows(pos, shape, o.positions, o.x, in.streams).per_row;
  in.heads = shape[shape.size() - 2];
  in.judged = judged.value_or(in.y.type);
  in.x_file = o.x;
  in.y_file = o.y;
  in.positions_file = o.positions;

  const audit::identification id = audit::identify(in);
  const std::string text = audit::identification_text(id);
  fmt::print("{}", text);
  // Every file is rendered first, then all are written together (io/atomic_file.h
  // write_files_together, under the same folder lock as the other commands' reports): a
  // failure leaves none changed, and racing runs leave one run's complete set.
  std::vector<planned_file> files;
  plan(files, o.spec_out, audit::spec_json(id).dump(2) + "\n");
  plan(files, o.paths.json, audit::identification_json(id).dump(2) + "\n");
  plan(files, o.paths.markdown, "### ropecheck identify\n\n```\n" + text + "```\n");
  plan(files, o.paths.html, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>ropecheck "
                            "identify</title></head>\n<body><pre>" + text + "</pre></body></html>\n");
  plan(files, o.paths.junit,
       fmt::format("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"ropecheck\">\n"
                   "  <testsuite name=\"ropecheck.identify\" tests=\"1\" failures=\"{}\" errors=\"0\" "
                   "skipped=\"0\">\n    <testcase classname=\"ropecheck.identify\" name=\"identify\">{}"
                   "</testcase>\n  </testsuite>\n</testsuites>\n",
                   id.audit_passed ? 0 : 1,
                   id.audit_passed ? "" : "<failure message=\"the audit against the inferred spec fails\"/>"));
  write_files_together(files);
  return id.audit_passed ? exit_pass : exit_failed;
}

}  // namespace

void add_identify_command(CLI::App& app, int& exit_status) {
  auto o = std::make_shared<identify_options>();
  CLI::App* cmd = app.add_subcommand("identify", "Infer the RoPE convention of an output from X, positions and Y");
  cmd->add_option("--x", o->x, "input X (.npy or .safetensors)")->required();
  cmd->add_option("--pos", o->positions, "positions (.npy or .safetensors, int32/int64)")->required();
  cmd->add_option("--y", o->y, "the output, same shape as X")->required();
  cmd->add_option("--dtype", o->dtype_name,
                  "judge Y as this dtype (default: Y's); bfloat16 also reads 16-bit raw data as "
                  "bfloat16, an 8-bit float (float8_*) reads uint8 data as its bits")
      ->check(CLI::IsMember(dtype_names(storage_dtypes)));  // numeric/dtype.h's catalog
  add_decimal_option(*cmd, "--streams", o->streams, 1, 4,
                     "position streams per token: 1, 3 (M-RoPE t, h, w), 4 (ggml's IMROPE t, h, w, e) or 2 "
                     "(vision row, column); default: "
                     "from the positions' shape ([3, tokens] is three streams)");
  add_output_option(*cmd, "--spec-out", o->spec_out, "write the inferred spec (JSON that `ropecheck audit --spec` reads)");
  cmd->add_option("--x-name", o->x_name, "tensor name of X in a .safetensors file");
  cmd->add_option("--y-name", o->y_name, "tensor name of Y in a .safetensors file");
  cmd->add_option("--pos-name", o->positions_name, "tensor name of the positions");
  add_report_flags(*cmd, o->paths);
  cmd->callback([o, &exit_status] { exit_status = run_identify_command(*o); });
}

}  // namespace ropecheck::cli
