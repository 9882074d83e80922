// The expiry-relay web console (docs/api.md, "Web console"). Plain JavaScript, no library.
// Contracts:
// - Every call goes to the public /v1 API with the token kept in sessionStorage, as
//   Authorization: Bearer; no cookie, so no ambient credential. The server enforces the scopes;
//   the page only leaves out the controls a token's scope (GET /v1/whoami) cannot use.
// - Nothing from the API or the URL is parsed as HTML: text goes in with textContent and
//   attributes with setAttribute (the page's Content-Security-Policy allows no inline script).
// - Every action asks for confirmation first (the dialog's button is data-testid="confirm").
'use strict';

const TOKEN_KEY = 'expiry-console-token';
const REFRESH_MS = 5000;
const SCOPES = ['read', 'write', 'admin'];
// Free text in a list (a dead letter's reason: a webhook's answer can put 200 bytes in it) shows
// its first SHORT_TEXT characters, the whole in the element's title and on the dead letter's details.
const SHORT_TEXT = 60;
// The schedules view lists this many (GET /v1/recurring, one read per schedule); a schedule's page
// shows the next 5 occurrences (GET /v1/schedules/{id}), or MORE_OCCURRENCES when asked.
const SCHEDULES_LISTED = 200;
const MORE_OCCURRENCES = 25;
// The audit trail's filters (GET /v1/audit's query parameters of the same names): actor exact,
// action and target substrings, via api or cli.
const AUDIT_FILTERS = ['actor', 'action', 'via', 'target'];

const state = {
  scope: null,            // 'read' | 'write' | 'admin' once signed in
  refreshTimer: null,     // the overview's refresh
  cursor: null,           // the next page of the task search
  search: null,           // {text, mode} of the search shown
  dead: [],               // the dead letters listed
  more: false,            // more dead letters follow those listed
  selected: new Set(),    // dead-letter entries selected
  scheduleLoad: 0,        // counts schedule page loads: only the latest one renders
  audit: null,            // the audit trail's applied filters, page size and page: {actor, ..., count, before}
  auditNext: null,        // the shown audit page's next_before (Older), or null
  auditLoad: 0,           // counts audit page loads: only the latest one renders
};

// ---- DOM helpers: text only, never HTML ------------------------------------------------------

function $(id) { return document.getElementById(id); }

// el('td', {class: 'num', 'data-testid': 'x'}, 'text', childNode, ...)
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'onclick') node.addEventListener('click', value);
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) append(node, child);
  return node;
}

function append(node, child) {
  if (child === undefined || child === null || child === false) return;
  if (Array.isArray(child)) { child.forEach((c) => append(node, c)); return; }
  node.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
}

function replace(container, ...children) {
  container.replaceChildren();
  for (const child of children) append(container, child);
}

function svg(tag, attrs, ...children) {
  const node = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, String(value));
  for (const child of children) append(node, child);
  return node;
}

function table(caption, headers, rows, attrs) {
  return el('table', attrs || {},
    caption ? el('caption', {class: 'sr-only'}, caption) : null,
    el('thead', {}, el('tr', {}, headers.map((h) => el('th', {scope: 'col'}, h)))),
    el('tbody', {}, rows));
}

function showError(text) {
  const box = $('error');
  box.textContent = text;
  box.hidden = !text;
}

function showNotice(text) {
  const box = $('notice');
  box.textContent = text;
  box.hidden = !text;
}

// ---- formatting -----------------------------------------------------------------------------

function utc(ms) {
  if (ms === null || ms === undefined) return '-';
  const d = new Date(ms);
  return isNaN(d) ? String(ms) : d.toISOString().replace('.000Z', 'Z');
}

function local(ms) {
  if (ms === null || ms === undefined) return '-';
  const d = new Date(ms);
  return isNaN(d) ? String(ms) : d.toLocaleString(undefined, {timeZoneName: 'short'});
}

function duration(ms) {
  if (ms === null || ms === undefined) return '-';
  const sign = ms < 0 ? '-' : '';
  let s = Math.abs(ms) / 1000;
  if (s < 1) return sign + Math.round(Math.abs(ms)) + ' ms';
  if (s < 60) return sign + s.toFixed(s < 10 ? 1 : 0) + ' s';
  const units = [['d', 86400], ['h', 3600], ['min', 60]];
  const parts = [];
  for (const [name, size] of units) {
    if (s >= size) { parts.push(Math.floor(s / size) + ' ' + name); s %= size; }
    if (parts.length === 2) break;
  }
  return sign + parts.join(' ');
}

function count(n) { return n === null || n === undefined ? 'unknown' : Number(n).toLocaleString(); }

// `text` cut to SHORT_TEXT characters, an ellipsis ending what was cut.
function shorten(text) { return text.length <= SHORT_TEXT ? text : text.slice(0, SHORT_TEXT - 1) + '…'; }

// A table cell of free text, shortened, wrapped anywhere (td.text) rather than widening the page.
function textCell(text, testid) {
  return el('td', {class: 'text', title: text.length > SHORT_TEXT ? text : null, 'data-testid': testid}, shorten(text));
}

// The payload as pretty JSON when it parses, else as it is.
function prettyPayload(text) {
  if (text === null || text === undefined) return '(not UTF-8; see payload_b64)';
  try { return JSON.stringify(JSON.parse(text), null, 2); } catch (e) { return text; }
}

// The trace id of a W3C traceparent ("00-<trace id>-<span id>-<flags>").
function traceId(traceparent) {
  const parts = String(traceparent || '').split('-');
  return parts.length === 4 ? parts[1] : null;
}

// ---- the API ----------------------------------------------------------------------------------

class ApiError extends Error {
  constructor(status, detail) {
    super(detail);
    this.status = status;
  }
}

async function api(method, path, body, token) {
  const headers = {'Authorization': 'Bearer ' + (token || sessionStorage.getItem(TOKEN_KEY) || '')};
  const init = {method, headers, cache: 'no-store', credentials: 'omit'};
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (e) {
    throw new ApiError(0, 'expiry-api cannot be reached (' + e.message + ')');
  }
  const text = await response.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (e) { data = null; }
  if (!response.ok) {
    const detail = data && data.detail ? data.detail : (text || response.statusText);
    const error = new ApiError(response.status, detail);
    if (response.status === 401 && !token) signOut('Signed out: ' + detail + ' (401).');
    throw error;
  }
  return data;
}

function describe(error) {
  if (error instanceof ApiError && error.status) return error.message + ' (HTTP ' + error.status + ')';
  return error.message || String(error);
}

