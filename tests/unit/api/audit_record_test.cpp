// The audit trail's records (inspector/audit_record.h) and what the API records of a request
// (api/api_audit.h): the XADD, reading an entry back, filters, the query, targets and outcomes.
#include "api/api_audit.h"

#include <gtest/gtest.h>

#include "inspector/audit_record.h"

namespace expiry {
namespace {

TEST(AuditRecord, AppendsWithRetentionAndReadsBack) {
  AuditRecord r{"", "order-service", "api", "PUT /v1/tasks/{id}", "order:1", "201"};
  EXPECT_EQ(audit_append_argv("shop", r, 500),
            (std::vector<std::string>{"XADD", "shop:audit", "MAXLEN", "~", "500", "*", "actor", "order-service", "via",
                                      "api", "action", "PUT /v1/tasks/{id}", "target", "order:1", "outcome", "201"}));
  const AuditRecord back = audit_record_from_entry(
      "1700000000123-4", {{"actor", "alice"}, {"via", "cli"}, {"action", "cancel"}, {"target", "t"}, {"outcome", "exit 0"},
                          {"later", "ignored"}});
  EXPECT_EQ(back.time_ms(), 1700000000123);
  EXPECT_EQ(back.actor, "alice");
  EXPECT_EQ(audit_record_line(back), "2023-11-14T22:13:20.123Z  alice via cli  cancel  t  -> exit 0");
  EXPECT_EQ(audit_record_json(back)["entry"], "1700000000123-4");
}

TEST(AuditRecord, LongTextsAreCutAtACharacter) {
  EXPECT_EQ(audit_text("short"), "short");
  const std::string cut = audit_text(std::string(508, 'a') + "\xC3\xA9\xC3\xA9\xC3\xA9");
  EXPECT_EQ(cut, std::string(508, 'a') + "...");
  EXPECT_LE(audit_text(std::string(2000, 'x')).size(), kMaxAuditTextBytes);
}

TEST(AuditRecord, FiltersMatch) {
  const AuditRecord r{"1-0", "ops", "api", "POST /v1/dead/purge", "entries=1-1,2-2", "200"};
  AuditQuery q;
  EXPECT_TRUE(audit_matches(r, q));
  q.action = "dead";
  q.target = "2-2";
  q.actor = "ops";
  q.via = "api";
  EXPECT_TRUE(audit_matches(r, q));
  q.actor = "op";  // exact
  EXPECT_FALSE(audit_matches(r, q));
  q = {};
  q.via = "cli";
  EXPECT_FALSE(audit_matches(r, q));
}

TEST(ApiAudit, TargetsFromTheRouteOrTheBody) {
  EXPECT_EQ(audit_target(match_route("DELETE", "/v1/tasks/order%3A1"), ""), "order:1");
  const RouteMatch purge = match_route("POST", "/v1/dead/purge");
  EXPECT_EQ(audit_target(purge, R"({"entries": ["1-1", "2-2"]})"), "entries=1-1, 2-2");
  EXPECT_EQ(audit_target(purge, R"({"all": true})"), "all");
  EXPECT_EQ(audit_target(match_route("POST", "/v1/pause"), R"({"for_ms": 5000})"), "for_ms=5000");
  EXPECT_EQ(audit_target(match_route("POST", "/v1/pause"), ""), "");
  EXPECT_EQ(audit_target(purge, "not json"), "");
  const RouteMatch batch = match_route("POST", "/v1/tasks/batch");
  EXPECT_EQ(audit_target(batch, R"({"tasks": [{"id": "a"}, {"id": "b"}]})"), "2 tasks: a, b");
  std::string many = R"({"tasks": [)";
  for (int i = 0; i < 12; ++i) many += std::string(i ? "," : "") + R"({"id": "t)" + std::to_string(i) + "\"}";
  EXPECT_EQ(audit_target(batch, many + "]}"), "12 tasks: t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, ...");
  const RouteMatch cancel = match_route("POST", "/v1/tasks/cancel");
  EXPECT_EQ(audit_target(cancel, R"({"prefix": "order:"})"), "prefix=order:");
  EXPECT_EQ(audit_target(cancel, R"({"due_from_ms": 5, "due_to_ms": 9})"), "due=[5,9)");
}

TEST(ApiAudit, OutcomesNameTheStatusAndAProblemsDetail) {
  EXPECT_EQ(audit_outcome(201, "application/json", "{}"), "201");
  EXPECT_EQ(audit_outcome(404, "application/problem+json", R"({"status": 404, "detail": "task x is not pending"})"),
            "404: task x is not pending");
  EXPECT_EQ(audit_outcome(500, "text/plain", "oops"), "500");
}

TEST(ApiAudit, TheQuery) {
  auto q = parse_audit_query({{"count", "5"}, {"before", "17-0"}, {"actor", "ops"}, {"via", "cli"}});
  ASSERT_TRUE(std::holds_alternative<AuditQuery>(q));
  EXPECT_EQ(std::get<AuditQuery>(q).count, 5);
  EXPECT_EQ(std::get<AuditQuery>(q).before, "17-0");
  EXPECT_EQ(std::get<std::string>(parse_audit_query({{"count", "0"}})), "count must be 1..1000");
  EXPECT_EQ(std::get<std::string>(parse_audit_query({{"before", "x"}})), "before must be an audit entry id (<ms>-<seq>)");
  EXPECT_EQ(std::get<std::string>(parse_audit_query({{"via", "mail"}})), "via must be api or cli");
  EXPECT_EQ(std::get<std::string>(parse_audit_query({{"who", "me"}})),
            "unknown query parameter 'who' (count, before, actor, action, via, target)");
}

}  // namespace
}  // namespace expiry
