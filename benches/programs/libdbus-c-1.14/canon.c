/* The canonical values, the field digest and the benchmark service, as the
 * harness defines them (harness/src/payload.rs, digest.rs, ipc.rs,
 * scenario.rs, ipc/introspect.rs). The runner checks them: emit bytes by
 * the reference decoder, demarshal digests, every IPC reply's digest. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapter.h"

#define K 0x517cc1b727220a95ULL

void d_init(digest_t *d) { d->h = 0xcbf29ce484222325ULL; }
static void word(digest_t *d, uint64_t w) { d->h = (((d->h << 5) | (d->h >> 59)) ^ w) * K; }
void d_u64(digest_t *d, uint64_t v) { word(d, v); }
void d_i32(digest_t *d, int32_t v) { word(d, (uint64_t)(uint32_t)v); }
void d_len(digest_t *d, uint64_t n) { word(d, n | (1ULL << 63)); }
void d_bytes(digest_t *d, const void *p, size_t n) {
    const unsigned char *b = p;
    word(d, n);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8); /* little-endian machines only, as the harness */
        word(d, w);
    }
    if (i < n) {
        uint64_t w = 0;
        memcpy(&w, b + i, n - i);
        word(d, w);
    }
}
void d_str(digest_t *d, const char *s) { d_bytes(d, s, strlen(s)); }

static char *repeated_decimal(long i) {
    char one[24];
    int n = snprintf(one, sizeof one, "%ld", i);
    char *s = malloc((size_t)n * 12 + 1);
    for (int k = 0; k < 12; k++) memcpy(s + k * n, one, (size_t)n);
    s[n * 12] = 0;
    return s;
}

static const char *ABCDE[] = {"A", "B", "C", "D", "E"};
static const char *EMPTY[] = {""};

int body_of(const char *name, body_t *b) {
    memset(b, 0, sizeof *b);
    if (!strcmp(name, "mixed")) {
        b->units = 10;
        b->dict_len = 5, b->dict_keys = ABCDE;
        b->at_len = 15, b->at = malloc(15 * 8);
        for (int i = 0; i < 15; i++) b->at[i] = UINT64_MAX;
        b->as_len = 1, b->as = EMPTY;
    } else if (!strcmp(name, "big-array")) {
        b->units = 1, b->dict_len = 1, b->dict_keys = ABCDE;
        b->at_len = 10240, b->at = calloc(10240, 8);
        b->as_len = 1, b->as = EMPTY;
    } else if (!strcmp(name, "str-array")) {
        b->units = 1, b->dict_len = 1, b->dict_keys = ABCDE;
        b->at_len = 1, b->at = calloc(1, 8);
        b->as_len = 10240, b->as = malloc(10240 * sizeof(char *));
        for (long i = 0; i < 10240; i++) b->as[i] = repeated_decimal(i);
    } else if (!strcmp(name, "asv-dict")) {
        b->asv = 1, b->asv_len = 10240, b->asv_keys = malloc(10240 * sizeof(char *));
        for (long i = 0; i < 10240; i++) b->asv_keys[i] = repeated_decimal(i);
    } else {
        return -1;
    }
    return 0;
}

uint64_t body_digest(const body_t *b) {
    digest_t d;
    d_init(&d);
    if (b->asv) {
        for (int i = 0; i < b->asv_len; i++) d_str(&d, b->asv_keys[i]), d_str(&d, b->asv_keys[i]);
        d_len(&d, (uint64_t)b->asv_len);
        return d.h;
    }
    for (int u = 0; u < b->units; u++) {
        d_str(&d, "Testtest");
        d_u64(&d, UINT64_MAX);
        d_u64(&d, UINT64_MAX);
        d_str(&d, "TesttestTestest");
        for (int i = 0; i < b->dict_len; i++) d_str(&d, b->dict_keys[i]), d_i32(&d, 1234567);
        d_len(&d, (uint64_t)b->dict_len);
        for (int i = 0; i < b->at_len; i++) d_u64(&d, b->at[i]);
        d_len(&d, (uint64_t)b->at_len);
        for (int i = 0; i < b->as_len; i++) d_str(&d, b->as[i]);
        d_len(&d, (uint64_t)b->as_len);
    }
    return d.h;
}

