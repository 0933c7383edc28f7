/* The IPC side through libdbus directly: a private connection per client,
 * subscriber and server; blocking calls (dbus_connection_send_with_reply_
 * and_block); the server a filter on dbus_connection_read_write_dispatch
 * (libdbus answers org.freedesktop.DBus.Peer itself). No main loop library. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adapter.h"

const char *NO_P2P =
    "libdbus has no main loop of its own: serving peer to peer (DBusServer) needs one supplied through "
    "dbus_server_set_watch_functions, and this adapter uses libdbus alone, with no main loop library";

DBusConnection *connect_bus(const transport_t *t, char *err, size_t errlen) {
    DBusError e;
    dbus_error_init(&e);
    DBusConnection *c = dbus_connection_open_private(t->address, &e);
    if (c && !dbus_bus_register(c, &e)) {
        dbus_connection_close(c);
        dbus_connection_unref(c);
        c = NULL;
    }
    if (!c) {
        snprintf(err, errlen, "connecting to %s: %s", t->address, e.message);
        dbus_error_free(&e);
        return NULL;
    }
    dbus_connection_set_exit_on_disconnect(c, FALSE);
    return c;
}

static void disconnect(DBusConnection *c) {
    dbus_connection_close(c);
    dbus_connection_unref(c);
}

static const char *rule_of_ping(void) { return CANON_PING_RULE; }

/* --- the server ------------------------------------------------------------ */
static const char *service_name;

static void append_items_variant(DBusMessageIter *it) {
    DBusMessageIter var, arr, st;
    dbus_message_iter_open_container(it, DBUS_TYPE_VARIANT, CANON_PROPERTY_SIGNATURE, &var);
    dbus_message_iter_open_container(&var, DBUS_TYPE_ARRAY, "(ss)", &arr);
    for (int i = 0; i < CANON_N_ITEMS; i++) {
        const char *a = item_id(i), *b = item_name(i);
        dbus_message_iter_open_container(&arr, DBUS_TYPE_STRUCT, NULL, &st);
        dbus_message_iter_append_basic(&st, DBUS_TYPE_STRING, &a);
        dbus_message_iter_append_basic(&st, DBUS_TYPE_STRING, &b);
        dbus_message_iter_close_container(&arr, &st);
    }
    dbus_message_iter_close_container(&var, &arr);
    dbus_message_iter_close_container(it, &var);
}

static DBusMessage *error(DBusMessage *m, const char *name, const char *text) {
    return dbus_message_new_error(m, name, text);
}

static DBusMessage *wrong_signature(DBusMessage *m, const char *expected, const char *got) {
    char text[256];
    snprintf(text, sizeof text, "%s takes arguments of signature \"%s\", not \"%s\"", dbus_message_get_member(m),
             expected, got);
    return error(m, DBUS_ERROR_INVALID_ARGS, text);
}

static DBusMessage *properties(DBusMessage *m, const char *member, const char *sig) {
    const char *expected = !strcmp(member, "Get") ? "ss" : !strcmp(member, "GetAll") ? "s" : !strcmp(member, "Set") ? "ssv" : NULL;
    if (!expected) return error(m, DBUS_ERROR_UNKNOWN_METHOD, "no such method of org.freedesktop.DBus.Properties");
    if (strcmp(sig, expected)) return wrong_signature(m, expected, sig);
    const char *iface = NULL, *prop = NULL;
    DBusMessageIter it;
    dbus_message_iter_init(m, &it);
    dbus_message_iter_get_basic(&it, &iface);
    if (strcmp(iface, BENCH_INTERFACE)) return error(m, DBUS_ERROR_UNKNOWN_INTERFACE, "no such interface at " OBJECT_PATH);
    DBusMessage *r = dbus_message_new_method_return(m);
    DBusMessageIter out, arr, entry;
    dbus_message_iter_init_append(r, &out);
    if (!strcmp(member, "GetAll")) {
        const char *name = PROPERTY;
        dbus_message_iter_open_container(&out, DBUS_TYPE_ARRAY, "{sv}", &arr);
        dbus_message_iter_open_container(&arr, DBUS_TYPE_DICT_ENTRY, NULL, &entry);
        dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &name);
        append_items_variant(&entry);
        dbus_message_iter_close_container(&arr, &entry);
        dbus_message_iter_close_container(&out, &arr);
        return r;
    }
    dbus_message_iter_next(&it);
    dbus_message_iter_get_basic(&it, &prop);
    if (strcmp(prop, PROPERTY)) {
        dbus_message_unref(r);
        return error(m, DBUS_ERROR_UNKNOWN_PROPERTY, "no such property of " BENCH_INTERFACE);
    }
    if (!strcmp(member, "Set")) {
        dbus_message_unref(r);
        return error(m, DBUS_ERROR_PROPERTY_READ_ONLY, BENCH_INTERFACE ".Items is read-only");
    }
    append_items_variant(&out);
    return r;
}

