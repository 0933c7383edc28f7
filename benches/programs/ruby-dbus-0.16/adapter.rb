#!/usr/bin/env ruby
# dbus-matrix adapter for ruby-dbus (pure Ruby), its idiomatic client API:
# RemoteBus, service(name).object(path), whose interfaces introspect the
# object before the first call, and `iface["Items"]`, a Properties.Get per
# read; on Debian's ruby and ruby-dbus 0.16.0.
#
# A program, not a Cargo package (matrix.toml `program`): it speaks the
# adapter contract through benches/programs/ruby/dbus_matrix.
$LOAD_PATH.unshift(File.join(__dir__, "..", "ruby"))
require "dbus"
require "dbus_matrix/canon"
require "dbus_matrix/contract"
require "dbus_matrix/service"
require_relative "apps"
require_relative "startup"
require_relative "storm"
require_relative "subscriptions"

class RubyDbus
  C = DbusMatrix::Canon
  S = DbusMatrix::Service
  NO_P2P = "ruby-dbus 0.16 has no server side (no way to accept a peer-to-peer connection), " \
           "and its RemoteBus always says Hello to a bus".freeze
  # Debian's gemspec, whatever patch version Debian serves (the name carries it).
  GEMSPEC = Dir.glob("/usr/share/rubygems-integration/all/specifications/ruby-dbus-0.16*.gemspec").max
  VERSION = (GEMSPEC && Gem::Specification.load(GEMSPEC)&.version&.to_s) || "unknown"

  # contract.rb: the opt-in ops (canon.rb OPT_IN_FAMILIES) this adapter implements.
  IMPLEMENTS = (%w[in-flight idle-connections property-get-all get-managed-objects] +
                RubyDbusSubscriptions::KINDS + RubyDbusApps::KINDS +
                [DbusMatrix::Storm::KIND, DbusMatrix::Startup::KIND]).freeze

  def id = "ruby-dbus-0.16"
  def library = "ruby-dbus"
  def version = VERSION

  def runtime
    "blocking: ruby-dbus' synchronous proxy calls on the calling thread; the server is hand-built on its " \
      "message queue (ruby-dbus 0.16's object server has no org.freedesktop.DBus.Properties)"
  end

  def unsupported_codec(_kind, _name) = nil
  QUADRATIC_AY = "ruby-dbus 0.16 marshals an `ay` element by element into a String grown by `+=` " \
                 "(quadratic): measured here 0.27 s for 32 KiB and 2.6 s for 128 KiB per message, so 1 MiB " \
                 "would take minutes per message, twice per round trip, beyond any cell's time limit".freeze

  NO_UNIX_FDS = "ruby-dbus 0.16 cannot pass fds: its SASL client (dbus/auth.rb) sends BEGIN right after OK, " \
                "never NEGOTIATE_UNIX_FD; its message queue (dbus/message_queue.rb) writes with IO#write and " \
                "reads with read_nonblock, so no SCM_RIGHTS ancillary data is sent or received; an 'h' is " \
                "marshalled as a bare UINT32 (dbus/marshall.rb) with no UNIX_FDS header field".freeze

  def unsupported_ipc(op, p2p)
    return NO_P2P if p2p
    return QUADRATIC_AY if op == ["echo-bytes", 1048576]
    return NO_UNIX_FDS if op[0] == "fd-passing"

    nil
  end

  # --- codec -------------------------------------------------------------
  def signal_of(body)
    m = DBus::Message.new(DBus::Message::SIGNAL)
    m.path = C::PATH
    m.interface = C::INTERFACE
    m.member = C::MEMBER
    kind, values = body
    if kind == :units
      values.each do |s, t, st, dict, at, as|
        m.add_param("s", s)
        m.add_param("t", t)
        m.add_param("(ts)", st)
        m.add_param("a{si}", dict.to_h)
        m.add_param("at", at)
        m.add_param("as", as)
      end
    else
      m.add_param("a{sv}", values.to_h { |k, v| [k, ["s", v]] })
    end
    m
  end

  def marshal(body)
    m = signal_of(body)
    m.instance_variable_set(:@serial, 1) # ruby-dbus numbers messages itself; the scenario says serial 1
    m.marshall
  end

  def demarshal(data, shape, d)
    m = DBus::Message.new
    m.unmarshall_buffer(data)
    params = m.params
    if shape == :units
      params.each_slice(6) do |s, t, st, dict, at, as|
        d.str(s); d.u64(t); d.u64(st[0]); d.str(st[1])
        dict.each { |k, v| d.str(k); d.i32(v) }
        d.len(dict.size)
        at.each { |x| d.u64(x) }
        d.len(at.size)
        as.each { |x| d.str(x) }
        d.len(as.size)
      end
    else
      entries = params[0]
      entries.each { |k, v| d.str(k); d.str(v) }
      d.len(entries.size)
    end
  end

  # --- IPC ---------------------------------------------------------------
  def connect(t) = DBus::RemoteBus.new(t[:address])

  # connect/idle-connections: RemoteBus.new (SASL, Hello); the lambda closes its socket.
  def idle_connection(t)
    bus = connect(t)
    -> { bus.message_queue.socket.close }
  end

  def reply_to(call, sig, values)
    r = DBus::Message.method_return(call)
    DBus::Type::Parser.new(sig).parse.zip(values).each { |type, v| r.add_param(type, v) }
    r
  end

  def serve(t, ready)
    raise NO_P2P if t[:p2p]

    bus = connect(t)
    owned = bus.proxy.RequestName(t[:service_name], 4)[0] # DO_NOT_QUEUE
    raise "could not own #{t[:service_name]} (RequestName answered #{owned})" unless owned == 1

    ready.call
    loop do
      m = bus.message_queue.pop
      next unless m.message_type == DBus::Message::METHOD_CALL

      strings = m.params.take_while { |p| p.is_a?(String) }
      # ruby-dbus 0.16's object server has no Properties: property/get-all and get-managed-objects by hand too.
      call = [m.path, m.interface, m.member, m.signature.to_s, strings]
      a = S.props_route(*call) || S.route(*call)
      next if m.instance_variable_get(:@flags) & DBus::Message::NO_REPLY_EXPECTED != 0

      reply = case a[0]
              when :bench then reply_to(m, *S.bench_reply(a[1], m.params, t[:service_name]))
              when :items then reply_to(m, "v", [["a(ss)", C.items]])
              when :reply then reply_to(m, a[1], a[2])
              else DBus::Message.error(m, a[1], a[2])
              end
      bus.message_queue.push(reply)
    end
  end

  def subscriber(t, extra_rules)
    bus = connect(t)
    extra_rules.times { |i| bus.proxy.AddMatch(C.nonmatching_rule(i)) }
    got = []
    mr = DBus::MatchRule.new
    mr.type = "signal"
    mr.interface = C::BENCH_INTERFACE
    mr.member = C::SIGNAL
    mr.path = C::OBJECT_PATH
    bus.add_match(mr) { |msg| got << msg.params[0] }
    lambda do
      bus.process(bus.message_queue.pop) while got.empty?
      d = C::Digest.new
      d.str(got.shift)
      d.finish
    end
  end

  def ping
    m = DBus::Message.new(DBus::Message::SIGNAL)
    m.path = C::OBJECT_PATH
    m.interface = C::BENCH_INTERFACE
    m.member = C::SIGNAL
    m.add_param("s", C::SIGNAL_TEXT)
    m
  end

  def interface_of(bus, t) = bus.service(t[:service_name]).object(C::OBJECT_PATH)[C::BENCH_INTERFACE]

  # The proxies of property/get-all and get-managed-objects, from introspection data the
  # program has (ProxyObjectFactory): not every server answers Introspect on these paths.
  PROPS_PROXY_XML = <<~XML.freeze
    <node>
      <interface name="org.freedesktop.DBus.Properties">
        <method name="GetAll">
          <arg name="interface_name" type="s" direction="in"/>
          <arg name="properties" type="a{sv}" direction="out"/>
        </method>
      </interface>
      <interface name="org.freedesktop.DBus.ObjectManager">
        <method name="GetManagedObjects">
          <arg name="objects" type="a{oa{sa{sv}}}" direction="out"/>
        </method>
      </interface>
    </node>
  XML

  # ruby-dbus hands a variant's value without its signature: the Ruby class says which it was.
  def typed(value)
    case value
    when String then ["s", value]
    when Integer then ["u", value]
    when true, false then ["b", value]
    else raise "a property of class #{value.class}, not s, u or b"
    end
  end

  def props_of(hash) = hash.map { |k, v| [k, typed(v)] }

  # The one out argument: ruby-dbus returns these replies' dict itself, not in an array.
  def only(reply) = reply.is_a?(Array) ? reply[0] : reply

  def props_client(bus, t, kind, n)
    path = kind == "property-get-all" ? C.props_path(n) : C.objects_path(n)
    obj = DBus::ProxyObjectFactory.new(PROPS_PROXY_XML, bus, t[:service_name], path).build
    if kind == "property-get-all"
      props = obj[S::PROPERTIES]
      -> { C.properties_digest(props_of(only(props.GetAll(C::GET_ALL_INTERFACE)))) }
    else
      manager = obj[C::OBJECT_MANAGER_INTERFACE]
      lambda do
        objects = only(manager.GetManagedObjects)
        # Only the benchmark interface counts (a server may list the standard ones too).
        C.managed_objects_digest(objects.filter_map { |p, ifaces| ifaces[C::ITEM_INTERFACE]&.then { |h| [p, props_of(h)] } })
      end
    end
  end

  def client(t, op)
    kind, arg = op
    empty = C::Digest.new.finish
    case kind
    when "connect-hello"
      return lambda {
        connect(t).message_queue.socket.close
        empty
      }
    when "connect-marshal-send"
      return lambda {
        bus = connect(t)
        bus.message_queue.push(signal_of(C::PAYLOADS["mixed"].call))
        bus.message_queue.socket.close
        empty
      }
    end
    return RubyDbusSubscriptions.client(-> { connect(t) }, op) if RubyDbusSubscriptions::KINDS.include?(kind)
    return RubyDbusApps.client(-> { connect(t) }, t, op) if RubyDbusApps::KINDS.include?(kind)
    return RubyDbusStorm.client(-> { connect(t) }, arg) if kind == DbusMatrix::Storm::KIND
    return RubyDbusStartup.client(-> { connect(t) }, t, arg) if kind == DbusMatrix::Startup::KIND

    bus = connect(t)
    case kind
    when "call"
      iface = interface_of(bus, t)
      sig_in = C::METHODS.find { |_, m, _, _| m == arg }[2]
      args = { "i" => [C::IN_INT], "s" => [arg == "InString" ? C::IN_STRING : C::OUT_STRING], "" => [] }[sig_in]
      lambda do
        out = iface.send(arg, *args)
        d = C::Digest.new
        case arg
        when "OutInt", "InOutInt" then d.i32(out[0])
        when "OutString", "InOutString" then d.str(out[0])
        when "ObjectRef" then d.str(out[0][0]); d.str(out[0][1])
        when "RelationSet"
          out[0].each { |n, p| d.str(n); d.str(p) }
          d.len(out[0].size)
        end
        d.finish
      end
    when "in-flight"
      iface = interface_of(bus, t)
      lambda do
        # A proxy method given a block sends its call and returns
        # (Bus#send_sync_or_async: on_return, then message_queue.push); Bus#process
        # of what the queue receives runs each block when its reply comes. Between
        # two sends, what has already arrived is dispatched without waiting
        # (Bus#dispatch_message_queue): a bus that cannot write replies to a client
        # that does not read gives up on it (busd disconnects it after 100 ms).
        replies = Array.new(arg)
        left = arg
        arg.times do |i|
          iface.InOutInt(i) do |reply, value|
            raise reply if reply.is_a?(DBus::Error)

            replies[i] = value
            left -= 1
          end
          bus.dispatch_message_queue
        end
        bus.process(bus.message_queue.pop) while left.positive?
        d = C::Digest.new
        replies.each { |r| d.i32(r) }
        d.len(arg)
        d.finish
      end
    when "echo-bytes"
      iface = interface_of(bus, t)
      payload = C.echo_payload(arg).bytes
      lambda do
        d = C::Digest.new
        d.bytes(iface.EchoBytes(payload)[0].pack("C*"))
        d.finish
      end
    when "property-get-all", "get-managed-objects"
      props_client(bus, t, kind, arg)
    when "property-get", "property-get-x100"
      iface = interface_of(bus, t)
      reads = kind == "property-get-x100" ? 100 : 1
      lambda do
        d = C::Digest.new
        reads.times { C.digest_items(d, iface[C::PROPERTY]) }
        d.finish
      end
    when "emit-receive"
      receive = subscriber(t, 0)
      lambda do
        bus.message_queue.push(ping)
        receive.call
      end
    when "fanout", "nonmatching-rules"
      lambda do
        bus.message_queue.push(ping)
        empty
      end
    else raise "no client for #{kind}"
    end
  end

  def cold_start(t)
    raise NO_P2P if t[:p2p]

    bus = connect(t)
    items = interface_of(bus, t)[C::PROPERTY]
    bus.message_queue.socket.close
    items
  end
end

DbusMatrix::Contract.main(RubyDbus.new, ARGV)
