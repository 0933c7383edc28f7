/* The adapter contract (harness/src/contract.rs) in C: arguments, `list`,
 * `emit`, `demarshal`, `bench` (raw samples: docs/results-schema.md),
 * `repeat` with the WINDOW/go handshake, `serve`, `subscribe`, `cold-start`.
 * Exit 0 ok, 1 error, 2 bad arguments, 3 unsupported (`unsupported: why`). */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "adapter.h"

#define ID "libdbus-c-1.14"
static const char *RAW_SOCKET = CANON_RAW_SOCKET_REASON;
/* proxy/startup's reason: a library fact (its installed headers, dbus-1.0/dbus/\*.h, the whole API). */
static const char *NO_INTROSPECTION_PARSER =
    "libdbus 1.14 has no introspection parser and no proxy: its API (the headers under dbus-1.0/dbus) "
    "names introspection only as the interface name and the DTD's identifiers (dbus-protocol.h, "
    "dbus-shared.h); Introspect's answer is a string a caller must parse with an XML library of its own, "
    "so there is nothing of libdbus's to build a proxy from at run time";
static const char *ALLOC = "C: libdbus allocates with malloc; no counting allocator is linked into this program";

typedef struct { const char *name, *value; } flag_t;
static flag_t flags[32];
static int nflags;

static void usage(const char *why) {
    fprintf(stderr, "error: %s\nusage: adapter {list|emit|demarshal|bench|repeat|serve|subscribe|cold-start} [--flag=value ...]\n", why);
    exit(2);
}

static const char *flag(const char *name) {
    for (int i = 0; i < nflags; i++)
        if (!strcmp(flags[i].name, name)) return flags[i].value;
    return NULL;
}

static const char *required(const char *name) {
    const char *v = flag(name);
    if (!v) {
        char why[96];
        snprintf(why, sizeof why, "the argument --%s is required", name);
        usage(why);
    }
    return v;
}

/* The default of `command`'s flag `name` in the contract (canon_data.h CANON_FLAGS). */
static const char *dflt_text(const char *command, const char *name) {
    for (int i = 0; i < CANON_N_FLAGS; i++)
        if (!strcmp(CANON_FLAGS[i].command, command) && !strcmp(CANON_FLAGS[i].flag, name) && CANON_FLAGS[i].dflt)
            return CANON_FLAGS[i].dflt;
    fprintf(stderr, "error: the contract gives %s --%s no default\n", command, name);
    exit(1);
}
static double dflt_of(const char *command, const char *name) { return atof(dflt_text(command, name)); }

static double number(const char *name, double dflt, double min) {
    const char *v = flag(name);
    if (!v) return dflt;
    char *end;
    double d = strtod(v, &end);
    if (*end || !(d >= min) || !isfinite(d) || d > 1e9) {
        char why[128];
        snprintf(why, sizeof why, "--%s=%s: not a number of at least %g", name, v, min);
        usage(why);
    }
    return d;
}

/* contract.rs TransportArgs: a bus needs all three, p2p stands alone. */
static int transport(transport_t *t, int needed) {
    static char p2p_address[4200];
    const char *a = flag("bus-address"), *s = flag("bus-socket"), *n = flag("service-name"), *p = flag("p2p-socket");
    memset(t, 0, sizeof *t);
    if (p) {
        if (a || s || n) usage("--p2p-socket cannot be used with --bus-address, --bus-socket or --service-name");
        /* Escaped as the specification says: a space in $TMPDIR is not an address's end. */
        char *escaped = dbus_address_escape_value(p);
        if (!escaped) usage("out of memory escaping the --p2p-socket path");
        snprintf(p2p_address, sizeof p2p_address, "unix:path=%s", escaped);
        dbus_free(escaped);
        t->p2p = 1, t->socket = p, t->address = p2p_address, t->service_name = "";
        return 1;
    }
    if (!a && !s && !n) {
        if (needed) usage("this command needs a transport: --bus-address/--bus-socket/--service-name or --p2p-socket");
        return 0;
    }
    if (!a || !s || !n) usage("a bus transport needs --bus-address, --bus-socket and --service-name together");
    t->address = a, t->socket = s, t->service_name = n;
    return 1;
}

static const char *ipc_unsupported(op_t op, int p2p) {
    if (op.kind == OP_RAW_SOCKET) return RAW_SOCKET;
    if (op.kind == OP_STARTUP && !p2p) return NO_INTROSPECTION_PARSER;
    if (p2p) return needs_bus(op) ? needs_bus(op) : NO_P2P;
    return NULL;
}