static DBusMessage *bench(DBusMessage *m, const char *member) {
    DBusMessage *r = dbus_message_new_method_return(m);
    DBusMessageIter in, out, arr, st;
    dbus_message_iter_init(m, &in);
    dbus_message_iter_init_append(r, &out);
    if (!strcmp(member, "OutInt")) {
        dbus_int32_t v = CANON_OUT_INT;
        dbus_message_iter_append_basic(&out, DBUS_TYPE_INT32, &v);
    } else if (!strcmp(member, "InOutInt")) {
        dbus_int32_t v;
        dbus_message_iter_get_basic(&in, &v);
        v += 1;
        dbus_message_iter_append_basic(&out, DBUS_TYPE_INT32, &v);
    } else if (!strcmp(member, "OutString")) {
        const char *s = CANON_OUT_STRING;
        dbus_message_iter_append_basic(&out, DBUS_TYPE_STRING, &s);
    } else if (!strcmp(member, "InOutString")) {
        const char *s;
        dbus_message_iter_get_basic(&in, &s);
        dbus_message_iter_append_basic(&out, DBUS_TYPE_STRING, &s);
    } else if (!strcmp(member, "ObjectRef") || !strcmp(member, "RelationSet")) {
        int many = !strcmp(member, "RelationSet");
        DBusMessageIter *into = &out;
        if (many) dbus_message_iter_open_container(&out, DBUS_TYPE_ARRAY, "(so)", &arr), into = &arr;
        for (int i = 0; i < (many ? CANON_N_ITEMS : 1); i++) {
            const char *p = object_path_of(i);
            dbus_message_iter_open_container(into, DBUS_TYPE_STRUCT, NULL, &st);
            dbus_message_iter_append_basic(&st, DBUS_TYPE_STRING, &service_name);
            dbus_message_iter_append_basic(&st, DBUS_TYPE_OBJECT_PATH, &p);
            dbus_message_iter_close_container(into, &st);
        }
        if (many) dbus_message_iter_close_container(&out, &arr);
    } else if (!strcmp(member, CANON_ECHO_BYTES)) {
        DBusMessageIter bytes;
        const unsigned char *b;
        int n;
        dbus_message_iter_recurse(&in, &bytes);
        dbus_message_iter_get_fixed_array(&bytes, &b, &n);
        dbus_message_iter_open_container(&out, DBUS_TYPE_ARRAY, "y", &arr);
        dbus_message_iter_append_fixed_array(&arr, DBUS_TYPE_BYTE, &b, n);
        dbus_message_iter_close_container(&out, &arr);
    }
    return r;
}

