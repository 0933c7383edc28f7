# `property/changed-storm/<n>` (issue 31, item 2; harness/src/ipc/storm.rs,
# docs/scenarios.md "PropertiesChanged storms") for the Ruby adapters: the
# storm object from canon.json and the one check of what the subscriber kept,
# worded as the harness's `storm_digest` (runner/tests/program_storm.rs
# compares both on the same broken inputs): every update received once, in
# order, ending with the last value; a lost one fails with the counts.
require "dbus_matrix/canon"

module DbusMatrix
  module Storm
    S = Canon::CANON["storm"]
    PATH = S["path"]
    INTERFACE = S["interface"]
    PROPERTY = S["property"]
    CHANGED_RULE = S["changed_rule"]
    INITIAL_LEVEL = S["initial_level"]
    SETTLE_S = S["settle_ms"] / 1000.0
    PROPERTIES = Canon::CANON["standard"]["properties"]
    KIND = "property-storm".freeze

    # The value update i announces, and the last of a storm of n.
    def self.level(i) = i + 1
    def self.last_level(n) = level([n - 1, 0].max)

    # received: the PropertiesChanged the subscriber was handed; updates: the
    # values it kept, in order; holder: who keeps them. The digest, or an error
    # with the counts.
    def self.storm_digest(received, updates, n, holder)
      last = last_level(n)
      lost = [n - received, 0].max
      extra = [received - n, 0].max
      in_order = updates.each_cons(2).all? { |a, b| a < b }
      in_range = updates.all? { |v| v.is_a?(Integer) && v.between?(level(0), last) }
      counts = "#{n} PropertiesChanged emitted: received #{received}, lost #{lost}, extra #{extra}; #{holder} " \
               "announced #{updates.size} updates#{in_order && in_range ? '' : ' (out of order or unknown values)'}; " \
               "holds #{updates.empty? ? 'no value' : updates.last}"
      unless lost.zero? && extra.zero? && in_order && in_range && updates.last == last
        raise "property storm: #{counts}; it must receive all #{n} and end with the last value #{last}"
      end

      d = Canon::Digest.new
      d.i32(last)
      d.len(n)
      d.finish
    end
  end
end
