# ruby-dbus's arm of `proxy/startup/<n>` (issue 31, item 6; the definition in
# harness/src/ipc/startup.rs, the tree and its tally in
# ruby/dbus_matrix/startup.rb).
#
# Connection A owns `<service>.Proxied` (RequestName, DO_NOT_QUEUE) and
# answers the tree from its own message queue on a thread of its own (as the
# proxied object of apps.rb: ruby-dbus's object server would answer
# Introspect with XML of its own making). One op is what a supervisor does
# at boot with ruby-dbus's own API: a new ProxyObject of the root
# (`service(name).object(root)`, a fresh Service each op, so nothing is
# cached), `introspect` (Bus#introspect_data, then ProxyObjectFactory.
# introspect_into, which parses the XML with the library's
# IntrospectXMLParser into interfaces and `subnodes`), then per subnode a
# new ProxyObject whose `[interface]` introspects and parses it the same way
# and builds the ProxyObjectInterface, and `Id` called through it
# (send_sync). Verified as startup::op_digest: the n Ids, n + 1 Introspects
# and n Id calls.
require "dbus"
require "dbus_matrix/proxied"
require "dbus_matrix/startup"

module RubyDbusStartup
  ST = DbusMatrix::Startup
  PX = DbusMatrix::Proxied

  def self.serve(bus, n, tally)
    loop do
      m = bus.message_queue.pop
      next unless m.message_type == DBus::Message::METHOD_CALL

      a = ST.answer(n, tally, m.path, m.interface, m.member)
      next if m.instance_variable_get(:@flags) & DBus::Message::NO_REPLY_EXPECTED != 0

      if a[0] == "error"
        bus.message_queue.push(DBus::Message.error(m, a[1], a[2]))
        next
      end
      bus.message_queue.push(RubyDbusApps.reply_to(m, a[1], a[2]))
    end
  rescue EOFError, IOError
    nil # the process is ending
  end

  def self.client(connect, t, n)
    tally = ST::Tally.new
    name = PX.proxied_name(t[:service_name])
    a = connect.call
    owned = a.proxy.RequestName(name, 4)[0] # DO_NOT_QUEUE
    raise "could not own #{name} (RequestName answered #{owned})" unless owned == 1

    Thread.new { serve(a, n, tally) }
    b = connect.call
    lambda do
      service = b.service(name)
      root = service.object(ST::ROOT)
      root.introspect
      ids = root.subnodes.map do |node|
        service.object("#{ST::ROOT}/#{node}")[ST::INTERFACE].send(ST::METHOD)[0]
      end
      ST.op_digest(ids, *tally.take)
    end
  end
end
