# What a hand-built server answers to any method call (harness/src/ipc/
# standard.rs and introspect.rs): the benchmark methods are left to the
# library, everything else (Introspect, Peer, Properties, unknown members,
# wrong arguments) answered here, so gdbus, busctl and dbus-send get a reply
# or a proper error.
require_relative "canon"

module DbusMatrix
  module Service
    C = Canon
    INTROSPECTABLE = "org.freedesktop.DBus.Introspectable".freeze
    PEER = "org.freedesktop.DBus.Peer".freeze
    PROPERTIES = "org.freedesktop.DBus.Properties".freeze
    ERR = "org.freedesktop.DBus.Error.".freeze
    DOCTYPE = "<!DOCTYPE node PUBLIC \"-//freedesktop//DTD D-BUS Object Introspection 1.0//EN\"\n " \
              "\"http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd\">\n".freeze
    STD_XML = <<~XML.gsub(/^/, "  ").freeze
      <interface name="org.freedesktop.DBus.Introspectable">
        <method name="Introspect">
          <arg name="xml_data" type="s" direction="out"/>
        </method>
      </interface>
      <interface name="org.freedesktop.DBus.Peer">
        <method name="Ping"/>
        <method name="GetMachineId">
          <arg name="machine_uuid" type="s" direction="out"/>
        </method>
      </interface>
    XML
    PROPS_XML = <<~XML.gsub(/^/, "  ").freeze
      <interface name="org.freedesktop.DBus.Properties">
        <method name="Get">
          <arg name="interface_name" type="s" direction="in"/>
          <arg name="property_name" type="s" direction="in"/>
          <arg name="value" type="v" direction="out"/>
        </method>
        <method name="GetAll">
          <arg name="interface_name" type="s" direction="in"/>
          <arg name="properties" type="a{sv}" direction="out"/>
        </method>
        <method name="Set">
          <arg name="interface_name" type="s" direction="in"/>
          <arg name="property_name" type="s" direction="in"/>
          <arg name="value" type="v" direction="in"/>
        </method>
        <signal name="PropertiesChanged">
          <arg name="interface_name" type="s"/>
          <arg name="changed_properties" type="a{sv}"/>
          <arg name="invalidated_properties" type="as"/>
        </signal>
      </interface>
    XML

    def self.bench_xml
      x = "  <interface name=\"#{C::BENCH_INTERFACE}\">\n"
      C::INTERFACE_METHODS.each do |m, i, o|
        if i.empty? && o.empty?
          x += "    <method name=\"#{m}\"/>\n"
          next
        end
        x += "    <method name=\"#{m}\">\n"
        x += "      <arg name=\"value\" type=\"#{i}\" direction=\"in\"/>\n" unless i.empty?
        x += "      <arg name=\"result\" type=\"#{o}\" direction=\"out\"/>\n" unless o.empty?
        x += "    </method>\n"
      end
      x + "    <property name=\"Items\" type=\"a(ss)\" access=\"read\"/>\n    <signal name=\"Ping\">\n" \
          "      <arg name=\"text\" type=\"s\"/>\n    </signal>\n  </interface>\n"
    end

    def self.introspection_xml_of(path)
      return "#{DOCTYPE}<node>\n#{bench_xml}#{STD_XML}#{PROPS_XML}</node>\n" if path == C::OBJECT_PATH
      rest = if path == "/" then C::OBJECT_PATH[1..]
             elsif C::OBJECT_PATH.start_with?("#{path}/") then C::OBJECT_PATH[(path.size + 1)..]
             end
      rest && "#{DOCTYPE}<node>\n#{STD_XML}  <node name=\"#{rest.split('/')[0]}\"/>\n</node>\n"
    end

    def self.machine_id
      ["/etc/machine-id", "/var/lib/dbus/machine-id"].each do |p|
        s = File.read(p).strip rescue next
        return s if s.match?(/\A\h{32}\z/)
      end
      nil
    end

    class Answer < StandardError
      attr_reader :name

      def initialize(name, message)
        super(message)
        @name = ERR + name
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
      return [:reply, "a{sv}", [{ C::PROPERTY => ["a(ss)", C.items] }]] if member == "GetAll"
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

    def self.bench_reply(member, args, service_name)
      case member
      when "Void", "InInt", "InString" then ["", []]
      when "OutInt" then ["i", [42]]
      when "InOutInt" then ["i", [args[0] + 1]]
      when "OutString" then ["s", [C::OUT_STRING]]
      when "InOutString" then ["s", [args[0]]]
      when "ObjectRef" then ["(so)", [[service_name, C.object_path(0)]]]
      when "RelationSet" then ["a(so)", [(0...10).map { |i| [service_name, C.object_path(i)] }]]
      when "EchoBytes" then ["ay", [args[0]]]
      end
    end
  end
end