static DBusMessage *route(DBusMessage *m) {
    const char *path = dbus_message_get_path(m), *iface = dbus_message_get_interface(m);
    const char *member = dbus_message_get_member(m), *sig = dbus_message_get_signature(m);
    const char *in = NULL;
    for (int i = 0; i <= N_METHODS; i++)
        if (!strcmp(member, i < N_METHODS ? METHODS[i].member : CANON_ECHO_BYTES)) in = i < N_METHODS ? METHODS[i].in : "ay";
    if (!iface) {
        iface = in ? BENCH_INTERFACE
              : !strcmp(member, "Introspect") ? DBUS_INTERFACE_INTROSPECTABLE
              : (!strcmp(member, "Ping") || !strcmp(member, "GetMachineId")) ? DBUS_INTERFACE_PEER
              : (!strcmp(member, "Get") || !strcmp(member, "GetAll") || !strcmp(member, "Set")) ? PROPS_INTERFACE
              : NULL;
    }
    if (!iface) return error(m, DBUS_ERROR_UNKNOWN_METHOD, "no such method");
    if (!strcmp(iface, DBUS_INTERFACE_PEER)) {
        if (*sig) return wrong_signature(m, "", sig);
        DBusMessage *r = dbus_message_new_method_return(m);
        if (!strcmp(member, "GetMachineId")) {
            char *id = dbus_try_get_local_machine_id(NULL);
            if (!id) {
                dbus_message_unref(r);
                return error(m, DBUS_ERROR_FAILED, "this machine has no machine id");
            }
            dbus_message_append_args(r, DBUS_TYPE_STRING, &id, DBUS_TYPE_INVALID);
            dbus_free(id);
        } else if (strcmp(member, "Ping")) {
            dbus_message_unref(r);
            return error(m, DBUS_ERROR_UNKNOWN_METHOD, "no such method of org.freedesktop.DBus.Peer");
        }
        return r;
    }
    if (!strcmp(iface, DBUS_INTERFACE_INTROSPECTABLE)) {
        if (strcmp(member, "Introspect")) return error(m, DBUS_ERROR_UNKNOWN_METHOD, "no such method of org.freedesktop.DBus.Introspectable");
        if (*sig) return wrong_signature(m, "", sig);
        const char *xml = introspection_xml_of(path);
        if (!xml) return error(m, DBUS_ERROR_UNKNOWN_OBJECT, "no such object");
        DBusMessage *r = dbus_message_new_method_return(m);
        dbus_message_append_args(r, DBUS_TYPE_STRING, &xml, DBUS_TYPE_INVALID);
        return r;
    }
    DBusMessage *props = props_answer(m, path, iface, member, sig);
    if (props) return props;
    if (strcmp(path, OBJECT_PATH)) return error(m, DBUS_ERROR_UNKNOWN_OBJECT, "no such object");
    if (!strcmp(iface, PROPS_INTERFACE)) return properties(m, member, sig);
    if (!strcmp(iface, FD_INTERFACE)) return fd_passing_answer(m, member, sig);
    if (strcmp(iface, BENCH_INTERFACE)) return error(m, DBUS_ERROR_UNKNOWN_INTERFACE, "no such interface at " OBJECT_PATH);
    if (!in) return error(m, DBUS_ERROR_UNKNOWN_METHOD, "no such method of " BENCH_INTERFACE);
    if (strcmp(sig, in)) return wrong_signature(m, in, sig);
    return bench(m, member);
}

static DBusHandlerResult on_message(DBusConnection *c, DBusMessage *m, void *data) {
    (void)data;
    if (dbus_message_get_type(m) != DBUS_MESSAGE_TYPE_METHOD_CALL) return DBUS_HANDLER_RESULT_NOT_YET_HANDLED;
    DBusMessage *r = route(m);
    if (!dbus_message_get_no_reply(m)) dbus_connection_send(c, r, NULL);
    dbus_message_unref(r);
    return DBUS_HANDLER_RESULT_HANDLED;
}

int serve(const transport_t *t) {
    char err[512];
    if (t->p2p) {
        fprintf(stderr, "error: %s\n", NO_P2P);
        return 1;
    }
    DBusConnection *c = connect_bus(t, err, sizeof err);
    if (!c) return fprintf(stderr, "error: %s\n", err), 1;
    DBusError e;
    dbus_error_init(&e);
    int owned = dbus_bus_request_name(c, t->service_name, DBUS_NAME_FLAG_DO_NOT_QUEUE, &e);
    if (owned != DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER) {
        fprintf(stderr, "error: could not own %s (%d %s)\n", t->service_name, owned, e.message ? e.message : "");
        return 1;
    }
    service_name = t->service_name;
    dbus_connection_add_filter(c, on_message, NULL, NULL);
    printf("%s\n", CANON_READY);
    fflush(stdout);
    while (dbus_connection_read_write_dispatch(c, -1)) {
    }
    fprintf(stderr, "error: the bus closed the connection\n");
    return 1;
}

/* --- clients and subscribers ----------------------------------------------- */
struct client {
    DBusConnection *conn, *recv;
    transport_t t;
    op_t op;
    unsigned char *payload;
    body_t mixed;
    int memfd; /* call/fd-passing: written once here */
    DBusConnection **held; /* connect/idle-connections: the batch held open */
    long n_held;
    in_only_t *sink; /* call/in-only-bytes: apps.c */
    conns_t *conns; /* call/connections-in-process: apps.c */
    churn_t *churn; /* signal/name-owner-churn: churn.c */
    storm_t *storm; /* property/changed-storm: storm.c */
    proxied_t *proxied; /* proxy/create-call: proxied.c */
};