const method_t METHODS[N_METHODS] = {
    {"void", "Void", "", ""},           {"in-int", "InInt", "i", ""},
    {"out-int", "OutInt", "", "i"},     {"in-out-int", "InOutInt", "i", "i"},
    {"in-string", "InString", "s", ""}, {"out-string", "OutString", "", "s"},
    {"in-out-string", "InOutString", "s", "s"}, {"object-ref", "ObjectRef", "", "(so)"},
    {"relation-set", "RelationSet", "", "a(so)"},
};
static const long ECHO[] = {1, 64, 1024, 4096, 32768, 131072, 1048576};
static const long FANOUT[] = {1, 10, 100};
static const long RULES[] = {10, 100, 1000, 10000};
static const long IN_FLIGHT[] = {1, 10, 100, 1000};
static const long PROPS[] = {10, 1000};
static const long IDLE[] = {10, 100, 1000, 10000};
static const long FD_SIZES[] = {4096, 1048576}; /* ipc/fd_passing.rs FD_SIZES */

static void add(scenario_t *out, int *n, const char *id, char kind, const char *payload, op_kind k, int m, long v) {
    scenario_t *s = &out[(*n)++];
    snprintf(s->id, sizeof s->id, "%s", id);
    s->kind = kind;
    snprintf(s->payload, sizeof s->payload, "%s", payload ? payload : "");
    s->op.kind = k, s->op.method = m, s->op.n = v;
    s->driven = 0;
}

int scenarios(scenario_t *out) {
    static const char *P[] = {"mixed", "big-array", "str-array", "asv-dict"};
    char id[64];
    int n = 0;
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 4; i++) {
            snprintf(id, sizeof id, "%s/%s", k ? "demarshal" : "marshal", P[i]);
            add(out, &n, id, k ? 'd' : 'm', P[i], OP_CALL, 0, 0);
        }
    for (int i = 0; i < N_METHODS; i++) {
        snprintf(id, sizeof id, "call/%s", METHODS[i].slug);
        add(out, &n, id, 'i', NULL, OP_CALL, i, 0);
    }
    for (int i = 0; i < 7; i++) {
        snprintf(id, sizeof id, "call/echo-bytes/%ld", ECHO[i]);
        add(out, &n, id, 'i', NULL, OP_ECHO, 0, ECHO[i]);
    }
    for (int i = 0; i < 4; i++) {
        snprintf(id, sizeof id, "call/in-flight/%ld", IN_FLIGHT[i]);
        add(out, &n, id, 'i', NULL, OP_IN_FLIGHT, 0, IN_FLIGHT[i]);
    }
    for (int i = 0; i < 2; i++) {
        snprintf(id, sizeof id, "call/fd-passing/%ld", FD_SIZES[i]);
        add(out, &n, id, 'i', NULL, OP_FD_PASSING, 0, FD_SIZES[i]);
    }
    add(out, &n, "property/get", 'i', NULL, OP_PROP_GET, 0, 0);
    add(out, &n, "property/get-x100", 'i', NULL, OP_PROP_X100, 0, 0);
    /* ipc/props.rs: PROPS_COUNTS, the same n for both families */
    for (int i = 0; i < 2; i++) {
        snprintf(id, sizeof id, "property/get-all/%ld", PROPS[i]);
        add(out, &n, id, 'i', NULL, OP_GET_ALL, 0, PROPS[i]);
    }
    for (int i = 0; i < 2; i++) {
        snprintf(id, sizeof id, "objects/get-managed-objects/%ld", PROPS[i]);
        add(out, &n, id, 'i', NULL, OP_MANAGED_OBJECTS, 0, PROPS[i]);
    }
    add(out, &n, "property/cold-start", 'i', NULL, OP_COLD_START, 0, 0);
    add(out, &n, "signal/emit-receive", 'i', NULL, OP_EMIT_RECEIVE, 0, 0);
    for (int i = 0; i < 3; i++) {
        snprintf(id, sizeof id, "signal/fanout/%ld", FANOUT[i]);
        add(out, &n, id, 'i', NULL, OP_FANOUT, 0, FANOUT[i]);
    }
    for (int i = 0; i < 4; i++) {
        snprintf(id, sizeof id, "signal/nonmatching-rules/%ld", RULES[i]);
        add(out, &n, id, 'i', NULL, OP_NONMATCHING, 0, RULES[i]);
    }
    add(out, &n, "connect/hello", 'i', NULL, OP_HELLO, 0, 0);
    for (int i = 0; i < 4; i++) {
        snprintf(id, sizeof id, "connect/idle-connections/%ld", IDLE[i]);
        add(out, &n, id, 'i', NULL, OP_IDLE, 0, IDLE[i]);
    }
    add(out, &n, "connect/marshal-send", 'i', NULL, OP_MARSHAL_SEND, 0, 0);
    for (int i = 0; i < 7; i++) {
        snprintf(id, sizeof id, "baseline/raw-socket/%ld", ECHO[i]);
        add(out, &n, id, 'i', NULL, OP_RAW_SOCKET, 0, ECHO[i]);
    }
    for (int k = 1; k <= 8; k *= 2) {
        snprintf(id, sizeof id, "call/parallel-clients/%d", k);
        add(out, &n, id, 'i', NULL, OP_CALL, 0, 0);
        out[n - 1].driven = 'p';
    }
    static const char *RULE_KINDS[] = {"sender", "wildcard"};
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 18; i++) {
            snprintf(id, sizeof id, "signal/match-rules/%s/%ld", RULE_KINDS[k], 1L << i);
            add(out, &n, id, 'i', NULL, OP_FANOUT, 0, 1);
            out[n - 1].driven = 'r';
        }
    return n;
}