static void json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void list(void) {
    scenario_t sc[MAX_SCENARIOS];
    int n = scenarios(sc), maj, min, mic;
    dbus_get_version(&maj, &min, &mic);
    printf("{\"id\": \"" ID "\", \"library\": \"libdbus\", \"version\": \"%d.%d.%d\", \"runtime\": ", maj, min, mic);
    json_string(stdout, "blocking: libdbus used directly from C (cc -O2), calls on the calling thread, the "
                        "server dispatching on its calling thread (no main loop); started through a /bin/sh "
                        "wrapper that builds it when stale");
    printf(", \"scenarios\": [");
    for (int i = 0; i < n; i++) {
        printf("%s{\"id\": \"%s\", ", i ? ", " : "", sc[i].id);
        if (sc[i].kind != 'i') {
            printf("\"supported\": true}");
            continue;
        }
        const char *bus = ipc_unsupported(sc[i].op, 0), *p2p = ipc_unsupported(sc[i].op, 1);
        if (!bus && runner_needs_bus(&sc[i])) p2p = runner_needs_bus(&sc[i]);
        printf("\"supported\": %s, ", bus ? "false" : "true");
        if (bus) printf("\"reason\": "), json_string(stdout, bus), printf(", ");
        printf("\"p2p_supported\": %s", p2p ? "false" : "true");
        if (p2p) printf(", \"p2p_reason\": "), json_string(stdout, p2p);
        printf("}");
    }
    printf("]}\n");
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* One prepared operation of a cell. */
typedef struct {
    char kind;
    body_t body;
    char *wire;
    int wire_len;
    client_t *client;
    int ack_fd;
} prepared_t;

static void fail(const char *what, const char *err) {
    fprintf(stderr, "error: %s: %s\n", what, err);
    exit(1);
}

static void op(prepared_t *p) {
    char err[512];
    if (p->kind == 'm') {
        char *buf;
        int len;
        if (marshal(&p->body, &buf, &len)) fail("marshal", "out of memory");
        dbus_free(buf);
    } else if (p->kind == 'd') {
        digest_t d;
        d_init(&d);
        if (demarshal(p->wire, p->wire_len, p->body.asv, &d, err, sizeof err)) fail("demarshal after verification", err);
    } else {
        uint64_t got;
        if (client_op(p->client, &got, err, sizeof err)) fail("the operation after verification", err);
        char b;
        if (p->ack_fd >= 0 && read(p->ack_fd, &b, 1) != 1) fail("the ack FIFO", "closed: a subscriber process died");
    }
}

static double time_ops(prepared_t *p, uint64_t iterations) {
    uint64_t start = now_ns();
    for (uint64_t i = 0; i < iterations; i++) op(p);
    return (double)(now_ns() - start);
}

static void bench(prepared_t *p, uint64_t first, uint64_t throughput) {
    int sample_size = (int)number("sample-size", dflt_of("bench", "sample-size"), 1);
    double warm_up = number("warm-up", dflt_of("bench", "warm-up"), 1e-9) * 1e9;
    double measurement = number("measurement", dflt_of("bench", "measurement"), 1e-9) * 1e9;
    const char *budget = flag("budget"), *timer = flag("timer") ? flag("timer") : dflt_text("bench", "timer");
    uint64_t iters[100001];
    double times[100001];
    int n = 0;
    char cut[256] = "";
    if (budget && first > number("budget", 0, 1e-9) * 1e9) {
        snprintf(cut, sizeof cut, "the verified operation took %.2f s, over the profile's cell budget of %s s: timed once", first / 1e9, budget);
        iters[0] = 1, times[0] = (double)first, n = 1;
    } else {
        double one = time_ops(p, 1);
        if (one > measurement) {
            double spent = 0;
            while ((n < 2 || spent < measurement) && n < 100000) iters[n] = 1, times[n] = time_ops(p, 1), spent += times[n++];
        } else if (!strcmp(timer, "direct")) {
            uint64_t k = (uint64_t)fmin(fmax(measurement / sample_size / fmax(one, 1), 1), 1e6);
            for (; n < sample_size && n < 100000; n++) iters[n] = k, times[n] = time_ops(p, k);
        } else {
            int s = sample_size < 10 ? 10 : sample_size; /* criterion's minimum, as the Rust adapters use it */
            uint64_t k = 1, warm = 0;
            double spent = 0;
            while (spent < warm_up) spent += time_ops(p, k), warm += k, k *= 2;
            double per = spent / (double)warm;
            uint64_t d = (uint64_t)fmax(1, ceil(measurement / fmax(per, 1) / (s * (s + 1) / 2.0)));
            for (; n < s && n < 100000; n++) iters[n] = d * (uint64_t)(n + 1), times[n] = time_ops(p, iters[n]);
        }
    }
    FILE *f = fopen(required("result"), "w");
    if (!f) fail("writing the result", required("result"));
    fprintf(f, "{\"raw_samples\": [");
    for (int i = 0; i < n; i++) fprintf(f, "%s{\"iterations\": %llu, \"elapsed_ns\": %.1f}", i ? ", " : "", (unsigned long long)iters[i], times[i]);
    fprintf(f, "], \"throughput_bytes\": %llu, \"verification_notes\": [], \"alloc_unavailable\": ", (unsigned long long)throughput);
    json_string(f, ALLOC);
    if (*cut) fprintf(f, ", \"cut\": "), json_string(f, cut);
    fprintf(f, "}\n");
    fclose(f);
}

static void announce_and_wait(const char *what) {
    char line[64] = "";
    printf("%s\n", what);
    fflush(stdout);
    if (!fgets(line, sizeof line, stdin) || strncmp(line, CANON_GO, strlen(CANON_GO))) fail("the window handshake", "the runner did not say " CANON_GO);
}

int main(int argc, char **argv) {
    if (argc < 2) usage("no command");
    const char *cmd = argv[1];
    for (int i = 2; i < argc; i++) {
        if (strncmp(argv[i], "--", 2) || nflags == 32) usage("arguments are --name=value");
        char *eq = strchr(argv[i], '=');
        if (eq) *eq = 0, flags[nflags++] = (flag_t){argv[i] + 2, eq + 1};
        else if (i + 1 < argc) flags[nflags++] = (flag_t){argv[i] + 2, argv[i + 1]}, i++;
        else usage("a flag without a value");
    }
    /* The flags each command takes (contract.rs), this parser's own table;
     * runner/tests/program_parsers.rs checks it against the contract. */
#define TRANSPORT_FLAGS "bus-address", "bus-socket", "service-name", "p2p-socket"
    static const struct { const char *command, *flags[16]; } known[] = {
        {"list", {NULL}},
        {"emit", {"scenario", NULL}},
        {"demarshal", {"scenario", NULL}},
        {"bench", {"scenario", "result", "criterion-dir", "sample-size", "warm-up", "measurement", "nresamples", "timer",
                   "budget", "ack-fifo", TRANSPORT_FLAGS, NULL}},
        {"repeat", {"scenario", "iterations", "windows", "ack-fifo", TRANSPORT_FLAGS, NULL}},
        {"serve", {TRANSPORT_FLAGS, NULL}},
        {"subscribe", {"connections", "extra-rules", "ack-fifo", TRANSPORT_FLAGS, NULL}},
        {"cold-start", {TRANSPORT_FLAGS, NULL}},
    };
    const char *const *takes = NULL;
    for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
        if (!strcmp(cmd, known[k].command)) takes = known[k].flags;
    if (!takes) usage("unknown command");
    for (int i = 0; i < nflags; i++) {
        int ok = 0;
        for (int k = 0; takes[k]; k++) ok |= !strcmp(flags[i].name, takes[k]);
        if (!ok) usage("unknown flag");
    }
    transport_t t;
    if (!strcmp(cmd, "list")) return list(), 0;
    if (!strcmp(cmd, "serve")) return transport(&t, 1), serve(&t);
    if (!strcmp(cmd, "cold-start")) return transport(&t, 1), cold_start(&t);
    if (!strcmp(cmd, "subscribe"))
        return transport(&t, 1), subscribe(&t, (int)number("connections", atof(required("connections")), 0), (int)number("extra-rules", dflt_of("subscribe", "extra-rules"), 0), required("ack-fifo"));
    int is_bench = !strcmp(cmd, "bench"), is_repeat = !strcmp(cmd, "repeat");
    if (strcmp(cmd, "emit") && strcmp(cmd, "demarshal") && !is_bench && !is_repeat) usage("unknown command");
    const char *id = required("scenario");
    int has_t = (is_bench || is_repeat) ? transport(&t, 0) : 0;
    if (is_bench) required("result");
    if (is_repeat) required("iterations");
    scenario_t sc[MAX_SCENARIOS], *s = NULL;
    int n = scenarios(sc);
    for (int i = 0; i < n; i++)
        if (!strcmp(sc[i].id, id)) s = &sc[i];
    if (!s) return fprintf(stderr, "error: unknown scenario \"%s\"\n", id), 1;
    if (s->kind == 'i') {
        const char *why = ipc_unsupported(s->op, has_t && t.p2p);
        if (why) return fprintf(stderr, CANON_UNSUPPORTED_PREFIX "%s\n", why), CANON_EXIT_UNSUPPORTED;
    }
    prepared_t p = {.kind = s->kind, .ack_fd = -1};
    char err[512];
    if (!strcmp(cmd, "emit") || !strcmp(cmd, "demarshal")) {
        char want = !strcmp(cmd, "emit") ? 'm' : 'd';
        if (s->kind != want) return fprintf(stderr, "error: %s takes a %s scenario, not %s\n", cmd, want == 'm' ? "marshal" : "demarshal", id), 1;
        body_of(s->payload, &p.body);
        if (want == 'm') {
            if (marshal(&p.body, &p.wire, &p.wire_len)) fail("marshal", "out of memory");
            return fwrite(p.wire, 1, (size_t)p.wire_len, stdout) == (size_t)p.wire_len ? 0 : 1;
        }
        size_t cap = 1 << 20, len = 0, got;
        char *buf = malloc(cap);
        while ((got = fread(buf + len, 1, cap - len, stdin)) > 0)
            if ((len += got) == cap) buf = realloc(buf, cap *= 2);
        digest_t d;
        d_init(&d);
        if (demarshal(buf, (int)len, p.body.asv, &d, err, sizeof err)) fail("demarshal failed", err);
        return printf("%016llx\n", (unsigned long long)d.h), 0;
    }
    /* bench and repeat: verify the first operation before anything is timed */
    uint64_t throughput = 0, first;
    if (s->kind == 'm' || s->kind == 'd') {
        body_of(s->payload, &p.body);
        /* demarshal input: this adapter's own marshal output, which the runner
         * decodes with the reference decoder (`emit`) before the first round */
        if (marshal(&p.body, &p.wire, &p.wire_len)) fail("marshal", "out of memory");
        throughput = (uint64_t)p.wire_len;
        uint64_t start = now_ns();
        if (s->kind == 'd') {
            digest_t d;
            d_init(&d);
            if (demarshal(p.wire, p.wire_len, p.body.asv, &d, err, sizeof err)) fail("demarshal failed", err);
            first = now_ns() - start;
            if (d.h != body_digest(&p.body)) fail("verification failed", "the digest of the decoded fields is not the canonical one");
        } else {
            op(&p);
            first = now_ns() - start;
        }
    } else {
        if (s->op.kind == OP_COLD_START) fail("bench", "property/cold-start is timed by the runner (whole processes)");
        if (!has_t) fail("bench", "IPC scenarios need a transport");
        if (!(p.client = client_new(&t, s->op, err, sizeof err))) fail("connecting the client", err);
        if (s->op.kind == OP_FANOUT || s->op.kind == OP_NONMATCHING) {
            const char *fifo = flag("ack-fifo");
            if (!fifo) fail("bench", "signal fan-out needs --ack-fifo");
            if ((p.ack_fd = open(fifo, O_RDONLY)) < 0) fail("opening the ack FIFO", fifo);
        }
        if (s->op.kind == OP_ECHO) throughput = (uint64_t)s->op.n;
        uint64_t got, start = now_ns();
        if (client_op(p.client, &got, err, sizeof err)) fail("the first operation failed", err);
        if (got != expected_digest(s->op, t.service_name)) fail("verification failed", "the received digest is not the expected one");
        char b;
        if (p.ack_fd >= 0 && read(p.ack_fd, &b, 1) != 1) fail("the subscribers did not acknowledge the first Ping", "the FIFO closed");
        first = now_ns() - start;
    }
    if (is_bench) return bench(&p, first, throughput), 0;
    uint64_t iterations = (uint64_t)number("iterations", 0, 0);
    int windows = (int)number("windows", dflt_of("repeat", "windows"), 0);
    if (!windows) time_ops(&p, iterations);
    for (int w = 0; w < windows; w++) {
        if (p.client) client_release(p.client); /* a window starts with nothing held */
        announce_and_wait(CANON_WINDOW_BEGIN);
        time_ops(&p, iterations);
        announce_and_wait(CANON_WINDOW_END);
    }
    return 0;
}