static int wait_ping(DBusConnection *c, uint64_t *digest, char *err, size_t errlen) {
    for (;;) {
        DBusMessage *m;
        while ((m = dbus_connection_pop_message(c))) {
            int ping = dbus_message_is_signal(m, BENCH_INTERFACE, SIGNAL_NAME);
            const char *text = NULL;
            if (ping && dbus_message_get_args(m, NULL, DBUS_TYPE_STRING, &text, DBUS_TYPE_INVALID)) {
                digest_t d;
                d_init(&d);
                d_str(&d, text);
                *digest = d.h;
                dbus_message_unref(m);
                return 0;
            }
            dbus_message_unref(m);
        }
        if (!dbus_connection_read_write(c, -1)) return snprintf(err, errlen, "the bus closed the connection"), -1;
    }
}

static DBusConnection *subscriber(const transport_t *t, int extra_rules, char *err, size_t errlen) {
    DBusConnection *c = connect_bus(t, err, errlen);
    if (!c) return NULL;
    DBusError e;
    dbus_error_init(&e);
    dbus_bus_add_match(c, rule_of_ping(), &e);
    for (int i = 0; i < extra_rules && !dbus_error_is_set(&e); i++) {
        char rule[160];
        snprintf(rule, sizeof rule, CANON_NONMATCHING_RULE, i);
        dbus_bus_add_match(c, rule, &e);
    }
    if (dbus_error_is_set(&e)) {
        snprintf(err, errlen, "AddMatch: %s", e.message);
        dbus_error_free(&e);
        disconnect(c);
        return NULL;
    }
    return c;
}

int subscribe(const transport_t *t, int connections, int extra_rules, const char *ack_fifo) {
    char err[512];
    if (t->p2p) return fprintf(stderr, "error: subscribers need a bus (match rules)\n"), 1;
    int fd = open(ack_fifo, O_RDWR);
    if (fd < 0) return fprintf(stderr, "error: opening the ack FIFO %s\n", ack_fifo), 1;
    DBusConnection **subs = calloc((size_t)connections, sizeof *subs);
    for (int i = 0; i < connections; i++)
        if (!(subs[i] = subscriber(t, i == 0 ? extra_rules : 0, err, sizeof err)))
            return fprintf(stderr, "error: subscriber %d: %s\n", i, err), 1;
    printf("%s\n", CANON_READY);
    fflush(stdout);
    digest_t want;
    d_init(&want);
    d_str(&want, SIGNAL_TEXT);
    for (;;) {
        for (int i = 0; i < connections; i++) {
            uint64_t got;
            if (wait_ping(subs[i], &got, err, sizeof err)) return fprintf(stderr, "error: %s\n", err), 1;
            if (got != want.h) return fprintf(stderr, "error: a subscriber received a Ping with the wrong text\n"), 1;
        }
        if (write(fd, "!", 1) != 1) return fprintf(stderr, "error: writing to the ack FIFO\n"), 1;
    }
}

static DBusMessage *call(client_t *c, const char *iface, const char *member, char *err, size_t errlen) {
    return dbus_message_new_method_call(c->t.service_name, OBJECT_PATH, iface, member);
    (void)err, (void)errlen;
}

static DBusMessage *roundtrip(client_t *c, DBusMessage *m, char *err, size_t errlen) {
    DBusError e;
    dbus_error_init(&e);
    DBusMessage *r = dbus_connection_send_with_reply_and_block(c->conn, m, DBUS_TIMEOUT_USE_DEFAULT, &e);
    dbus_message_unref(m);
    if (!r) {
        snprintf(err, errlen, "%s: %s", e.name, e.message);
        dbus_error_free(&e);
    }
    return r;
}

static int get_items(client_t *c, digest_t *d, char *err, size_t errlen) {
    DBusMessage *m = call(c, PROPS_INTERFACE, "Get", err, errlen);
    const char *iface = BENCH_INTERFACE, *prop = PROPERTY;
    dbus_message_append_args(m, DBUS_TYPE_STRING, &iface, DBUS_TYPE_STRING, &prop, DBUS_TYPE_INVALID);
    DBusMessage *r = roundtrip(c, m, err, errlen);
    if (!r) return -1;
    DBusMessageIter it, var, arr, st;
    dbus_message_iter_init(r, &it);
    dbus_message_iter_recurse(&it, &var);
    dbus_message_iter_recurse(&var, &arr);
    uint64_t n = 0;
    while (dbus_message_iter_get_arg_type(&arr) == DBUS_TYPE_STRUCT) {
        const char *a, *b;
        dbus_message_iter_recurse(&arr, &st);
        dbus_message_iter_get_basic(&st, &a);
        dbus_message_iter_next(&st);
        dbus_message_iter_get_basic(&st, &b);
        d_str(d, a), d_str(d, b), n++;
        dbus_message_iter_next(&arr);
    }
    d_len(d, n);
    dbus_message_unref(r);
    return 0;
}

