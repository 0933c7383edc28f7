# The object of `proxy/create-call/<server>` (harness/src/ipc/proxied.rs) for
# the Ruby adapters, which serve it themselves on a second connection of the
# client process (the harness's raw server is Rust, inside the Rust
# adapters): what it answers to each call, from canon.json, as the harness's
# `proxied::answer` (runner/tests/program_proxied.rs compares them). Variants
# are [signature, value] pairs, as ruby-dbus writes them.
require "dbus_matrix/canon"

module DbusMatrix
  module Proxied
    P = Canon::CANON["proxied"]
    STD = Canon::CANON["standard"]
    E = STD["errors"]
    PATH = P["path"]
    INTERFACE = P["interface"]
    METHOD = P["method"]
    PROPERTY = P["property"]
    COUNT = P["count"]
    SERVERS = { "proxy-create-props" => "props", "proxy-create-no-props" => "no-props" }.freeze
    KINDS = SERVERS.keys.freeze
    DEFAULT_INTERFACE = { "Introspect" => STD["introspectable"], "Ping" => STD["peer"],
                          "GetMachineId" => STD["peer"], "Get" => STD["properties"],
                          "GetAll" => STD["properties"], "Set" => STD["properties"] }.freeze

    def self.proxied_name(service_name) = service_name + P["name_suffix"]
    def self.xml(server) = P["xml"].fetch(server)

    # ["return", signature, body, counted] or ["error", name, message].
    def self.answer(server, path, interface, member, args)
      return ["error", E["unknown_object"], "no object at #{path}"] unless path == PATH

      interface ||= DEFAULT_INTERFACE.fetch(member, INTERFACE)
      return ["return", "", [], true] if [interface, member] == [INTERFACE, METHOD]
      return ["return", "s", [xml(server)], false] if [interface, member] == [STD["introspectable"], "Introspect"]
      return ["return", "", [], false] if [interface, member] == [STD["peer"], "Ping"]

      if interface == STD["properties"]
        if server == "no-props"
          return ["error", E["unknown_interface"], "no interface #{STD['properties']} at #{PATH}"]
        end

        return properties(member, args)
      end
      ["error", E["unknown_method"], "no method #{interface}.#{member} at #{PATH}"]
    end

    def self.properties(member, args)
      strings = args.select { |a| a.is_a?(String) }
      iface = strings[0] || ""
      name = strings[1] || ""
      ours = iface == INTERFACE
      case member
      when "GetAll" then ["return", "a{sv}", [ours ? { PROPERTY => ["u", COUNT] } : {}], false]
      when "Get"
        return ["return", "v", [["u", COUNT]], false] if ours && name == PROPERTY

        ["error", E["unknown_property"], "no property #{iface}.#{name}"]
      when "Set" then ["error", E["property_read_only"], "#{iface}.#{name} is read-only"]
      else ["error", E["unknown_method"], "no method #{STD['properties']}.#{member}"]
      end
    end
  end
end
