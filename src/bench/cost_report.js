#!/usr/bin/env node
// The steady-state cost of the relay beside its peers, from one bench run's JSON files: Redis CPU
// per task by call type (INFO commandstats usec over the steady window), the whole Redis CPU per
// task (INFO cpu), and memory per pending task; then, with --baseline, the regression guard.
//
// Usage: node cost_report.js --relay RELAY_JSON [--bullmq BULLMQ_JSON] [--sidekiq SIDEKIQ_JSON]
//                            [--baseline FILE [--record FILE]]
//   --baseline FILE: {"steady_cpu_ratio_vs_bullmq": R, "memory_bytes_per_task": M, "tolerance": 0.25}.
//     Exit 1 when this run's steady Redis CPU relay/BullMQ is above R * (1 + tolerance), or its
//     memory per pending task above M * (1 + tolerance), or when a figure is missing. Ratios of one
//     run only: both systems ran on the same Redis, one after the other.
//   --record FILE: writes this run's figures in the baseline's format (to update the baseline).
// Needs no npm module. Exit 2 on a usage error or an unreadable file.
'use strict';

const fs = require('fs');

function usage(message) {
  console.error(`cost_report: ${message}`);
  console.error('usage: node cost_report.js --relay RELAY_JSON [--bullmq JSON] [--sidekiq JSON] [--baseline FILE] [--record FILE]');
  process.exit(2);
}

function parseArgs(argv) {
  const o = {};
  for (let i = 0; i < argv.length; i++) {
    const name = argv[i].replace(/^--/, '');
    if (!['relay', 'bullmq', 'sidekiq', 'baseline', 'record'].includes(name) || i + 1 >= argv.length) {
      usage(`unknown argument or missing value: ${argv[i]}`);
    }
    o[name] = argv[++i];
  }
  if (!o.relay) usage('--relay is required');
  return o;
}

function load(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    console.error(`cost_report: cannot read ${file}: ${e.message}`);
    process.exit(2);
  }
}

const num = (v) => typeof v === 'number' && Number.isFinite(v);
const fmt = (v, digits = 1) => (num(v) ? v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : '-');

// One system's steady window: tasks, Redis CPU (s) and commandstats by command, or undefined.
function steadyOf(json, isRelay) {
  const s = json && json.scenarios && json.scenarios.steady;
  if (!s) return undefined;
  const run = isRelay ? s.runs && s.runs.relay : s;
  if (!run || !run.redis_cost) return undefined;
  const tasks = isRelay ? s.rate * s.seconds : s.tasks;
  return { tasks, cpu: run.redis_cost.cpu_seconds, commands: run.redis_cost.commands, p99: run.lateness_ms && run.lateness_ms.p99 };
}

function memoryOf(json, isRelay) {
  const s = json && json.scenarios;
  if (!s) return undefined;
  const v = isRelay ? s.bulk && s.bulk.memory && s.bulk.memory.used_memory_per_task_ctl_run : s.memory && s.memory.used_memory_per_task;
  return num(v) ? v : undefined;
}

function table(header, rows) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) => `| ${cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join(' | ')} |`;
  console.log(line(header));
  console.log(`|${widths.map((w, i) => (i === 0 ? `:${'-'.repeat(w + 1)}` : `${'-'.repeat(w + 1)}:`)).join('|')}|`);
  for (const r of rows) console.log(line(r));
}

// Scripts' own rows: their usec includes the commands they ran, which are rows of their own too.
const SCRIPT_CALLS = new Set(['fcall', 'fcall_ro', 'evalsha', 'eval', 'evalsha_ro', 'eval_ro']);

function printBreakdown(systems) {
  const names = new Set();
  for (const s of systems) for (const c of Object.keys(s.steady.commands)) names.add(c);
  const usecPerTask = (s, c) => (s.steady.commands[c] ? s.steady.commands[c].usec / s.steady.tasks : 0);
  const callsPerTask = (s, c) => (s.steady.commands[c] ? s.steady.commands[c].calls / s.steady.tasks : 0);
  const ordered = [...names].sort((a, b) => Math.max(...systems.map((s) => usecPerTask(s, b))) - Math.max(...systems.map((s) => usecPerTask(s, a))));
  const rows = [];
  const total = (s) => (s.steady.cpu * 1e6) / s.steady.tasks;
  rows.push(['Redis CPU (INFO cpu), all of it', ...systems.map((s) => `${fmt(total(s))} µs`)]);
  // Outside any command: reading and writing sockets, the event loop, active expiry, notifications.
  const outside = (s) => total(s) - topLevelUsec(s) / s.steady.tasks;
  rows.push(['outside commands (I/O, event loop, expiry)', ...systems.map((s) => `${fmt(outside(s))} µs`)]);
  for (const c of ordered.slice(0, 14)) {
    const label = SCRIPT_CALLS.has(c) ? `${c} (with what its scripts ran)` : c;
    rows.push([label, ...systems.map((s) => (s.steady.commands[c] ? `${fmt(usecPerTask(s, c))} µs, ${fmt(callsPerTask(s, c), 2)} calls` : '-'))]);
  }
  console.log(`\n#### Steady Redis CPU per task by call type (${systems.map((s) => `${s.name}: ${s.steady.tasks} tasks`).join(', ')})\n`);
  table(['per task', ...systems.map((s) => s.name)], rows);
  console.log('\nµs of Redis time per task, and calls per task, over each steady window (INFO commandstats, same Redis, one run). ' +
              "A script call's row includes the commands its script ran, which also have rows of their own. " +
              '"Outside commands" = INFO cpu minus the top-level calls: sockets, event loop, active expiry, keyspace events.');
}