client_t *client_new(const transport_t *t, op_t op, char *err, size_t errlen) {
    client_t *c = calloc(1, sizeof *c);
    c->t = *t, c->op = op;
    if (op.kind == OP_HELLO) return c;
    if (op.kind == OP_IDLE) return c->held = calloc((size_t)op.n, sizeof *c->held), c;
    if (op.kind == OP_MARSHAL_SEND) return body_of("mixed", &c->mixed) ? NULL : c;
    if (op.kind == OP_IN_ONLY) return (c->sink = in_only_new(t, op.n, err, errlen)) ? c : NULL;
    if (op.kind == OP_CONNECTIONS) return (c->conns = conns_new(t, op.n, err, errlen)) ? c : NULL;
    if (op.kind == OP_NAME_CHURN || op.kind == OP_NAME_CHURN_ARG0)
        return (c->churn = churn_new(t, op.kind == OP_NAME_CHURN_ARG0, err, errlen)) ? c : NULL;
    if (op.kind == OP_PROPERTY_STORM) return (c->storm = storm_new(t, op.n, err, errlen)) ? c : NULL;
    if (op.kind == OP_PROXY_PROPS || op.kind == OP_PROXY_NO_PROPS)
        return (c->proxied = proxied_new(t, op.kind == OP_PROXY_PROPS, err, errlen)) ? c : NULL;
    if (!(c->conn = connect_bus(t, err, errlen))) return NULL;
    if (op.kind == OP_ECHO) c->payload = echo_payload(op.n);
    if (op.kind == OP_FD_PASSING && (c->memfd = fd_passing_memfd(op.n)) < 0)
        return snprintf(err, errlen, "creating the memfd failed"), NULL;
    if ((op.kind == OP_EMIT_RECEIVE || op.kind == OP_BURST || op.kind == OP_DELIVERED_BROAD) &&
        !(c->recv = subscriber(t, 0, err, errlen)))
        return NULL;
    if (op.kind == OP_DELIVERED_ARG0) {
        /* The same subscriber, its rule with arg0: the bus filters. */
        DBusError e;
        dbus_error_init(&e);
        if (!(c->recv = connect_bus(t, err, errlen))) return NULL;
        dbus_bus_add_match(c->recv, CANON_DELIVERED_ARG0_RULE, &e);
        if (dbus_error_is_set(&e)) return snprintf(err, errlen, "AddMatch: %s", e.message), dbus_error_free(&e), NULL;
    }
    return c;
}

/* Queues one Ping with `text` (dbus_connection_flush writes what is queued). */
static void queue_ping(DBusConnection *conn, const char *text) {
    DBusMessage *m = dbus_message_new_signal(OBJECT_PATH, BENCH_INTERFACE, SIGNAL_NAME);
    dbus_message_append_args(m, DBUS_TYPE_STRING, &text, DBUS_TYPE_INVALID);
    dbus_connection_send(conn, m, NULL);
    dbus_message_unref(m);
}

static void send_ping(client_t *c) {
    queue_ping(c->conn, SIGNAL_TEXT);
    dbus_connection_flush(c->conn);
}

/* signal/delivered/<scope>: 9 non-matching Pings, then the matching one (SIGNAL_TEXT), sent;
 * c->recv (its rule broad or with arg0) reads up to the matching one. The broad rule must
 * deliver all 10, the arg0 rule only the matching one. */