function can(scope) { return SCOPES.indexOf(state.scope) >= SCOPES.indexOf(scope); }

// ---- the confirmation dialog ------------------------------------------------------------------

// Resolves true when the user confirms. With `typed`, the button stays disabled until that
// exact text is typed.
function confirmAction(title, text, typed) {
  const dialog = $('confirm-dialog');
  const ok = $('confirm-ok');
  const input = $('confirm-input');
  $('confirm-title').textContent = title;
  $('confirm-text').textContent = text;
  $('confirm-typed').hidden = !typed;
  input.value = '';
  ok.disabled = Boolean(typed);
  if (typed) $('confirm-input-label').textContent = 'Type "' + typed + '" to confirm';
  const opener = document.activeElement;
  return new Promise((resolve) => {
    const done = (answer) => {
      $('confirm-form').removeEventListener('submit', onSubmit);
      $('confirm-cancel').removeEventListener('click', onCancel);
      input.removeEventListener('input', onInput);
      dialog.removeEventListener('cancel', onCancel);
      dialog.close();
      if (opener && opener.focus && document.contains(opener)) opener.focus();
      resolve(answer);
    };
    const onSubmit = (e) => {
      e.preventDefault();
      if (!ok.disabled) done(true);
    };
    const onCancel = (e) => { e.preventDefault(); done(false); };
    const onInput = () => { ok.disabled = input.value !== typed; };
    $('confirm-form').addEventListener('submit', onSubmit);
    $('confirm-cancel').addEventListener('click', onCancel);
    input.addEventListener('input', onInput);
    dialog.addEventListener('cancel', onCancel);
    dialog.showModal();
    (typed ? input : $('confirm-cancel')).focus();
  });
}

// Confirms, calls, reports; returns the answer or null.
async function act(title, text, call, typed) {
  if (!(await confirmAction(title, text, typed))) return null;
  showError('');
  try {
    const answer = await call();
    return answer === null || answer === undefined ? {} : answer;
  } catch (e) {
    showError(title + ' failed: ' + describe(e));
    return null;
  }
}

// ---- sign-in ----------------------------------------------------------------------------------

async function signIn(event) {
  event.preventDefault();
  const token = $('login-token').value.trim();
  const error = $('login-error');
  error.hidden = true;
  if (!token) {
    error.textContent = 'Paste a token first.';
    error.hidden = false;
    $('login-token').focus();
    return;
  }
  try {
    const who = await api('GET', '/v1/whoami', undefined, token);
    sessionStorage.setItem(TOKEN_KEY, token);
    $('login-token').value = '';
    setWho(who);
    if (!location.hash || location.hash === '#/login') location.hash = '#/overview';
    else route();
  } catch (e) {
    error.textContent = e.status === 401
      ? 'This token was refused: ' + e.message + '. Check it against the tokens file.'
      : 'Cannot sign in: ' + describe(e);
    error.hidden = false;
    $('login-token').focus();
  }
}

// Shows who is signed in (GET /v1/whoami's answer): the token's name and scope, and the menu
// items of its scope.
function setWho(who) {
  state.scope = who.scope;
  const name = $('token-name');
  name.textContent = who.name ? 'signed in as ' + who.name : '';
  name.hidden = !who.name;
  if (who.name && !who.named) {
    name.setAttribute('title', 'Its line of the tokens file has no name=: it is named after the line, ' +
      'as the audit trail records it.');
  } else {
    name.removeAttribute('title');
  }
  $('scope').textContent = 'token scope: ' + who.scope;
  $('who').hidden = false;
  $('nav').hidden = false;
  $('nav-pause').hidden = !can('admin');
  $('nav-audit').hidden = !can('admin');
}

function signOut(message) {
  sessionStorage.removeItem(TOKEN_KEY);
  state.scope = null;
  state.audit = null;
  $('who').hidden = true;
  $('nav').hidden = true;
  stopRefresh();
  showView('login');
  if (message) {
    $('login-error').textContent = message;
    $('login-error').hidden = false;
  }
}

// ---- views and routing ------------------------------------------------------------------------

function showView(name) {
  for (const section of document.querySelectorAll('.view')) section.hidden = section.id !== 'view-' + name;
  for (const link of document.querySelectorAll('#nav a')) {
    if (link.dataset.view === name || link.dataset.view === name + 's') {
      link.setAttribute('aria-current', 'page');
    } else {
      link.removeAttribute('aria-current');
    }
  }
  if (name === 'login') $('login-token').focus();
}

function focusHeading(id) {
  const heading = $(id);
  if (heading && !heading.contains(document.activeElement)) heading.focus({preventScroll: true});
}

// The text of a percent-encoded part of a link, or null when an escape is malformed ("%zz", or
// bytes that are not UTF-8), which decodeURIComponent refuses with a URIError.
function decoded(part) {
  try {
    return decodeURIComponent(part);
  } catch (e) {
    if (e instanceof URIError) return null;
    throw e;
  }
}

// The task or schedule view (`what`), saying the link followed (location.hash) names none.
function showBadLink(what) {
  $(what + '-title').textContent = 'Not a valid link';
  replace($(what + '-body'), el('p', {class: 'error', role: 'alert', 'data-testid': 'bad-link'},
    'Not a valid link: ' + location.hash + ' holds a malformed percent escape (each % must start a %XX escape ' +
    'of UTF-8 text), so it names no ' + what + '. ' + (what === 'task' ? 'Search for the task instead.'
      : 'Find it among the schedules instead.')));
}

function stopRefresh() {
  if (state.refreshTimer) clearTimeout(state.refreshTimer);
  state.refreshTimer = null;
}

