// read_tensor: extension dispatch (see read_tensor.h).
#include "io/read_tensor.h"

#include "io/io_error.h"
#include "io/npy.h"
#include "io/safetensors.h"

namespace ropecheck {

tensor read_tensor(const std::filesystem::path& path, const std::optional<std::string>& name,
                   std::optional<dtype> raw16) {
  const std::string extension = path.extension().string();
  if (extension == ".npy") {
    if (name) {
      throw io_error(path.string(), "tensor name", "a .npy file holds one unnamed tensor; got",
                     *name);
    }
    return read_npy(path, raw16);
  }
  if (extension == ".safetensors") return read_safetensors(path, name);
  throw io_error(path.string(), "file extension", "unsupported tensor file type", extension,
                 "expected .npy or .safetensors");
}

}  // namespace ropecheck
