# The tree of objects of `proxy/startup/<n>` (harness/src/ipc/startup.rs,
# docs/scenarios.md "What applications do") for the Ruby adapters, which serve
# it themselves on a second connection of the client process: the root's and
# the children's introspection XML from canon.json's `startup`, what the
# server answers to each call (as the harness's `startup::answer`), its tally
# (Introspect and Id calls since the client last took it) and the operation's
# digest (`startup::op_digest`): the Ids in any order, then the tally, so a
# client that skips an introspection or a call fails its cell.
require "dbus_matrix/canon"

module DbusMatrix
  module Startup
    S = Canon::CANON["startup"]
    STD = Canon::CANON["standard"]
    E = STD["errors"]
    ROOT = S["root"]
    INTERFACE = S["interface"]
    METHOD = S["method"]
    KIND = "proxy-startup".freeze
    DEFAULT_INTERFACE = { "Introspect" => STD["introspectable"], "Ping" => STD["peer"],
                          "GetMachineId" => STD["peer"], "Get" => STD["properties"],
                          "GetAll" => STD["properties"], "Set" => STD["properties"] }.freeze

    def self.child_name(i) = format(S["child_name"], i)
    def self.child_path(i) = "#{ROOT}/#{child_name(i)}"

    def self.root_xml(n)
      S["root_xml_head"] + (0...n).map { |i| format(S["root_xml_child"], i) }.join + S["root_xml_tail"]
    end

    # The child index of path among n, or nil.
    def self.child_index(path, n)
      m = path.match(%r{\A#{Regexp.escape(ROOT)}/o([0-9]+)\z})
      i = m && Integer(m[1], 10)
      i && i < n && child_path(i) == path ? i : nil
    end

    # What the server answers (thread-safe): the introspects and ids since the last take.
    class Tally
      def initialize
        @lock = Mutex.new
        @introspects = 0
        @ids = 0
      end

      def introspect = @lock.synchronize { @introspects += 1 }
      def id = @lock.synchronize { @ids += 1 }

      def take
        @lock.synchronize do
          taken = [@introspects, @ids]
          @introspects = @ids = 0
          taken
        end
      end
    end

    # ["return", signature, values] or ["error", name, message], counted in tally.
    def self.answer(n, tally, path, interface, member)
      interface ||= DEFAULT_INTERFACE.fetch(member, INTERFACE)
      child = child_index(path, n)
      return ["error", E["unknown_object"], "no object at #{path}"] if path != ROOT && child.nil?

      if [interface, member] == [STD["introspectable"], "Introspect"]
        tally.introspect
        return ["return", "s", [child.nil? ? root_xml(n) : S["child_xml"]]]
      end
      if [interface, member] == [INTERFACE, METHOD] && child
        tally.id
        return ["return", "u", [child]]
      end
      return ["return", "", []] if [interface, member] == [STD["peer"], "Ping"]
      return ["return", "a{sv}", [{}]] if [interface, member] == [STD["properties"], "GetAll"]

      ["error", E["unknown_method"], "no method #{interface}.#{member} at #{path}"]
    end

    # The digest of one operation: the Ids received (sorted), then the tally.
    def self.op_digest(ids, introspects, id_calls)
      d = Canon::Digest.new
      d.len(ids.size)
      ids.sort.each { |id| d.u64(id) }
      d.len(introspects)
      d.len(id_calls)
      d.finish
    end
  end
end
