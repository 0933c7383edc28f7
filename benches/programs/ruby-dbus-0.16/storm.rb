# ruby-dbus's arm of `property/changed-storm/<n>` (issue 31; the definition in
# harness/src/ipc/storm.rs, the check in ruby/dbus_matrix/storm.rb).
#
# ruby-dbus 0.16 has no property cache and no PropertiesChanged support
# (nothing in its source, /usr/lib/ruby/vendor_ruby/dbus, names either; a
# ProxyObjectInterface's `[]` sends Properties.Get each time), so the
# subscriber keeps the value of each PropertiesChanged itself, as an
# application would. Its `MatchRule` has no argN, so the canon's
# changed_rule (arg0 filtered by the bus) is sent with the bus proxy's
# AddMatch and connection B reads its message queue itself. Connection A
# serves the storm object from its own queue (Properties.Get and GetAll of
# Level, the last value emitted, answered between B's reads: ruby-dbus
# reads a connection only when asked) and emits the n PropertiesChanged
# (update i: Level = i + 1) as signal messages pushed on its queue.
require "dbus"
require "dbus_matrix/canon"
require "dbus_matrix/storm"

module RubyDbusStorm
  ST = DbusMatrix::Storm
  HOLDER = "the program (ruby-dbus has no property cache)".freeze

  def self.changed(level)
    m = DBus::Message.new(DBus::Message::SIGNAL)
    m.path = ST::PATH
    m.interface = ST::PROPERTIES
    m.member = "PropertiesChanged"
    m.add_param("s", ST::INTERFACE)
    m.add_param("a{sv}", { ST::PROPERTY => ["i", level] })
    m.add_param("as", [])
    m
  end

  def self.reply(call, sig, value)
    r = DBus::Message.method_return(call)
    r.add_param(sig, value)
    r
  end

  # A's pending calls to the storm object answered (Get, GetAll of Level).
  def self.answer_pending(a, level)
    while (m = a.message_queue.pop(true))
      next unless m.message_type == DBus::Message::METHOD_CALL

      ours = m.path == ST::PATH && m.interface == ST::PROPERTIES && m.params[0] == ST::INTERFACE
      r = if ours && m.member == "Get" && m.params[1] == ST::PROPERTY then reply(m, "v", ["i", level])
          elsif ours && m.member == "GetAll" then reply(m, "a{sv}", { ST::PROPERTY => ["i", level] })
          else DBus::Message.error(m, "org.freedesktop.DBus.Error.UnknownMethod", "no such method")
          end
      a.message_queue.push(r)
    end
  end

  def self.client(connect, n)
    a = connect.call
    b = connect.call
    b.proxy.AddMatch(ST::CHANGED_RULE)
    level = ST::INITIAL_LEVEL
    last = ST.last_level(n)
    lambda do
      n.times do |i|
        level = ST.level(i)
        a.message_queue.push(changed(level))
      end
      received = 0
      updates = []
      deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + ST::SETTLE_S
      until updates.last == last || Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
        m = b.message_queue.pop(true)
        if m.nil?
          answer_pending(a, level)
          IO.select([b.message_queue.socket], nil, nil, 0.1)
          next
        end
        next unless m.message_type == DBus::Message::SIGNAL && m.member == "PropertiesChanged" &&
                    m.path == ST::PATH && m.params[0] == ST::INTERFACE

        received += 1
        value = m.params[1][ST::PROPERTY]
        updates << (value.is_a?(Integer) ? value : nil)
      end
      ST.storm_digest(received, updates.compact, n, HOLDER)
    end
  end
end