static int delivered(client_t *c, digest_t *d, char *err, size_t errlen) {
    char text[64];
    for (int i = 0; i < CANON_DELIVERED_NOISE; i++) {
        snprintf(text, sizeof text, CANON_DELIVERED_NOISE_TEXT, i);
        queue_ping(c->conn, text);
    }
    queue_ping(c->conn, SIGNAL_TEXT);
    dbus_connection_flush(c->conn);
    long got = 0, want = c->op.kind == OP_DELIVERED_BROAD ? CANON_DELIVERED_NOISE + 1 : 1, wrong = 0;
    for (;;) {
        DBusMessage *m;
        while ((m = dbus_connection_pop_message(c->recv))) {
            const char *t = NULL;
            int ping = dbus_message_is_signal(m, BENCH_INTERFACE, SIGNAL_NAME) &&
                       dbus_message_get_args(m, NULL, DBUS_TYPE_STRING, &t, DBUS_TYPE_INVALID);
            int end = ping && !strcmp(t, SIGNAL_TEXT);
            if (ping) {
                /* The i-th delivered of `want` must be text CANON_DELIVERED_NOISE + 1 - want + i. */
                long k = CANON_DELIVERED_NOISE + 1 - want + got;
                if (k < CANON_DELIVERED_NOISE) snprintf(text, sizeof text, CANON_DELIVERED_NOISE_TEXT, (int)k);
                else snprintf(text, sizeof text, "%s", SIGNAL_TEXT);
                wrong += strcmp(t, text) != 0;
                d_str(d, t), got++;
            }
            dbus_message_unref(m);
            if (end) {
                d_len(d, (uint64_t)got);
                if (got != want || wrong)
                    return snprintf(err, errlen, "the subscription delivered %ld Pings of the %d emitted; it must "
                                    "deliver %ld", got, CANON_DELIVERED_NOISE + 1, want), -1;
                return 0;
            }
        }
        if (!dbus_connection_read_write(c->recv, -1))
            return snprintf(err, errlen, "the bus closed the subscriber's connection"), -1;
    }
}

/* signal/burst/<n>: n Pings and the end marker sent while the subscribed c->recv reads
 * nothing, then c->recv reads up to the end marker; every Ping must arrive, in order. */
static int burst(client_t *c, digest_t *d, char *err, size_t errlen) {
    char text[64];
    for (long i = 0; i < c->op.n; i++) {
        snprintf(text, sizeof text, CANON_BURST_TEXT, (int)i);
        queue_ping(c->conn, text);
    }
    queue_ping(c->conn, CANON_BURST_END);
    dbus_connection_flush(c->conn);
    long got = 0, wrong = 0;
    for (;;) {
        DBusMessage *m;
        while ((m = dbus_connection_pop_message(c->recv))) {
            const char *t = NULL;
            int ping = dbus_message_is_signal(m, BENCH_INTERFACE, SIGNAL_NAME) &&
                       dbus_message_get_args(m, NULL, DBUS_TYPE_STRING, &t, DBUS_TYPE_INVALID);
            int end = ping && !strcmp(t, CANON_BURST_END);
            if (ping && !end) {
                snprintf(text, sizeof text, CANON_BURST_TEXT, (int)got);
                wrong += strcmp(t, text) != 0;
                d_str(d, t), got++;
            }
            dbus_message_unref(m);
            if (end) {
                d_len(d, (uint64_t)got);
                if (got != c->op.n || wrong)
                    return snprintf(err, errlen, "burst of %ld Pings into a consumer that did not read: received %ld, "
                                    "%ld not the expected one in order", c->op.n, got, wrong), -1;
                return 0;
            }
        }
        if (!dbus_connection_read_write(c->recv, -1))
            return snprintf(err, errlen, "the bus closed the consumer's connection"), -1;
    }
}

/* call/in-flight/<n>: every InOutInt call queued with dbus_connection_send_with_reply
 * (call i sends i), then each pending reply blocked on in the order sent. */
static int in_flight(client_t *c, digest_t *d, char *err, size_t errlen) {
    long n = c->op.n;
    DBusPendingCall **pending = calloc((size_t)n, sizeof *pending);
    int failed = 0;
    for (long i = 0; i < n && !failed; i++) {
        DBusMessage *m = call(c, BENCH_INTERFACE, "InOutInt", err, errlen);
        dbus_int32_t arg = (dbus_int32_t)i;
        dbus_message_append_args(m, DBUS_TYPE_INT32, &arg, DBUS_TYPE_INVALID);
        if (!dbus_connection_send_with_reply(c->conn, m, &pending[i], DBUS_TIMEOUT_USE_DEFAULT) || !pending[i])
            failed = snprintf(err, errlen, "sending call %ld of %ld failed (connection closed?)", i, n);
        dbus_message_unref(m);
    }
    for (long i = 0; i < n && pending[i]; i++) {
        if (!failed) {
            dbus_pending_call_block(pending[i]);
            DBusMessage *r = dbus_pending_call_steal_reply(pending[i]);
            dbus_int32_t got = 0;
            if (!r || !dbus_message_get_args(r, NULL, DBUS_TYPE_INT32, &got, DBUS_TYPE_INVALID))
                failed = snprintf(err, errlen, "call %ld of %ld: no InOutInt reply", i, n);
            else
                d_i32(d, got);
            if (r) dbus_message_unref(r);
        }
        dbus_pending_call_unref(pending[i]);
    }
    free(pending);
    if (failed) return -1;
    d_len(d, (uint64_t)n);
    return 0;
}