const char *runner_needs_bus(const scenario_t *s) {
    switch (s->driven) {
    case 'p':
        return "parallel clients are measured against one bus: peer to peer each client would need a server "
               "connection of its own";
    case 'r': return "match rules are held by a bus (AddMatch); peer to peer there is no bus to hold them";
    default: return NULL;
    }
}

static char ids[10][8], names[10][24], paths[10][40];
static void init_items(void) {
    for (int i = 0; i < 10; i++) {
        snprintf(ids[i], sizeof ids[i], "id%d", i);
        snprintf(names[i], sizeof names[i], "Item number %d", i);
        snprintf(paths[i], sizeof paths[i], "%s/object/%d", OBJECT_PATH, i);
    }
}
const char *item_id(int i) { init_items(); return ids[i]; }
const char *item_name(int i) { init_items(); return names[i]; }
const char *object_path_of(int i) { init_items(); return paths[i]; }

void digest_items(digest_t *d) {
    for (int i = 0; i < 10; i++) d_str(d, item_id(i)), d_str(d, item_name(i));
    d_len(d, 10);
}

unsigned char *echo_payload(long n) {
    unsigned char *p = malloc((size_t)n);
    for (long i = 0; i < n; i++) p[i] = (unsigned char)(i % 251);
    return p;
}

uint64_t expected_digest(op_t op, const char *service_name) {
    digest_t d;
    d_init(&d);
    switch (op.kind) {
    case OP_CALL: {
        const char *m = METHODS[op.method].member;
        if (!strcmp(m, "OutInt")) d_i32(&d, 42);
        else if (!strcmp(m, "InOutInt")) d_i32(&d, 8);
        else if (!strcmp(m, "OutString") || !strcmp(m, "InOutString")) d_str(&d, "TesttestTestest");
        else if (!strcmp(m, "ObjectRef")) d_str(&d, service_name), d_str(&d, object_path_of(0));
        else if (!strcmp(m, "RelationSet")) {
            for (int i = 0; i < 10; i++) d_str(&d, service_name), d_str(&d, object_path_of(i));
            d_len(&d, 10);
        }
        break;
    }
    case OP_ECHO:
    case OP_FD_PASSING: /* ReadFd answers the digest of the memfd's bytes: this same value */
    case OP_RAW_SOCKET: {
        unsigned char *p = echo_payload(op.n);
        d_bytes(&d, p, (size_t)op.n);
        free(p);
        break;
    }
    case OP_PROP_GET:
    case OP_COLD_START: digest_items(&d); break;
    case OP_PROP_X100:
        for (int i = 0; i < 100; i++) digest_items(&d);
        break;
    case OP_EMIT_RECEIVE: d_str(&d, SIGNAL_TEXT); break;
    case OP_IDLE: d_len(&d, (uint64_t)op.n); break;
    case OP_GET_ALL:
    case OP_MANAGED_OBJECTS: return props_expected_digest(op);
    case OP_IN_FLIGHT: /* ipc.rs `in_flight_digest`: call i sends i, gets i + 1; then the count */
        for (long i = 0; i < op.n; i++) d_i32(&d, (int32_t)(i + 1));
        d_len(&d, (uint64_t)op.n);
        break;
    default: break;
    }
    return d.h;
}

