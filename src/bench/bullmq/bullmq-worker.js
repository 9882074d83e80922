// One BullMQ Worker in a process of its own, forked by bullmq-bench.js (so that a kill -9 takes
// exactly the worker, and the producer does not share its event loop).
//
// Argument: a JSON object {redis, queue, concurrency, effects}.
//   redis: ioredis options {host, port, db, username?, password?}
//   effects: a Redis list key. When set, the processor records its effect there ("<order_id>
//     <due_ms> <seen_ms>", RPUSH) before the job completes, so the record survives a kill -9 of
//     this process; otherwise it reports each job to the parent over IPC.
// IPC to the parent: {type: 'ready'} once the worker is connected; {type: 'seen', rows: [[order_id,
// due_ms, seen_ms], ...]} every 50 ms while jobs arrive; {type: 'closed'} after a {type: 'stop'}.
// due_ms is BullMQ's own due time: the job's timestamp plus the delay it was added with.
'use strict';

const { Worker } = require('bullmq');
const IORedis = require('ioredis');

const opts = JSON.parse(process.argv[2]);
let rows = [];
const effects = opts.effects ? new IORedis(opts.redis) : null;

async function processor(job) {
  const seen = Date.now();
  const due = job.timestamp + (job.opts.delay || 0);  // job.delay is 0 once promoted
  if (effects) {
    await effects.rpush(opts.effects, `${job.data.order_id} ${due} ${seen}`);
  } else {
    rows.push([job.data.order_id, due, seen]);
  }
}

function flush() {
  if (rows.length === 0) return;
  process.send({ type: 'seen', rows });
  rows = [];
}

const worker = new Worker(opts.queue, processor, {
  connection: opts.redis,
  concurrency: opts.concurrency,
  // Completed jobs are deleted at once (the cheapest of BullMQ's auto-removal settings), failed
  // ones kept up to 1000. BullMQ's defaults otherwise: lockDuration 30 s, stalledInterval 30 s,
  // maxStalledCount 1, drainDelay 5 s.
  removeOnComplete: { count: 0 },
  removeOnFail: { count: 1000 },
});
worker.on('error', (err) => console.error(`bullmq-worker: ${err.message}`));
const timer = setInterval(flush, 50);

process.on('message', async (msg) => {
  if (msg.type !== 'stop') return;
  await worker.close();
  clearInterval(timer);
  flush();
  if (effects) await effects.quit();
  process.send({ type: 'closed' }, () => process.exit(0));
});
process.on('disconnect', () => process.exit(0));  // the parent died

worker.waitUntilReady().then(
  () => process.send({ type: 'ready' }),
  (err) => {
    console.error(`bullmq-worker: ${err.message}`);
    process.exit(2);
  },
);
