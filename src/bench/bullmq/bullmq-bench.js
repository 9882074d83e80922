#!/usr/bin/env node
// BullMQ as a peer of the relay (docs/benchmarks.md, "BullMQ side by side"): the same loads as
// expiry-bench's scenarios, on the same Redis, right after expiry-bench in the same run
// (scripts/bench.sh). Writes its figures as JSON; compare.js prints them beside the relay's.
//
// Usage: node bullmq-bench.js --redis-url URL --json FILE [--quick] [--relay-json FILE]
//          [--only bulk,idle,steady,burst,kill]
//   --relay-json: expiry-bench's JSON of the same run; the scenario sizes are taken from it where
//     it has them (steady rate, seconds and backdrop; burst tasks), so both sides get one load.
// Every scenario starts on a flushed database (FLUSHALL), except idle and steady, which keep the
// far-future jobs the bulk scenario leaves as their backdrop, as expiry-bench does. Redis is
// flushed at the end. Exit code 0 when the run completed (a lost or duplicated job is BullMQ's
// figure, reported, not an error), 2 on a usage or setup error.
'use strict';

const { fork } = require('child_process');
const fs = require('fs');
const path = require('path');
const { Queue } = require('bullmq');
const IORedis = require('ioredis');

// The sizes of expiry-bench's scenarios (src/bench/bench_context.cpp); kill has no relay peer.
const SIZES = {
  full: { steadyRate: 1000, steadySeconds: 30, backdrop: 1000000, ttlKeys: 100000, graceMs: 10000,
          burstTasks: 100000, bulkTasks: 1000000, idleSeconds: 10, killTasks: 10000, killSeconds: 10 },
  quick: { steadyRate: 200, steadySeconds: 10, backdrop: 100000, ttlKeys: 20000, graceMs: 5000,
           burstTasks: 20000, bulkTasks: 100000, idleSeconds: 10, killTasks: 2000, killSeconds: 4 },
};
const PAYLOAD_BYTES = 100;
const QUEUE = 'bench';
const BURST_CONCURRENCIES = [1, 50, 500];
const BULK_CHUNKS = [100, 1000, 5000];
const STEADY_CONCURRENCY = 50;
const KILL_CONCURRENCY = 50;
// A killed worker's active jobs come back after its lock expires (lockDuration 30 s) and the
// stalled checker's second pass (stalledInterval 30 s): wait that long and a margin.
const KILL_WAIT_MS = 75000;
const DAY_MS = 86400000;

function usage(message) {
  console.error(`bullmq-bench: ${message}`);
  console.error('usage: node bullmq-bench.js --redis-url URL --json FILE [--quick] [--relay-json FILE] [--only LIST]');
  process.exit(2);
}

function parseArgs(argv) {
  const o = { quick: false, only: 'bulk,idle,steady,burst,kill' };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--quick') o.quick = true;
    else if (a === '--redis-url') o.redisUrl = value();
    else if (a === '--json') o.json = value();
    else if (a === '--relay-json') o.relayJson = value();
    else if (a === '--only') o.only = value();
    else usage(`unknown argument ${a}`);
  }
  if (!o.redisUrl) usage('--redis-url is required');
  if (!o.json) usage('--json is required');
  o.scenarios = new Set(o.only.split(',').filter(Boolean));
  for (const s of o.scenarios) {
    if (!['bulk', 'idle', 'steady', 'burst', 'kill'].includes(s)) usage(`unknown scenario ${s}`);
  }
  return o;
}

function redisOptions(url) {
  let u;
  try {
    u = new URL(url);
  } catch (e) {
    usage(`bad --redis-url ${url}`);
  }
  if (u.protocol !== 'redis:') usage(`--redis-url: only redis:// is supported here, not ${u.protocol}`);
  const o = { host: u.hostname, port: Number(u.port || 6379), db: Number(u.pathname.slice(1) || 0) };
  if (u.username) o.username = decodeURIComponent(u.username);
  if (u.password) o.password = decodeURIComponent(u.password);
  return o;
}