const char *needs_bus(op_t op) {
    switch (op.kind) {
    case OP_HELLO: return "peer to peer there is no bus to say Hello to: a p2p connection is SASL only";
    case OP_EMIT_RECEIVE:
        return "needs a bus to route the signal: peer to peer, a signal emitted on one connection reaches only "
               "the server at the other end, never a second client connection";
    case OP_FANOUT:
        return "fan-out needs a bus: peer to peer there are no match rules and nothing routes one signal to "
               "other connections";
    case OP_NONMATCHING:
        return "match rules are installed on a bus (AddMatch); peer to peer there is no bus to hold them";
    case OP_IDLE:
        return "idle connections are what each costs the bus daemon (Hello, memory); peer to peer there is no "
               "daemon, only the server at the other end";
    default: return NULL;
    }
}

#define DOCTYPE "<!DOCTYPE node PUBLIC \"-//freedesktop//DTD D-BUS Object Introspection 1.0//EN\"\n \"http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd\">\n"
#define STD_XML "  <interface name=\"org.freedesktop.DBus.Introspectable\">\n    <method name=\"Introspect\">\n      <arg name=\"xml_data\" type=\"s\" direction=\"out\"/>\n    </method>\n  </interface>\n  <interface name=\"org.freedesktop.DBus.Peer\">\n    <method name=\"Ping\"/>\n    <method name=\"GetMachineId\">\n      <arg name=\"machine_uuid\" type=\"s\" direction=\"out\"/>\n    </method>\n  </interface>\n"
#define PROPS_XML "  <interface name=\"org.freedesktop.DBus.Properties\">\n    <method name=\"Get\">\n      <arg name=\"interface_name\" type=\"s\" direction=\"in\"/>\n      <arg name=\"property_name\" type=\"s\" direction=\"in\"/>\n      <arg name=\"value\" type=\"v\" direction=\"out\"/>\n    </method>\n    <method name=\"GetAll\">\n      <arg name=\"interface_name\" type=\"s\" direction=\"in\"/>\n      <arg name=\"properties\" type=\"a{sv}\" direction=\"out\"/>\n    </method>\n    <method name=\"Set\">\n      <arg name=\"interface_name\" type=\"s\" direction=\"in\"/>\n      <arg name=\"property_name\" type=\"s\" direction=\"in\"/>\n      <arg name=\"value\" type=\"v\" direction=\"in\"/>\n    </method>\n    <signal name=\"PropertiesChanged\">\n      <arg name=\"interface_name\" type=\"s\"/>\n      <arg name=\"changed_properties\" type=\"a{sv}\"/>\n      <arg name=\"invalidated_properties\" type=\"as\"/>\n    </signal>\n  </interface>\n"

const char *introspection_xml_of(const char *path) {
    static char xml[8192];
    char *p = xml, *end = xml + sizeof xml;
    if (!strcmp(path, OBJECT_PATH)) {
        p += snprintf(p, (size_t)(end - p), DOCTYPE "<node>\n  <interface name=\"%s\">\n", BENCH_INTERFACE);
        for (int i = 0; i <= N_METHODS; i++) {
            const char *m = i < N_METHODS ? METHODS[i].member : "EchoBytes";
            const char *in = i < N_METHODS ? METHODS[i].in : "ay", *out = i < N_METHODS ? METHODS[i].out : "ay";
            if (!*in && !*out) {
                p += snprintf(p, (size_t)(end - p), "    <method name=\"%s\"/>\n", m);
                continue;
            }
            p += snprintf(p, (size_t)(end - p), "    <method name=\"%s\">\n", m);
            if (*in) p += snprintf(p, (size_t)(end - p), "      <arg name=\"value\" type=\"%s\" direction=\"in\"/>\n", in);
            if (*out) p += snprintf(p, (size_t)(end - p), "      <arg name=\"result\" type=\"%s\" direction=\"out\"/>\n", out);
            p += snprintf(p, (size_t)(end - p), "    </method>\n");
        }
        snprintf(p, (size_t)(end - p),
                 "    <property name=\"Items\" type=\"a(ss)\" access=\"read\"/>\n    <signal name=\"Ping\">\n"
                 "      <arg name=\"text\" type=\"s\"/>\n    </signal>\n  </interface>\n" STD_XML PROPS_XML "</node>\n");
        return xml;
    }
    const char *rest;
    size_t n = strlen(path);
    if (!strcmp(path, "/")) rest = OBJECT_PATH + 1;
    else if (!strncmp(OBJECT_PATH, path, n) && OBJECT_PATH[n] == '/') rest = OBJECT_PATH + n + 1;
    else return NULL;
    size_t child = strcspn(rest, "/");
    snprintf(xml, sizeof xml, DOCTYPE "<node>\n" STD_XML "  <node name=\"%.*s\"/>\n</node>\n", (int)child, rest);
    return xml;
}
