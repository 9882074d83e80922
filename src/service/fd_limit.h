// The process's descriptor limit (RLIMIT_NOFILE). The mains raise it at start, so that the
// Redis connections can always be reopened; HttpEndpoint sizes its connection cap by it.
#pragma once

namespace expiry {

// The soft RLIMIT_NOFILE (new descriptors must be below it), or -1 if unlimited or unreadable.
long long fd_soft_limit();

// Raises the soft RLIMIT_NOFILE to the hard limit and logs the limit in force (info), or a
// warning if it cannot be read or raised, leaving it as it was. Never throws. Returns the
// soft limit in force afterwards (as fd_soft_limit()).
long long raise_fd_limit();

}  // namespace expiry