void client_release(client_t *c) {
    while (c->n_held > 0) disconnect(c->held[--c->n_held]);
}

/* connect/idle-connections/<n> (cli/idle.rs): close the previous batch, then
 * open n private connections (SASL, Hello) and hold them. */
static int hold_idle(client_t *c, digest_t *d, char *err, size_t errlen) {
    client_release(c);
    for (long i = 0; i < c->op.n; i++) {
        if (!(c->held[i] = connect_bus(&c->t, err, errlen))) return -1;
        c->n_held = i + 1;
    }
    d_len(d, (uint64_t)c->n_held);
    return 0;
}

int client_op(client_t *c, uint64_t *digest, char *err, size_t errlen) {
    digest_t d;
    d_init(&d);
    switch (c->op.kind) {
    case OP_IN_ONLY:
        return in_only_op(c->sink, digest, err, errlen);
    case OP_CONNECTIONS: return conns_op(c->conns, digest, err, errlen);
    case OP_NAME_CHURN:
    case OP_NAME_CHURN_ARG0: return churn_op(c->churn, digest, err, errlen);
    case OP_PROPERTY_STORM: return storm_op(c->storm, digest, err, errlen);
    case OP_PROXY_PROPS:
    case OP_PROXY_NO_PROPS: return proxied_op(c->proxied, digest, err, errlen);
    case OP_HELLO:
    case OP_MARSHAL_SEND: {
        DBusConnection *conn = connect_bus(&c->t, err, errlen);
        if (!conn) return -1;
        if (c->op.kind == OP_MARSHAL_SEND) {
            DBusMessage *m = build_signal(&c->mixed);
            dbus_connection_send(conn, m, NULL);
            dbus_connection_flush(conn);
            dbus_message_unref(m);
        }
        disconnect(conn);
        break;
    }
    case OP_CALL: {
        const method_t *mt = &METHODS[c->op.method];
        DBusMessage *m = call(c, BENCH_INTERFACE, mt->member, err, errlen);
        dbus_int32_t i = CANON_IN_INT;
        const char *s = !strcmp(mt->member, "InString") ? CANON_IN_STRING : CANON_OUT_STRING;
        if (!strcmp(mt->in, "i")) dbus_message_append_args(m, DBUS_TYPE_INT32, &i, DBUS_TYPE_INVALID);
        if (!strcmp(mt->in, "s")) dbus_message_append_args(m, DBUS_TYPE_STRING, &s, DBUS_TYPE_INVALID);
        DBusMessage *r = roundtrip(c, m, err, errlen);
        if (!r) return -1;
        DBusMessageIter it, arr, st;
        dbus_message_iter_init(r, &it);
        if (!strcmp(mt->out, "i")) {
            dbus_message_iter_get_basic(&it, &i);
            d_i32(&d, i);
        } else if (!strcmp(mt->out, "s")) {
            dbus_message_iter_get_basic(&it, &s);
            d_str(&d, s);
        } else if (*mt->out) {
            int many = !strcmp(mt->out, "a(so)");
            DBusMessageIter *from = &it;
            if (many) dbus_message_iter_recurse(&it, &arr), from = &arr;
            uint64_t n = 0;
            while (dbus_message_iter_get_arg_type(from) == DBUS_TYPE_STRUCT) {
                const char *name, *path;
                dbus_message_iter_recurse(from, &st);
                dbus_message_iter_get_basic(&st, &name);
                dbus_message_iter_next(&st);
                dbus_message_iter_get_basic(&st, &path);
                d_str(&d, name), d_str(&d, path), n++;
                if (!many) break;
                dbus_message_iter_next(from);
            }
            if (many) d_len(&d, n);
        }
        dbus_message_unref(r);
        break;
    }
    case OP_ECHO: {
        DBusMessage *m = call(c, BENCH_INTERFACE, CANON_ECHO_BYTES, err, errlen);
        const unsigned char *p = c->payload;
        dbus_message_append_args(m, DBUS_TYPE_ARRAY, DBUS_TYPE_BYTE, &p, (int)c->op.n, DBUS_TYPE_INVALID);
        DBusMessage *r = roundtrip(c, m, err, errlen);
        if (!r) return -1;
        const unsigned char *b;
        int n = 0;
        if (!dbus_message_get_args(r, NULL, DBUS_TYPE_ARRAY, DBUS_TYPE_BYTE, &b, &n, DBUS_TYPE_INVALID))
            return dbus_message_unref(r), snprintf(err, errlen, "EchoBytes replied no ay"), -1;
        d_bytes(&d, b, (size_t)n);
        dbus_message_unref(r);
        break;
    }
    case OP_PROP_GET:
    case OP_PROP_X100:
        for (int k = 0; k < (c->op.kind == OP_PROP_X100 ? 100 : 1); k++)
            if (get_items(c, &d, err, errlen)) return -1;
        break;
    case OP_EMIT_RECEIVE:
        send_ping(c);
        return wait_ping(c->recv, digest, err, errlen);
    case OP_FANOUT:
    case OP_NONMATCHING: send_ping(c); break;
    case OP_IN_FLIGHT:
        if (in_flight(c, &d, err, errlen)) return -1;
        break;
    case OP_GET_ALL: return props_get_all_call(c->conn, c->t.service_name, c->op.n, digest, err, errlen);
    case OP_MANAGED_OBJECTS:
        return props_managed_objects_call(c->conn, c->t.service_name, c->op.n, digest, err, errlen);
    case OP_FD_PASSING: return fd_passing_call(c->conn, c->t.service_name, c->memfd, digest, err, errlen);
    case OP_IDLE:
        if (hold_idle(c, &d, err, errlen)) return -1;
        break;
    case OP_BURST:
        if (burst(c, &d, err, errlen)) return -1;
        break;
    case OP_DELIVERED_BROAD:
    case OP_DELIVERED_ARG0:
        if (delivered(c, &d, err, errlen)) return -1;
        break;
    case OP_MATCH_CHURN: {
        /* signal/match-churn: with an error to fill, libdbus sends AddMatch (RemoveMatch) and
         * blocks for its reply; the bus refuses to remove a rule it does not hold. */
        DBusError e;
        dbus_error_init(&e);
        dbus_bus_add_match(c->conn, CANON_CHURN_RULE, &e);
        if (!dbus_error_is_set(&e)) dbus_bus_remove_match(c->conn, CANON_CHURN_RULE, &e);
        if (dbus_error_is_set(&e)) {
            snprintf(err, errlen, "%s: %s", e.name, e.message);
            dbus_error_free(&e);
            return -1;
        }
        break;
    }
    default: return snprintf(err, errlen, "no client for this operation"), -1;
    }
    *digest = d.h;
    return 0;
}

