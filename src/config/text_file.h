// Whole-file reads of the small files the programs are configured with (config file,
// password file), with every failure turned into a ConfigError that names the file.
#pragma once

#include <string>

namespace expiry {

// The contents of `path`. `what` names the file in messages ("config file", "password file").
// Throws ConfigError "<what> <path> is a directory" for a directory, and
// "cannot read <what> <path>: <reason>" when it cannot be opened or a read fails (missing,
// permission denied, I/O error, ...). Never throws anything else for a bad file.
std::string read_text_file(const std::string& path, const std::string& what);

}  // namespace expiry
