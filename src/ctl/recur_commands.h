// expiry-ctl recur: recurring schedules (docs/protocol.md "Recurring schedules"). set, show,
// list, delete, pause and resume talk to Redis through the function library; preview is offline.
// Bad rules, zones and times are ConfigError (exit 2), with nothing written.
#pragma once

#include <optional>
#include <string>

#include "ctl/ctl_settings.h"
#include "producer/recurring_schedules.h"
#include "recur/recur_spec.h"

namespace expiry {

// `recur set ID`: the definition as RecurringSchedules writes it (its rule: the flags shared with
// preview, exactly one of --cron and --every).
struct RecurSetOptions {
  std::string id;
  RecurringWrite write;
};

struct RecurPreviewOptions {
  RecurRuleSpec rule;
  std::optional<std::string> from;  // default: now
  long long count = 10;
  bool json = false;
};

int run_recur_set(const CtlTarget& target, const RecurSetOptions& options);
int run_recur_show(const CtlTarget& target, const std::string& id, bool json);
int run_recur_list(const CtlTarget& target, bool json);
int run_recur_delete(const CtlTarget& target, const std::string& id);
int run_recur_pause(const CtlTarget& target, const std::string& id);
int run_recur_resume(const CtlTarget& target, const std::string& id);
int run_recur_preview(const RecurPreviewOptions& options);

}  // namespace expiry
