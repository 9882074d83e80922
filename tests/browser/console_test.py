"""Browser tests of the web console (issue 35): headless Chromium driven by Selenium
(Debian's chromium, chromium-driver and python3-selenium; scripts/deps.sh installs them) against
a real redis-server, an expiry-relay and expiry-api started for the run (console_stack.py).

Usage: console_test.py BUILD_DIR [--screenshots DIR] [unittest arguments]
  --screenshots DIR: also writes DIR/console-overview.png, DIR/console-task.png and
  DIR/console-schedule.png (1280x800).
"""
import contextlib
import json
import os
import re
import shutil
import sys
import time
import unittest
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from console_stack import (ADMIN_TOKEN, BILLING_NAME, BILLING_TOKEN, ORDER_NAME, ORDER_TOKEN, READ_TOKEN,  # noqa: E402
                           WRITE_TOKEN, ConsoleStack, wait_for)

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
except ImportError as e:  # never a silent skip: CI installs python3-selenium (scripts/deps.sh)
    sys.exit("console_test.py needs python3-selenium (scripts/deps.sh installs it): %s" % e)

BUILD_DIR = None
SCREENSHOTS = None
UI_TIMEOUT = 15.0  # seconds for anything the page shows
PHONE_TIMEOUT = 30.0  # seconds for a whole view to render at phone width (a busy 2-core machine)


def find_program(*names):
    for name in names:
        path = shutil.which(name)
        if path:
            return path
    sys.exit("none of %s found (scripts/deps.sh installs chromium and chromium-driver)" % ", ".join(names))


class ConsoleTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.stack = ConsoleStack(BUILD_DIR).__enter__()
        try:
            options = webdriver.ChromeOptions()
            options.binary_location = find_program("chromium", "chromium-browser")
            for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                        "--window-size=1280,800", "--no-first-run", "--disable-extensions",
                        "--user-data-dir=" + os.path.join(cls.stack.dir, "chromium")):
                options.add_argument(arg)
            options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
            cls.driver = webdriver.Chrome(service=Service(find_program("chromedriver")), options=options)
            cls.driver.set_page_load_timeout(20)
        except BaseException:
            cls.stack.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        try:
            cls.driver.quit()
        finally:
            cls.stack.stop()

    def tearDown(self):
        # The page must never break its own policy or throw: the browser's console stays clean.
        self.assertEqual(self.severe_errors(), [], "the browser logged errors")

    def severe_errors(self):
        """The browser's SEVERE log entries since the last call, bar the 401s and 404s the tests cause."""
        return [e for e in self.driver.get_log("browser") if e["level"] == "SEVERE" and
                "401 (Unauthorized)" not in e["message"] and "404 (Not Found)" not in e["message"]]

    # ---- helpers ------------------------------------------------------------------------------

    def find(self, testid, timeout=UI_TIMEOUT):
        return wait_for(lambda: self.visible(testid), "[data-testid=%s] to show" % testid, timeout)

    def visible(self, testid):
        for e in self.driver.find_elements(By.CSS_SELECTOR, '[data-testid="%s"]' % testid):
            if e.is_displayed():
                return e
        return None

    def all_visible(self, testid):
        return [e for e in self.driver.find_elements(By.CSS_SELECTOR, '[data-testid="%s"]' % testid)
                if e.is_displayed()]

    def sign_in(self, token, hash_path="#/overview"):
        self.driver.get(self.stack.url + hash_path)
        self.driver.execute_script("sessionStorage.clear()")
        self.driver.get(self.stack.url + hash_path)
        self.driver.refresh()
        box = self.find("login-token")
        box.clear()
        box.send_keys(token)
        self.find("login-submit").click()
        self.find("token-scope")

    def go(self, hash_path):
        self.driver.execute_script("location.hash = arguments[0]", hash_path)

    def confirm(self):
        self.find("confirm").click()
        wait_for(lambda: not self.driver.find_element(By.ID, "confirm-dialog").is_displayed(), "the dialog to close")

    def open_task(self, task_id):
        self.go("#/task/" + task_id)
        wait_for(lambda: self.visible("task-state") and
                 self.driver.find_element(By.ID, "task-title").text == "Task " + task_id,
                 "the page of task " + task_id)

    def schedule(self, task_id, delay_ms=3600_000, payload='{"order": 42}'):
        self.stack.ctl("schedule", task_id, "--delay-ms", str(delay_ms), "--payload", payload)

    def api(self, path, token=READ_TOKEN, method="GET", body=None, expect=200):
        """A call to expiry-api; its JSON answer, once its status is `expect`."""
        status, _, text = self.stack.http(path, token, method, body)
        self.assertEqual(status, expect, "%s %s: %s" % (method, path, text))
        return json.loads(text) if text else None

    @staticmethod
    def schedule_path(schedule_id):
        return "/v1/schedules/" + urllib.parse.quote(schedule_id, safe="")

    def recur(self, schedule_id, **fields):
        """Sets a recurring schedule through PUT /v1/schedules/{id}. Its occurrences start in 2030 unless
        told: none comes due while the tests run, and its next ones are the same whenever they run."""
        body = {"cron": "0 6 * * *", "tz": "Europe/Paris", "start": "2030-01-01T00:00:00Z"}
        body.update(fields)
        self.api(self.schedule_path(schedule_id), WRITE_TOKEN, "PUT", body, expect=201)

    def open_schedule(self, schedule_id):
        wait_for(lambda: self.visible("schedule-state") and
                 self.driver.find_element(By.ID, "schedule-title").text == "Schedule " + schedule_id,
                 "the page of schedule " + schedule_id)

    def shown_occurrences(self):
        """The occurrences the schedule's page shows: (in its zone, UTC, the browser's time) per row."""
        return [tuple(row.find_element(By.CSS_SELECTOR, '[data-testid="%s"]' % cell).text
                      for cell in ("occurrence-zone", "occurrence-utc", "occurrence-local"))
                for row in self.all_visible("occurrence-row")]

    @staticmethod
    def expected_occurrences(occurrences):
        """The API's occurrences as the page shows them (in the zone and UTC; ISO-8601 without .000)."""
        return [(o["local"].replace(".000", ""), o["utc"].replace(".000Z", "Z")) for o in occurrences]

    @contextlib.contextmanager
    def phone(self):
        """A 390x844 phone screen for the duration of the block."""
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                    {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True})
        try:
            yield
        finally:
            self.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})

    def wait_until(self, probe, ok, what, timeout=PHONE_TIMEOUT):
        """Polls probe() until ok(its value) and returns that value; a timeout reports the last one."""
        seen = []

        def check():
            seen[:] = [probe()]
            return ok(seen[0])
        try:
            wait_for(check, what, timeout)
        except AssertionError as e:
            raise AssertionError("%s; last seen: %r" % (e, seen[0] if seen else None)) from None
        return seen[0]

    # ---- the tests of issue 35 ----------------------------------------------------------------

    def test_sign_in(self):
        self.sign_in(ADMIN_TOKEN)
        wait_for(lambda: self.find("token-scope").text == "token scope: admin", "the admin scope to show")
        self.find("pending-count")
        self.assertIsNone(self.visible("login-token"))
        token = self.driver.execute_script("return sessionStorage.getItem('expiry-console-token')")
        self.assertEqual(token, ADMIN_TOKEN)
        self.assertEqual(self.driver.get_cookies(), [])

    def test_pending_count_matches_ctl_stats(self):
        for i in range(7):
            self.schedule("count:%d" % i)
        self.sign_in(READ_TOKEN)
        # The overview refreshes itself: the count follows without a reload.
        for _ in range(2):
            pending = json.loads(self.stack.ctl("stats", "--json"))["pending"]
            wait_for(lambda: self.find("pending-count").text == "{:,}".format(pending),
                     "pending-count to read %d (expiry-ctl stats)" % pending)
            self.schedule("count:extra")

    def test_search_finds_a_task_by_prefix(self):
        for task_id in ("search:alpha:1", "search:alpha:2", "search:beta:1"):
            self.schedule(task_id)
        self.sign_in(READ_TOKEN, "#/tasks")
        box = self.find("task-search")
        box.clear()
        box.send_keys("search:alpha:")
        box.send_keys(Keys.ENTER)
        rows = wait_for(lambda: len(self.all_visible("task-row")) == 2 and self.all_visible("task-row"),
                        "two rows for prefix search:alpha:")
        ids = sorted(r.find_element(By.CSS_SELECTOR, '[data-testid="task-link"]').text for r in rows)
        self.assertEqual(ids, ["search:alpha:1", "search:alpha:2"])
        first = rows[0].find_element(By.CSS_SELECTOR, '[data-testid="task-link"]')
        first_id = first.text
        first.click()
        # The page of that very task, not any page that shows a state.
        wait_for(lambda: self.visible("task-state") and
                 self.driver.find_element(By.ID, "task-title").text == "Task " + first_id,
                 "the page of task " + first_id)
        self.assertEqual(self.find("task-state").text, "pending")
        self.assertIn('"order": 42', self.find("payload").text)  # pretty JSON

    def test_cancel_removes_the_task_from_redis(self):
        self.schedule("cancel:me")
        self.assertNotEqual(self.stack.redis("ZSCORE", "expiry:{0}:schedule", "cancel:me"), "(nil)")
        self.sign_in(WRITE_TOKEN)
        self.open_task("cancel:me")
        self.find("task-cancel").click()
        self.confirm()
        wait_for(lambda: self.stack.redis("ZSCORE", "expiry:{0}:schedule", "cancel:me") == "(nil)",
                 "cancel:me to leave the schedule")
        self.assertEqual(self.stack.redis("EXISTS", "expiry:{0}:task:cancel:me"), "(integer) 0")
        wait_for(lambda: self.find("task-state").text == "unknown", "the page to show the task gone")

    def test_cancel_can_be_called_off(self):
        self.schedule("cancel:not")
        self.sign_in(WRITE_TOKEN)
        self.open_task("cancel:not")
        self.find("task-cancel").click()
        self.find("confirm-cancel").click()
        self.assertNotEqual(self.stack.redis("ZSCORE", "expiry:{0}:schedule", "cancel:not"), "(nil)")

    def test_run_now_puts_an_entry_in_the_stream(self):
        self.schedule("run:now", delay_ms=86_400_000)
        self.sign_in(WRITE_TOKEN)
        self.open_task("run:now")
        self.find("task-run-now").click()
        self.confirm()
        wait_for(lambda: "run:now" in self.stack.redis_raw("XRANGE", "expiry:stream", "-", "+"),
                 "the relay to forward run:now to expiry:stream")
        self.go("#/tasks")
        self.open_task("run:now")
        wait_for(lambda: self.find("task-state").text == "fired", "the page to show run:now fired")
        self.assertTrue(self.find("fired-entry").text)

    def test_a_dead_letter_is_replayed(self):
        # A task with a lateness limit of 1 ms comes due while forwarding is paused: at the resume
        # the relay dead-letters it (reason late) instead of forwarding it.
        self.stack.ctl("pause")
        out = self.stack.ctl("schedule", "dead:one", "--delay-ms", "20", "--max-late-ms", "1", "--payload", "late")
        due_ms = int(out.split("due_ms=")[1].split()[0])
        wait_for(lambda: self.stack.redis_now_ms() > due_ms + 20, "dead:one to be overdue")
        self.stack.ctl("resume")
        wait_for(lambda: "dead:one" in self.stack.redis_raw("XRANGE", "expiry:stream:dead", "-", "+"),
                 "the relay to dead-letter dead:one")
        self.sign_in(ADMIN_TOKEN, "#/dead")
        row = wait_for(lambda: [r for r in self.all_visible("dead-row") if "dead:one" in r.text],
                       "the dead letter of dead:one to be listed")[0]
        row.find_element(By.CSS_SELECTOR, '[data-testid="dead-replay"]').click()
        self.confirm()
        wait_for(lambda: "dead:one" not in self.stack.redis_raw("XRANGE", "expiry:stream:dead", "-", "+"),
                 "the dead letter to leave expiry:stream:dead")
        # Replayed: scheduled again, due now (the relay forwards it, or it is still pending).
        wait_for(lambda: "dead:one" in self.stack.redis_raw("XRANGE", "expiry:stream", "-", "+") or
                 self.stack.redis("ZSCORE", "expiry:{0}:schedule", "dead:one") != "(nil)",
                 "dead:one to be scheduled again")
        wait_for(lambda: not [r for r in self.all_visible("dead-row") if "dead:one" in r.text],
                 "the list to drop the replayed entry")

    def test_a_read_only_token_shows_no_action_controls(self):
        self.schedule("readonly:task")
        self.stack.redis("XADD", "expiry:stream:dead", "*", "id", "readonly:dead", "reason", "handler-failed",
                         "deliveries", "3")
        self.sign_in(READ_TOKEN)
        self.open_task("readonly:task")
        self.assertEqual(self.find("task-state").text, "pending")
        for testid in ("task-cancel", "task-run-now", "task-reschedule", "task-plus-5min"):
            self.assertEqual(self.driver.find_elements(By.CSS_SELECTOR, '[data-testid="%s"]' % testid), [], testid)
        self.go("#/dead")
        wait_for(lambda: self.all_visible("dead-row"), "the dead letters to be listed")
        self.assertEqual(self.all_visible("dead-replay"), [])
        self.assertEqual(self.all_visible("dead-replay-selected"), [])
        self.assertEqual(self.all_visible("dead-select"), [])
        self.assertFalse(self.driver.find_element(By.ID, "nav-pause").is_displayed())
        # The server refuses whatever the page does.
        status, _, _ = self.stack.http("/v1/tasks/readonly:task", READ_TOKEN, "DELETE")
        self.assertEqual(status, 403)

    def test_a_bad_token_shows_a_clear_error(self):
        self.driver.get(self.stack.url)
        self.driver.execute_script("sessionStorage.clear()")
        self.driver.refresh()
        box = self.find("login-token")
        box.clear()
        box.send_keys("not-a-token-of-this-server")
        self.find("login-submit").click()
        error = self.find("login-error")
        self.assertIn("refused", error.text)
        self.assertIn("not known", error.text)
        self.assertIsNone(self.driver.execute_script("return sessionStorage.getItem('expiry-console-token')"))
        self.assertIsNone(self.visible("pending-count"))

    # ---- the other actions: purge, reschedule, pause and resume ------------------------------

    def test_purge_needs_the_typed_confirmation(self):
        for n in range(2):
            self.stack.redis("XADD", "expiry:stream:dead", "*", "id", "purge:%d" % n, "reason", "purge-me")
        self.sign_in(ADMIN_TOKEN, "#/dead")
        wait_for(lambda: [r for r in self.all_visible("dead-row") if "purge:1" in r.text], "the entries listed")
        reason = self.find("dead-reason")
        reason.find_element(By.CSS_SELECTOR, 'option[value="purge-me"]').click()  # filter by reason
        rows = wait_for(lambda: len(self.all_visible("dead-row")) == 2 and self.all_visible("dead-row"),
                        "the two purge-me entries alone")
        for row in rows:
            row.find_element(By.CSS_SELECTOR, '[data-testid="dead-select"]').click()
        self.find("dead-purge-selected").click()
        ok = self.find("confirm")
        self.assertFalse(ok.is_enabled())
        self.find("confirm-input").send_keys("purge 1")
        self.assertFalse(ok.is_enabled())
        self.find("confirm-input").send_keys(Keys.BACKSPACE + "2")
        self.assertTrue(ok.is_enabled())
        self.confirm()
        wait_for(lambda: "purge:" not in self.stack.redis_raw("XRANGE", "expiry:stream:dead", "-", "+"),
                 "the purged entries to leave the dead stream")

    def test_reschedule_in_5_minutes(self):
        self.schedule("later:one", delay_ms=86_400_000)
        self.sign_in(WRITE_TOKEN)
        self.open_task("later:one")
        before = self.stack.redis_now_ms()
        self.find("task-plus-5min").click()
        self.confirm()
        due = wait_for(lambda: float(self.stack.redis_raw("ZSCORE", "expiry:{0}:schedule", "later:one")) <
                       before + 3_600_000 and float(self.stack.redis_raw("ZSCORE", "expiry:{0}:schedule", "later:one")),
                       "later:one to be due in 5 minutes")
        self.assertGreaterEqual(due, before + 300_000)
        self.assertLess(due, before + 330_000)

    def test_pause_and_resume_for_admins(self):
        self.sign_in(ADMIN_TOKEN, "#/pause")
        self.find("pause").click()
        self.confirm()
        wait_for(lambda: self.stack.redis("EXISTS", "expiry:{0}:paused") == "(integer) 1", "the bucket paused")
        wait_for(lambda: "1 of 1" in self.find("pause-state").text, "the page to show the pause")
        self.find("resume").click()
        self.confirm()
        wait_for(lambda: self.stack.redis("EXISTS", "expiry:{0}:paused") == "(integer) 0", "the bucket resumed")
        # A write token has no pause view, and the server refuses it.
        self.sign_in(WRITE_TOKEN, "#/pause")
        self.assertFalse(self.driver.find_element(By.ID, "nav-pause").is_displayed())
        self.assertIsNone(self.visible("pause"))
        self.assertEqual(self.stack.http("/v1/pause", WRITE_TOKEN, "POST")[0], 403)

    # ---- issue 44: a recurring schedule shown as itself ----------------------------------------

    def test_a_schedule_opens_as_itself_with_its_rule_zone_and_next_occurrences(self):
        self.recur("report:paris", payload='{"report": "daily"}', misfire="skip")
        self.sign_in(READ_TOKEN)
        # The overview lists it, linked to its schedule's page, not to the task page.
        link = wait_for(lambda: next((e for e in self.all_visible("schedule-link") if e.text == "report:paris"), None),
                        "report:paris to be listed on the overview")
        self.assertTrue(link.get_attribute("href").endswith("#/schedule/report%3Aparis"), link.get_attribute("href"))
        link.click()
        self.open_schedule("report:paris")
        stored = self.api(self.schedule_path("report:paris"))
        self.assertEqual(self.find("schedule-state").text, "active")
        self.assertEqual(self.find("schedule-rule").text, stored["rule"])
        self.assertEqual(self.find("schedule-rule").text, "0 6 * * *")
        self.assertEqual(self.find("schedule-tz").text, "Europe/Paris")
        self.assertIn("skip", self.find("schedule-misfire").text)
        self.assertIn('"report": "daily"', self.find("schedule-payload").text)  # pretty JSON
        # The next occurrences, as the API computes them, in the zone, in UTC and in the browser's zone.
        shown = wait_for(lambda: len(self.shown_occurrences()) == 5 and self.shown_occurrences(),
                         "the next 5 occurrences to show")
        self.assertEqual([row[:2] for row in shown], self.expected_occurrences(stored["next"]))
        self.assertEqual(shown[0][:2], ("2030-01-01T06:00:00+01:00", "2030-01-01T05:00:00Z"))
        self.assertTrue(all(row[2] for row in shown))
        # More, through the preview route.
        self.find("schedule-more").click()
        preview = self.api(self.schedule_path("report:paris") + "/preview?count=25")["occurrences"]
        shown = wait_for(lambda: len(self.shown_occurrences()) == 25 and self.shown_occurrences(),
                         "the next 25 occurrences to show")
        self.assertEqual([row[:2] for row in shown], self.expected_occurrences(preview))
        # A read token has no action on it, and the server refuses it one.
        for testid in ("schedule-pause", "schedule-resume", "schedule-delete"):
            self.assertEqual(self.driver.find_elements(By.CSS_SELECTOR, '[data-testid="%s"]' % testid), [], testid)
        self.assertEqual(self.stack.http(self.schedule_path("report:paris") + "/pause", READ_TOKEN, "POST")[0], 403)
        # Its armed occurrence is a task whose page links back to the schedule.
        self.find("schedule-armed").click()
        self.open_task("report:paris")
        self.find("task-schedule").click()
        self.open_schedule("report:paris")
        # The schedules view lists it too.
        self.go("#/schedules")
        wait_for(lambda: next((e for e in self.all_visible("schedule-link") if e.text == "report:paris"), None),
                 "report:paris to be listed under Schedules").click()
        self.open_schedule("report:paris")

    def test_a_schedule_is_paused_resumed_and_deleted_from_its_page(self):
        self.recur("poll:hourly", cron="0 * * * *", tz="UTC")
        path = self.schedule_path("poll:hourly")
        self.sign_in(WRITE_TOKEN, "#/schedule/poll%3Ahourly")
        self.open_schedule("poll:hourly")
        self.assertIsNone(self.visible("schedule-resume"))
        self.find("schedule-pause").click()
        self.confirm()
        wait_for(lambda: self.api(path)["paused"], "GET %s to say paused" % path)
        self.assertIsNone(self.api(path)["armed_ms"])
        wait_for(lambda: self.find("schedule-state").text == "paused" and self.visible("no-occurrences"),
                 "the page to show the schedule paused, with no next occurrence")
        self.assertIsNone(self.visible("schedule-pause"))
        self.find("schedule-resume").click()
        self.confirm()
        wait_for(lambda: not self.api(path)["paused"], "GET %s to say not paused" % path)
        wait_for(lambda: self.find("schedule-state").text == "active" and len(self.shown_occurrences()) == 5,
                 "the page to show the schedule active again, with its next occurrences")
        self.assertEqual([row[:2] for row in self.shown_occurrences()],
                         self.expected_occurrences(self.api(path)["next"]))
        # Delete asks first; called off, the schedule stays.
        self.find("schedule-delete").click()
        self.find("confirm-cancel").click()
        wait_for(lambda: not self.driver.find_element(By.ID, "confirm-dialog").is_displayed(), "the dialog to close")
        self.assertFalse(self.api(path)["paused"])
        self.find("schedule-delete").click()
        self.confirm()
        wait_for(lambda: self.stack.http(path, READ_TOKEN)[0] == 404, "GET %s to answer 404" % path)
        self.find("schedule-missing")
        self.assertEqual(self.stack.redis("ZSCORE", "expiry:{0}:schedule", "poll:hourly"), "(nil)")

    def test_a_retried_occurrence_links_to_its_schedule(self):
        # A retry of an occurrence is a one-off task "<schedule>#<occurrence_ms>" with as_id (what
        # expiry_retry writes for an occurrence whose handler failed; docs/protocol.md).
        self.recur("retry:source")
        task_id = "retry:source#1893474000000"
        self.schedule(task_id)
        self.stack.redis("HSET", "expiry:{0}:task:" + task_id, "as_id", "retry:source", "occurrence_ms",
                         "1893474000000")
        self.sign_in(READ_TOKEN)
        self.open_task(task_id)
        link = self.find("task-schedule")
        self.assertEqual(link.text, "retry:source")
        link.click()
        self.open_schedule("retry:source")

    # ---- issue 44 item 4: the audit trail, for admin tokens -----------------------------------

    # The audit rows shown, read in one go (a re-render cannot leave half a row): per row its entry,
    # UTC time, actor, via, action, target, outcome, whether it is marked failed, and whether the
    # browser's time shows.
    AUDIT_PROBE = """
        return [...document.querySelectorAll('#view-audit:not([hidden]) [data-testid="audit-row"]')].map((row) => {
          const cell = (id) => row.querySelector('[data-testid="' + id + '"]').textContent;
          return [row.dataset.entry, cell('audit-utc'), cell('audit-actor'), cell('audit-via'), cell('audit-action'),
                  cell('audit-target'), cell('audit-outcome'),
                  row.querySelector('[data-testid="audit-failed"]') !== null, cell('audit-local') !== ''];
        });
    """
    PARKED_MS = 2 * 86_400_000  # tasks the audit tests write: due beyond the overview's histograms

    def audit(self, **query):
        """GET /v1/audit?query (percent-encoded) with the admin token: its answer."""
        return self.api("/v1/audit?" + urllib.parse.urlencode(query, quote_via=urllib.parse.quote), ADMIN_TOKEN)

    def task_path(self, task_id):
        return "/v1/tasks/" + urllib.parse.quote(task_id, safe="")

    def put_task(self, token, task_id, expect=201):
        self.api(self.task_path(task_id), token, "PUT", {"delay_ms": self.PARKED_MS, "payload": "audited"}, expect)

    @staticmethod
    def audit_failed(outcome):
        """Whether an outcome is an error: an HTTP status of 400 or more, or an exit code other than 0."""
        status = re.match(r"(\d{3})(:|$)", outcome)
        if status:
            return int(status.group(1)) >= 400
        code = re.match(r"exit (-?\d+)(:|$)", outcome)
        return bool(code) and int(code.group(1)) != 0

    def expected_audit(self, records):
        """GET /v1/audit's records as the page shows them (AUDIT_PROBE's rows): a target or outcome
        longer than 60 characters cut to 59 and an ellipsis (the whole in the cell's title)."""
        def utc(ms):
            text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + ".%03dZ" % (ms % 1000)
            return text.replace(".000Z", "Z")

        def short(text):
            return text if len(text) <= 60 else text[:59] + "\u2026"
        return [[r["entry"], utc(r["time_ms"]), r["actor"], r["via"], r["action"], short(r["target"] or "-"),
                 short(r["outcome"]), self.audit_failed(r["outcome"]), True] for r in records]

    def wait_audit_rows(self, expected, what):
        """Waits for the audit page to show exactly `expected` (expected_audit's rows), in order."""
        return self.wait_until(lambda: self.driver.execute_script(self.AUDIT_PROBE), lambda rows: rows == expected,
                               "the audit page to show " + what)

    def wait_audit_records(self, query, count, what):
        """Waits for GET /v1/audit?query to hold `count` records (a record is written once its request is
        answered, on another connection than the read), and returns its answer."""
        return self.wait_until(lambda: self.audit(**query), lambda page: len(page["records"]) == count,
                               "GET /v1/audit to hold " + what)

    def filter_audit(self, actor="", action="", via="", target="", count=None):
        """Fills the audit page's filter form and submits it."""
        for testid, value in (("audit-filter-actor", actor), ("audit-filter-action", action),
                              ("audit-filter-target", target)):
            box = self.find(testid)
            box.clear()
            box.send_keys(value)
        self.find("audit-filter-via").find_element(By.CSS_SELECTOR, 'option[value="%s"]' % via).click()
        if count:
            self.find("audit-filter-count").find_element(By.CSS_SELECTOR, 'option[value="%d"]' % count).click()
        self.find("audit-submit").click()

    def test_audit_lists_api_writes_newest_first_as_get_v1_audit(self):
        self.put_task(ORDER_TOKEN, "audit:list:1")
        self.put_task(ORDER_TOKEN, "audit:list:2")
        self.put_task(ORDER_TOKEN, "audit:list:1", expect=200)  # replaced
        self.api(self.task_path("audit:list:2"), ORDER_TOKEN, "DELETE", expect=204)
        self.api(self.task_path("audit:list:gone"), ORDER_TOKEN, "DELETE", expect=404)
        mine = self.wait_audit_records({"target": "audit:list:"}, 5, "the 5 writes")["records"]
        self.assertEqual([(r["actor"], r["via"], r["action"], r["target"], r["outcome"].split(":")[0]) for r in mine],
                         [(ORDER_NAME, "api", "DELETE /v1/tasks/{id}", "audit:list:gone", "404"),
                          (ORDER_NAME, "api", "DELETE /v1/tasks/{id}", "audit:list:2", "204"),
                          (ORDER_NAME, "api", "PUT /v1/tasks/{id}", "audit:list:1", "200"),
                          (ORDER_NAME, "api", "PUT /v1/tasks/{id}", "audit:list:2", "201"),
                          (ORDER_NAME, "api", "PUT /v1/tasks/{id}", "audit:list:1", "201")])
        self.sign_in(ADMIN_TOKEN)
        wait_for(lambda: self.find("token-name").text == "signed in as line-3", "the admin token's name to show")
        link = self.find("nav-audit")
        link.click()
        wait_for(lambda: link.get_attribute("aria-current") == "page", "the Audit item to be the current page")
        # The newest page (100) lists them on top, as GET /v1/audit does, the 404 marked an error.
        newest = self.audit(count=100)
        self.assertEqual([r["entry"] for r in newest["records"][:5]], [r["entry"] for r in mine])
        rows = self.wait_audit_rows(self.expected_audit(newest["records"]), "the newest records")
        self.assertEqual([row[7] for row in rows[:5]], [True, False, False, False, False])
        self.assertTrue(rows[0][6].startswith("404: "), rows[0])
        self.assertEqual(self.driver.find_element(By.ID, "audit-title").text, "Audit trail")
        if newest["next_before"] is None:
            self.assertIsNone(self.visible("audit-older"))
        else:
            self.find("audit-older")

    def test_audit_filters_by_actor_and_action(self):
        self.put_task(BILLING_TOKEN, "audit:filter:b1")
        self.api(self.task_path("audit:filter:b1") + "/run-now", BILLING_TOKEN, "POST")
        self.put_task(ORDER_TOKEN, "audit:filter:o1")
        self.api(self.task_path("audit:filter:o1"), ORDER_TOKEN, "DELETE", expect=204)
        self.wait_audit_records({"target": "audit:filter:"}, 4, "the 4 writes")
        self.sign_in(ADMIN_TOKEN, "#/audit")
        wait_for(lambda: self.all_visible("audit-row"), "the audit trail to be listed")
        # By actor (exact): only billing-service's records, its two newest ones on top.
        self.filter_audit(actor=BILLING_NAME)
        billing = self.audit(actor=BILLING_NAME)["records"]
        rows = self.wait_audit_rows(self.expected_audit(billing), "billing-service's records alone")
        self.assertEqual({row[2] for row in rows}, {BILLING_NAME})
        self.assertEqual([(row[4], row[5]) for row in rows[:2]],
                         [("POST /v1/tasks/{id}/run-now", "audit:filter:b1"),
                          ("PUT /v1/tasks/{id}", "audit:filter:b1")])
        # By action (a substring), sent percent-encoded: spaces, slashes and braces.
        self.filter_audit(action="DELETE /v1/tasks/{id}")
        deletes = self.audit(action="DELETE /v1/tasks/{id}")["records"]
        rows = self.wait_audit_rows(self.expected_audit(deletes), "the DELETE records alone")
        self.assertTrue(all(row[4] == "DELETE /v1/tasks/{id}" for row in rows), rows)
        self.assertIn((ORDER_NAME, "audit:filter:o1"), [(row[2], row[5]) for row in rows])
        self.assertNotIn(BILLING_NAME, [row[2] for row in rows])
        # Both, and the target: the one record.
        self.filter_audit(actor=ORDER_NAME, action="DELETE", via="api", target="audit:filter:")
        rows = self.wait_audit_rows(self.expected_audit(
            self.audit(actor=ORDER_NAME, action="DELETE", via="api", target="audit:filter:")["records"]),
            "order-service's DELETE of audit:filter:o1 alone")
        self.assertEqual([(row[2], row[3], row[5], row[6]) for row in rows],
                         [(ORDER_NAME, "api", "audit:filter:o1", "204")])
        # Nothing of these went through expiry-ctl.
        self.filter_audit(via="cli", target="audit:filter:")
        wait_for(lambda: self.visible("no-audit"), "the page to say no record matches")
        self.assertEqual(self.driver.execute_script(self.AUDIT_PROBE), [])
        # The filters stay applied when the page is left and opened again.
        self.go("#/overview")
        self.find("pending-count")
        self.go("#/audit")
        wait_for(lambda: self.visible("no-audit"), "the filtered page again")
        self.assertEqual(self.find("audit-filter-target").get_attribute("value"), "audit:filter:")

    def test_audit_pages_to_older_records_and_back_to_the_newest(self):
        for n in range(25):
            self.put_task(ORDER_TOKEN, "audit:page:%02d" % n)
        self.wait_audit_records({"target": "audit:page:"}, 25, "the 25 writes")
        first = self.audit(target="audit:page:", count=20)
        second = self.audit(target="audit:page:", count=20, before=first["next_before"])
        self.assertEqual([r["target"] for r in first["records"]], ["audit:page:%02d" % n for n in range(24, 4, -1)])
        self.assertEqual([r["target"] for r in second["records"]], ["audit:page:%02d" % n for n in range(4, -1, -1)])
        self.assertIsNone(second["next_before"])
        self.sign_in(ADMIN_TOKEN, "#/audit")
        self.filter_audit(target="audit:page:", count=20)
        self.wait_audit_rows(self.expected_audit(first["records"]), "the newest 20 of audit:page:")
        self.assertIsNone(self.visible("audit-newest"))
        self.find("audit-older").click()
        self.wait_audit_rows(self.expected_audit(second["records"]), "the 5 older ones")
        self.assertIn("older than entry " + first["next_before"], self.find("audit-position").text)
        self.assertIsNone(self.visible("audit-older"))  # the oldest page
        self.find("audit-newest").click()
        self.wait_audit_rows(self.expected_audit(first["records"]), "the newest 20 again")
        self.find("audit-older")
        # At phone width the table scrolls in its own box; the page does not scroll sideways.
        with self.phone():
            self.assert_fits('[data-testid="audit-target"]', "audit:page:24", "#/audit")

    def test_audit_needs_an_admin_token(self):
        # A read token (unnamed: named after its line) and a write token (named), the page reached
        # from the menu's absence by a link, and opened afresh at #/audit.
        for token, name, reload in ((READ_TOKEN, "line-1", False), (ORDER_TOKEN, ORDER_NAME, True)):
            self.sign_in(token, "#/audit" if reload else "#/overview")
            wait_for(lambda: self.find("token-name").text == "signed in as " + name, "the token's name to show")
            self.assertFalse(self.driver.find_element(By.ID, "nav-audit").is_displayed())
            if not reload:
                self.go("#/audit")
            message = self.find("audit-needs-admin").text
            self.assertIn("needs an admin token", message)
            for testid in ("audit-filter-actor", "audit-submit", "audit-row", "audit-older"):
                self.assertIsNone(self.visible(testid), testid)
            self.assertEqual(self.stack.http("/v1/audit", token)[0], 403)
        # An unnamed token says so where its name shows.
        self.sign_in(READ_TOKEN)
        self.assertIn("no name=", self.find("token-name").get_attribute("title"))

    def test_audit_shows_a_hostile_target_as_text(self):
        hostile = '<img src=x onerror="window.pwned=1">'
        task_id = "xss-audit:" + hostile
        self.put_task(ORDER_TOKEN, task_id)
        records = self.wait_audit_records({"target": hostile}, 1, "the hostile PUT")["records"]
        self.assertEqual(records[0]["target"], task_id)
        self.sign_in(ADMIN_TOKEN, "#/audit")
        # The markup as a filter too: percent-encoded, it finds the record.
        self.filter_audit(target=hostile)
        rows = self.wait_audit_rows(self.expected_audit(records), "the hostile record alone")
        self.assertEqual(rows[0][5], task_id)
        self.assertEqual(self.driver.find_elements(By.CSS_SELECTOR, "#main img"), [])
        self.assertIsNone(self.driver.execute_script("return window.pwned"))

    # ---- beyond the list: the page's own safety ---------------------------------------------

    def test_the_page_is_served_with_a_strict_policy_and_escapes_data(self):
        status, headers, body = self.stack.http("/")
        self.assertEqual(status, 200)
        policy = headers.get("Content-Security-Policy", "")
        self.assertIn("script-src 'self'", policy)
        self.assertIn("frame-ancestors 'none'", policy)
        self.assertNotIn("unsafe-inline", policy)
        self.assertEqual(headers.get("X-Content-Type-Options"), "nosniff")
        self.assertNotIn("<script>", body)  # scripts are files only
        # A task whose id and payload are markup is shown as text.
        hostile = '<img src=x onerror="window.pwned=1">'
        self.stack.ctl("schedule", "xss:" + hostile, "--delay-ms", "3600000", "--payload", hostile)
        self.sign_in(READ_TOKEN, "#/tasks")
        box = self.find("task-search")
        box.send_keys("xss:")
        box.send_keys(Keys.ENTER)
        # The searched task's own link: a link of the listing shown before the search (the first
        # listing, of every task) may still be visible for a moment.
        link = wait_for(lambda: next((e for e in self.all_visible("task-link") if e.text == "xss:" + hostile), None),
                        "the hostile task to be listed")
        link.click()
        wait_for(lambda: self.visible("payload") and self.visible("payload").text == hostile,
                 "the hostile task's payload to show as text")
        self.assertEqual(self.driver.find_elements(By.CSS_SELECTOR, "#main img"), [])
        self.assertIsNone(self.driver.execute_script("return window.pwned"))
        # So is a schedule's, listed and on its own page, and the task page's link to it.
        recur_id = "xss-recur:" + hostile
        self.recur(recur_id, payload=hostile)
        self.go("#/schedules")
        wait_for(lambda: next((e for e in self.all_visible("schedule-link") if e.text == recur_id), None),
                 "the hostile schedule to be listed").click()
        self.open_schedule(recur_id)
        wait_for(lambda: self.visible("schedule-payload") and self.visible("schedule-payload").text == hostile,
                 "the hostile schedule's payload to show as text")
        self.find("schedule-armed").click()
        self.open_task(recur_id)
        self.assertEqual(self.find("task-schedule").text, recur_id)
        self.assertEqual(self.find("payload").text, hostile)
        self.assertEqual(self.driver.find_elements(By.CSS_SELECTOR, "#main img"), [])
        self.assertIsNone(self.driver.execute_script("return window.pwned"))

    def test_zz_screenshots(self):
        if not SCREENSHOTS:
            self.skipTest("screenshots only with --screenshots DIR")
        for i, delay in enumerate((20_000, 40_000, 45_000, 200_000, 900_000, 1_500_000, 2_400_000, 7_200_000,
                                   18_000_000, 40_000_000, 70_000_000)):
            self.schedule("order:%d:payment-timeout" % (1000 + i), delay_ms=delay,
                          payload='{"order_id": %d, "action": "cancel-if-unpaid"}' % (1000 + i))
        self.stack.ctl("recur", "set", "report:daily", "--cron", "0 6 * * *", "--tz", "Europe/Paris",
                       "--payload", "{}")
        self.stack.ctl("schedule", "order:1003:payment-timeout", "--delay-ms", "1500000", "--max-late-ms", "60000",
                       "--traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                       "--payload", '{"order_id": 1003, "action": "cancel-if-unpaid", "amount": {"eur": 42.5}}')
        for n, reason in enumerate(("handler-failed", "handler-failed", "late")):
            self.stack.redis("XADD", "expiry:stream:dead", "*", "id", "order:%d:payment-timeout" % (900 + n),
                             "reason", reason, "deliveries", "5")
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                    {"width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": False})
        self.sign_in(ADMIN_TOKEN)
        wait_for(lambda: self.all_visible("recurring-row"), "the recurring schedule to show")
        self.driver.save_screenshot(os.path.join(SCREENSHOTS, "console-overview.png"))
        self.open_task("order:1003:payment-timeout")
        self.find("payload")
        self.driver.save_screenshot(os.path.join(SCREENSHOTS, "console-task.png"))
        self.go("#/schedule/report:daily")
        self.open_schedule("report:daily")
        self.find("occurrences")
        self.driver.save_screenshot(os.path.join(SCREENSHOTS, "console-schedule.png"))
        self.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})

    def test_readable_at_phone_width(self):
        self.schedule("phone:task")
        self.recur("phone:recur")
        with self.phone():
            self.sign_in(WRITE_TOKEN)
            # Nothing wider than the screen: the page never scrolls sideways (tables scroll inside
            # their own box). Each view is checked once its own content shows.
            for where, selector, needle in (("#/overview", '[data-testid="pending-count"]', ""),
                                            ("#/task/phone:task", '#view-task [data-testid="task-state"]', "pending"),
                                            ("#/schedule/phone:recur", '[data-testid="occurrence-zone"]', "2030"),
                                            ("#/dead", '#dead-list table, [data-testid="no-dead"]', "")):
                self.go(where)
                self.assert_fits(selector, needle, where)

    # ---- issue 43 item 8: layout and links at phone width -------------------------------------

    # In the view shown: whether an element matching `selector` holds `needle` (in its text or
    # title), the page's and the viewport's widths, and what sticks out past the viewport.
    WIDTH_PROBE = """
        const [selector, needle] = arguments;
        const shown = [...document.querySelectorAll(selector)].some((e) => e.getClientRects().length > 0 &&
            !e.closest('[hidden]') && ((e.textContent || '').includes(needle) || (e.title || '').includes(needle)));
        const wide = [...document.querySelectorAll('body *')]
            .filter((e) => e.getClientRects().length > 0 && e.getBoundingClientRect().right > window.innerWidth + 1)
            .slice(0, 5).map((e) => e.tagName + (e.id ? '#' + e.id : '') + '.' + e.className + ' ' +
                Math.round(e.getBoundingClientRect().right));
        return {shown: shown, scrollWidth: document.documentElement.scrollWidth,
                innerWidth: window.innerWidth, wide: wide};
    """

    def assert_fits(self, selector, needle, where):
        """Waits for `needle` to show in `selector`, then asserts the page is no wider than the screen."""
        seen = self.wait_until(lambda: self.driver.execute_script(self.WIDTH_PROBE, selector, needle),
                               lambda s: s["shown"], "%r in %s to show at %s" % (needle[:40], selector, where))
        self.assertEqual(seen["innerWidth"], 390, "the viewport grew to fit the page at " + where)
        self.assertLessEqual(seen["scrollWidth"], seen["innerWidth"], "sideways scroll at %s: %r" % (where, seen))

    def test_phone_width_a_long_reason_wraps(self):
        # A webhook's refusal: "http 502: " and the first 200 bytes of the body, no space in them.
        body = '{"error":"upstream_unavailable","trace":"' + "0123456789abcdef" * 12 + '"}'
        reason = "http 502: " + body
        self.assertGreaterEqual(len(body), 200)
        self.assertNotIn(" ", body)
        self.stack.redis("XADD", "expiry:stream:dead", "*", "id", "phone:dead", "reason", reason, "deliveries", "5")
        needle = reason[:40]
        with self.phone():
            self.sign_in(ADMIN_TOKEN)
            self.assert_fits("#dead-reasons td", needle, "the overview")
            self.go("#/dead")
            self.assert_fits("#dead-list td", needle, "the dead letters")
            row = wait_for(lambda: [r for r in self.all_visible("dead-row") if "phone:dead" in r.text],
                           "the dead letter of phone:dead to be listed", PHONE_TIMEOUT)[0]
            row.find_element(By.CSS_SELECTOR, "button.link").click()
            self.assert_fits('[data-testid="dead-open"] dd', reason, "the opened dead letter")
            self.go("#/task/phone:dead")
            self.assert_fits('#view-task [data-testid="dead-reason-text"]', reason, "the task's page")

    # Per histogram: every bar's count (from its tooltip), height and label, and every axis label,
    # each label with whether it lies wholly inside the drawing (its viewBox clips the rest) and,
    # where it overlaps its bar, in another colour than the bar.
    TIMELINE_PROBE = """
        const charts = [];
        for (const figure of document.querySelectorAll('#view-overview:not([hidden]) figure.chart')) {
          const drawing = figure.querySelector('svg');
          const view = drawing.viewBox.baseVal;
          const inside = (t) => {
            const b = t.getBBox();
            return b.width > 0 && b.height > 0 && b.x >= view.x - 0.5 && b.y >= view.y - 0.5 &&
                b.x + b.width <= view.x + view.width + 0.5 && b.y + b.height <= view.y + view.height + 0.5;
          };
          const bars = [...drawing.querySelectorAll('rect.bar')].map((rect) => {
            const g = rect.parentNode;
            const label = g.querySelector('text');
            const n = Number(g.querySelector('title').textContent.split(' ')[0]);
            let seen = false;
            if (label) {
              const b = label.getBBox();
              const r = rect.getBBox();
              const overlaps = b.x < r.x + r.width && r.x < b.x + b.width &&
                  b.y < r.y + r.height && r.y < b.y + b.height;
              seen = inside(label) && (!overlaps || getComputedStyle(label).fill !== getComputedStyle(rect).fill);
            }
            return {n: n, height: rect.height.baseVal.value, label: label ? label.textContent : null, seen: seen};
          });
          const axis = [...drawing.querySelectorAll('text.axis')].map((t) => ({text: t.textContent, seen: inside(t)}));
          charts.push({chart: figure.dataset.testid, bars: bars, axis: axis});
        }
        return charts;
    """

    def test_phone_width_the_timeline_labels_show_whole(self):
        # 5 tasks due in 22 minutes and 2 in 42: the hour's 5th and 9th bars (5 minutes each),
        # none due while the test runs. Other tests' tasks may make another bar the tallest.
        for i in range(5):
            self.schedule("phone:bar:tall:%d" % i, delay_ms=22 * 60_000)
        for i in range(2):
            self.schedule("phone:bar:low:%d" % i, delay_ms=42 * 60_000)
        with self.phone():
            self.sign_in(READ_TOKEN)
            charts = self.wait_until(
                lambda: self.driver.execute_script(self.TIMELINE_PROBE),
                lambda cs: len(cs) == 3 and [(c["bars"][4]["n"], c["bars"][8]["n"])
                                             for c in cs if c["chart"] == "timeline-hour"] == [(5, 2)],
                "the hour's histogram to hold the tasks due in 22 and 42 minutes")
        for chart in charts:
            drawn = [b for b in chart["bars"] if b["n"] > 0]
            tallest = max(drawn, key=lambda b: b["height"], default=None)
            if tallest:
                self.assertEqual(tallest["n"], max(b["n"] for b in drawn), chart["chart"])
                self.assertEqual(tallest["label"], str(tallest["n"]), "%s: the tallest bar's label" % chart["chart"])
                self.assertTrue(tallest["seen"], "%s: the tallest bar's label is hidden: %r" % (chart["chart"], tallest))
            for bar in drawn:
                self.assertEqual(bar["label"], str(bar["n"]), chart["chart"])
                self.assertTrue(bar["seen"], "%s: a bar's label is clipped or hidden: %r" % (chart["chart"], bar))
            for label in chart["axis"]:
                self.assertTrue(label["seen"], "%s: the axis label %r is clipped" % (chart["chart"], label["text"]))
        minute = next(c for c in charts if c["chart"] == "timeline-minute")
        self.assertIn({"text": "+1 min", "seen": True}, minute["axis"])
        hour = next(c for c in charts if c["chart"] == "timeline-hour")
        self.assertEqual([(b["label"], b["seen"]) for b in (hour["bars"][4], hour["bars"][8])],
                         [("5", True), ("2", True)])

    def test_phone_width_a_malformed_link_is_refused_clearly(self):
        with self.phone():
            self.sign_in(READ_TOKEN)
            # Followed from the page (a hash change), then opened afresh (a page load).
            for hash_path, reload in (("#/task/%zz", False), ("#/task/%E0%A4%A", True)):
                if reload:
                    self.driver.get(self.stack.url + hash_path)
                    self.driver.refresh()
                else:
                    self.go(hash_path)
                message = self.wait_until(lambda: (lambda e: e.text if e else "")(self.visible("bad-link")),
                                          lambda text: hash_path in text,
                                          "the page to call %s not a valid link" % hash_path)
                self.assertIn("not a valid link", message.lower())
                self.assertEqual(self.driver.find_element(By.ID, "task-title").text, "Not a valid link")
                self.assertEqual(self.severe_errors(), [], "the browser logged errors at " + hash_path)
                self.assertLessEqual(self.driver.execute_script(
                    "return document.documentElement.scrollWidth - window.innerWidth"), 0)

    def test_keyboard_only(self):
        # Sign in, search and act without a mouse: Tab reaches every control, Enter activates it.
        self.schedule("keys:one")
        self.driver.get(self.stack.url)
        self.driver.execute_script("sessionStorage.clear()")
        self.driver.refresh()
        self.find("login-token").send_keys(WRITE_TOKEN + Keys.ENTER)
        self.find("pending-count")
        self.go("#/tasks")
        box = self.find("task-search")
        box.send_keys("keys:" + Keys.ENTER)
        wait_for(lambda: len(self.all_visible("task-row")) == 1, "the task listed")
        link = self.find("task-link")
        self.assertTrue(link.get_attribute("href"))
        link.send_keys(Keys.ENTER)
        run_now = self.find("task-run-now")
        run_now.send_keys(Keys.ENTER)
        active = self.driver.switch_to.active_element
        self.assertEqual(active.get_attribute("data-testid"), "confirm-cancel")  # the safe choice has focus
        active.send_keys(Keys.ESCAPE)
        wait_for(lambda: not self.driver.find_element(By.ID, "confirm-dialog").is_displayed(), "Escape to close it")
        self.assertEqual(self.driver.switch_to.active_element.get_attribute("data-testid"), "task-run-now")
        for control in self.driver.find_elements(By.CSS_SELECTOR, "input, select"):
            if control.is_displayed():
                label = self.driver.execute_script(
                    "const e = arguments[0]; return (e.labels && e.labels.length) || e.getAttribute('aria-label');",
                    control)
                self.assertTrue(label, "a control without a label: %s" % control.get_attribute("id"))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    BUILD_DIR = os.path.abspath(sys.argv[1])
    rest = sys.argv[2:]
    if rest[:1] == ["--screenshots"]:
        SCREENSHOTS = os.path.abspath(rest[1])
        rest = rest[2:]
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
