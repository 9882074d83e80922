// See pipeline.h.
#include "io/sync/pipeline.h"

#include <algorithm>
#include <deque>

namespace expiry {

size_t run_pipeline(SyncConnection& conn, const PipelineOptions& options, const PipelineSteps& steps) {
  const size_t window = std::max<size_t>(options.window, 1);
  const size_t in_flight = std::max<size_t>(options.windows_in_flight, 1);
  size_t sent = 0;
  size_t read = 0;
  bool more = true;
  std::deque<size_t> window_ends;  // per window sent and not yet read: the index after its last command
  std::vector<std::string> argv;

  // Appends and sends the next window; false if nothing was sent.
  auto send_window = [&] {
    if (!more || (steps.may_send && !steps.may_send())) return false;
    const size_t first = sent;
    while (sent - first < window) {
      argv.clear();
      if (!steps.next_command(argv)) {
        more = false;
        break;
      }
      conn.append(argv);
      ++sent;
    }
    if (sent == first) return false;
    conn.flush();
    window_ends.push_back(sent);
    return true;
  };

  while (window_ends.size() < in_flight && send_window()) {
  }
  while (!window_ends.empty()) {
    for (; read < window_ends.front(); ++read) steps.on_reply(read, conn.read_reply());
    window_ends.pop_front();
    if (steps.after_window) steps.after_window();
    while (window_ends.size() < in_flight && send_window()) {
    }
  }
  return sent;
}

}  // namespace expiry
