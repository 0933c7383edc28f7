# The canonical values, the field digest and the benchmark service, as the
# harness defines them (harness/src/payload.rs, digest.rs, ipc.rs,
# scenario.rs). The runner checks them: emit bytes by the reference decoder,
# demarshal digests, every IPC reply's digest.
module DbusMatrix
  module Canon
    M = (1 << 64) - 1
    K = 0x517cc1b727220a95

    # FxHash-style mixing over 64-bit words, as harness::digest::Digest.
    class Digest
      attr_reader :h

      def initialize
        @h = 0xcbf29ce484222325
      end

      def word(w)
        @h = ((((@h << 5) | (@h >> 59)) & M) ^ w) * K & M
      end

      def u64(v) = word(v)
      def i32(v) = word(v & 0xffffffff)
      def len(n) = word(n | (1 << 63))
      def str(s) = bytes(s.b)

      def bytes(b)
        b = b.b
        word(b.bytesize)
        full = b.bytesize / 8
        b.unpack("Q<#{full}").each { |w| word(w) } if full > 0
        rest = b.byteslice(full * 8, b.bytesize - full * 8)
        word((rest + "\0" * (8 - rest.bytesize)).unpack1("Q<")) unless rest.empty?
      end

      def finish = @h
    end

    PATH = "/io/killing/spark".freeze
    INTERFACE = "io.killing.spark".freeze
    MEMBER = "TestSignal".freeze
    UNIT_SIGNATURE = "st(ts)a{si}atas".freeze
    U64_MAX = M
    OBJECT_PATH = "/io/killing/spark".freeze
    BENCH_INTERFACE = "io.killing.spark.Bench".freeze
    PROPERTY = "Items".freeze
    SIGNAL = "Ping".freeze
    SIGNAL_TEXT = "Testtest".freeze
    OUT_STRING = "TesttestTestest".freeze
    ECHO_SIZES = [1, 64, 1024, 4096, 32768, 131072, 1048576].freeze
    # [slug, member, in, out], in Method::ALL order
    METHODS = [
      %w[void Void] + ["", ""], %w[in-int InInt i] + [""], %w[out-int OutInt] + ["", "i"],
      %w[in-out-int InOutInt i i], %w[in-string InString s] + [""], %w[out-string OutString] + ["", "s"],
      %w[in-out-string InOutString s s], %w[object-ref ObjectRef] + ["", "(so)"],
      %w[relation-set RelationSet] + ["", "a(so)"]
    ].freeze
    INTERFACE_METHODS = METHODS.map { |_, m, i, o| [m, i, o] } + [%w[EchoBytes ay ay]]

    def self.repeated_decimal(i) = i.to_s * 12
    def self.unit(dict, at, as) = ["Testtest", U64_MAX, [U64_MAX, "TesttestTestest"], dict, at, as]

    PAYLOADS = {
      "mixed" => -> { [:units, Array.new(10) { unit(%w[A B C D E].map { |k| [k, 1234567] }, [U64_MAX] * 15, [""]) }] },
      "big-array" => -> { [:units, [unit([["A", 1234567]], [0] * 10240, [""])]] },
      "str-array" => -> { [:units, [unit([["A", 1234567]], [0], (0...10240).map { |i| repeated_decimal(i) })]] },
      "asv-dict" => -> { [:asv, (0...10240).map { |i| [repeated_decimal(i), repeated_decimal(i)] }] }
    }.freeze

    def self.signature(body) = body[0] == :units ? UNIT_SIGNATURE * body[1].size : "a{sv}"

    def self.body_digest(body)
      d = Digest.new
      kind, values = body
      if kind == :units
        values.each do |s, t, st, dict, at, as|
          d.str(s); d.u64(t); d.u64(st[0]); d.str(st[1])
          dict.each { |k, v| d.str(k); d.i32(v) }
          d.len(dict.size)
          at.each { |x| d.u64(x) }
          d.len(at.size)
          as.each { |x| d.str(x) }
          d.len(as.size)
        end
      else
        values.each { |k, v| d.str(k); d.str(v) }
        d.len(values.size)
      end
      d.finish
    end

    def self.object_path(i) = "#{OBJECT_PATH}/object/#{i}"
    def self.items = (0...10).map { |i| ["id#{i}", "Item number #{i}"] }
    def self.echo_payload(n) = (0...n).map { |i| i % 251 }.pack("C*")
    def self.ping_rule = "type='signal',interface='#{BENCH_INTERFACE}',member='#{SIGNAL}',path='#{OBJECT_PATH}'"
    def self.nonmatching_rule(i) = "type='signal',interface='#{BENCH_INTERFACE}',member='NoSuchSignal#{i}'"

    def self.digest_items(d, values)
      values.each { |a, b| d.str(a); d.str(b) }
      d.len(values.size)
    end

    # ipc/props.rs: the objects of property/get-all/<n> and objects/get-managed-objects/<n>.
    # A value is [signature, value] with signature "s", "u" or "b".
    GET_ALL_INTERFACE = "org.dbusmatrix.Props".freeze
    ITEM_INTERFACE = "org.dbusmatrix.Item".freeze
    OBJECT_MANAGER_INTERFACE = "org.freedesktop.DBus.ObjectManager".freeze

    def self.props_path(n) = "/org/dbusmatrix/props/#{n}"
    def self.objects_path(n) = "/org/dbusmatrix/objects/#{n}"
    def self.object_child_path(n, i) = format("/org/dbusmatrix/objects/%d/o%04d", n, i)

    # props.rs `property_value`: i % 3 = 0 a string, 1 a u, 2 a b.
    def self.property_value(i) = [["s", "value #{i}"], ["u", i * 7], ["b", i.even?]][i % 3]
    def self.properties(n) = (0...n).map { |i| [format("P%04d", i), property_value(i)] }
    def self.item_properties(i) = [["Enabled", ["b", i.odd?]], ["Id", ["s", "item-#{i}"]], ["Index", ["u", i]]]

    def self.digest_properties(d, props)
      props = props.sort_by { |name, _| name.b }
      props.each do |name, (sig, v)|
        d.str(name)
        case sig
        when "s" then d.u64(0); d.str(v)
        when "u" then d.u64(1); d.u64(v)
        when "b" then d.u64(2); d.u64(v ? 1 : 0)
        else raise "a property of signature #{sig.inspect}, not s, u or b"
        end
      end
      d.len(props.size)
    end

    # props.rs `properties_digest`: [name, [signature, value]] pairs in any order.
    def self.properties_digest(props)
      d = Digest.new
      digest_properties(d, props)
      d.finish
    end

    # props.rs `managed_objects_digest`: [path, the benchmark interface's properties] in any order.
    def self.managed_objects_digest(objects)
      objects = objects.sort_by { |path, _| path.b }
      d = Digest.new
      objects.each { |path, props| d.str(path); digest_properties(d, props) }
      d.len(objects.size)
      d.finish
    end

    # What the client must receive per operation (ipc.rs `expected_digest`).
    def self.expected_digest(op, service_name)
      kind, arg = op
      d = Digest.new
      case kind
      when "call"
        case arg
        when "OutInt" then d.i32(42)
        when "InOutInt" then d.i32(8)
        when "OutString", "InOutString" then d.str(OUT_STRING)
        when "ObjectRef" then d.str(service_name); d.str(object_path(0))
        when "RelationSet"
          10.times { |i| d.str(service_name); d.str(object_path(i)) }
          d.len(10)
        end
      # fd-passing: ReadFd answers the digest of the memfd's bytes, this same value.
      when "echo-bytes", "raw-socket", "fd-passing" then d.bytes(echo_payload(arg))
      when "property-get", "property-cold-start" then digest_items(d, items)
      when "property-get-x100" then 100.times { digest_items(d, items) }
      when "emit-receive" then d.str(SIGNAL_TEXT)
      when "idle-connections" then d.len(arg)
      when "property-get-all" then return properties_digest(properties(arg))
      when "get-managed-objects"
        return managed_objects_digest((0...arg).map { |i| [object_child_path(arg, i), item_properties(i)] })
      when "in-flight" # ipc.rs `in_flight_digest`: call i sends i, gets i + 1; then the count
        arg.times { |i| d.i32(i + 1) }
        d.len(arg)
      end
      d.finish
    end

    # Every scenario id with its kind, in the harness's order.
    def self.scenarios
      out = []
      %w[marshal demarshal].each { |p| PAYLOADS.each_key { |n| out << ["#{p}/#{n}", [p, n]] } }
      METHODS.each { |slug, m, _, _| out << ["call/#{slug}", ["ipc", ["call", m]]] }
      ECHO_SIZES.each { |n| out << ["call/echo-bytes/#{n}", ["ipc", ["echo-bytes", n]]] }
      IN_FLIGHT_COUNTS.each { |n| out << ["call/in-flight/#{n}", ["ipc", ["in-flight", n]]] }
      FD_SIZES.each { |n| out << ["call/fd-passing/#{n}", ["ipc", ["fd-passing", n]]] }
      out << ["property/get", ["ipc", ["property-get", nil]]]
      out << ["property/get-x100", ["ipc", ["property-get-x100", nil]]]
      PROPS_COUNTS.each { |n| out << ["property/get-all/#{n}", ["ipc", ["property-get-all", n]]] }
      PROPS_COUNTS.each { |n| out << ["objects/get-managed-objects/#{n}", ["ipc", ["get-managed-objects", n]]] }
      out << ["property/cold-start", ["ipc", ["property-cold-start", nil]]]
      out << ["signal/emit-receive", ["ipc", ["emit-receive", nil]]]
      [1, 10, 100].each { |n| out << ["signal/fanout/#{n}", ["ipc", ["fanout", n]]] }
      [10, 100, 1000, 10000].each { |n| out << ["signal/nonmatching-rules/#{n}", ["ipc", ["nonmatching-rules", n]]] }
      out << ["connect/hello", ["ipc", ["connect-hello", nil]]]
      IDLE_CONNECTION_COUNTS.each { |n| out << ["connect/idle-connections/#{n}", ["ipc", ["idle-connections", n]]] }
      out << ["connect/marshal-send", ["ipc", ["connect-marshal-send", nil]]]
      ECHO_SIZES.each { |n| out << ["baseline/raw-socket/#{n}", ["ipc", ["raw-socket", n]]] }
      # Runner-driven cells (scenario.rs `Driver`): the runner runs call/void
      # or signal/fanout/1 of this adapter around them, so they list as those ops.
      [1, 2, 4, 8].each { |k| out << ["call/parallel-clients/#{k}", ["ipc", ["call", "Void"]]] }
      %w[sender wildcard].each do |rule_kind|
        (0..17).each { |i| out << ["signal/match-rules/#{rule_kind}/#{1 << i}", ["ipc", ["fanout", 1]]] }
      end
      out
    end

    # scenario.rs `runner_needs_bus`: why a runner-driven cell has no p2p form.
    def self.runner_needs_bus(id)
      if id.start_with?("call/parallel-clients/")
        "parallel clients are measured against one bus: peer to peer each client would " \
          "need a server connection of its own"
      elsif id.start_with?("signal/match-rules/")
        "match rules are held by a bus (AddMatch); peer to peer there is no bus to hold them"
      end
    end

    def self.subscribers_of(op)
      case op[0]
      when "fanout" then [op[1], 0]
      when "nonmatching-rules" then [1, op[1]]
      end
    end

    IN_FLIGHT_COUNTS = [1, 10, 100, 1000].freeze
    IDLE_CONNECTION_COUNTS = [10, 100, 1000, 10000].freeze
    # ipc.rs `IpcOp::opt_in`: ops an adapter runs only where it says so (its
    # IMPLEMENTS); elsewhere "this adapter does not implement <family> yet".
    PROPS_COUNTS = [10, 1000].freeze
    OPT_IN_FAMILIES = {
      "in-flight" => "call/in-flight",
      "idle-connections" => "connect/idle-connections",
      "property-get-all" => "property/get-all",
      "get-managed-objects" => "objects/get-managed-objects",
      "fd-passing" => "call/fd-passing"
    }.freeze
    # ipc/fd_passing.rs: ReadFd(h) -> t on a second interface; the memfd holds echo_payload(size).
    FD_SIZES = [4096, 1048576].freeze
    FD_INTERFACE = "io.killing.spark.BenchFd"

    NEEDS_BUS = {
      "connect-hello" => "peer to peer there is no bus to say Hello to: a p2p connection is SASL only",
      "emit-receive" => "needs a bus to route the signal: peer to peer, a signal emitted on one connection " \
                        "reaches only the server at the other end, never a second client connection",
      "fanout" => "fan-out needs a bus: peer to peer there are no match rules and nothing routes " \
                  "one signal to other connections",
      "nonmatching-rules" => "match rules are installed on a bus (AddMatch); peer to peer there is no bus to " \
                             "hold them",
      "idle-connections" => "idle connections are what each costs the bus daemon (Hello, memory); peer to peer " \
                            "there is no daemon, only the server at the other end"
    }.freeze
    def self.needs_bus(op) = NEEDS_BUS[op[0]]
  end
end