// The sizes for this run: the mode's, with the steady and burst loads of the relay's run.
function sizesFor(opts) {
  const s = { ...SIZES[opts.quick ? 'quick' : 'full'] };
  if (!opts.relayJson) return s;
  const relay = JSON.parse(fs.readFileSync(opts.relayJson, 'utf8'));
  const sc = relay.scenarios || {};
  if (sc.steady) {
    s.steadyRate = sc.steady.rate;
    s.steadySeconds = sc.steady.seconds;
    s.backdrop = sc.steady.backdrop_pending;
    s.graceMs = sc.steady.grace_ms;
    if (typeof sc.steady.unrelated_ttl_keys === 'number') s.ttlKeys = sc.steady.unrelated_ttl_keys;
    if (typeof sc.steady.producers === 'number') s.steadyProducers = sc.steady.producers;
  }
  if (sc.burst) s.burstTasks = sc.burst.tasks;
  if (sc.idle) s.backdrop = sc.idle.pending;
  return s;
}

// expiry-bench's payload (task_payload in src/bench/bench_context.cpp): JSON of exactly `bytes`.
function payload(id, bytes = PAYLOAD_BYTES) {
  const head = JSON.stringify({ order_id: id, action: 'cancel-if-unpaid', pad: '' }).length;
  return { order_id: id, action: 'cancel-if-unpaid', pad: 'x'.repeat(Math.max(0, bytes - head)) };
}

// expiry-bench's steady delay of task i (steady_delay_ms, splitmix64): 2000-2999 ms.
function steadyDelayMs(i) {
  const M = (1n << 64n) - 1n;
  let z = (BigInt(i) + 0x9e3779b97f4a7c15n) & M;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & M;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & M;
  z ^= z >> 31n;
  return 2000 + Number(z % 1000n);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const progress = (line) => console.error(`bullmq-bench: ${line}`);

function parseInfo(text) {
  const out = {};
  for (const line of text.split('\r\n')) {
    const i = line.indexOf(':');
    if (i > 0 && line[0] !== '#') out[line.slice(0, i)] = line.slice(i + 1);
  }
  return out;
}

async function redisCpuSeconds(r) {
  const f = parseInfo(await r.info('cpu'));
  return Number(f.used_cpu_sys) + Number(f.used_cpu_user);
}

// CPU seconds (user + system) process `pid` has used, from /proc/<pid>/stat; NaN when unreadable.
function processCpuSeconds(pid) {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;  // utime, stime in clock ticks (USER_HZ 100)
  } catch (e) {
    return NaN;
  }
}

// INFO commandstats calls and usec per command, and INFO cpu: expiry-bench's redis_cost_snapshot.
async function redisCost(r) {
  const commands = {};
  for (const [k, v] of Object.entries(parseInfo(await r.info('commandstats')))) {
    const calls = /calls=(\d+)/.exec(v);
    const usec = /usec=(\d+)/.exec(v);
    if (k.startsWith('cmdstat_') && calls && usec) commands[k.slice(8)] = { calls: Number(calls[1]), usec: Number(usec[1]) };
  }
  return { commands, cpu_seconds: await redisCpuSeconds(r) };
}

// What a window cost, as expiry-bench's redis_cost_delta: {cpu_seconds, commands: {name: {calls, usec}}}.
function redisCostDelta(before, after) {
  const commands = {};
  for (const [name, c] of Object.entries(after.commands)) {
    const was = before.commands[name] || { calls: 0, usec: 0 };
    if (c.calls !== was.calls) commands[name] = { calls: c.calls - was.calls, usec: c.usec - was.usec };
  }
  return { cpu_seconds: after.cpu_seconds - before.cpu_seconds, commands };
}

async function usedMemory(r) {
  return Number(parseInfo(await r.info('memory')).used_memory);
}

// calls per command from INFO commandstats ("cmdstat_evalsha" -> "evalsha").
async function commandCalls(r) {
  const out = {};
  for (const [k, v] of Object.entries(parseInfo(await r.info('commandstats')))) {
    const m = /calls=(\d+)/.exec(v);
    if (k.startsWith('cmdstat_') && m) out[k.slice(8)] = Number(m[1]);
  }
  return out;
}

function percentiles(values) {
  if (values.length === 0) return { observed: 0, p50: null, p99: null, p999: null, max: null };
  const v = Float64Array.from(values).sort();
  const at = (q) => v[Math.min(v.length - 1, Math.ceil(q * v.length) - 1)];
  return { observed: v.length, p50: at(0.5), p99: at(0.99), p999: at(0.999), max: v[v.length - 1] };
}

