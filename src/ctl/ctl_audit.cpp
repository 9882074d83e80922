// See ctl_audit.h.
#include "ctl/ctl_audit.h"

#include <pwd.h>
#include <unistd.h>

#include <iostream>

#include "base/errors.h"
#include "base/text_escape.h"
#include "ctl/ctl_commands.h"
#include "ctl/ctl_session.h"
#include "inspector/audit_trail.h"
#include "io/sync/routed_client.h"

namespace expiry {

std::string os_user_name() {
  const uid_t uid = getuid();
  passwd entry{};
  passwd* found = nullptr;
  char buffer[4096];
  if (getpwuid_r(uid, &entry, buffer, sizeof buffer, &found) == 0 && found != nullptr && found->pw_name != nullptr) {
    return found->pw_name;
  }
  return "uid-" + std::to_string(uid);
}

void append_ctl_audit(const CtlTarget& target, AuditRecord record) {
  if (target.audit_max_entries == 0) return;
  record.actor = os_user_name();
  record.via = "cli";
  try {
    RoutedClient redis(target.redis);
    AuditTrail(redis, target.ns, target.audit_max_entries).append(record);
  } catch (const std::exception& e) {
    std::cerr << "expiry-ctl: the audit record of '" << record.action << "' was not written: " << escape_text(e.what())
              << "\n";
  }
}

int run_audit(const CtlTarget& target, const AuditQuery& query, bool json) {
  if (const auto error = audit_query_error(query)) throw ConfigError(*error);
  RoutedClient redis(target.redis);
  const AuditPage page = AuditTrail(redis, target.ns, target.audit_max_entries).read(query);
  if (json) {
    std::cout << audit_page_json(page).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    for (const AuditRecord& r : page.records) std::cout << audit_record_line(r) << "\n";
    if (page.next_before) std::cerr << "more: expiry-ctl audit --before " << *page.next_before << "\n";
  }
  return kExitOk;
}

}  // namespace expiry
