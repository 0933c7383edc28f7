# ruby-dbus's arm of the subscription families (issue 31; definitions in
# harness/src/ipc/subscription.rs, checks in ruby/dbus_matrix/subscription.rb).
#
# ruby-dbus reads a connection only inside a call on it (send_sync,
# message_queue.pop), so the subscriber of a burst is not read while the
# burst is emitted. Match churn and the burst's subscriber use the library's
# own `Bus#add_match` / `remove_match` (each an AddMatch / RemoveMatch through
# the bus proxy, reply awaited). Its `MatchRule` has no argN (FILTERS: sender,
# interface, member, path, destination, type; `from_s` raises on arg0), so
# the delivered and name-owner-churn subscribers send the canon's rule text
# with the bus proxy's AddMatch and read their message queue themselves,
# matching the rule's header fields (not its args: what they get is what the
# bus delivered), as dbus-0.9 does with add_match_no_cb.
require "dbus"
require "dbus_matrix/canon"
require "dbus_matrix/subscription"

module RubyDbusSubscriptions
  C = DbusMatrix::Canon
  SUB = DbusMatrix::Subscription
  KINDS = SUB::KINDS
  DO_NOT_QUEUE = 4
  # A rule's header keys as DBus::Message readers.
  READERS = { "sender" => :sender, "interface" => :interface, "member" => :member, "path" => :path }.freeze

  def self.ping(bus, text)
    m = DBus::Message.new(DBus::Message::SIGNAL)
    m.path = C::OBJECT_PATH
    m.interface = C::BENCH_INTERFACE
    m.member = C::SIGNAL
    m.add_param("s", text)
    bus.message_queue.push(m)
  end

  # The canon's rule text sent with the bus proxy's AddMatch (reply awaited);
  # the lambda returns the params of the next signal whose header it matches.
  def self.raw_subscriber(bus, rule)
    fields = SUB.rule_fields(rule)
    raise "match rule #{rule.inspect} is not a signal rule" unless fields.delete("type") == "signal"

    header = fields.reject { |k, _| k.start_with?("arg") }.map { |k, v| [READERS.fetch(k), v] }
    bus.proxy.AddMatch(rule)
    lambda do
      loop do
        m = bus.message_queue.pop
        raise "the bus closed the subscriber's connection" if m.nil?
        return m.params if m.message_type == DBus::Message::SIGNAL && header.all? { |r, v| m.send(r) == v }
      end
    end
  end

  # The operation of a subscription op; connect.call opens a bus connection.
  def self.client(connect, op)
    kind, n = op
    tx = connect.call
    case kind
    when "match-churn"
      rule = DBus::MatchRule.new.from_s(SUB::CHURN_RULE)
      lambda do
        tx.add_match(rule) { |_msg| nil }
        tx.remove_match(rule)
        C::Digest.new.finish
      end
    when "burst"
      rx = connect.call
      received = []
      rx.add_match(DBus::MatchRule.new.from_s(C.ping_rule)) { |msg| received << msg.params[0] }
      texts = SUB.burst_texts(n)
      lambda do
        texts.each { |t| ping(tx, t) }
        ping(tx, SUB::BURST_END)
        rx.process(rx.message_queue.pop) until received.last == SUB::BURST_END
        got = received[0...-1]
        received.clear
        SUB.burst_digest(got, n)
      end
    when "delivered-broad", "delivered-arg0"
      scope = SUB.scope_of(kind)
      receive = raw_subscriber(connect.call, SUB.delivered_rule(scope))
      texts = SUB.delivered_texts
      lambda do
        texts.each { |t| ping(tx, t) }
        received = []
        received << receive.call[0] until received.last == C::SIGNAL_TEXT
        SUB.delivered_digest(received, scope)
      end
    when "name-owner-churn-broad", "name-owner-churn-arg0"
      scope = SUB.scope_of(kind)
      names = SUB.churn_names
      receive = raw_subscriber(connect.call, SUB.name_owner_rule(scope))
      lambda do
        ([names[0]] * SUB::NAME_CHURNS + [names[1]]).each do |name|
          tx.proxy.RequestName(name, DO_NOT_QUEUE)
          tx.proxy.ReleaseName(name)
        end
        received = []
        until received.last && SUB.sentinel_release?(*received.last, names)
          name, _old, new = receive.call
          received << [name, new]
        end
        SUB.name_churn_digest(received, scope, names)
      end
    else raise "no subscription client for #{kind}"
    end
  end
end
