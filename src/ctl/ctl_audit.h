// expiry-ctl and the audit trail (docs/api.md, "Audit trail"): each write or admin command is
// recorded under the OS user who ran it, and `expiry-ctl audit` reads the trail back.
#pragma once

#include <string>

#include "ctl/ctl_settings.h"
#include "inspector/audit_record.h"

namespace expiry {

// The name of the user running this process (its real uid's), or "uid-N" when it has none.
std::string os_user_name();

// Appends `record` (actor and via set here) to the target's trail, unless its retention is 0.
// Never throws: a record that cannot be written is reported on stderr, and the command's exit
// code stands.
void append_ctl_audit(const CtlTarget& target, AuditRecord record);

// `expiry-ctl audit`: one line per record, newest first (audit_record_line), or the page's JSON
// with `json`; on stderr, how to read on when more remain.
int run_audit(const CtlTarget& target, const AuditQuery& query, bool json);

}  // namespace expiry
