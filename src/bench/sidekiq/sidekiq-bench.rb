#!/usr/bin/env ruby
# frozen_string_literal: true

# Sidekiq as a peer of the relay, beside BullMQ (src/bench/bullmq/bullmq-bench.js): the same
# steady and memory loads as expiry-bench's scenarios, on the same Redis, after the other sides
# in the same run (scripts/bench.sh, src/bench/sidekiq/run.sh). Writes its figures as JSON;
# src/bench/bullmq/compare.js prints them beside the relay's and BullMQ's.
#
# Usage: ruby sidekiq-bench.rb --redis-url URL --json FILE [--quick] [--relay-json FILE]
#          [--only steady,memory] [--poll-interval S]
#   --relay-json: expiry-bench's JSON of the same run; steady's rate, seconds, backdrop, grace and
#     unrelated TTL keys are taken from it where it has them, as bullmq-bench.js does.
#   --poll-interval: Sidekiq's average_scheduled_poll_interval, seconds (default 0.1; Sidekiq's
#     own default is 5). Sidekiq 6.4 enforces no minimum; each poll sleeps a random 0.5-1.5 times it.
# Redis is flushed (FLUSHALL) before and after; memory leaves its far-future jobs as steady's
# backdrop, as bullmq-bench.js's bulk does. Exit code 0 when the run completed (a lost or
# duplicated job is Sidekiq's figure, reported, not an error), 2 on a usage or setup error.

require "json"
require "rbconfig"
require "uri"
require "redis"
require "sidekiq"

