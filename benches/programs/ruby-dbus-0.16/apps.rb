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
#
# `proxy/create-call/<server>`: connection A owns `<service>.Proxied`
# (RequestName, DO_NOT_QUEUE) and answers every method call on a thread of
# its own from its message queue with ruby/dbus_matrix/proxied.rb's answers
# (the harness's raw server is Rust: the programs serve the object
# themselves; ruby-dbus's object server answers Introspect with XML of its
# own making, so the raw queue is what keeps the answers the harness's). One
# op builds a ProxyObject
# (`service(name).object(path)`, whose `[interface]` introspects it: one
# Introspect call), calls `Void` (send_sync) and drops it.
#
# `call/connections-in-process/<k>`: k RemoteBus connections of the one
# process, each with its ProxyObject of the harness's server
# (`service(name).object(path)[interface]`, introspected once, before
# timing); one op calls `InOutInt(i)` through connection i in turn (send_sync,
# reply awaited), digested as the harness's `in_flight_digest`.
require "dbus"
require "dbus_matrix/apps"
require "dbus_matrix/canon"
require "dbus_matrix/proxied"

module RubyDbusApps
  A = DbusMatrix::Apps
  C = DbusMatrix::Canon
  PX = DbusMatrix::Proxied
  CONNECTIONS = "connections-in-process".freeze
  KINDS = ([A::IN_ONLY_BYTES, CONNECTIONS] + PX::KINDS).freeze

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

  def self.reply_to(call, sig, values)
    r = DBus::Message.method_return(call)
    DBus::Type::Parser.new(sig).parse.zip(values).each { |type, v| r.add_param(type, v) }
    r
  end

  # A's thread: every method call answered as proxied.rb says.
  def self.serve_proxied(bus, server, tally)
    loop do
      m = bus.message_queue.pop
      next unless m.message_type == DBus::Message::METHOD_CALL

      a = PX.answer(server, m.path, m.interface, m.member, m.params)
      next if m.instance_variable_get(:@flags) & DBus::Message::NO_REPLY_EXPECTED != 0

      if a[0] == "error"
        bus.message_queue.push(DBus::Message.error(m, a[1], a[2]))
        next
      end
      tally.receive("".b) if a[3]
      bus.message_queue.push(reply_to(m, a[1], a[2]))
    end
  rescue EOFError, IOError
    nil # the process is ending
  end

  def self.proxy_create(connect, t, server)
    tally = A::SinkTally.new
    name = PX.proxied_name(t[:service_name])
    a = connect.call
    owned = a.proxy.RequestName(name, 4)[0] # DO_NOT_QUEUE
    raise "could not own #{name} (RequestName answered #{owned})" unless owned == 1

    Thread.new { serve_proxied(a, server, tally) }
    b = connect.call
    lambda do
      b.service(name).object(PX::PATH)[PX::INTERFACE].send(PX::METHOD)
      tally.take
    end
  end

  # k connections, one proxy each: InOutInt(i) on connection i in turn.
  def self.connections(connect, t, k)
    ifaces = (0...k).map { connect.call.service(t[:service_name]).object(C::OBJECT_PATH)[C::BENCH_INTERFACE] }
    lambda do
      d = C::Digest.new
      ifaces.each_with_index { |iface, i| d.i32(iface.InOutInt(i)[0]) }
      d.len(k)
      d.finish
    end
  end

  # The operation of an application op; connect.call opens a bus connection.
  def self.client(connect, t, op)
    kind, n = op
    return proxy_create(connect, t, PX::SERVERS[kind]) if PX::KINDS.include?(kind)
    return connections(connect, t, n) if kind == CONNECTIONS
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
