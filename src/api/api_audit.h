// The API's side of the audit trail (inspector/audit_record.h): what a write or admin action is
// recorded as (its action, target and outcome, from the route, the request body and the
// answer), and GET /v1/audit's query. Pure.
#pragma once

#include <map>
#include <string>
#include <variant>

#include "api/routes.h"
#include "inspector/audit_record.h"

namespace expiry {

// "PUT /v1/tasks/{id}": the method and the route's template.
std::string audit_action(const std::string& method, const RouteMatch& match);
// The id the route names; else what the body names: "prefix=P", "due=[A,B)", "entries=E1,E2",
// "N tasks: a, b, ...", "for_ms=N"; else empty. A body that is not JSON names nothing.
std::string audit_target(const RouteMatch& match, const std::string& body);
// "201"; for an error answer (problem+json) also its detail: "404: task x is not pending".
std::string audit_outcome(int status, const std::string& content_type, const std::string& body);

// GET /v1/audit's query (count, before, actor, action, via, target), or why it is refused.
std::variant<AuditQuery, std::string> parse_audit_query(const std::multimap<std::string, std::string>& query);

}  // namespace expiry