module SidekiqBench
  # The sizes of expiry-bench's scenarios (src/bench/bench_context.cpp), as in bullmq-bench.js.
  SIZES = {
    full: {steady_rate: 1000, steady_seconds: 30, backdrop: 1_000_000, ttl_keys: 100_000, grace_ms: 10_000,
           memory_tasks: 1_000_000},
    quick: {steady_rate: 200, steady_seconds: 10, backdrop: 100_000, ttl_keys: 20_000, grace_ms: 5000,
            memory_tasks: 100_000}
  }.freeze
  SCENARIOS = %w[memory steady].freeze
  PAYLOAD_BYTES = 100
  DAY_MS = 86_400_000
  QUEUE = "default"
  JOB_CLASS = "SidekiqBench::Job"
  # Sidekiq's default concurrency (threads of the one server process).
  CONCURRENCY = 10
  DEFAULT_POLL_INTERVAL = 0.1
  PUSH_CHUNK = 1000
  WORKER = File.expand_path("worker.rb", __dir__)
  M64 = (1 << 64) - 1

  # A bad argument: exit 2 with the usage line.
  class UsageError < StandardError; end
  # A setup that failed (Redis unreachable, the Sidekiq server not running jobs): exit 2.
  class SetupError < StandardError; end

  def self.progress(line)
    warn "sidekiq-bench: #{line}"
  end

  def self.parse_args(argv)
    o = {quick: false, only: SCENARIOS.join(","), poll_interval: DEFAULT_POLL_INTERVAL}
    i = 0
    while i < argv.length
      a = argv[i]
      value = lambda do
        raise UsageError, "#{a} needs a value" if i + 1 >= argv.length
        i += 1
        argv[i]
      end
      case a
      when "--quick" then o[:quick] = true
      when "--redis-url" then o[:redis_url] = value.call
      when "--json" then o[:json] = value.call
      when "--relay-json" then o[:relay_json] = value.call
      when "--only" then o[:only] = value.call
      when "--poll-interval"
        o[:poll_interval] = Float(value.call, exception: false)
        raise UsageError, "--poll-interval needs a positive number of seconds" unless o[:poll_interval]&.positive?
      else raise UsageError, "unknown argument #{a}"
      end
      i += 1
    end
    raise UsageError, "--redis-url is required" unless o[:redis_url]
    raise UsageError, "--json is required" unless o[:json]
    uri = URI.parse(o[:redis_url]) rescue nil
    raise UsageError, "bad --redis-url #{o[:redis_url]}" unless uri
    raise UsageError, "--redis-url: only redis:// is supported here, not #{uri.scheme}:" unless uri.scheme == "redis"
    o[:scenarios] = o[:only].split(",").reject(&:empty?)
    o[:scenarios].each { |s| raise UsageError, "unknown scenario #{s}" unless SCENARIOS.include?(s) }
    o
  end

  # The sizes for this run: the mode's, with the steady load of the relay's run.
  def self.sizes_for(opts)
    s = SIZES[opts[:quick] ? :quick : :full].dup
    return s unless opts[:relay_json]
    relay = begin
      JSON.parse(File.read(opts[:relay_json]))
    rescue SystemCallError, JSON::ParserError => e
      raise UsageError, "--relay-json #{opts[:relay_json]}: #{e.message}"
    end
    sc = relay["scenarios"] || {}
    if (st = sc["steady"])
      s[:steady_rate] = st.fetch("rate", s[:steady_rate])
      s[:steady_seconds] = st.fetch("seconds", s[:steady_seconds])
      s[:backdrop] = st.fetch("backdrop_pending", s[:backdrop])
      s[:grace_ms] = st.fetch("grace_ms", s[:grace_ms])
      s[:ttl_keys] = st["unrelated_ttl_keys"] if st["unrelated_ttl_keys"].is_a?(Integer)
    end
    s[:backdrop] = sc["idle"].fetch("pending", s[:backdrop]) if sc["idle"]
    %i[steady_rate steady_seconds backdrop grace_ms ttl_keys].each do |k|
      raise UsageError, "--relay-json #{opts[:relay_json]}: #{k} is #{s[k].inspect}" unless s[k].is_a?(Integer) && s[k] >= 0
    end
    s
  end

  # expiry-bench's payload (task_payload in src/bench/bench_context.cpp): JSON of exactly `bytes`.
  def self.payload(id, bytes = PAYLOAD_BYTES)
    head = JSON.generate({"order_id" => id, "action" => "cancel-if-unpaid", "pad" => ""}).bytesize
    {"order_id" => id, "action" => "cancel-if-unpaid", "pad" => "x" * [0, bytes - head].max}
  end

  # expiry-bench's steady delay of task i (steady_delay_ms, splitmix64): 2000-2999 ms.
  def self.steady_delay_ms(i)
    z = (i + 0x9e3779b97f4a7c15) & M64
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M64
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M64
    z ^= z >> 31
    2000 + z % 1000
  end

  def self.now_ms
    (Time.now.to_f * 1000).round
  end

  def self.mono
    Process.clock_gettime(Process::CLOCK_MONOTONIC)
  end

  def self.parse_info(text)
    text.split("\r\n").each_with_object({}) do |line, out|
      k, v = line.split(":", 2)
      out[k] = v if v && !line.start_with?("#")
    end
  end

  def self.redis_cpu_seconds(r)
    f = parse_info(r.call("INFO", "cpu"))
    Float(f["used_cpu_sys"]) + Float(f["used_cpu_user"])
  end

  def self.used_memory(r)
    Integer(parse_info(r.call("INFO", "memory"))["used_memory"])
  end

  # {command => {calls, usec}} from INFO commandstats ("cmdstat_evalsha" -> "evalsha").
  def self.command_stats(r)
    parse_info(r.call("INFO", "commandstats")).each_with_object({}) do |(k, v), out|
      next unless k.start_with?("cmdstat_")
      calls = v[/calls=(\d+)/, 1]
      usec = v[/(?:^|,)usec=(\d+)/, 1]
      out[k.delete_prefix("cmdstat_")] = {"calls" => Integer(calls), "usec" => Integer(usec)} if calls && usec
    end
  end

  # The per-command delta between two command_stats, commands whose calls changed, the bench's
  # own INFO included: as expiry-bench's redis_cost_delta (src/bench/redis_probe.cpp) and
  # bullmq-bench.js's redisCostDelta.
  def self.command_stats_delta(before, after)
    after.each_with_object({}) do |(name, a), out|
      b = before[name] || {"calls" => 0, "usec" => 0}
      calls = a["calls"] - b["calls"]
      out[name] = {"calls" => calls, "usec" => a["usec"] - b["usec"]} unless calls.zero?
    end
  end

  def self.percentiles(values)
    return {"observed" => 0, "p50" => nil, "p99" => nil, "p999" => nil, "max" => nil} if values.empty?
    v = values.sort
    at = ->(q) { v[[v.length - 1, (q * v.length).ceil - 1].min] }
    {"observed" => v.length, "p50" => at.(0.5), "p99" => at.(0.99), "p999" => at.(0.999), "max" => v[-1]}
  end

  def self.config_get(r, *names)
    names.each do |name|
      pair = r.call("CONFIG", "GET", name)
      return Integer(pair[1]) if pair && pair.length == 2
    end
    nil
  end

  # Pushes `n` far-future jobs into the scheduled set ("far-<i>", due in a day and i ms) with
  # Sidekiq::Client.push_bulk, PUSH_CHUNK per call.
  def self.push_far_future(n)
    base = now_ms + DAY_MS
    (0...n).step(PUSH_CHUNK) do |i|
      ids = (i...[n, i + PUSH_CHUNK].min)
      dues = ids.map { |k| base + k }
      Sidekiq::Client.push_bulk("class" => JOB_CLASS, "queue" => QUEUE,
                                "args" => ids.zip(dues).map { |k, due| [payload("far-#{k}"), due] },
                                "at" => dues.map { |due| due / 1000.0 })
    end
  end

  # A Sidekiq server process (`sidekiq -r worker.rb`), a child of this one. Each job it performs
  # is handed to the block given to new as (order_id, due_ms, ran_ms), on a reader thread.
  class Server
    def initialize(redis_url, poll_interval, &on_row)
      results_r, results_w = IO.pipe
      stdin_r, @stdin_w = IO.pipe
      env = {"SIDEKIQ_BENCH_REDIS_URL" => redis_url, "SIDEKIQ_BENCH_POLL_INTERVAL" => poll_interval.to_s}
      argv = [RbConfig.ruby, Gem.bin_path("sidekiq", "sidekiq"), "-r", WORKER, "-c", CONCURRENCY.to_s,
              "-q", QUEUE, "-t", "5"]
      @pid = Process.spawn(env, *argv, in: stdin_r, out: :err, 3 => results_w, close_others: true)
      @waiter = Process.detach(@pid)
      stdin_r.close
      results_w.close
      @reader = Thread.new do
        results_r.each_line do |line|
          id, due, ran = line.split
          on_row.call(id, Integer(due), Integer(ran))
        end
      ensure
        results_r.close
      end
    end

    def alive?
      @waiter.alive?
    end

    # TERM, then KILL if it has not exited `grace_s` later; reaps it and drains its results.
    def stop(grace_s = 15)
      if @waiter.alive?
        Process.kill("TERM", @pid)
        unless @waiter.join(grace_s)
          Process.kill("KILL", @pid)
          @waiter.join
        end
      end
      @stdin_w.close unless @stdin_w.closed?
      @reader.join
      @waiter.value
    end
  end

  # The jobs a Server reported: first-seen lateness per id with `prefix`, duplicates counted.
  class Seen
    attr_reader :duplicated

    def initialize(prefix)
      @prefix = prefix
      @lateness = {}
      @others = {}
      @duplicated = 0
      @lock = Mutex.new
      @changed = ConditionVariable.new
    end

    def add(id, due_ms, ran_ms)
      @lock.synchronize do
        if !id.start_with?(@prefix)
          @others[id] = true
        elsif @lateness.key?(id)
          @duplicated += 1
        else
          @lateness[id] = ran_ms - due_ms
        end
        @changed.broadcast
      end
    end

    def size
      @lock.synchronize { @lateness.size }
    end

    def lateness
      @lock.synchronize { @lateness.values }
    end

    def other?(id)
      @lock.synchronize { @others.key?(id) }
    end

    # Blocks until `n` jobs with the prefix were seen or `deadline` (mono) passes; true if seen.
    def wait_for_count(n, deadline)
      wait_until(deadline) { @lateness.size >= n }
    end

    # Blocks until a job `id` without the prefix was seen, the block is true, or `deadline` (mono)
    # passes; true if seen.
    def wait_for_other(id, deadline)
      wait_until(deadline) { @others.key?(id) || yield }
      other?(id)
    end

    private

    def wait_until(deadline)
      @lock.synchronize do
        loop do
          return true if yield
          left = deadline - SidekiqBench.mono
          return false if left <= 0
          @changed.wait(@lock, [left, 0.5].min)
        end
      end
    end
  end

  class Bench
    def initialize(opts)
      @opts = opts
      @sizes = SidekiqBench.sizes_for(opts)
      @r = Redis.new(url: opts[:redis_url], timeout: 120)
      Sidekiq.configure_client { |c| c.redis = {url: opts[:redis_url], size: 2} }
      @out = {
        "system" => "sidekiq",
        "version" => Sidekiq::VERSION,
        "redis_gem_version" => Redis::VERSION,
        "ruby_version" => RUBY_VERSION,
        "mode" => opts[:quick] ? "quick" : "full",
        "average_scheduled_poll_interval_s" => opts[:poll_interval],
        "worker_concurrency" => CONCURRENCY,
        "payload_bytes" => PAYLOAD_BYTES,
        "sizes" => @sizes.transform_keys(&:to_s),
        "scenarios" => {}
      }
    end

    def run
      begin
        @out["redis_version"] = SidekiqBench.parse_info(@r.call("INFO", "server"))["redis_version"]
        @r.call("FLUSHALL")
      rescue Redis::BaseError => e
        raise SetupError, "Redis at #{@opts[:redis_url]}: #{e.message}"
      end
      t0 = SidekiqBench.mono
      run_memory if @opts[:scenarios].include?("memory")
      run_steady if @opts[:scenarios].include?("steady")
      @r.call("FLUSHALL")
      @out["seconds"] = SidekiqBench.mono - t0
      File.write(@opts[:json], JSON.pretty_generate(@out) + "\n")
      SidekiqBench.progress(format("%.0f s; JSON: %s", @out["seconds"], @opts[:json]))
    end

    # used_memory per pending far-future job, from a flushed database; leaves them pending.
    def run_memory
      n = @sizes[:memory_tasks]
      @r.call("FLUSHALL")
      SidekiqBench.progress("memory: #{n} far-future jobs (push_bulk, #{PUSH_CHUNK} a call)")
      mem0 = SidekiqBench.used_memory(@r)
      t0 = SidekiqBench.mono
      SidekiqBench.push_far_future(n)
      seconds = SidekiqBench.mono - t0
      mem1 = SidekiqBench.used_memory(@r)
      pending = @r.call("ZCARD", "schedule")
      zset_bytes = @r.call("MEMORY", "USAGE", "schedule", "SAMPLES", "0")
      sample = @r.call("ZRANGE", "schedule", 0, 0)[0]
      @out["scenarios"]["memory"] = {
        "tasks" => n,
        "payload_bytes" => PAYLOAD_BYTES,
        "pending_after" => pending,
        "push_seconds" => seconds,
        "used_memory_per_task" => (mem1 - mem0).fdiv(n),
        "memory_usage_schedule_zset" => zset_bytes,
        "memory_usage_schedule_zset_per_task" => zset_bytes.fdiv(n),
        "schedule_zset_encoding" => @r.call("OBJECT", "ENCODING", "schedule"),
        "job_json_bytes" => sample&.bytesize,
        "job_fields" => sample ? JSON.parse(sample).keys : [],
        "hash_max_listpack_value" => SidekiqBench.config_get(@r, "hash-max-listpack-value", "hash-max-ziplist-value"),
        "zset_max_listpack_value" => SidekiqBench.config_get(@r, "zset-max-listpack-value", "zset-max-ziplist-value")
      }
    end

    # Makes sure at least n far-future jobs are pending (when memory did not leave them).
    def ensure_backdrop(n)
      have = @r.call("ZCARD", "schedule")
      return have if have >= n
      SidekiqBench.progress("backdrop: #{n} far-future jobs")
      @r.call("FLUSHALL")
      SidekiqBench.push_far_future(n)
      @r.call("ZCARD", "schedule")
    end

    def ensure_ttl_keys(n)
      return if n.zero? || @r.call("EXISTS", "unrelated:#{n - 1}") == 1
      SidekiqBench.progress("steady: #{n} unrelated keys with a 1-day TTL")
      (0...n).step(1000) do |i|
        @r.pipelined do |p|
          (i...[n, i + 1000].min).each { |k| p.call("SET", "unrelated:#{k}", "x", "EX", 86_400) }
        end
      end
    end

    # One Sidekiq::Client.push with "at" at a time, paced, delays of 2-3 s like the relay's, with
    # the backdrop pending and the unrelated TTL keys: lateness = when the job runs - its due time.
    def run_steady
      rate = @sizes[:steady_rate]
      secs = @sizes[:steady_seconds]
      grace_ms = @sizes[:grace_ms]
      backdrop = ensure_backdrop(@sizes[:backdrop])
      ensure_ttl_keys(@sizes[:ttl_keys])
      n = rate * secs
      seen = Seen.new("st-sidekiq-")
      server = Server.new(@opts[:redis_url], @opts[:poll_interval]) { |id, due, ran| seen.add(id, due, ran) }
      begin
        wait_for_poller(server, seen)
        SidekiqBench.progress("steady: #{n} jobs at #{rate}/s, #{backdrop} far-future jobs pending")
        stats0 = SidekiqBench.command_stats(@r)
        cpu0 = SidekiqBench.redis_cpu_seconds(@r)
        t0 = SidekiqBench.mono
        max_due = 0
        n.times do |i|
          wait = t0 + i.fdiv(rate) - SidekiqBench.mono
          sleep(wait) if wait.positive?
          due = SidekiqBench.now_ms + SidekiqBench.steady_delay_ms(i)
          max_due = due if due > max_due
          Sidekiq::Client.push("class" => JOB_CLASS, "queue" => QUEUE,
                               "args" => [SidekiqBench.payload("st-sidekiq-#{i}"), due], "at" => due / 1000.0)
        end
        schedule_seconds = SidekiqBench.mono - t0
        deadline = SidekiqBench.mono + [0, max_due + grace_ms - SidekiqBench.now_ms].max / 1000.0
        seen.wait_for_count(n, deadline)
        forwarded = seen.size
        cpu1 = SidekiqBench.redis_cpu_seconds(@r)
        stats1 = SidekiqBench.command_stats(@r)
        window_seconds = SidekiqBench.mono - t0
      ensure
        server.stop
      end
      commands = SidekiqBench.command_stats_delta(stats0, stats1)
      @out["scenarios"]["steady"] = {
        "rate" => rate, "seconds" => secs, "tasks" => n, "backdrop_pending" => backdrop,
        "keys_with_ttl" => @sizes[:ttl_keys], "worker_concurrency" => CONCURRENCY,
        "average_scheduled_poll_interval_s" => @opts[:poll_interval],
        "schedule_rate" => n / schedule_seconds, "window_seconds" => window_seconds,
        "forwarded" => forwarded, "not_seen_by_deadline" => n - forwarded, "duplicated" => seen.duplicated,
        "lateness_ms" => SidekiqBench.percentiles(seen.lateness),
        "redis_cpu_seconds" => cpu1 - cpu0, "redis_cpu_us_per_task" => (cpu1 - cpu0) * 1e6 / n,
        "commandstats_by_command" => commands,
        # The shape of the relay's and BullMQ's steady redis_cost (expiry-bench's redis_cost_delta).
        "redis_cost" => {"cpu_seconds" => cpu1 - cpu0, "commands" => commands}
      }
    end

    # Schedules a probe job due now and waits until the server ran it: the server is up and its
    # poller has made its first pass (Sidekiq's initial wait is 10-15 s).
    def wait_for_poller(server, seen)
      SidekiqBench.progress("steady: waiting for Sidekiq's first scheduled poll (its initial wait is 10-15 s)")
      due = SidekiqBench.now_ms
      Sidekiq::Client.push("class" => JOB_CLASS, "queue" => QUEUE, "args" => [SidekiqBench.payload("probe"), due],
                           "at" => due / 1000.0)
      wait_s = 30 + 2 * @opts[:poll_interval]
      deadline = SidekiqBench.mono + wait_s
      return if seen.wait_for_other("probe", deadline) { !server.alive? }
      raise SetupError, "the Sidekiq server exited before it ran a job" unless server.alive?
      raise SetupError, "the Sidekiq server ran no scheduled job within #{wait_s} s"
    end
  end

  def self.main(argv)
    opts = parse_args(argv)
    Bench.new(opts).run
    0
  rescue UsageError => e
    warn "sidekiq-bench: #{e.message}"
    warn "usage: ruby sidekiq-bench.rb --redis-url URL --json FILE [--quick] [--relay-json FILE] " \
         "[--only steady,memory] [--poll-interval S]"
    2
  rescue SetupError => e
    warn "sidekiq-bench: #{e.message}"
    2
  rescue StandardError => e
    warn "sidekiq-bench: #{e.class}: #{e.message}"
    warn e.backtrace.first(5).join("\n")
    2
  end
end

exit SidekiqBench.main(ARGV) if $PROGRAM_NAME == __FILE__
