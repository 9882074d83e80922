# The job class and server settings of the Sidekiq server that sidekiq-bench.rb starts
# (`sidekiq -r worker.rb`); loaded by that server only.
#
# Environment (set by sidekiq-bench.rb):
#   SIDEKIQ_BENCH_REDIS_URL: the Redis the server works on.
#   SIDEKIQ_BENCH_POLL_INTERVAL: average_scheduled_poll_interval, seconds (a float).
# File descriptors:
#   3: every job performed writes one line "<order_id> <due_ms> <ran_ms>\n" there (ran_ms: the
#      wall clock, ms, when perform began), so reporting costs Redis nothing.
#   stdin: when it reaches end of file (sidekiq-bench.rb exited, however), the server sends
#      itself TERM and shuts down as Sidekiq does on TERM.
require "sidekiq"

# Sidekiq 6.4 calls redis-rb 4.8 (Debian's ruby-redis) the 4.x way, and redis-rb warns on stderr
# at each such call (BRPOP's positional timeout, SADD): silenced.
Redis.silence_deprecations = true

module SidekiqBench
  RESULTS = IO.new(3, "w")
  RESULTS.sync = true
  RESULTS_LOCK = Mutex.new

  # A job's arguments: [payload, due_ms]; payload["order_id"] names it.
  class Job
    include Sidekiq::Worker

    def perform(payload, due_ms)
      ran_ms = (Time.now.to_f * 1000).round
      line = "#{payload["order_id"]} #{due_ms} #{ran_ms}\n"
      RESULTS_LOCK.synchronize { RESULTS.write(line) }
    end
  end
end

Sidekiq.configure_server do |config|
  config.redis = {url: ENV.fetch("SIDEKIQ_BENCH_REDIS_URL")}
  config.average_scheduled_poll_interval = Float(ENV.fetch("SIDEKIQ_BENCH_POLL_INTERVAL"))
  # Sidekiq logs each job's start and end at INFO: not part of the cost compared here.
  Sidekiq.logger.level = Logger::WARN
end

Thread.new do
  $stdin.read
  Process.kill("TERM", Process.pid)
end