// The usec of the calls clients sent (not those scripts ran): script calls and the reads, pings
// and INFO clients send themselves; a system that runs no script sent every call itself.
const CLIENT_CALLS = new Set(['xread', 'xreadgroup', 'xack', 'ping', 'info', 'bzpopmin', 'brpop', 'brpoplpush', 'blmove']);
function topLevelUsec(s) {
  const entries = Object.entries(s.steady.commands);
  const scripted = entries.some(([c]) => SCRIPT_CALLS.has(c));
  return entries.reduce((sum, [c, v]) => sum + (!scripted || SCRIPT_CALLS.has(c) || CLIENT_CALLS.has(c) ? v.usec : 0), 0);
}

// Issue 36's targets: steady Redis CPU at most each peer's at a lateness p99 of at most 5 ms;
// memory per pending task at most 430 B (hash-max-listpack-value 1024, the repo's redis.conf).
// Below BullMQ's at Redis's default setting is measured apart (docs/benchmarks.md).
function printTargets(relay, peers) {
  const rows = [];
  const verdict = (ok) => (ok === undefined ? 'not measured' : ok ? 'met' : 'NOT met');
  const p99 = relay.steady && relay.steady.p99;
  for (const peer of peers) {
    const ok = relay.steady && peer.steady && num(p99) ? relay.steady.cpu <= peer.steady.cpu && p99 <= 5 : undefined;
    const text = ok === undefined ? '-' : `${fmt(relay.steady.cpu / peer.steady.cpu, 2)}×, p99 ${p99} ms`;
    rows.push([`steady Redis CPU <= ${peer.name}'s, lateness p99 <= 5 ms`, verdict(ok), text]);
  }
  rows.push(['memory per pending task <= 430 B', verdict(num(relay.memory) ? relay.memory <= 430 : undefined), `${fmt(relay.memory, 0)} B`]);
  console.log('\n#### Cost targets (issue 36)\n');
  table(['target', 'met', 'measured'], rows);
}

function main() {
  const o = parseArgs(process.argv.slice(2));
  const relayJson = load(o.relay);
  const systems = [{ name: 'relay', steady: steadyOf(relayJson, true), memory: memoryOf(relayJson, true) }];
  for (const [name, file] of [['BullMQ', o.bullmq], ['Sidekiq', o.sidekiq]]) {
    if (!file || !fs.existsSync(file)) continue;
    const j = load(file);
    systems.push({ name, steady: steadyOf(j, false), memory: memoryOf(j, false) });
  }
  const withSteady = systems.filter((s) => s.steady);
  if (withSteady.length > 0) printBreakdown(withSteady);
  const relay = systems[0];
  const bull = systems.find((s) => s.name === 'BullMQ');
  const ratio = relay.steady && bull && bull.steady ? relay.steady.cpu / bull.steady.cpu : undefined;
  const figures = { steady_cpu_ratio_vs_bullmq: ratio, memory_bytes_per_task: relay.memory };
  console.log(`\nsteady Redis CPU relay/BullMQ: ${fmt(ratio, 2)} (relay p99 ${relay.steady ? relay.steady.p99 : '-'} ms); ` +
              `memory per pending task: relay ${fmt(relay.memory, 0)} B${systems.slice(1).map((s) => `, ${s.name} ${fmt(s.memory, 0)} B`).join('')}`);
  printTargets(relay, systems.slice(1));
  if (o.record) {
    fs.writeFileSync(o.record, `${JSON.stringify({ ...figures, tolerance: 0.25 }, null, 2)}\n`);
    console.log(`recorded: ${o.record}`);
  }
  if (!o.baseline) return;
  const base = load(o.baseline);
  const tolerance = num(base.tolerance) ? base.tolerance : 0.25;
  let failed = false;
  for (const [key, what] of [['steady_cpu_ratio_vs_bullmq', 'steady Redis CPU relay/BullMQ'], ['memory_bytes_per_task', 'memory per pending task, bytes']]) {
    const limit = base[key] * (1 + tolerance);
    if (!num(figures[key])) {
      console.log(`guard: ${what}: not measured in this run (the guard needs the steady and bulk scenarios and the BullMQ peer): FAIL`);
      failed = true;
    } else if (figures[key] > limit) {
      console.log(`guard: ${what} ${fmt(figures[key], 2)} is more than ${Math.round(tolerance * 100)} % above the baseline ${fmt(base[key], 2)} (limit ${fmt(limit, 2)}): FAIL`);
      failed = true;
    } else {
      console.log(`guard: ${what} ${fmt(figures[key], 2)} within the baseline ${fmt(base[key], 2)} + ${Math.round(tolerance * 100)} % (limit ${fmt(limit, 2)}): ok`);
    }
  }
  process.exit(failed ? 1 : 0);
}

main();
