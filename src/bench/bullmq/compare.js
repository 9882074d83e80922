#!/usr/bin/env node
// Prints the relay's figures (expiry-bench's JSON) beside BullMQ's (bullmq-bench.js's JSON) of the
// same run as a markdown table, with a "vs BullMQ" ratio: how many times better the relay is
// (relay / BullMQ for rates, BullMQ / relay where lower is better); below 1, BullMQ is better.
// A figure one side did not measure in this run shows as "-" with the reason.
// With SIDEKIQ_JSON (src/bench/sidekiq/sidekiq-bench.rb's JSON of the same run), two more columns:
// Sidekiq's figure and "vs Sidekiq", in the steady lateness, steady Redis CPU and memory rows.
// Usage: node compare.js RELAY_JSON BULLMQ_JSON [SIDEKIQ_JSON]. Needs no npm module.
'use strict';

const fs = require('fs');

function load(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    console.error(`compare: cannot read ${file}: ${e.message}`);
    process.exit(2);
  }
}

// The value at `keys` in `obj`, or undefined.
function at(obj, ...keys) {
  return keys.reduce((o, k) => (o === undefined || o === null ? undefined : o[k]), obj);
}

const num = (v) => typeof v === 'number' && Number.isFinite(v);

function fmt(v, digits = 0) {
  if (!num(v)) return '-';
  return v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

// Relay better by how many times. `lower`: lower is better. `resolution`: the relay's unit, for
// a relay figure of 0 (0 ms lateness is "under 1 ms": the ratio is at least BullMQ / 1).
function ratio(relay, bullmq, lower, resolution = 0) {
  if (!num(relay) || !num(bullmq)) return '-';
  if (lower) {
    if (relay <= 0 && resolution > 0) return `≥ ${fmt(bullmq / resolution, bullmq / resolution < 10 ? 1 : 0)}×`;
    if (relay <= 0) return '-';
    const r = bullmq / relay;
    return `${fmt(r, r < 10 ? 2 : 0)}×`;
  }
  if (bullmq <= 0) return '-';
  const r = relay / bullmq;
  return `${fmt(r, r < 10 ? 2 : 0)}×`;
}

function main() {
  const [relayFile, bullFile, sidekiqFile] = process.argv.slice(2);
  if (!relayFile || !bullFile) {
    console.error('usage: node compare.js RELAY_JSON BULLMQ_JSON [SIDEKIQ_JSON]');
    process.exit(2);
  }
  const relay = load(relayFile).scenarios || {};
  const bull = load(bullFile);
  const b = bull.scenarios || {};
  const sk = sidekiqFile ? load(sidekiqFile) : null;
  const ks = (sk && sk.scenarios) || {};
  const rows = [];
  const notes = [];
  const missing = new Set();
  // relayValue undefined: the relay's run did not measure it (scenario not run, or no such figure).
  // skValue: Sidekiq's figure (its columns show "-" without it).
  const row = (what, relayValue, bullValue, { lower = false, digits = 0, resolution = 0, relayText, bullText, skValue } = {}) => {
    if (!num(relayValue) && relayText === undefined) missing.add(what);
    const cells = [what, relayText ?? fmt(relayValue, digits), bullText ?? fmt(bullValue, digits),
                   ratio(relayValue, bullValue, lower, resolution)];
    if (sk) cells.push(fmt(skValue, digits), ratio(relayValue, skValue, lower, resolution));
    rows.push(cells);
  };

  const rs = at(relay, 'steady', 'runs', 'relay');
  if (b.steady) {
    const s = b.steady;
    const load = `${fmt(s.rate)}/s for ${s.seconds} s, ${fmt(s.backdrop_pending)} pending, ${fmt(s.keys_with_ttl)} TTL keys`;
    for (const q of ['p50', 'p99', 'max']) {
      row(q === 'p50' ? `(a) steady (${load}): lateness p50, ms` : `(a) steady: lateness ${q}, ms`, at(rs, 'lateness_ms', q), s.lateness_ms[q],
          { lower: true, resolution: 1, skValue: at(ks, 'steady', 'lateness_ms', q) });
    }
    row('(a) steady: Redis CPU over the run, s', at(rs, 'redis_cpu_seconds'), s.redis_cpu_seconds,
        { lower: true, digits: 2, skValue: at(ks, 'steady', 'redis_cpu_seconds') });
    if (s.not_seen_by_deadline > 0 || s.duplicated > 0) {
      notes.push(`steady: BullMQ ${s.not_seen_by_deadline} jobs not seen by the deadline, ${s.duplicated} duplicated.`);
    }
    if (ks.steady && (ks.steady.not_seen_by_deadline > 0 || ks.steady.duplicated > 0)) {
      notes.push(`steady: Sidekiq ${ks.steady.not_seen_by_deadline} jobs not seen by the deadline, ${ks.steady.duplicated} duplicated.`);
    }
  }
  if (b.burst) {
    const rb = at(relay, 'burst', 'runs', 'relay');
    const each = b.burst.runs.map((r) => `${r.concurrency}: ${fmt(r.tasks_per_s)}`).join(', ');
    row(`(b) burst of ${fmt(b.burst.tasks)} due in one ms: drain to the consumer, tasks/s`, at(rb, 'forward_rate'),
        b.burst.tasks_per_s, { bullText: `${fmt(b.burst.tasks_per_s)} (best of concurrency ${each})` });
    row('(b) burst: Redis CPU during the drain, s', at(rb, 'redis_cpu_seconds'), b.burst.redis_cpu_seconds,
        { lower: true, digits: 2, bullText: `${fmt(b.burst.redis_cpu_seconds, 2)} (concurrency ${b.burst.best_concurrency})` });
    for (const r of b.burst.runs) {
      if (r.lost > 0 || r.duplicated > 0) notes.push(`burst, concurrency ${r.concurrency}: BullMQ lost ${r.lost}, duplicated ${r.duplicated}.`);
    }
  }
  if (b.bulk) {
    const each = b.bulk.runs.map((r) => `${r.chunk}: ${fmt(r.tasks_per_s)}`).join(', ');
    row(`(c) bulk scheduling of ${fmt(b.bulk.tasks)}, tasks/s: expiry-ctl schedule --file vs addBulk`,
        at(relay, 'bulk', 'expiry_ctl', 'tasks_per_s_end_to_end'), b.bulk.tasks_per_s,
        { bullText: `${fmt(b.bulk.tasks_per_s)} (best of chunks ${each})` });
  }
  if (b.idle) {
    const ri = relay.idle;
    const perS = ri && num(ri.commandstats_delta_total) ? ri.commandstats_delta_total / ri.seconds : undefined;
    row(`(d) idle, ${fmt(b.idle.pending)} pending: commands/s clients send (MONITOR)`, at(ri, 'commands_per_s'),
        b.idle.commands_per_s, { lower: true, digits: 1 });
    row('(d) idle: commands/s Redis runs, scripts\' included (INFO commandstats)', perS, b.idle.commandstats_per_s,
        { lower: true, digits: 1 });
  }
  if (b.memory) {
    row(`(e) used_memory per pending task, bytes (hash-max-listpack-value ${b.memory.hash_max_listpack_value})`,
        at(relay, 'bulk', 'memory', 'used_memory_per_task_ctl_run'), b.memory.used_memory_per_task,
        { lower: true, skValue: at(ks, 'memory', 'used_memory_per_task') });
  }
  if (b.kill) {
    const k = b.kill;
    const sl = k.straggler_lateness_ms;
    const late = k.stragglers_over_1s > 0 ? `; ${k.stragglers_over_1s} more than 1 s late, the latest ${fmt(sl.max)} ms` : '';
    const rk = relay.kill;
    const relayText = rk
      ? `${rk.lost} lost, ${rk.duplicated} duplicated; ${rk.late_over_1s} more than 1 s late, the latest ` +
        `${fmt(at(rk, 'lateness', 'max'))} ms`
      : 'not run';
    rows.push([`(f) kill -9 (relay / BullMQ worker) while ${fmt(k.tasks)} come due: lost / duplicated; ratio of the max lateness`, relayText,
               `${k.lost} lost, ${k.duplicated} duplicated${late}${k.queue_empty_at_end ? '' : '; queue not empty at the end'}`,
               rk ? ratio(at(rk, 'lateness', 'max'), at(k, 'lateness_ms', 'max'), true, 1) : '-']);
    if (k.lost > 0 || k.duplicated > 0) notes.push(`kill -9: BullMQ lost ${k.lost}, duplicated ${k.duplicated} (BullMQ's figure, not a failure of this bench).`);
  }

  const header = ['scenario', 'relay', `BullMQ ${bull.bullmq_version}`, 'vs BullMQ (× relay better)'];
  if (sk) {
    header.push(`Sidekiq ${sk.version}`, 'vs Sidekiq (× relay better)');
    for (const r of rows) while (r.length < header.length) r.push('-');
  }
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells) => `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(' | ')} |`;
  console.log(`\n#### BullMQ${sk ? ' and Sidekiq' : ''} side by side (${bull.mode} size, same Redis, same run)\n`);
  console.log(line(header));
  console.log(`|${widths.map((w, i) => (i === 0 ? ':' + '-'.repeat(w + 1) : '-'.repeat(w + 1) + ':')).join('|')}|`);
  for (const r of rows) console.log(line(r));
  console.log('\nvs BullMQ: how many times better the relay is: relay / BullMQ for tasks/s, BullMQ / relay for ms, CPU, ' +
              'commands and bytes; below 1× BullMQ is better. "≥": the relay\'s figure is 0 at 1 ms resolution. ' +
              `BullMQ: worker concurrency ${at(b, 'steady', 'worker_concurrency') ?? 50} in steady and idle, ` +
              'completed jobs removed at once; lateness = when the worker sees the job - its timestamp + delay.');
  if (sk) {
    console.log(`Sidekiq: one server process, concurrency ${sk.worker_concurrency}, average_scheduled_poll_interval ` +
                `${sk.average_scheduled_poll_interval_s} s (Sidekiq's default 5 s); lateness = when the job runs - its "at"; ` +
                'memory: far-future jobs in the schedule ZSET. "vs Sidekiq" reads as "vs BullMQ".');
  }
  if (missing.size > 0) {
    notes.push(`"-" for the relay: not in expiry-bench's JSON of this run (scenario not run, or a figure it does not record): ${missing.size} row(s).`);
  }
  for (const n of notes) console.log(n);
}

main();
