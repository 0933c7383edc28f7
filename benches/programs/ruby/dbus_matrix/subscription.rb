# The subscription families of issue 31 (harness/src/ipc/subscription.rs,
# docs/scenarios.md "Subscriptions under load") for the Ruby adapters: the
# texts, rules and names from canon.json, and the one check of what a
# subscriber was handed. A check that fails raises with the counts, worded as
# the harness's (runner/tests/program_subscriptions.rs compares both on the
# same broken inputs), so a library that drops, duplicates or over-delivers
# fails its cell instead of passing.
require "dbus_matrix/canon"

module DbusMatrix
  module Subscription
    C = Canon
    S = C::SERVICE
    CHURN_RULE = S["churn_rule"]
    BURST_END = S["burst_end"]
    DELIVERED_NOISE = S["delivered_noise"]
    NAME_CHURNS = S["name_churns"]
    NAME_OWNER_RULE = S["name_owner_rule"]
    MATCH_RULE_NOT_FOUND = C::CANON["standard"]["errors"]["match_rule_not_found"]
    BURST_PREFIX = S["burst_text"].split("%d").first
    KINDS = %w[match-churn burst delivered-broad delivered-arg0 name-owner-churn-broad
               name-owner-churn-arg0].freeze

    # "broad" or "arg0", the scope of an op kind ("delivered-arg0").
    def self.scope_of(kind) = kind.split("-").last
    def self.burst_texts(n) = (0...n).map { |i| format(S["burst_text"], i) }

    # signal/delivered's texts in the order sent: the noise, then the matching one (the end).
    def self.delivered_texts
      (0...DELIVERED_NOISE).map { |i| format(S["delivered_noise_text"], i) } + [C::SIGNAL_TEXT]
    end

    def self.delivered_rule(scope) = scope == "broad" ? C.ping_rule : S["delivered_arg0_rule"]

    # [churned name, sentinel name] of this process (or of pid).
    def self.churn_names(pid = Process.pid) = [format(S["churn_name"], pid), format(S["churn_end_name"], pid)]

    def self.name_owner_rule(scope, pid = Process.pid)
      scope == "broad" ? NAME_OWNER_RULE : format(S["name_owner_arg0_rule"], pid)
    end

    # A match rule's text as {key => value} (type, sender, interface, member,
    # path, argN); the canon's rules quote every value and hold no comma in one.
    def self.rule_fields(rule)
      rule.split(",").to_h do |part|
        key, value = part.split("=", 2)
        raise "match rule #{rule.inspect}: #{part.inspect} is not key='value'" unless value&.match?(/\A'.*'\z/m)

        [key, value[1...-1]]
      end
    end

    def self.digest_texts(texts)
      d = C::Digest.new
      texts.each { |t| d.str(t) }
      d.len(texts.size)
      d.finish
    end

    # The texts a burst's consumer received before the end marker, checked
    # against the n sent: their digest, or an error with the counts.
    def self.burst_digest(received, n)
      seen = Array.new(n, 0)
      foreign = 0
      in_order = true
      last = nil
      received.each do |text|
        digits = text.start_with?(BURST_PREFIX) ? text[BURST_PREFIX.size..].delete_prefix("+") : nil
        i = digits&.match?(/\A[0-9]+\z/) ? Integer(digits, 10) : nil
        if i && i < n
          seen[i] += 1
          in_order &&= last.nil? || last < i
          last = i
        else
          foreign += 1
        end
      end
      lost = seen.count(0)
      duplicated = seen.sum { |c| c > 1 ? c - 1 : 0 }
      unless lost.zero? && duplicated.zero? && foreign.zero? && in_order
        first = seen.index(0)
        raise "burst of #{n} Pings into a consumer that did not read: received #{received.size}, lost #{lost}, " \
              "duplicated #{duplicated}, foreign #{foreign}, #{in_order ? 'in order' : 'out of order'} " \
              "(the first lost: #{first ? "Some(#{first})" : 'None'})"
      end
      digest_texts(received)
    end

    # The Pings a signal/delivered/<scope> subscriber was handed up to and
    # including SIGNAL_TEXT: the broad rule must deliver all, arg0 the last.
    def self.delivered_digest(received, scope)
      texts = delivered_texts
      want = scope == "broad" ? texts.size : 1
      unless received == texts.last(want)
        raise "#{scope} rule: the subscription delivered #{received.size} Pings " \
              "(#{received.count { |t| t != C::SIGNAL_TEXT }} non-matching) of the #{texts.size} emitted; " \
              "it must deliver #{want}"
      end
      digest_texts(received)
    end

    # The [name, new owner] of each NameOwnerChanged a subscriber was handed
    # up to the sentinel's release: broad must deliver the churned name's
    # 2 x NAME_CHURNS and the sentinel's 2 (other names allowed), arg0 only
    # the sentinel's 2.
    def self.name_churn_digest(received, scope, names)
      churned, sentinel = names
      c = received.count { |name, _| name == churned }
      s = received.count { |name, _| name == sentinel }
      other = received.size - c - s
      want = scope == "broad" ? 2 * NAME_CHURNS : 0
      unless c == want && s == 2 && (scope == "broad" || other.zero?)
        raise "#{scope} rule: NameOwnerChanged delivered for the churned name #{c} (must be #{want}), " \
              "for the sentinel #{s} (must be 2), for other names #{other}"
      end
      d = C::Digest.new
      d.len(c)
      d.len(s)
      d.finish
    end

    # The last change a name-owner-churn subscriber waits for.
    def self.sentinel_release?(name, new_owner, names) = name == names[1] && new_owner == ""
  end
end