int cold_start(const transport_t *t) {
    char err[512];
    if (t->p2p) return fprintf(stderr, "error: %s\n", NO_P2P), 1;
    client_t c = {0};
    c.t = *t;
    if (!(c.conn = connect_bus(t, err, sizeof err))) return fprintf(stderr, "error: %s\n", err), 1;
    DBusMessage *m = call(&c, PROPS_INTERFACE, "Get", err, sizeof err);
    const char *iface = BENCH_INTERFACE, *prop = PROPERTY;
    dbus_message_append_args(m, DBUS_TYPE_STRING, &iface, DBUS_TYPE_STRING, &prop, DBUS_TYPE_INVALID);
    DBusMessage *r = roundtrip(&c, m, err, sizeof err);
    if (!r) return fprintf(stderr, "error: %s\n", err), 1;
    DBusMessageIter it, var, arr, st;
    dbus_message_iter_init(r, &it);
    dbus_message_iter_recurse(&it, &var);
    dbus_message_iter_recurse(&var, &arr);
    while (dbus_message_iter_get_arg_type(&arr) == DBUS_TYPE_STRUCT) {
        const char *a, *b;
        dbus_message_iter_recurse(&arr, &st);
        dbus_message_iter_get_basic(&st, &a);
        dbus_message_iter_next(&st);
        dbus_message_iter_get_basic(&st, &b);
        printf("%s\t%s\n", a, b);
        dbus_message_iter_next(&arr);
    }
    dbus_message_unref(r);
    disconnect(c.conn);
    return 0;
}
