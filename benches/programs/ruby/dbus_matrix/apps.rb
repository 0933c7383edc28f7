# The application families of issue 31 (harness/src/ipc/application.rs,
# docs/scenarios.md "What applications do") for the Ruby adapters: the sink
# of `call/in-only-bytes/<n>` (its path, interface, method and the
# well-known name its connection owns, from canon.json) and the tally its
# handler keeps, taken by the client after each reply as the harness's
# `SinkTally`: the digest of every array received since the last take, then
# their number. A call lost, sent twice, shortened or not awaited changes it.
require "dbus_matrix/canon"

module DbusMatrix
  module Apps
    S = Canon::SERVICE
    IN_ONLY_BYTES = "in-only-bytes".freeze
    SINK_PATH = S["sink_path"]
    SINK_INTERFACE = S["sink_interface"]
    SINK_BYTES = S["sink_bytes"]

    # The name the serving connection owns and the caller addresses (the bus
    # policy lets method calls through to listed names only).
    def self.sink_name(service_name) = service_name + S["sink_name_suffix"]

    # What SinkBytes received since the client last took it (the handler runs
    # on the sink's thread).
    class SinkTally
      def initialize
        @lock = Mutex.new
        @digest = Canon::Digest.new
        @calls = 0
      end

      # One call's argument, a binary String.
      def receive(bytes)
        @lock.synchronize do
          @digest.bytes(bytes)
          @calls += 1
        end
      end

      def take
        d, calls = @lock.synchronize do
          taken = [@digest, @calls]
          @digest = Canon::Digest.new
          @calls = 0
          taken
        end
        d.len(calls)
        d.finish
      end
    end
  end
end