async function route() {
  stopRefresh();
  showError('');
  if (!sessionStorage.getItem(TOKEN_KEY)) { showView('login'); return; }
  if (!state.scope) {
    try {
      setWho(await api('GET', '/v1/whoami'));
    } catch (e) {
      if (e.status !== 401) showError(describe(e));
      return;
    }
  }
  const hash = location.hash.replace(/^#\/?/, '');
  const slash = hash.indexOf('/');
  const view = slash < 0 ? hash : hash.slice(0, slash);
  const rest = slash < 0 ? '' : hash.slice(slash + 1);
  if (view === 'tasks') { showView('tasks'); focusHeading('tasks-title'); await showTasks(); }
  else if (view === 'task') {
    showView('task');
    const id = decoded(rest);
    if (id === null) showBadLink('task'); else await showTask(id);
    focusHeading('task-title');
  }
  else if ((view === 'schedule' || view === 'schedules') && rest) {
    showView('schedule');
    const id = decoded(rest);
    if (id === null) showBadLink('schedule'); else await showSchedule(id);
    focusHeading('schedule-title');
  }
  else if (view === 'schedules' || view === 'schedule') {
    showView('schedules'); focusHeading('schedules-title'); await showSchedules();
  }
  else if (view === 'dead') { showView('dead'); focusHeading('dead-title'); await showDead(); }
  else if (view === 'pause' && can('admin')) { showView('pause'); focusHeading('pause-title'); await showPause(); }
  else if (view === 'audit') { showView('audit'); focusHeading('audit-title'); await showAudit(); }
  else { showView('overview'); focusHeading('overview-title'); await refreshOverview(); }
}

// ---- overview ---------------------------------------------------------------------------------

async function refreshOverview() {
  stopRefresh();
  if ($('view-overview').hidden) return;
  try {
    const [overview, timeline, recurring] = await Promise.all([
      api('GET', '/v1/overview'), api('GET', '/v1/timeline'), api('GET', '/v1/recurring?limit=50')]);
    if ($('view-overview').hidden) return;
    renderOverview(overview, timeline, recurring);
    showError('');
  } catch (e) {
    showError('Overview: ' + describe(e));
  }
  if (!$('view-overview').hidden && sessionStorage.getItem(TOKEN_KEY)) {
    state.refreshTimer = setTimeout(refreshOverview, REFRESH_MS);
  }
}

function card(label, value, testid, note) {
  return el('div', {class: 'card'},
    el('div', {class: 'label'}, label),
    el('div', {class: 'value', 'data-testid': testid}, value),
    note ? el('div', {class: 'note'}, note) : null);
}

function renderOverview(o, timeline, recurring) {
  $('overview-updated').textContent = 'Redis time ' + utc(o.now_ms) + ' · refreshes every ' + REFRESH_MS / 1000 + ' s';
  const a = o.activity;
  const consumers = o.groups ? o.groups.reduce((n, g) => n + g.consumer_count, 0) : null;
  replace($('cards'),
    card('Pending', count(o.pending), 'pending-count', o.buckets + (o.buckets === 1 ? ' bucket' : ' buckets')),
    card('Overdue', count(o.overdue), 'overdue-count', 'due, not yet forwarded'),
    card('Next due', o.next_due_ms === null ? 'none' : duration(o.next_due_ms - o.now_ms), 'next-due',
      o.next_due_ms === null ? null : utc(o.next_due_ms)),
    card('Forwarded / s', a ? a.forwarded_per_second.toLocaleString() : 'unknown', 'forwarded-rate',
      a ? 'last ' + a.window_ms / 1000 + ' s' + (a.capped ? ', sampled' : '') : 'streams not readable'),
    card('Lateness p50 / p99', a && a.lateness_p50_ms !== null ? duration(a.lateness_p50_ms) + ' / ' +
      duration(a.lateness_p99_ms) : '-', 'lateness', a ? a.sampled + ' entries' : null),
    card('Dead letters', count(o.dead.total), 'dead-count', null),
    card('Paused buckets', count(o.paused_buckets), 'paused-count', 'of ' + o.buckets),
    card('Relays', o.relays ? count(o.relays.count) : 'unknown', 'relay-count', 'subscribed now'),
    card('Consumers', count(consumers), 'consumer-count',
      o.groups ? o.groups.length + (o.groups.length === 1 ? ' group' : ' groups') : null));

  renderTimeline(timeline);

  const rows = o.per_bucket.filter((b) => o.buckets <= 16 || b.pending > 0 || b.paused).slice(0, 100)
    .map((b) => el('tr', {'data-testid': 'bucket-row'},
      el('td', {class: 'num'}, b.bucket), el('td', {class: 'num'}, count(b.pending)),
      el('td', {class: 'num'}, count(b.overdue)), el('td', {}, b.next_due_ms === null ? '-' : utc(b.next_due_ms)),
      el('td', {}, b.paused === null ? 'unknown' : b.paused
        ? (b.paused_until_ms ? 'until ' + utc(b.paused_until_ms) : 'until resumed') : 'no')));
  replace($('buckets'), rows.length ? table('Pending tasks per bucket',
    ['Bucket', 'Pending', 'Overdue', 'Next due (UTC)', 'Paused'], rows) : el('p', {}, 'No pending tasks.'));

  const reasons = Object.entries(o.dead.by_reason).sort((x, y) => y[1] - x[1]);
  replace($('dead-reasons'), reasons.length
    ? [table('Dead letters per reason', ['Reason', 'Count'], reasons.map(([r, n]) =>
        el('tr', {}, textCell(r || '(none)'), el('td', {class: 'num'}, n)))),
       o.dead.scanned < o.dead.total ? el('p', {class: 'help'}, 'Reasons of the newest ' + o.dead.scanned +
         ' of ' + o.dead.total + '.') : null]
    : el('p', {}, 'No dead letters.'));

  replace($('groups'), o.groups === null ? el('p', {}, 'Unknown: the API\'s Redis user may not run XINFO.')
    : o.groups.length === 0 ? el('p', {}, 'No consumer group yet.')
    : table('Consumer groups', ['Group', 'Pending', 'Lag', 'Consumers'], o.groups.map((g) => el('tr', {},
        el('td', {}, g.name), el('td', {class: 'num'}, count(g.pending)), el('td', {class: 'num'}, count(g.lag)),
        el('td', {}, g.consumers.length ? g.consumers.map((c) => c.name + ' (idle ' + duration(c.idle_ms) + ')')
          .join(', ') : 'none')))));

  replace($('relays'), o.relays === null ? el('p', {}, 'Unknown: the API\'s Redis user may not run PUBSUB.')
    : o.relays.count === 0 ? el('p', {class: 'warn'}, 'No relay is connected: nothing is being forwarded.')
    : el('ul', {}, o.relays.instances.map((name) => el('li', {}, name))));

  replace($('recurring'), recurringTable(recurring));
}

// Three histograms (next minute, hour, day), hand-drawn in SVG, each with a text equivalent.
function renderTimeline(t) {
  const titles = {minute: 'Next minute (5 s bars)', hour: 'Next hour (5 min bars)', day: 'Next day (1 h bars)'};
  // In the drawing's units (font size 10): a count stands 3 above its bar and needs 11 of room
  // (baseline to top of the line), so the tallest bar stops 14 below the top; the bars stand on
  // `base`, the axis labels below it, their baseline clear of the bottom edge. Every label lies
  // inside the viewBox, which clips whatever does not.
  const width = 600;
  const height = 120;
  const gap = 2;
  const top = 14;
  const base = height - 16;
  const charts = t.ranges.map((range) => {
    const max = Math.max(1, ...range.counts);
    const barWidth = width / range.counts.length;
    const total = range.counts.reduce((a, b) => a + b, 0);
    const label = titles[range.name] + ': ' + total + ' tasks due; the busiest bar holds ' + Math.max(...range.counts);
    const bars = range.counts.map((n, i) => {
      const h = n === 0 ? 0 : Math.max(2, Math.round((n / max) * (base - top)));
      const from = t.now_ms + i * range.step_ms;
      const half = String(n).length * 3.5 + 1;  // half a count's width, at most
      const x = Math.min(width - half, Math.max(half, i * barWidth + barWidth / 2));
      return svg('g', {},
        svg('title', {}, n + ' due from ' + local(from) + ' to ' + local(from + range.step_ms)),
        svg('rect', {x: i * barWidth + gap / 2, y: base - h, width: barWidth - gap, height: h, class: 'bar'}),
        n > 0 ? svg('text', {x, y: base - h - 3, class: 'barlabel'}, n) : null);
    });
    // now at the left edge, the middle, the end of the range at the right edge: anchored so
    // that none runs past the drawing.
    const ticks = [[0, 2, 'start'], [Math.floor(range.counts.length / 2), null, 'middle'],
      [range.counts.length, width - 2, 'end']];
    const axis = ticks.map(([i, x, anchor]) =>
      svg('text', {x: x === null ? i * barWidth : x, y: height - 4, 'text-anchor': anchor, class: 'axis'},
        i === 0 ? 'now' : '+' + duration(i * range.step_ms)));
    return el('figure', {class: 'chart', 'data-testid': 'timeline-' + range.name},
      el('figcaption', {}, titles[range.name] + ' · ' + total + ' due'),
      svg('svg', {viewBox: '0 0 ' + width + ' ' + height, role: 'img', 'aria-label': label}, bars, axis));
  });
  replace($('timeline'), charts,
    el('p', {class: 'help'}, count(t.overdue) + ' overdue now; ' + count(t.beyond) + ' due later than ' +
      duration(t.horizon_ms) + ' from now.'));
}

// ---- tasks ------------------------------------------------------------------------------------

async function showTasks() {
  if (!state.search) state.search = {text: '', mode: 'prefix'};
  $('task-search').value = state.search.text;
  $('search-mode').value = state.search.mode;
  state.cursor = null;
  await loadTaskPage(false);
}

async function search(event) {
  event.preventDefault();
  const text = $('task-search').value;
  const mode = $('search-mode').value;
  state.search = {text, mode};
  if (mode === 'exact') {
    if (!text) { showError('Give the exact task id.'); return; }
    location.hash = '#/task/' + encodeURIComponent(text);
    return;
  }
  state.cursor = null;
  await loadTaskPage(false);
}

async function loadTaskPage(more) {
  const params = new URLSearchParams({limit: '50'});
  if (state.search && state.search.text) params.set('prefix', state.search.text);
  if (more && state.cursor) params.set('cursor', state.cursor);
  try {
    const page = await api('GET', '/v1/tasks?' + params.toString());
    const rows = page.tasks.map((t) => el('tr', {'data-testid': 'task-row'},
      el('td', {}, el('a', {href: '#/task/' + encodeURIComponent(t.id), 'data-testid': 'task-link'}, t.id)),
      el('td', {}, utc(t.due_ms)), el('td', {}, local(t.due_ms)), el('td', {class: 'num'}, t.bucket),
      el('td', {}, t.stream), el('td', {class: 'num'}, t.payload_bytes)));
    const container = $('task-results');
    const existing = more ? container.querySelector('tbody') : null;
    if (existing) {
      append(existing, rows);
    } else {
      replace(container, rows.length || page.next_cursor
        ? table('Pending tasks in due order', ['Id', 'Due (UTC)', 'Due (local)', 'Bucket', 'Stream', 'Payload bytes'],
            rows, {'data-testid': 'task-table'})
        : el('p', {'data-testid': 'no-tasks'}, state.search.text
          ? 'No pending task id starts with "' + state.search.text + '".' : 'No pending tasks.'));
    }
    state.cursor = page.next_cursor;
    $('next-page').hidden = !page.next_cursor;
  } catch (e) {
    showError('Tasks: ' + describe(e));
  }
}

function field(label, value, testid) {
  return [el('dt', {}, label), el('dd', {'data-testid': testid}, value === null || value === undefined ? '-' : value)];
}

async function showTask(id) {
  $('task-title').textContent = 'Task ' + id;
  const body = $('task-body');
  replace(body, el('p', {}, 'Loading…'));
  let s;
  try {
    s = await api('GET', '/v1/tasks/' + encodeURIComponent(id) + '/state');
  } catch (e) {
    replace(body, el('p', {class: 'error'}, describe(e)));
    return;
  }
  const parts = [el('p', {}, 'State: ', el('strong', {class: 'state state-' + s.state, 'data-testid': 'task-state'},
    s.state))];
  const schedule = scheduleOf(s);
  if (schedule !== null) {
    parts.push(el('p', {}, 'An occurrence of the recurring schedule ',
      el('a', {href: scheduleHref(schedule), 'data-testid': 'task-schedule'}, schedule), '.'));
  }
  if (s.state === 'pending') {
    const t = s.task;
    parts.push(el('dl', {class: 'fields'},
      field('Due (UTC)', utc(t.due_ms), 'due-utc'), field('Due (local)', local(t.due_ms), 'due-local'),
      field('Due in', duration(t.due_in_ms)), field('Created (UTC)', utc(t.created_ms)),
      field('Stream', t.stream + (t.default_stream ? ' (default)' : '')),
      field('Trace id', traceId(t.traceparent), 'trace-id'),
      field('Options', taskOptions(t), 'task-options')));
    parts.push(el('h3', {}, 'Payload'), el('pre', {class: 'payload', 'data-testid': 'payload'}, prettyPayload(t.payload)));
    if (can('write')) parts.push(taskActions(id, t));
  } else {
    if (s.fired) {
      const f = s.fired;
      parts.push(el('h3', {}, 'Forwarded'), el('dl', {class: 'fields'},
        field('Stream', f.stream), field('Entry', f.entry_id, 'fired-entry'),
        field('Due (UTC)', utc(f.due_ms), 'due-utc'), field('Due (local)', local(f.due_ms), 'due-local'),
        field('Forwarded (UTC)', utc(f.fired_ms)),
        field('Late by', f.fired_ms !== null && f.due_ms !== null ? duration(f.fired_ms - f.due_ms) : null),
        field('Trace id', traceId(f.fields.traceparent), 'trace-id'),
        field('Groups', f.groups === null ? 'unknown' : f.groups.length === 0 ? 'no consumer group'
          : f.groups.map((g) => g.group + ': ' + (g.state === 'delivered'
            ? 'read by ' + g.consumer + ', not acknowledged (' + g.deliveries + ' deliveries)'
            : g.state === 'unread' ? 'not read yet' : g.state || 'unknown')).join('; '), 'ack-state')));
      parts.push(el('h3', {}, 'Payload'), el('pre', {class: 'payload', 'data-testid': 'payload'},
        prettyPayload(f.fields.payload)));
    }
    if (s.dead) {
      const d = s.dead;
      parts.push(el('h3', {}, 'Dead letter'), el('dl', {class: 'fields'},
        field('Entry', d.entry, 'dead-entry'), field('Reason', d.reason, 'dead-reason-text'),
        field('Deliveries', d.deliveries), field('Dead since (UTC)', utc(d.when_ms)),
        field('Dead since (local)', local(d.when_ms))));
      if (can('admin')) {
        parts.push(el('div', {class: 'actions'}, el('button', {type: 'button', 'data-testid': 'dead-replay',
          onclick: () => replayDead([d.entry])}, 'Replay')));
      }
    }
    if (s.state === 'unknown') {
      parts.push(el('p', {'data-testid': 'task-unknown'}, 'Not pending, and not among the newest ' +
        s.scanned.stream + ' entries of ' + s.stream + ' nor the newest ' + s.scanned.dead + ' of ' + s.dead_stream +
        ': it was cancelled, never scheduled, or fired long ago (or to a stream of its own).'));
    }
  }
  replace(body, parts);
}

function taskOptions(t) {
  const options = [];
  for (const name of ['max_late_ms', 'first_ms', 'attempt', 'webhook', 'promoted_ms', 'promoted_from_ms']) {
    if (t[name] !== undefined && t[name] !== null) options.push(name + '=' + t[name]);
  }
  return options.length ? options.join(', ') : 'none';
}

function taskActions(id, t) {
  const path = '/v1/tasks/' + encodeURIComponent(id);
  // Cancelling a schedule's armed occurrence skips that one: the schedule arms its next.
  const cancelText = t.recur && !t.as_id
    ? 'Cancel this occurrence of schedule ' + id + '? It will not fire; the schedule arms its next one ' +
      '(pause or delete the schedule to stop it).'
    : 'Cancel task ' + id + '? It will not fire.';
  const after = (message) => (answer) => {
    if (answer) { showNotice(message); showTask(id); }
  };
  const chosen = el('input', {id: 'reschedule-at', type: 'datetime-local', 'data-testid': 'reschedule-at'});
  const reschedule = (label, body) => act('Reschedule ' + id, 'Make task ' + id + ' due ' + label + '?',
    () => api('POST', path + '/reschedule', body)).then(after('Rescheduled ' + id + '.'));
  return el('div', {class: 'actions', role: 'group', 'aria-label': 'Actions on this task'},
    el('button', {type: 'button', class: 'danger', 'data-testid': 'task-cancel', onclick: () =>
      act('Cancel ' + id, cancelText, () => api('DELETE', path))
        .then((answer) => { if (answer) { showNotice('Cancelled ' + id + '.'); showTask(id); } })}, 'Cancel task'),
    el('button', {type: 'button', 'data-testid': 'task-run-now', onclick: () =>
      act('Run ' + id + ' now', 'Make task ' + id + ' due now, so the relay forwards it at once?',
        () => api('POST', path + '/run-now')).then(after('Task ' + id + ' is due now.'))}, 'Run now'),
    el('button', {type: 'button', 'data-testid': 'task-plus-5min', onclick: () =>
      reschedule('5 minutes from now', {delay_ms: 300000})}, 'Due in 5 min'),
    el('button', {type: 'button', 'data-testid': 'task-plus-1h', onclick: () =>
      reschedule('1 hour from now', {delay_ms: 3600000})}, 'Due in 1 h'),
    el('span', {class: 'inline'}, el('label', {for: 'reschedule-at'}, 'Due at (local time)'), chosen,
      el('button', {type: 'button', 'data-testid': 'task-reschedule', onclick: () => {
        const at = new Date(chosen.value).getTime();
        if (!chosen.value || isNaN(at)) { showError('Choose a date and time first.'); chosen.focus(); return; }
        reschedule('at ' + local(at) + ' (' + utc(at) + ')', {at_ms: at});
      }}, 'Reschedule')));
}

// ---- recurring schedules ---------------------------------------------------------------------

function scheduleHref(id) { return '#/schedule/' + encodeURIComponent(id); }

// The recurring schedule whose occurrence a task's state (GET /v1/tasks/{id}/state) shows, or
// null. A pending occurrence has recur (its id is the schedule's), a retry of one also as_id (the
// schedule's; its own id is "<schedule>#<occurrence_ms>"); a forwarded or dead-lettered
// occurrence's entry has recur, and id naming the schedule (docs/protocol.md).
function scheduleOf(s) {
  if (s.task) return s.task.as_id ? s.task.as_id : s.task.recur ? s.task.id : null;
  for (const entry of [s.fired, s.dead]) {
    if (entry && entry.fields && entry.fields.recur && entry.fields.id) return entry.fields.id;
  }
  return null;
}

function scheduleState(r) { return r.paused ? 'paused' : r.ended ? 'ended' : 'active'; }

// A page of GET /v1/recurring as a table, each id a link to its schedule's page.
function recurringTable(recurring) {
  const schedules = recurring.schedules;
  if (schedules.length === 0) return el('p', {'data-testid': 'no-schedules'}, 'No recurring schedules.');
  return [table('Recurring schedules', ['Id', 'Rule', 'Zone', 'Next (UTC)', 'Next (in its zone)', 'State', 'Fired'],
    schedules.map((r) => el('tr', {'data-testid': 'recurring-row'},
      el('td', {}, el('a', {href: scheduleHref(r.id), 'data-testid': 'schedule-link'}, r.id)),
      el('td', {}, r.rule || '-'), el('td', {}, r.tz || '-'), el('td', {}, utc(r.next_ms)),
      el('td', {}, r.next_local ? zoned(r.next_local) : '-'), el('td', {}, scheduleState(r)),
      el('td', {class: 'num'}, count(r.fired))))),
  recurring.more ? el('p', {class: 'help'}, 'The first ' + schedules.length + ' are shown.') : null];
}

// An instant as the API gives it in a schedule's zone (ISO-8601 with its offset), without the
// milliseconds when they are zero, as utc() shows UTC.
function zoned(text) { return String(text).replace(/\.000(?=[+-]|Z|$)/, ''); }

async function showSchedules() {
  try {
    const page = await api('GET', '/v1/recurring?limit=' + SCHEDULES_LISTED);
    if (!$('view-schedules').hidden) replace($('schedule-list'), recurringTable(page));
  } catch (e) {
    showError('Schedules: ' + describe(e));
  }
}

function misfireText(s) {
  const policy = {skip: 'skip: a missed occurrence is dropped', once: 'once: one catch-up, the latest missed',
    all: 'all: every missed one, at most ' + count(s.misfire_max) + ' in a row'}[s.misfire];
  return (policy || s.misfire || '-') + ' (missed: more than ' + duration(s.grace_ms) + ' late)';
}

// A schedule's page: its definition as stored, its next occurrences (the 5 the schedule gives,
// or MORE_OCCURRENCES through the preview route) in its zone, in UTC and in the browser's zone.
async function showSchedule(id, more) {
  const load = ++state.scheduleLoad;
  $('schedule-title').textContent = 'Schedule ' + id;
  const body = $('schedule-body');
  if (!more) replace(body, el('p', {}, 'Loading…'));
  const path = '/v1/schedules/' + encodeURIComponent(id);
  let s, next;
  try {
    s = await api('GET', path);
    next = more && !s.paused ? (await api('GET', path + '/preview?count=' + MORE_OCCURRENCES)).occurrences : s.next;
  } catch (e) {
    if (load !== state.scheduleLoad) return;
    replace(body, e.status === 404
      ? el('p', {'data-testid': 'schedule-missing'}, 'No recurring schedule ' + id + ': it was deleted, or never set.')
      : el('p', {class: 'error'}, describe(e)));
    return;
  }
  if (load !== state.scheduleLoad) return;
  const status = scheduleState(s);
  const parts = [el('p', {}, 'State: ', el('strong', {class: 'state state-' + status, 'data-testid': 'schedule-state'},
    status))];
  parts.push(el('dl', {class: 'fields'},
    field('Rule', s.rule, 'schedule-rule'), field('Zone', s.tz, 'schedule-tz'),
    field('Not before (UTC)', s.start_ms === null ? 'no start set' : utc(s.start_ms)),
    field('Not after (UTC)', s.end_ms === null ? 'no end set' : utc(s.end_ms)),
    field('Stream', s.stream || 'the relay\'s default', 'schedule-stream'),
    field('Webhook', s.webhook || 'none', 'schedule-webhook'),
    field('Misfire policy', misfireText(s), 'schedule-misfire'),
    field('Lateness limit', s.max_late_ms === null ? 'none' : duration(s.max_late_ms)),
    field('Armed occurrence', s.armed_ms === null ? 'none' : el('a', {href: '#/task/' + encodeURIComponent(id),
      'data-testid': 'schedule-armed'}, 'task ' + id + ', due ' + utc(s.armed_ms))),
    field('Last occurrence (UTC)', s.last_ms === null ? 'none yet' : utc(s.last_ms)),
    field('Fired / skipped', count(s.fired) + ' / ' + count(s.skipped)),
    field('Created (UTC)', utc(s.created_ms)), field('Updated (UTC)', s.updated_ms === null ? 'never' : utc(s.updated_ms)),
    field('Version', s.version)));
  parts.push(el('h3', {}, 'Next occurrences'));
  if (next.length) {
    parts.push(el('div', {class: 'scroll'}, table('Next occurrences', ['#', 'In ' + s.tz, 'UTC', 'Your time'],
      next.map((o, i) => el('tr', {'data-testid': 'occurrence-row'}, el('td', {class: 'num'}, i + 1),
        el('td', {'data-testid': 'occurrence-zone'}, zoned(o.local)),
        el('td', {'data-testid': 'occurrence-utc'}, utc(o.utc_ms)),
        el('td', {'data-testid': 'occurrence-local'}, local(o.utc_ms)))), {'data-testid': 'occurrences'})));
    if (!more && next.length >= 5) {
      parts.push(el('p', {}, el('button', {type: 'button', 'data-testid': 'schedule-more',
        onclick: () => showSchedule(id, true)}, 'Show the next ' + MORE_OCCURRENCES)));
    }
  } else {
    parts.push(el('p', {'data-testid': 'no-occurrences'}, s.paused
      ? 'None while paused: resuming arms the next occurrence from then on (those missed meanwhile do not fire).'
      : 'None: the rule has no occurrence left' + (s.end_ms === null ? '.' : ' before ' + utc(s.end_ms) + '.')));
  }
  parts.push(el('h3', {}, 'Payload'), el('pre', {class: 'payload', 'data-testid': 'schedule-payload'},
    s.payload ? prettyPayload(s.payload) : '(empty)'));
  if (can('write')) parts.push(scheduleActions(id, s));
  replace(body, parts);
}

function scheduleActions(id, s) {
  const path = '/v1/schedules/' + encodeURIComponent(id);
  const after = (message) => async (answer) => {
    if (!answer) return;
    showNotice(message);
    await showSchedule(id);
    focusHeading('schedule-title');
  };
  return el('div', {class: 'actions', role: 'group', 'aria-label': 'Actions on this schedule'},
    s.paused
      ? el('button', {type: 'button', 'data-testid': 'schedule-resume', onclick: () =>
        act('Resume ' + id, 'Resume schedule ' + id + '? Its next occurrence from now is armed; those missed ' +
          'while it was paused do not fire.', () => api('POST', path + '/resume')).then(after('Resumed ' + id + '.'))},
        'Resume')
      : el('button', {type: 'button', 'data-testid': 'schedule-pause', onclick: () =>
        act('Pause ' + id, 'Pause schedule ' + id + '? Its armed occurrence is cancelled, and none fires until ' +
          'it is resumed.', () => api('POST', path + '/pause')).then(after('Paused ' + id + '.'))}, 'Pause'),
    el('button', {type: 'button', class: 'danger', 'data-testid': 'schedule-delete', onclick: () =>
      act('Delete ' + id, 'Delete schedule ' + id + '? Its armed occurrence is cancelled and no other fires; ' +
        'the definition is gone.', () => api('DELETE', path)).then(after('Deleted schedule ' + id + '.'))},
      'Delete schedule'));
}

// ---- dead letters -----------------------------------------------------------------------------

async function showDead() {
  $('dead-actions').hidden = !can('admin');
  replace($('dead-detail'));
  try {
    const page = await api('GET', '/v1/dead?limit=' + encodeURIComponent($('dead-limit').value));
    state.dead = page.entries;
    state.more = page.more;
    const known = new Set(state.selected);
    state.selected = new Set(page.entries.map((e) => e.entry).filter((e) => known.has(e)));
    const reasons = [...new Set(page.entries.map((e) => e.reason || ''))].sort();
    const select = $('dead-reason');
    const current = select.value;
    replace(select, el('option', {value: ''}, 'any'), reasons.map((r) =>
      el('option', {value: r, title: r.length > SHORT_TEXT ? r : null}, shorten(r) || '(none)')));
    select.value = reasons.indexOf(current) >= 0 ? current : '';
    renderDead();
  } catch (e) {
    showError('Dead letters: ' + describe(e));
  }
}

function renderDead() {
  const reason = $('dead-reason').value;
  const shown = state.dead.filter((e) => !reason || (e.reason || '') === reason);
  const admin = can('admin');
  const rows = shown.map((e) => el('tr', {'data-testid': 'dead-row'},
    admin ? el('td', {}, el('input', {type: 'checkbox', 'aria-label': 'Select ' + e.entry, 'data-testid': 'dead-select',
      checked: state.selected.has(e.entry)})) : null,
    el('td', {}, el('button', {type: 'button', class: 'link', onclick: () => openDead(e)}, e.entry)),
    el('td', {}, e.task_id === null ? '-' : el('a', {href: '#/task/' + encodeURIComponent(e.task_id)}, e.task_id)),
    textCell(e.reason || '-'), el('td', {class: 'num'}, e.deliveries === null ? '-' : e.deliveries),
    el('td', {}, utc(e.when_ms)),
    admin ? el('td', {}, el('button', {type: 'button', 'data-testid': 'dead-replay',
      onclick: () => replayDead([e.entry])}, 'Replay')) : null));
  rows.forEach((row, i) => {
    const box = row.querySelector('input[type=checkbox]');
    if (box) box.addEventListener('change', () => {
      if (box.checked) state.selected.add(shown[i].entry); else state.selected.delete(shown[i].entry);
    });
  });
  const headers = (admin ? ['Select'] : []).concat(['Entry', 'Task', 'Reason', 'Deliveries', 'Dead since (UTC)'])
    .concat(admin ? ['Action'] : []);
  replace($('dead-list'), shown.length ? [table('Dead letters, oldest first', headers, rows),
    state.more ? el('p', {class: 'help'}, 'More dead letters follow; show more, or replay or purge these.') : null]
    : el('p', {'data-testid': 'no-dead'}, 'No dead letters' + (reason ? ' with this reason.' : '.')));
}

function openDead(e) {
  replace($('dead-detail'), el('h3', {}, 'Dead letter ' + e.entry), el('dl', {class: 'fields', 'data-testid': 'dead-open'},
    field('Entry', e.entry), field('Stream', e.stream), field('Task', e.task_id), field('Reason', e.reason),
    field('Deliveries', e.deliveries), field('Dead since (UTC)', utc(e.when_ms)),
    field('Dead since (local)', local(e.when_ms)), field('Original stream', e.original_stream),
    field('Original entry', e.original_id)),
  e.task_id ? el('p', {}, el('a', {href: '#/task/' + encodeURIComponent(e.task_id)}, 'Open task ' + e.task_id)) : null);
}

async function replayDead(entries) {
  if (!entries.length) { showError('Select dead letters first.'); return; }
  const answer = await act('Replay', 'Schedule ' + entries.length + ' dead-lettered task(s) again, due now, and ' +
    'remove their dead letters?', () => api('POST', '/v1/dead/replay', {entries}));
  if (!answer) return;
  showNotice('Replayed ' + answer.replayed.length + (answer.gone.length ? '; ' + answer.gone.length +
    ' were gone already' : '') + '.');
  entries.forEach((e) => state.selected.delete(e));
  if (!$('view-dead').hidden) await showDead(); else route();
}

async function purgeDead(entries) {
  if (!entries.length) { showError('Select dead letters first.'); return; }
  const answer = await act('Purge', 'Delete ' + entries.length + ' dead letter(s) for good? Their tasks are lost.',
    () => api('POST', '/v1/dead/purge', {entries}), 'purge ' + entries.length);
  if (!answer) return;
  showNotice('Purged ' + answer.purged.length + (answer.gone.length ? '; ' + answer.gone.length +
    ' were gone already' : '') + '.');
  entries.forEach((e) => state.selected.delete(e));
  await showDead();
}

// ---- pause and resume -------------------------------------------------------------------------

async function showPause() {
  try {
    const o = await api('GET', '/v1/overview');
    $('pause-state').textContent = o.paused_buckets === 0 ? 'Forwarding: no bucket is paused.'
      : o.paused_buckets + ' of ' + o.buckets + ' buckets are paused.';
  } catch (e) {
    showError('Pause state: ' + describe(e));
  }
}

async function pause(event) {
  event.preventDefault();
  const timed = document.querySelector('input[name=pause-mode]:checked').value === 'for';
  const minutes = Number($('pause-minutes').value);
  if (timed && !(minutes >= 1)) { showError('Give the pause in whole minutes, at least 1.'); return; }
  const body = timed ? {for_ms: Math.round(minutes * 60000)} : undefined;
  const answer = await act('Pause', 'Pause forwarding of every bucket ' + (timed ? 'for ' + minutes + ' minutes'
    : 'until resumed') + '? Tasks coming due meanwhile wait.', () => api('POST', '/v1/pause', body));
  if (answer) { showNotice('Paused.'); await showPause(); }
}

async function resume() {
  const answer = await act('Resume', 'Resume forwarding of every bucket? Overdue tasks are forwarded at once.',
    () => api('POST', '/v1/resume'));
  if (answer) { showNotice('Resumed ' + answer.buckets_paused + ' bucket(s).'); await showPause(); }
}

// ---- the audit trail -------------------------------------------------------------------------

function emptyAuditQuery() {
  return {actor: '', action: '', via: '', target: '', count: '100', before: null};
}

// The audit view: for an admin token, the newest page of the trail under the filters applied
// last (kept while the tab is signed in); for any other token, that it takes an admin one.
async function showAudit() {
  const admin = can('admin');
  $('audit-body').hidden = !admin;
  $('audit-denied').hidden = admin;
  if (!admin) {
    ++state.auditLoad;
    $('audit-denied').textContent = 'The audit trail needs an admin token: this one\'s scope is ' + state.scope +
      '. Sign out and sign in with an admin token to see who did what.';
    return;
  }
  if (!state.audit) {  // signed in afresh: nothing of an earlier session's page stays
    state.audit = emptyAuditQuery();
    state.auditNext = null;
    $('audit-position').textContent = '';
    $('audit-older').hidden = true;
    $('audit-newest').hidden = true;
    replace($('audit-list'));
  }
  for (const name of AUDIT_FILTERS) $('audit-' + name).value = state.audit[name];
  $('audit-count').value = state.audit.count;
  state.audit.before = null;
  await loadAudit();
}

// The filter form's submit: its values become the query, read from the newest record on.
function applyAuditFilter(event) {
  event.preventDefault();
  const query = emptyAuditQuery();
  for (const name of AUDIT_FILTERS) query[name] = $('audit-' + name).value;
  query.actor = query.actor.trim();  // matched exactly: a stray space would match nobody
  query.count = $('audit-count').value;
  state.audit = query;
  loadAudit();
}

// Older (`before` the shown page's next_before) or back to the newest (`before` null).
async function pageAudit(before) {
  state.audit.before = before;
  await loadAudit();
  const active = document.activeElement;
  if (active && active.closest && active.closest('[hidden]')) focusHeading('audit-title');
}

async function loadAudit() {
  const load = ++state.auditLoad;
  const q = state.audit;
  const params = ['count=' + encodeURIComponent(q.count)];
  for (const name of AUDIT_FILTERS) if (q[name]) params.push(name + '=' + encodeURIComponent(q[name]));
  if (q.before) params.push('before=' + encodeURIComponent(q.before));
  let page;
  try {
    page = await api('GET', '/v1/audit?' + params.join('&'));
  } catch (e) {
    if (load !== state.auditLoad) return;
    state.auditNext = null;
    $('audit-position').textContent = '';
    $('audit-older').hidden = true;
    $('audit-newest').hidden = !q.before;
    replace($('audit-list'), el('p', {class: 'error', 'data-testid': 'audit-error'}, 'Audit trail: ' + describe(e)));
    return;
  }
  if (load !== state.auditLoad || $('view-audit').hidden) return;
  renderAudit(q, page);
}

// Whether an outcome tells of a failure: an HTTP status of 400 or more ("404: task x is not
// pending"), or an expiry-ctl exit code other than 0 ("exit 1: ...").
function auditFailed(outcome) {
  const status = /^(\d{3})(?::|$)/.exec(outcome);
  if (status) return Number(status[1]) >= 400;
  const exit = /^exit (-?\d+)(?::|$)/.exec(outcome);
  return exit !== null && Number(exit[1]) !== 0;
}

function renderAudit(q, page) {
  state.auditNext = page.next_before;
  const filtered = AUDIT_FILTERS.some((name) => q[name]);
  const records = page.records;
  const rows = records.map((r) => {
    const failed = auditFailed(r.outcome);
    return el('tr', {'data-testid': 'audit-row', 'data-entry': r.entry, class: failed ? 'failed' : null},
      el('td', {class: 'nowrap', 'data-testid': 'audit-utc'}, utc(r.time_ms)),
      el('td', {class: 'nowrap', 'data-testid': 'audit-local'}, local(r.time_ms)),
      el('td', {'data-testid': 'audit-actor'}, r.actor), el('td', {'data-testid': 'audit-via'}, r.via),
      el('td', {class: 'nowrap', 'data-testid': 'audit-action'}, r.action), textCell(r.target || '-', 'audit-target'),
      el('td', {class: 'text', title: r.outcome.length > SHORT_TEXT ? r.outcome : null},
        failed ? [el('strong', {class: 'state state-dead', 'data-testid': 'audit-failed'}, 'error'), ' '] : null,
        el('span', {'data-testid': 'audit-outcome'}, shorten(r.outcome))));
  });
  const noun = records.length === 1 ? ' record' : ' records';
  $('audit-position').textContent = (q.before ? records.length + noun + ' older than entry ' + q.before
    : 'The newest ' + records.length + noun) + (filtered ? ' matching the filters' : '') + ', newest first.' +
    (page.next_before && records.length < Number(q.count) ? ' A filtered read looks through at most 20,000 ' +
      'records a call: Older goes on from entry ' + page.next_before + '.' : '');
  replace($('audit-list'), records.length
    ? table('Audit trail, newest first', ['Time (UTC)', 'Your time', 'Actor', 'Via', 'Action', 'Target', 'Outcome'],
      rows, {'data-testid': 'audit-table'})
    : el('p', {'data-testid': 'no-audit'}, (filtered ? 'No audit record matches the filters' : 'No audit records') +
      (q.before ? ' before entry ' + q.before : '') + '.'));
  $('audit-older').hidden = !page.next_before;
  $('audit-newest').hidden = !q.before;
}

// ---- start ------------------------------------------------------------------------------------

document.addEventListener('DOMContentLoaded', () => {
  $('login-form').addEventListener('submit', signIn);
  $('sign-out').addEventListener('click', () => signOut(''));
  $('search-form').addEventListener('submit', search);
  $('next-page').addEventListener('click', () => loadTaskPage(true));
  $('dead-filter').addEventListener('submit', (e) => { e.preventDefault(); showDead(); });
  $('dead-reason').addEventListener('change', renderDead);
  $('dead-replay-selected').addEventListener('click', () => replayDead([...state.selected]));
  $('dead-purge-selected').addEventListener('click', () => purgeDead([...state.selected]));
  $('pause-form').addEventListener('submit', pause);
  $('resume').addEventListener('click', resume);
  $('audit-filter').addEventListener('submit', applyAuditFilter);
  $('audit-older').addEventListener('click', () => pageAudit(state.auditNext));
  $('audit-newest').addEventListener('click', () => pageAudit(null));
  window.addEventListener('hashchange', () => { showNotice(''); route(); });
  route();
});
