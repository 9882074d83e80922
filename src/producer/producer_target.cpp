// See producer_target.h.
#include "producer/producer_target.h"

#include "config/service_options.h"
#include "config/settings.h"

namespace expiry {

ProducerTarget resolve_producer_target(const std::map<std::string, std::string>& settings) {
  std::vector<OptionSpec> specs = connection_option_specs();
  append_specs(specs, stream_option_specs());
  const EnvLookup no_env = [](const std::string&) { return std::optional<std::string>(); };
  const Settings s = Settings::resolve(specs, nullptr, "", no_env, "", settings);
  ProducerTarget target;
  apply_connection_settings(s, target.redis, target.ns);
  target.buckets = apply_bucket_setting(s);
  std::string group;  // a relay setting, checked as the programs check it, unused here
  apply_stream_settings(s, target.ns, target.stream, group);
  return target;
}

}  // namespace expiry
