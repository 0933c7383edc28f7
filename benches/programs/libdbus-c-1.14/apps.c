/* call/in-only-bytes/<n> (issue 31; harness/src/ipc/application.rs,
 * docs/scenarios.md "What applications do"): connection A of the client
 * process registers the sink object with libdbus's server API
 * (dbus_connection_register_object_path, SinkBytes(ay) with no out
 * arguments) and owns <service>.Sink (RequestName, DO_NOT_QUEUE); libdbus
 * has no main loop, so A is driven by a thread of its own
 * (dbus_connection_read_write_dispatch; libdbus is thread-safe since 1.7).
 * Connection B calls it by that name through the bus with
 * dbus_connection_send_with_reply_and_block and awaits the empty reply. The
 * handler tallies what it received before it replies; the client takes the
 * tally after the reply (application::SinkTally: the digest of each array
 * since the last take, then their number).
 *
 * call/connections-in-process/<k>: k private connections of the process
 * (SASL, Hello each); libdbus has no proxy, so one op builds the InOutInt(i)
 * call for connection i in turn (dbus_message_new_method_call, as every
 * libdbus call is) and blocks for its reply; the replies digested as
 * ipc::in_flight_digest. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapter.h"

struct in_only {
    DBusConnection *a, *b; /* A serves the sink, B calls it */
    unsigned char *payload;
    long n;
    char name[256];
    pthread_mutex_t lock; /* the tally: A's thread records, the client takes */
    digest_t d;
    uint64_t calls;
};

static void tally_reset(in_only_t *s) { d_init(&s->d), s->calls = 0; }

static DBusHandlerResult sink_message(DBusConnection *conn, DBusMessage *m, void *data) {
    in_only_t *s = data;
    if (!dbus_message_is_method_call(m, CANON_SINK_INTERFACE, CANON_SINK_BYTES))
        return DBUS_HANDLER_RESULT_NOT_YET_HANDLED; /* libdbus answers UnknownMethod */
    unsigned char *bytes = NULL;
    int len = 0;
    DBusMessage *r;
    if (dbus_message_has_signature(m, "ay") &&
        dbus_message_get_args(m, NULL, DBUS_TYPE_ARRAY, DBUS_TYPE_BYTE, &bytes, &len, DBUS_TYPE_INVALID)) {
        pthread_mutex_lock(&s->lock);
        d_bytes(&s->d, bytes, (size_t)len);
        s->calls++;
        pthread_mutex_unlock(&s->lock);
        r = dbus_message_new_method_return(m);
    } else {
        r = dbus_message_new_error(m, DBUS_ERROR_INVALID_ARGS, CANON_SINK_BYTES " takes \"ay\"");
    }
    if (r && !dbus_message_get_no_reply(m)) dbus_connection_send(conn, r, NULL);
    if (r) dbus_message_unref(r);
    return DBUS_HANDLER_RESULT_HANDLED;
}

static void *serve_sink(void *data) {
    in_only_t *s = data;
    while (dbus_connection_read_write_dispatch(s->a, -1)) {
    }
    return NULL; /* the bus closed A: the process is ending */
}

in_only_t *in_only_new(const transport_t *t, long n, char *err, size_t errlen) {
    in_only_t *s = calloc(1, sizeof *s);
    if (!s) return snprintf(err, errlen, "out of memory"), NULL;
    s->n = n;
    snprintf(s->name, sizeof s->name, "%s%s", t->service_name, CANON_SINK_NAME_SUFFIX);
    pthread_mutex_init(&s->lock, NULL);
    tally_reset(s);
    static const DBusObjectPathVTable vtable = {.message_function = sink_message};
    if (!(s->a = connect_bus(t, err, errlen))) return NULL;
    if (!dbus_connection_register_object_path(s->a, CANON_SINK_PATH, &vtable, s))
        return snprintf(err, errlen, "registering %s failed", CANON_SINK_PATH), NULL;
    DBusError e;
    dbus_error_init(&e);
    int owned = dbus_bus_request_name(s->a, s->name, DBUS_NAME_FLAG_DO_NOT_QUEUE, &e);
    if (dbus_error_is_set(&e)) {
        snprintf(err, errlen, "RequestName %s: %s", s->name, e.message);
        dbus_error_free(&e);
        return NULL;
    }
    if (owned != DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER)
        return snprintf(err, errlen, "could not own %s (RequestName answered %d)", s->name, owned), NULL;
    pthread_t thread;
    if (pthread_create(&thread, NULL, serve_sink, s))
        return snprintf(err, errlen, "starting the sink's thread failed"), NULL;
    pthread_detach(thread);
    if (!(s->b = connect_bus(t, err, errlen))) return NULL;
    s->payload = echo_payload(n);
    return s;
}

