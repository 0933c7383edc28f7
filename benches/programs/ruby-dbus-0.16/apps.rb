# ruby-dbus's arm of the application families (issue 31; definitions in
# harness/src/ipc/application.rs, the tally in ruby/dbus_matrix/apps.rb).
#
# `call/in-only-bytes/<n>`: connection A, a second RemoteBus of the client
# process, serves the sink through ruby-dbus's object server (a DBus::Object
# with `dbus_method :SinkBytes, "in data:ay"`, exported on the Service of
# `request_service`, which asks for `<service>.Sink` with the library's own
# flag, REPLACE_EXISTING, and checks the answer when it is processed: a
# GetNameOwner on A, awaited, processes it first). ruby-dbus reads a
# connection only inside a call on it, so A is driven by a thread of its own
# (`message_queue.pop` + `process`). Connection B calls it by that name
# through a ProxyObject (`service(name).object(path)[interface]`, which
# introspects once, before timing) and awaits the empty reply.
require "dbus"
require "dbus_matrix/apps"
require "dbus_matrix/canon"

module RubyDbusApps
  A = DbusMatrix::Apps
  C = DbusMatrix::Canon
  KINDS = [A::IN_ONLY_BYTES].freeze

  # The sink object: each SinkBytes recorded in the tally.
  class Sink < DBus::Object
    def initialize(tally)
      super(A::SINK_PATH)
      @tally = tally
    end

    dbus_interface A::SINK_INTERFACE do
      dbus_method A::SINK_BYTES.to_sym, "in data:ay" do |data|
        @tally.receive(data.pack("C*"))
        []
      end
    end
  end

  # The operation of an application op; connect.call opens a bus connection.
  def self.client(connect, t, op)
    kind, n = op
    raise "no application client for #{kind}" unless kind == A::IN_ONLY_BYTES

    tally = A::SinkTally.new
    name = A.sink_name(t[:service_name])
    a = connect.call
    a.request_service(name).export(Sink.new(tally))
    owner = a.proxy.GetNameOwner(name)[0]
    raise "#{name} is owned by #{owner}, not the sink's connection #{a.unique_name}" unless owner == a.unique_name

    Thread.new do
      loop { a.process(a.message_queue.pop) }
    rescue EOFError, IOError
      nil # the process is ending
    end
    b = connect.call
    sink = b.service(name).object(A::SINK_PATH)[A::SINK_INTERFACE]
    payload = C.echo_payload(n).bytes
    lambda do
      sink.send(A::SINK_BYTES, payload)
      tally.take
    end
  end
end
