# The adapter commands (harness/src/contract.rs) for a Ruby adapter: the same
# flags, exit codes, `unsupported:` lines and READY/WINDOW/go words, and
# `bench` writing raw samples (docs/results-schema.md, "Raw samples").
require "json"
require_relative "canon"

module DbusMatrix
  module Contract
    C = Canon
    CONTRACT = C::CANON["contract"]
    RAW_SOCKET = CONTRACT["raw_socket_reason"]
    # The flags of each command (contract.rs), for their defaults; the parser
    # below spells the flags itself and a test checks it against this table.
    FLAGS = CONTRACT["commands"].to_h { |c| [c["name"], c["flags"].to_h { |f| [f["name"], f] }] }.freeze

    def self.default(command, flag) = Float(FLAGS[command][flag]["default"])
    ALLOC = "Ruby: no counting allocator (the harness's is Rust's global allocator; " \
            "ObjectSpace counts Ruby objects only)".freeze
    # The flags each command takes (contract.rs), spelled here as the parser's
    # own table; runner/tests/program_parsers.rs checks it against the contract.
    TRANSPORT = %w[bus-address bus-socket service-name p2p-socket].freeze
    COMMAND_FLAGS = {
      "list" => [], "emit" => %w[scenario], "demarshal" => %w[scenario],
      "bench" => %w[scenario result criterion-dir sample-size warm-up measurement nresamples timer budget ack-fifo] +
                 TRANSPORT,
      "repeat" => %w[scenario iterations windows ack-fifo] + TRANSPORT,
      "serve" => TRANSPORT, "subscribe" => TRANSPORT + %w[connections extra-rules ack-fifo], "cold-start" => TRANSPORT
    }.freeze

    class Unsupported < StandardError; end

    def self.usage(why)
      warn "error: #{why}\nusage: adapter {list|emit|demarshal|bench|repeat|serve|subscribe|cold-start} [--flag=value ...]"
      exit 2
    end

    def self.parse(argv)
      usage("no command") if argv.empty?
      known = COMMAND_FLAGS.fetch(argv[0]) { usage("unknown command #{argv[0]}") }
      flags = {}
      rest = argv[1..]
      until rest.empty?
        a = rest.shift
        usage("arguments are --name=value") unless a.start_with?("--")
        name, value = a[2..].split("=", 2)
        value ||= rest.shift or usage("a flag without a value")
        usage("unknown flag --#{name} for #{argv[0]}") unless known.include?(name)
        flags[name] = value
      end
      [argv[0], flags]
    end

    def self.number(flags, name, default, min)
      v = flags[name] or return default
      d = Float(v, exception: false)
      usage("--#{name}=#{v}: not a number of at least #{min}") unless d && d >= min && d.finite? && d < 1e9
      d
    end

    def self.transport(flags, needed)
      a, s, n, p = flags.values_at("bus-address", "bus-socket", "service-name", "p2p-socket")
      if p
        usage("--p2p-socket cannot be used with --bus-address, --bus-socket or --service-name") if a || s || n
        return { p2p: true, address: "unix:path=#{p}", service_name: "" }
      end
      if [a, s, n].all?(&:nil?)
        usage("this command needs a transport: --bus-address/--bus-socket/--service-name or --p2p-socket") if needed
        return nil
      end
      usage("a bus transport needs --bus-address, --bus-socket and --service-name together") if [a, s, n].any?(&:nil?)
      { p2p: false, address: a, service_name: n }
    end

    def self.ipc_unsupported(lib, op, p2p)
      return RAW_SOCKET if op[0] == "raw-socket"
      return C.needs_bus(op) if p2p && C.needs_bus(op) && lib.unsupported_ipc(op, false).nil?

      reason = lib.unsupported_ipc(op, p2p)
      family = C::OPT_IN_FAMILIES[op[0]]
      implements = lib.class.const_defined?(:IMPLEMENTS) ? lib.class::IMPLEMENTS : []
      return format(CONTRACT["not_implemented"], family) if reason.nil? && family && !implements.include?(op[0])

      reason
    end

    def self.listing(lib)
      scenarios = C.scenarios.map do |id, kind|
        e = { "id" => id }
        if kind[0] == "ipc"
          r, pr = ipc_unsupported(lib, kind[1], false), ipc_unsupported(lib, kind[1], true)
          pr = C.runner_needs_bus(id) if r.nil? && C.runner_needs_bus(id)
        else
          r, pr = lib.unsupported_codec(kind[0], kind[1]), nil
        end
        e["supported"] = r.nil?
        e["reason"] = r if r
        if kind[0] == "ipc"
          e["p2p_supported"] = pr.nil?
          e["p2p_reason"] = pr if pr
        end
        e
      end
      { "id" => lib.id, "library" => lib.library, "version" => lib.version, "runtime" => lib.runtime,
        "interpreter" => interpreter, "scenarios" => scenarios }
    end

    # This machine's Ruby, exact version and path: kept apart from the runtime
    # (results record it; the committed coverage table does not).
    def self.interpreter = "Ruby #{RUBY_VERSION} (#{RbConfig.ruby})"

    def self.now = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)

    def self.time_ops(op, n)
      start = now
      n.times { op.call }
      now - start
    end

    # The verified operation (cli/prepare.rs): [op, throughput, first_ns].
    def self.prepare(lib, kind, t, ack_fifo)
      if kind[0] == "marshal"
        body = C::PAYLOADS[kind[1]].call
        start = now
        wire = lib.marshal(body)
        # The runner decodes `emit` output with the reference decoder before the first round.
        return [-> { lib.marshal(body) }, wire.bytesize, now - start]
      end
      if kind[0] == "demarshal"
        body = C::PAYLOADS[kind[1]].call
        data = lib.marshal(body) # the library's own bytes, checked by the runner's `emit` check
        d = C::Digest.new
        start = now
        lib.demarshal(data, body[0], d)
        first = now - start
        raise "verification failed: digest #{d.finish.to_s(16)}, expected #{C.body_digest(body).to_s(16)}" if d.finish != C.body_digest(body)

        return [-> { lib.demarshal(data, body[0], C::Digest.new) }, data.bytesize, first]
      end
      op = kind[1]
      raise "property/cold-start is timed by the runner (whole processes)" if op[0] == "property-cold-start"
      raise "IPC scenarios need a transport" unless t

      release = nil
      if op[0] == "idle-connections"
        client, release = idle_holder(lib, t, op[1])
      else
        client = lib.client(t, op)
      end
      expected = C.expected_digest(op, t[:service_name])
      ack = nil
      if C.subscribers_of(op)
        raise "signal fan-out needs --ack-fifo" unless ack_fifo

        ack = File.open(ack_fifo, "rb")
      end
      start = now
      got = client.call
      raise "verification failed: received digest #{got.to_s(16)}, expected #{expected.to_s(16)}" if got != expected

      wait = -> { raise "the ack FIFO closed: a subscriber process died" unless ack.read(1) == "!" }
      wait.call if ack
      first = now - start
      throughput = op[0] == "echo-bytes" ? op[1] : 0
      [ack ? -> { client.call; wait.call } : client, throughput, first, release]
    end

    # cli/idle.rs `holder`: the operation (close the previous batch, open n with
    # the adapter's `idle_connection`, digest their count) and what lets go of the
    # batch it holds (before each `repeat` window). `idle_connection` returns the
    # lambda that closes its connection.
    def self.idle_holder(lib, t, n)
      held = []
      let_go = -> { held.pop.call until held.empty? }
      hold = lambda do
        let_go.call
        n.times { held << lib.idle_connection(t) }
        d = C::Digest.new
        d.len(held.size)
        d.finish
      end
      [hold, let_go]
    end

    # Raw samples as criterion would take them (timing.rs `measure`).
    def self.measure(op, throughput, first, flags)
      n_size = number(flags, "sample-size", default("bench", "sample-size"), 1).to_i
      warm_up = number(flags, "warm-up", default("bench", "warm-up"), 1e-9) * 1e9
      measurement = number(flags, "measurement", default("bench", "measurement"), 1e-9) * 1e9
      notes, cut = [], nil
      if flags["budget"] && first > number(flags, "budget", 0, 1e-9) * 1e9
        cut = format("the verified operation took %.2f s, over the profile's cell budget of %s s: timed once", first / 1e9, flags["budget"])
        samples = [[1, first]]
      else
        one = time_ops(op, 1)
        if one > measurement
          samples, spent = [], 0
          while samples.size < 2 || spent < measurement
            took = time_ops(op, 1)
            samples << [1, took]
            spent += took
          end
          notes << format("slow operation (%.2f s): timed as %d single operations", one / 1e9, samples.size)
        elsif flags["timer"] == "direct"
          k = (measurement / n_size / [one, 1].max).clamp(1, 1e6).to_i
          samples = Array.new(n_size) { [k, time_ops(op, k)] }
        else
          n = [n_size, 10].max
          k, spent, warm = 1, 0, 0
          while spent < warm_up
            spent += time_ops(op, k)
            warm += k
            k *= 2
          end
          d = [1, (measurement / [spent.to_f / warm, 1].max / (n * (n + 1) / 2.0)).ceil].max
          samples = (1..n).map { |i| [i * d, time_ops(op, i * d)] }
        end
      end
      { "raw_samples" => samples.map { |i, t| { "iterations" => i, "elapsed_ns" => t.to_f } },
        "throughput_bytes" => throughput, "verification_notes" => notes, "alloc_unavailable" => ALLOC, "cut" => cut }
    end

    def self.announce_and_wait(what)
      puts what
      $stdout.flush
      line = $stdin.gets.to_s.strip
      raise "after #{what} the runner said #{line.inspect}, not #{CONTRACT['go'].inspect}" unless line == CONTRACT["go"]
    end

    def self.subscribe(lib, t, connections, extra_rules, ack_fifo)
      raise "subscribers need a bus (match rules)" if t[:p2p]

      fifo = File.open(ack_fifo, "r+b") # opening does not wait for the reader
      subs = Array.new(connections) { |i| lib.subscriber(t, i.zero? ? extra_rules : 0) }
      puts CONTRACT["ready"]
      $stdout.flush
      expected = C.expected_digest(["emit-receive", nil], "")
      loop do
        subs.each { |receive| raise "a subscriber received a Ping with the wrong text" unless receive.call == expected }
        fifo.write("!")
        fifo.flush
      end
    end

    def self.run(lib, cmd, flags)
      case cmd
      when "list" then puts JSON.pretty_generate(listing(lib))
      when "serve" then lib.serve(transport(flags, true), -> { puts CONTRACT["ready"]; $stdout.flush })
      when "subscribe"
        usage("the argument --connections is required") unless flags["connections"]
        subscribe(lib, transport(flags, true), number(flags, "connections", 1, 0).to_i,
                  number(flags, "extra-rules", default("subscribe", "extra-rules"), 0).to_i, flags["ack-fifo"] || usage("the argument --ack-fifo is required"))
      when "cold-start" then lib.cold_start(transport(flags, true)).each { |a, b| puts "#{a}\t#{b}" }
      when "emit", "demarshal", "bench", "repeat"
        id = flags["scenario"] or usage("the argument --scenario is required")
        usage("the argument --result is required") if cmd == "bench" && !flags["result"]
        usage("the argument --iterations is required") if cmd == "repeat" && !flags["iterations"]
        t = %w[bench repeat].include?(cmd) ? transport(flags, false) : nil
        kind = C.scenarios.to_h[id] or raise "unknown scenario #{id.inspect}"
        reason = kind[0] == "ipc" ? ipc_unsupported(lib, kind[1], t && t[:p2p]) : lib.unsupported_codec(kind[0], kind[1])
        raise Unsupported, reason if reason

        case cmd
        when "emit"
          raise "emit takes a marshal scenario, not #{id}" unless kind[0] == "marshal"

          $stdout.binmode.write(lib.marshal(C::PAYLOADS[kind[1]].call))
        when "demarshal"
          raise "demarshal takes a demarshal scenario, not #{id}" unless kind[0] == "demarshal"

          d = C::Digest.new
          lib.demarshal($stdin.binmode.read, C::PAYLOADS[kind[1]].call[0], d)
          puts format("%016x", d.finish)
        else
          op, throughput, first, release = prepare(lib, kind, t, flags["ack-fifo"])
          if cmd == "bench"
            File.write(flags["result"], JSON.pretty_generate(measure(op, throughput, first, flags)))
          else
            iterations = number(flags, "iterations", 0, 0).to_i
            windows = number(flags, "windows", default("repeat", "windows"), 0).to_i
            time_ops(op, iterations) if windows.zero?
            windows.times do
              release&.call # a window starts with nothing held (cli/timing.rs)
              announce_and_wait(CONTRACT["window_begin"])
              time_ops(op, iterations)
              announce_and_wait(CONTRACT["window_end"])
            end
          end
        end
      else usage("unknown command #{cmd}")
      end
      0
    end

    # Entry point: bad arguments exit 2, errors 1, an unsupported scenario 3.
    def self.main(lib, argv)
      cmd, flags = parse(argv)
      code = begin
        run(lib, cmd, flags)
      rescue Unsupported => e
        warn "#{CONTRACT['unsupported_prefix']}#{e.message}"
        CONTRACT["exit_unsupported"]
      rescue StandardError => e
        warn "error: #{e.class}: #{e.message}"
        1
      end
      $stdout.flush
      exit code
    end
  end
end
