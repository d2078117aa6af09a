// Files that CompileOptions::dump_hlo_dir and dump_ir_dir ask a backend to
// write: the module before and after its passes, kernels' LLVM IR.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace kiln {

// `name` made safe as the start of a file name: every character other than a
// letter, digit, '_', '-' or '.' becomes '_'; "module" when empty.
std::string DumpFileStem(std::string_view name);

// Writes `text` to `directory`/`file_name`, creating the directory when
// missing. Errors (INVALID_ARGUMENT for a directory that cannot be made,
// DATA_LOSS for a failed write) name the path.
Status WriteDumpFile(const std::string& directory, const std::string& file_name, std::string_view text);

}  // namespace kiln
