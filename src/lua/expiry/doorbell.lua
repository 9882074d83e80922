-- The consumers' doorbell (docs/architecture.md, "Data flow"): on a Redis Cluster, a claim call
-- that appended to its bucket's stream NS:{B}:stream publishes once on NS:{B}:ring, so that the
-- consumers serving bucket B read that stream now instead of polling it (node_consumer.h). On a
-- single Redis nothing is published: its consumers block on their one stream.
--
-- A classic PUBLISH, not SPUBLISH: hiredis 1.2.0's async API, which the consumers use, cannot
-- receive sharded messages (docs/architecture.md). The channel keeps the bucket's hash tag, so a
-- move to SPUBLISH changes only the command. The ring is a hint: a consumer that missed it reads
-- the stream on its safety poll, so a user without the channel permission only rings nothing.

local function ring_channel(prefix)
  return prefix .. 'ring'
end

-- Rings bucket ctx.prefix's doorbell if this call appended to the bucket's stream (claim context
-- `ctx`, forward.lua; nil when nothing was claimed). `cluster`: whether the call runs on a
-- cluster, when the caller asked already (sweep); nil asks here (claim assumes a cluster).
local function ring_doorbell(ctx, cluster)
  if ctx == nil or not ctx.ready[ctx.prefix .. 'stream'] then return end
  if cluster == nil then cluster = on_cluster() end
  if not cluster then return end
  local channel = ring_channel(ctx.prefix)
  if redis.acl_check_cmd('PUBLISH', channel, '1') then redis.call('PUBLISH', channel, '1') end
end