// A worker process (bullmq-worker.js); `onRows` gets each IPC batch of [order_id, due, seen].
class WorkerProcess {
  constructor(redis, concurrency, { effects = '', onRows = () => {} } = {}) {
    const arg = JSON.stringify({ redis, queue: QUEUE, concurrency, effects });
    this.child = fork(path.join(__dirname, 'bullmq-worker.js'), [arg], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.exited = new Promise((resolve) => this.child.on('exit', (code, signal) => resolve({ code, signal })));
    this.ready = new Promise((resolve, reject) => {
      this.child.on('message', (m) => {
        if (m.type === 'ready') resolve();
        else if (m.type === 'seen') onRows(m.rows);
      });
      this.exited.then(() => reject(new Error('bullmq-worker exited before it was ready')));
    });
  }

  async stop() {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.send({ type: 'stop' });
    const timeout = sleep(30000).then(() => this.child.kill('SIGKILL'));
    await Promise.race([this.exited, timeout]);
    return this.exited;
  }

  kill9() {
    this.child.kill('SIGKILL');
    return this.exited;
  }
}

// Resolves when `done()` is true, checked every 20 ms, or after `ms`; returns done().
async function waitFor(done, ms) {
  const end = Date.now() + ms;
  while (!done() && Date.now() < end) await sleep(20);
  return done();
}

async function addBulkChunked(queue, jobs, chunk) {
  for (let i = 0; i < jobs.length; i += chunk) await queue.addBulk(jobs.slice(i, i + chunk));
}

function farFutureJobs(prefix, n, base) {
  const jobs = new Array(n);
  for (let i = 0; i < n; i++) {
    const id = prefix + i;
    jobs[i] = { name: 'task', data: payload(id), opts: { delay: base + i } };
  }
  return jobs;
}

// (c) addBulk of far-future jobs in chunks of 100, 1000 and 5000, and (e) used_memory per pending
// job. Leaves the last run's jobs pending: the idle and steady backdrop.
async function runBulk(ctx) {
  const n = ctx.sizes.bulkTasks;
  const runs = [];
  for (const chunk of BULK_CHUNKS) {
    await ctx.r.flushall();
    await ctx.queue.waitUntilReady();
    const jobs = farFutureJobs('far-', n, DAY_MS);
    progress(`bulk: addBulk, ${n} far-future jobs in chunks of ${chunk}`);
    const mem0 = await usedMemory(ctx.r);
    const cpu0 = await redisCpuSeconds(ctx.r);
    const t0 = process.hrtime.bigint();
    await addBulkChunked(ctx.queue, jobs, chunk);
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    const cpu1 = await redisCpuSeconds(ctx.r);
    const mem1 = await usedMemory(ctx.r);
    const pending = await ctx.queue.getDelayedCount();
    runs.push({ chunk, tasks: n, seconds, tasks_per_s: n / seconds, redis_cpu_seconds: cpu1 - cpu0,
                pending_after: pending, lost: n - Math.min(n, pending),
                used_memory_per_task: (mem1 - mem0) / n });
  }
  const best = runs.reduce((a, b) => (b.tasks_per_s > a.tasks_per_s ? b : a));
  const last = runs[runs.length - 1];
  const sample = await ctx.r.hgetall(`bull:${QUEUE}:1`);
  ctx.out.scenarios.bulk = { tasks: n, runs, best_chunk: best.chunk, tasks_per_s: best.tasks_per_s };
  ctx.out.scenarios.memory = {
    tasks: n,
    payload_bytes: PAYLOAD_BYTES,
    used_memory_per_task: last.used_memory_per_task,
    used_memory_per_task_each_run: runs.map((r) => r.used_memory_per_task),
    memory_usage_job_hash: await ctx.r.call('MEMORY', 'USAGE', `bull:${QUEUE}:1`, 'SAMPLES', '0'),
    job_hash_encoding: await ctx.r.call('OBJECT', 'ENCODING', `bull:${QUEUE}:1`),
    job_hash_fields: Object.keys(sample),
    hash_max_listpack_value: (await ctx.r.config('GET', 'hash-max-listpack-value'))[1],
  };
}

// Makes sure at least n far-future jobs are pending (when bulk did not run).
async function ensureBackdrop(ctx, n) {
  const have = await ctx.queue.getDelayedCount();
  if (have >= n) return have;
  progress(`backdrop: ${n} far-future jobs`);
  await ctx.r.flushall();
  await addBulkChunked(ctx.queue, farFutureJobs('far-', n, DAY_MS), 1000);
  return ctx.queue.getDelayedCount();
}

// Counts the commands clients send Redis (MONITOR; those run inside scripts apart) until the
// returned stop() is called. Connected before it resolves, so its own HELLO is not counted.
async function startMonitor(redis) {
  const base = new IORedis(redis);
  const monitor = await base.monitor();
  const sent = {};
  const inside = {};
  monitor.on('monitor', (time, args, source) => {
    const name = String(args[0]).toLowerCase();
    if (name === 'info') return;  // ours
    const into = /lua/.test(source) ? inside : sent;
    into[name] = (into[name] || 0) + 1;
  });
  return () => {
    monitor.disconnect();
    base.disconnect();
    return { sent, inside };
  };
}

// (d) a Worker with the backdrop pending and nothing due: commands Redis runs per second.
async function runIdle(ctx) {
  const pending = await ensureBackdrop(ctx, ctx.sizes.backdrop);
  const seconds = ctx.sizes.idleSeconds;
  progress(`idle: a Worker with ${pending} far-future jobs pending, ${seconds} s`);
  const w = new WorkerProcess(ctx.redis, STEADY_CONCURRENCY);
  await w.ready;
  await sleep(1500);
  const stopMonitor = await startMonitor(ctx.redis);
  const calls0 = await commandCalls(ctx.r);
  const t0 = Date.now();
  await sleep(seconds * 1000);
  const calls1 = await commandCalls(ctx.r);
  const elapsed = (Date.now() - t0) / 1000;
  const monitored = stopMonitor();
  await w.stop();
  let total = 0;
  const byCommand = {};
  for (const [name, calls] of Object.entries(calls1)) {
    if (name === 'info' || name === 'monitor') continue;
    const d = calls - (calls0[name] || 0);
    if (d > 0) byCommand[name] = d;
    total += d;
  }
  const sentTotal = Object.values(monitored.sent).reduce((a, b) => a + b, 0);
  ctx.out.scenarios.idle = {
    pending, seconds: elapsed, worker_concurrency: STEADY_CONCURRENCY,
    commands_sent: sentTotal, commands_per_s: sentTotal / elapsed,
    sent_by_command: monitored.sent, run_inside_scripts: monitored.inside,
    commandstats_delta_total: total, commandstats_per_s: total / elapsed, commandstats_by_command: byCommand,
  };
}

async function ensureTtlKeys(r, n) {
  if (n === 0 || (await r.exists(`unrelated:${n - 1}`))) return;
  progress(`steady: ${n} unrelated keys with a 1-day TTL`);
  for (let i = 0; i < n; i += 1000) {
    const p = r.pipeline();
    for (let k = i; k < Math.min(n, i + 1000); k++) p.set(`unrelated:${k}`, 'x', 'EX', 86400);
    await p.exec();
  }
}

// (a) one queue.add at a time, paced, delays of 2-3 s like the relay's, with the backdrop pending
// and the unrelated TTL keys: lateness = when the worker sees the job - its due time.
async function runSteady(ctx) {
  const { steadyRate: rate, steadySeconds: secs, graceMs } = ctx.sizes;
  const backdrop = await ensureBackdrop(ctx, ctx.sizes.backdrop);
  await ensureTtlKeys(ctx.r, ctx.sizes.ttlKeys);
  const n = rate * secs;
  progress(`steady: ${n} jobs at ${rate}/s, ${backdrop} far-future jobs pending`);
  const seen = new Map();
  let duplicated = 0;
  const w = new WorkerProcess(ctx.redis, STEADY_CONCURRENCY, {
    onRows: (rows) => {
      for (const [id, due, at] of rows) {
        if (!id.startsWith('st-bullmq-')) continue;
        if (seen.has(id)) duplicated++;
        else seen.set(id, at - due);
      }
    },
  });
  await w.ready;
  await sleep(300);
  const cost0 = await redisCost(ctx.r);
  const ownCpu0 = process.cpuUsage();
  const workerCpu0 = processCpuSeconds(w.child.pid);
  const t0 = performance.now();
  let maxDue = 0;
  // Producer k adds jobs k, k + P, ... one at a time, as expiry-bench's producer threads do.
  const producers = ctx.sizes.steadyProducers || 1;
  const produce = async (k) => {
    for (let i = k; i < n; i += producers) {
      const wait = t0 + (i * 1000) / rate - performance.now();
      if (wait > 1) await sleep(wait - 1);
      while (producers === 1 && performance.now() < t0 + (i * 1000) / rate) { /* the last millisecond */ }
      const id = `st-bullmq-${i}`;
      const delay = steadyDelayMs(i);
      maxDue = Math.max(maxDue, Date.now() + delay);
      await ctx.queue.add('task', payload(id), { delay });
    }
  };
  await Promise.all(Array.from({ length: producers }, (_, k) => produce(k)));
  const scheduleSeconds = (performance.now() - t0) / 1000;
  await waitFor(() => seen.size >= n, Math.max(0, maxDue + graceMs - Date.now()));
  const cost = redisCostDelta(cost0, await redisCost(ctx.r));
  const workerCpu = processCpuSeconds(w.child.pid) - workerCpu0;
  const own = process.cpuUsage(ownCpu0);
  const windowSeconds = (performance.now() - t0) / 1000;
  await w.stop();
  const lateness = percentiles([...seen.values()]);
  ctx.out.scenarios.steady = {
    rate, seconds: secs, tasks: n, producers, backdrop_pending: backdrop, keys_with_ttl: ctx.sizes.ttlKeys,
    worker_concurrency: STEADY_CONCURRENCY, schedule_rate: n / scheduleSeconds, window_seconds: windowSeconds,
    forwarded: seen.size, not_seen_by_deadline: n - seen.size, duplicated, lateness_ms: lateness,
    redis_cpu_seconds: cost.cpu_seconds, redis_cpu_us_per_task: (cost.cpu_seconds * 1e6) / n, redis_cost: cost,
    // The client side: the worker process, and this producer process (it also tallies the jobs).
    worker_cpu_seconds: workerCpu, producer_cpu_seconds: (own.user + own.system) / 1e6,
  };
}

// (b) every job due in the same millisecond, one run per worker concurrency.
async function runBurstOnce(ctx, concurrency) {
  const n = ctx.sizes.burstTasks;
  await ctx.r.flushall();
  await ctx.queue.waitUntilReady();
  const seen = new Map();
  let duplicated = 0;
  let lastSeen = 0;
  const w = new WorkerProcess(ctx.redis, concurrency, {
    onRows: (rows) => {
      for (const [id, , at] of rows) {
        if (seen.has(id)) duplicated++;
        else seen.set(id, at);
        if (at > lastSeen) lastSeen = at;
      }
    },
  });
  await w.ready;
  // Due once every job is added (addBulk at about 20k/s here, 4 s of margin at 10k/s).
  const ts = Date.now();
  const due = ts + 2000 + Math.ceil(n / 10);
  const jobs = new Array(n);
  for (let i = 0; i < n; i++) {
    const id = `bu-bullmq-c${concurrency}-${i}`;
    jobs[i] = { name: 'task', data: payload(id), opts: { timestamp: ts, delay: due - ts } };
  }
  progress(`burst: ${n} jobs due in the same millisecond, worker concurrency ${concurrency}`);
  await addBulkChunked(ctx.queue, jobs, 1000);
  const overran = Date.now() >= due;
  while (Date.now() < due - 50) await sleep(Math.min(200, due - 50 - Date.now()));
  const cpu0 = await redisCpuSeconds(ctx.r);
  await waitFor(() => seen.size >= n, 300000);
  const cpu1 = await redisCpuSeconds(ctx.r);
  await w.stop();
  const drainMs = lastSeen - due;
  return { concurrency, tasks: n, drain_ms: drainMs, tasks_per_s: drainMs > 0 ? (seen.size * 1000) / drainMs : null,
           forwarded: seen.size, lost: n - seen.size, duplicated, redis_cpu_seconds: cpu1 - cpu0,
           redis_cpu_us_per_task: ((cpu1 - cpu0) * 1e6) / n, schedule_overran_due: overran };
}

async function runBurst(ctx) {
  const runs = [];
  for (const c of BURST_CONCURRENCIES) runs.push(await runBurstOnce(ctx, c));
  const best = runs.reduce((a, b) => ((b.tasks_per_s || 0) > (a.tasks_per_s || 0) ? b : a));
  ctx.out.scenarios.burst = { tasks: ctx.sizes.burstTasks, runs, best_concurrency: best.concurrency,
                              tasks_per_s: best.tasks_per_s, redis_cpu_seconds: best.redis_cpu_seconds };
}

// (f) jobs coming due over killSeconds; the worker process is killed -9 half-way and a new one
// started at once. Each job's effect is an RPUSH by the worker before the job completes.
async function runKill(ctx) {
  const { killTasks: n, killSeconds: secs } = ctx.sizes;
  const effects = 'bullmq-bench:effects';
  await ctx.r.flushall();
  await ctx.queue.waitUntilReady();
  let w = new WorkerProcess(ctx.redis, KILL_CONCURRENCY, { effects });
  await w.ready;
  const ts = Date.now();
  const start = ts + 1500;
  const jobs = [];
  for (let i = 0; i < n; i++) {
    const id = `kill-bullmq-${i}`;
    jobs.push({ name: 'task', data: payload(id), opts: { timestamp: ts, delay: start + Math.floor((i * secs * 1000) / n) - ts } });
  }
  await addBulkChunked(ctx.queue, jobs, 1000);
  progress(`kill: ${n} jobs due over ${secs} s; kill -9 of the worker half-way`);
  await sleep(start + (secs * 1000) / 2 - Date.now());
  const killedAt = Date.now();
  const seenBeforeKill = await ctx.r.llen(effects);
  const activeAtKill = await ctx.queue.getActiveCount();
  await w.kill9();
  w = new WorkerProcess(ctx.redis, KILL_CONCURRENCY, { effects });
  await w.ready;
  const restartMs = Date.now() - killedAt;
  progress(`kill: worker restarted ${restartMs} ms after the kill (${activeAtKill} jobs were active); ` +
           `waiting up to ${KILL_WAIT_MS / 1000} s for the queue to empty (stalled-job recovery)`);
  const queueEmpty = async () => {
    const c = await ctx.queue.getJobCounts('active', 'wait', 'delayed', 'prioritized', 'paused');
    return Object.values(c).every((v) => v === 0);
  };
  const end = Date.now() + KILL_WAIT_MS;
  let empty = false;
  while (Date.now() < end && !(empty = await queueEmpty())) await sleep(250);
  await w.stop();
  const counts = new Map();
  const lateness = [];
  const lateAfterKill = [];
  for (const line of await ctx.r.lrange(effects, 0, -1)) {
    const [id, due, at] = line.split(' ');
    counts.set(id, (counts.get(id) || 0) + 1);
    const late = Number(at) - Number(due);
    lateness.push(late);
    if (late > 1000) lateAfterKill.push(late);
  }
  let duplicated = 0;
  for (const c of counts.values()) duplicated += c - 1;
  const stillQueued = empty ? 0 : n - counts.size;
  ctx.out.scenarios.kill = {
    tasks: n, seconds: secs, worker_concurrency: KILL_CONCURRENCY, seen_before_kill: seenBeforeKill,
    active_at_kill: activeAtKill, restart_ms: restartMs, waited_s: (Date.now() - killedAt) / 1000,
    queue_empty_at_end: empty, lost: n - counts.size, still_queued_at_end: stillQueued, duplicated,
    lateness_ms: percentiles(lateness), stragglers_over_1s: lateAfterKill.length,
    straggler_lateness_ms: percentiles(lateAfterKill),
  };
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const redis = redisOptions(opts.redisUrl);
  const r = new IORedis({ ...redis, maxRetriesPerRequest: 3 });
  const queue = new Queue(QUEUE, { connection: redis });
  const sizes = sizesFor(opts);
  const info = parseInfo(await r.info('server'));
  const out = {
    mode: opts.quick ? 'quick' : 'full',
    bullmq_version: require('bullmq/package.json').version,
    ioredis_version: require('ioredis/package.json').version,
    node_version: process.version,
    redis_version: info.redis_version,
    payload_bytes: PAYLOAD_BYTES,
    sizes,
    scenarios: {},
  };
  const ctx = { redis, r, queue, sizes, out };
  const t0 = Date.now();
  await r.flushall();
  if (opts.scenarios.has('bulk')) await runBulk(ctx);
  if (opts.scenarios.has('idle')) await runIdle(ctx);
  if (opts.scenarios.has('steady')) await runSteady(ctx);
  if (opts.scenarios.has('burst')) await runBurst(ctx);
  if (opts.scenarios.has('kill')) await runKill(ctx);
  await r.flushall();
  out.seconds = (Date.now() - t0) / 1000;
  await queue.close();
  r.disconnect();
  fs.writeFileSync(opts.json, JSON.stringify(out, null, 2) + '\n');
  progress(`${out.seconds.toFixed(0)} s; JSON: ${opts.json}`);
  process.exit(0);  // whatever connection a library left open
}

main().catch((err) => {
  console.error(`bullmq-bench: ${err.stack || err.message}`);
  process.exit(2);
});
