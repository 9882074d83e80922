// See dead_stream_text.h.
#include "config/dead_stream_text.h"

namespace expiry {

std::string effective_dead_stream_text(const std::string& ns, const std::string& dead_stream, int buckets) {
  const std::string per_bucket = ns + ":{B}:dead per bucket";
  if (buckets > 1) return per_bucket;
  if (buckets == 1) return dead_stream + " (on a Redis Cluster " + per_bucket + ")";
  return dead_stream + " on one Redis with one bucket, else " + per_bucket;
}

}  // namespace expiry