int in_only_op(in_only_t *s, uint64_t *digest, char *err, size_t errlen) {
    DBusMessage *m = dbus_message_new_method_call(s->name, CANON_SINK_PATH, CANON_SINK_INTERFACE, CANON_SINK_BYTES);
    const unsigned char *p = s->payload;
    if (!m || !dbus_message_append_args(m, DBUS_TYPE_ARRAY, DBUS_TYPE_BYTE, &p, (int)s->n, DBUS_TYPE_INVALID))
        return snprintf(err, errlen, "building the %s call failed", CANON_SINK_BYTES), -1;
    DBusError e;
    dbus_error_init(&e);
    DBusMessage *r = dbus_connection_send_with_reply_and_block(s->b, m, DBUS_TIMEOUT_USE_DEFAULT, &e);
    dbus_message_unref(m);
    if (!r) {
        snprintf(err, errlen, "%s: %s: %s", CANON_SINK_BYTES, e.name, e.message);
        dbus_error_free(&e);
        return -1;
    }
    dbus_message_unref(r);
    pthread_mutex_lock(&s->lock);
    digest_t d = s->d;
    uint64_t calls = s->calls;
    tally_reset(s);
    pthread_mutex_unlock(&s->lock);
    d_len(&d, calls);
    *digest = d.h;
    return 0;
}

struct conns {
    DBusConnection **c;
    long k;
    const char *service;
};

conns_t *conns_new(const transport_t *t, long k, char *err, size_t errlen) {
    conns_t *s = calloc(1, sizeof *s);
    if (!s || !(s->c = calloc((size_t)k, sizeof *s->c))) return snprintf(err, errlen, "out of memory"), NULL;
    s->k = k, s->service = t->service_name;
    for (long i = 0; i < k; i++)
        if (!(s->c[i] = connect_bus(t, err, errlen))) return NULL;
    return s;
}

int conns_op(conns_t *s, uint64_t *digest, char *err, size_t errlen) {
    digest_t d;
    d_init(&d);
    for (long i = 0; i < s->k; i++) {
        DBusMessage *m = dbus_message_new_method_call(s->service, OBJECT_PATH, BENCH_INTERFACE, "InOutInt");
        dbus_int32_t arg = (dbus_int32_t)i, got = 0;
        if (!m || !dbus_message_append_args(m, DBUS_TYPE_INT32, &arg, DBUS_TYPE_INVALID))
            return snprintf(err, errlen, "building the InOutInt call failed"), -1;
        DBusError e;
        dbus_error_init(&e);
        DBusMessage *r = dbus_connection_send_with_reply_and_block(s->c[i], m, DBUS_TIMEOUT_USE_DEFAULT, &e);
        dbus_message_unref(m);
        if (!r) {
            snprintf(err, errlen, "InOutInt on connection %ld of %ld: %s: %s", i, s->k, e.name, e.message);
            dbus_error_free(&e);
            return -1;
        }
        int ok = dbus_message_get_args(r, NULL, DBUS_TYPE_INT32, &got, DBUS_TYPE_INVALID);
        dbus_message_unref(r);
        if (!ok) return snprintf(err, errlen, "InOutInt on connection %ld replied no int32", i), -1;
        d_i32(&d, got);
    }
    d_len(&d, (uint64_t)s->k);
    *digest = d.h;
    return 0;
}
