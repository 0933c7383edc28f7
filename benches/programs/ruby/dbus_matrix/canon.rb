# The canonical values, the field digest and the benchmark service, as the
# harness defines them: every value comes from benches/programs/canon.json,
# which `dbus-matrix canon` writes from harness/src (canon.rs) and a harness
# test keeps current (docs/canon.md); this module turns it into Ruby values
# and digests what a library decoded. The runner checks the result: emit
# bytes by the reference decoder, demarshal digests, every IPC reply's digest.
require "json"

module DbusMatrix
  module Canon
    # benches/programs/canon.json, beside ruby/ (docs/canon.md).
    CANON_FILE = File.expand_path("../../canon.json", __dir__)
    CANON = JSON.parse(File.read(CANON_FILE)).freeze
    M = (1 << 64) - 1
    K = CANON["digest"]["multiplier"]
    INIT = CANON["digest"]["init"]
    ROT = CANON["digest"]["rotate_left"]

    # FxHash-style mixing over 64-bit words, as harness::digest::Digest.
    class Digest
      attr_reader :h

      def initialize
        @h = INIT
      end

      def word(w)
        @h = ((((@h << ROT) | (@h >> (64 - ROT))) & M) ^ w) * K & M
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

    SERVICE = CANON["service"]
    PROPS = CANON["props"]
    SIG = CANON["signal"]
    PATH = SIG["path"]
    INTERFACE = SIG["interface"]
    MEMBER = SIG["member"]
    SERIAL = SIG["serial"]
    UNIT_SIGNATURE = SIG["unit_signature"]
    ASV_SIGNATURE = SIG["asv_signature"]
    OBJECT_PATH = SERVICE["object_path"]
    BENCH_INTERFACE = SERVICE["interface"]
    PROPERTY = SERVICE["property"]
    PROPERTY_SIGNATURE = SERVICE["property_signature"]
    SIGNAL = SERVICE["signal"]
    SIGNAL_TEXT = SERVICE["signal_text"]
    IN_INT = SERVICE["in_int"]
    OUT_INT = SERVICE["out_int"]
    IN_STRING = SERVICE["in_string"]
    OUT_STRING = SERVICE["out_string"]
    ECHO_SIZES = SERVICE["echo_sizes"]
    ECHO_BYTES = SERVICE["echo_bytes"]
    # [slug, member, in, out], in Method::ALL order
    METHODS = SERVICE["methods"].map { |m| m.values_at("slug", "member", "in", "out") }.freeze
    INTERFACE_METHODS = SERVICE["interface_methods"]
    OBJECT_PATHS = SERVICE["object_paths"]

    # Literal strings, or the decimal i repeated R times for i below N.
    def self.strings(spec)
      return spec["strings"].dup if spec.key?("strings")

      (0...spec["count"]).map { |i| i.to_s * spec["decimal_repeated"] }
    end

    # [:units, [[s, t, [t, s], a{si} pairs, at, as], ...]] or [:asv, pairs].
    def self.payload(spec)
      return [:asv, strings(spec["asv"]["keys"]).map { |k| [k, k] }] if spec["kind"] == "asv"

      u = spec["units"]["unit"]
      [:units, Array.new(spec["units"]["count"]) do
        [u["s"], u["t"], u["st"].dup, u["dict"].map(&:dup), [u["at"]["value"]] * u["at"]["count"], strings(u["as"])]
      end]
    end

    PAYLOADS = CANON["payloads"].to_h { |p| [p["name"], -> { payload(p) }] }.freeze

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

    def self.object_path(i) = OBJECT_PATHS[i]
    def self.items = SERVICE["items"].map(&:dup)
    def self.echo_payload(n) = (0...n).map { |i| i % SERVICE["echo_modulus"] }.pack("C*")
    def self.ping_rule = SERVICE["ping_rule"]
    def self.nonmatching_rule(i) = format(SERVICE["nonmatching_rule"], i)

    def self.digest_items(d, values)
      values.each { |a, b| d.str(a); d.str(b) }
      d.len(values.size)
    end

    # ipc/props.rs: the objects of property/get-all/<n> and objects/get-managed-objects/<n>.
    # A value is [signature, value] with signature "s", "u" or "b".
    GET_ALL_INTERFACE = PROPS["get_all_interface"]
    ITEM_INTERFACE = PROPS["item_interface"]
    OBJECT_MANAGER_INTERFACE = CANON["standard"]["object_manager"]

    def self.props_path(n) = format(PROPS["props_path"], n)
    def self.objects_path(n) = format(PROPS["objects_path"], n)
    def self.object_child_path(n, i) = format(PROPS["object_child_path"], n, i)
    def self.typed(row) = [row[0], [row[1], row[2]]]
    def self.properties(n) = PROPS["properties"].first(n).map { |row| typed(row) }
    def self.item_properties(i) = PROPS["item_properties"][i].map { |row| typed(row) }

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

    IPC = CANON["scenarios"].select { |s| s["kind"] == "ipc" }
    # What the client must receive per op (ipc.rs `expected_digest`); nil where it
    # names the service (ObjectRef, RelationSet: digested here from the name).
    EXPECTED = IPC.to_h { |s| [s["op"], s["expected_digest"]] }.freeze

    def self.expected_digest(op, service_name)
      expected = EXPECTED.fetch([op[0], op[1]])
      return expected if expected

      d = Digest.new
      paths = op[1] == "ObjectRef" ? OBJECT_PATHS.first(1) : OBJECT_PATHS
      paths.each { |p| d.str(service_name); d.str(p) }
      d.len(paths.size) if op[1] == "RelationSet"
      d.finish
    end

    # Every scenario id with its kind, in the harness's order.
    SCENARIOS = CANON["scenarios"].map do |s|
      [s["id"], s["kind"] == "ipc" ? ["ipc", s["op"]] : [s["kind"], s["payload"]]]
    end.freeze
    def self.scenarios = SCENARIOS

    RUNNER_NEEDS_BUS = CANON["scenarios"].select { |s| s["runner_needs_bus"] }.to_h { |s| [s["id"], s["runner_needs_bus"]] }
    # scenario.rs `runner_needs_bus`: why a runner-driven cell has no p2p form.
    def self.runner_needs_bus(id) = RUNNER_NEEDS_BUS[id]

    def self.subscribers_of(op)
      case op[0]
      when "fanout" then [op[1], 0]
      when "nonmatching-rules" then [1, op[1]]
      end
    end

    IN_FLIGHT_COUNTS = SERVICE["in_flight_counts"]
    IDLE_CONNECTION_COUNTS = SERVICE["idle_connection_counts"]
    PROPS_COUNTS = SERVICE["props_counts"]
    # ipc.rs `IpcOp::opt_in`: ops an adapter runs only where it says so (its
    # IMPLEMENTS); elsewhere "this adapter does not implement <family> yet".
    OPT_IN_FAMILIES = IPC.select { |s| s["opt_in_family"] }.to_h { |s| [s["op"][0], s["opt_in_family"]] }.freeze
    # ipc/fd_passing.rs: ReadFd(h) -> t on a second interface; the memfd holds echo_payload(size).
    FD_SIZES = SERVICE["fd_sizes"]
    FD_INTERFACE = SERVICE["fd_interface"]

    NEEDS_BUS = IPC.select { |s| s["needs_bus"] }.to_h { |s| [s["op"][0], s["needs_bus"]] }.freeze
    def self.needs_bus(op) = NEEDS_BUS[op[0]]
  end
end
