# What a hand-built server answers to any method call (harness/src/ipc/
# standard.rs and introspect.rs): the benchmark methods are left to the
# library, everything else (Introspect, Peer, Properties, unknown members,
# wrong arguments) answered here, so gdbus, busctl and dbus-send get a reply
# or a proper error.
require_relative "canon"

module DbusMatrix
  module Service
    C = Canon
    STD = C::CANON["standard"]
    INTROSPECTABLE = STD["introspectable"]
    PEER = STD["peer"]
    PROPERTIES = STD["properties"]

    # ipc/introspect.rs: the object's XML, an ancestor's (naming the next
    # element as a child node), or nil for any other path.
    def self.introspection_xml_of(path) = C::CANON["introspection"][path]

    def self.machine_id
      ["/etc/machine-id", "/var/lib/dbus/machine-id"].each do |p|
        s = File.read(p).strip rescue next
        return s if s.match?(/\A\h{32}\z/)
      end
      nil
    end

    class Answer < StandardError
      attr_reader :name

      # name: the error's last element ("InvalidArgs"), looked up in the canon's standard errors.
      def initialize(name, message)
        super(message)
        @name = STD["errors"].fetch(name.gsub(/([a-z])([A-Z])/, '\\1_\\2').downcase)
      end
    end

    def self.expect(sig, member, expected)
      return if sig == expected

      raise Answer.new("InvalidArgs", "#{member} takes arguments of signature \"#{expected}\", not \"#{sig}\"")
    end

    # [:bench, member], [:items], [:reply, signature, values] or [:error, name, message].
    def self.route(path, interface, member, sig, args)
      interface ||= if C::INTERFACE_METHODS.any? { |m, _, _| m == member } then C::BENCH_INTERFACE
                    else { "Introspect" => INTROSPECTABLE, "Ping" => PEER, "GetMachineId" => PEER,
                           "Get" => PROPERTIES, "GetAll" => PROPERTIES, "Set" => PROPERTIES }[member]
                    end
      raise Answer.new("UnknownMethod", "no method #{member}") unless interface

      case interface
      when PEER
        expect(sig, member, "")
        return [:reply, "", []] if member == "Ping"
        raise Answer.new("UnknownMethod", "no method #{PEER}.#{member}") unless member == "GetMachineId"

        id = machine_id or raise Answer.new("Failed", "this machine has no machine id")
        return [:reply, "s", [id]]
      when INTROSPECTABLE
        raise Answer.new("UnknownMethod", "no method #{interface}.#{member}") unless member == "Introspect"

        expect(sig, member, "")
        xml = introspection_xml_of(path) or raise Answer.new("UnknownObject", "no object at #{path}")
        return [:reply, "s", [xml]]
      end
      raise Answer.new("UnknownObject", "no object at #{path}") unless path == C::OBJECT_PATH
      return properties(member, sig, args) if interface == PROPERTIES
      raise Answer.new("UnknownInterface", "no interface #{interface} at #{path}") unless interface == C::BENCH_INTERFACE

      m = C::INTERFACE_METHODS.find { |name, _, _| name == member }
      raise Answer.new("UnknownMethod", "no method #{interface}.#{member}") unless m

      expect(sig, member, m[1])
      [:bench, member]
    rescue Answer => e
      [:error, e.name, e.message]
    end

    def self.properties(member, sig, args)
      expected = { "Get" => "ss", "GetAll" => "s", "Set" => "ssv" }[member]
      raise Answer.new("UnknownMethod", "no method #{PROPERTIES}.#{member}") unless expected

      expect(sig, member, expected)
      raise Answer.new("UnknownInterface", "no interface #{args[0]} at #{C::OBJECT_PATH}") unless args[0] == C::BENCH_INTERFACE
      return [:reply, "a{sv}", [{ C::PROPERTY => [C::PROPERTY_SIGNATURE, C.items] }]] if member == "GetAll"
      raise Answer.new("UnknownProperty", "no property #{C::BENCH_INTERFACE}.#{args[1]}") unless args[1] == C::PROPERTY
      raise Answer.new("PropertyReadOnly", "#{C::BENCH_INTERFACE}.#{C::PROPERTY} is read-only") if member == "Set"

      [:items]
    end

    # The benchmark methods' replies (ipc.rs's table): [signature, values].
    # property/get-all/<n> and objects/get-managed-objects/<n> (ipc/props.rs): nil when
    # the call is not to their objects, else what `route` returns. Variants are
    # [signature, value] pairs, dicts Hashes.
    def self.props_route(path, interface, member, sig, args)
      what, n, i = props_objects[path]
      return nil unless what

      if what == :manager
        unless [nil, C::OBJECT_MANAGER_INTERFACE].include?(interface) && member == "GetManagedObjects"
          raise Answer.new("UnknownMethod", "only #{C::OBJECT_MANAGER_INTERFACE}.GetManagedObjects at #{path}")
        end

        expect(sig, member, "")
        return [:reply, "a{oa{sa{sv}}}", [managed_objects(n)]]
      end
      unless [nil, PROPERTIES].include?(interface) && member == "GetAll"
        raise Answer.new("UnknownMethod", "only #{PROPERTIES}.GetAll at #{path}")
      end

      expect(sig, member, "s")
      name, props = what == :props ? [C::GET_ALL_INTERFACE, C.properties(n)] : [C::ITEM_INTERFACE, C.item_properties(i)]
      raise Answer.new("UnknownInterface", "no interface #{args[0]} at #{path}") unless args[0] == name

      [:reply, "a{sv}", [props.to_h]]
    rescue Answer => e
      [:error, e.name, e.message]
    end

    # path => [:props, n] | [:manager, n] | [:child, n, i]
    def self.props_objects
      @props_objects ||= C::PROPS_COUNTS.each_with_object({}) do |n, h|
        h[C.props_path(n)] = [:props, n]
        h[C.objects_path(n)] = [:manager, n]
        n.times { |i| h[C.object_child_path(n, i)] = [:child, n, i] }
      end
    end

    def self.managed_objects(n)
      (0...n).to_h { |i| [C.object_child_path(n, i), { C::ITEM_INTERFACE => C.item_properties(i).to_h }] }
    end

    OUT_SIGNATURE = C::INTERFACE_METHODS.to_h { |m, _, out| [m, out] }.freeze

    def self.bench_reply(member, args, service_name)
      sig = OUT_SIGNATURE[member]
      case member
      when "Void", "InInt", "InString" then [sig, []]
      when "OutInt" then [sig, [C::OUT_INT]]
      when "InOutInt" then [sig, [args[0] + 1]]
      when "OutString" then [sig, [C::OUT_STRING]]
      when "InOutString" then [sig, [args[0]]]
      when "ObjectRef" then [sig, [[service_name, C.object_path(0)]]]
      when "RelationSet" then [sig, [C::OBJECT_PATHS.map { |p| [service_name, p] }]]
      when C::ECHO_BYTES then [sig, [args[0]]]
      end
    end
  end
end
