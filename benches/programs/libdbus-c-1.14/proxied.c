/* proxy/create-call/<server> (issue 31, item 5; harness/src/ipc/proxied.rs,
 * docs/scenarios.md "What applications do"). The harness's raw server is
 * Rust, so the program serves the proxied object itself: connection A owns
 * <service>.Proxied (RequestName, DO_NOT_QUEUE) and answers every call to it
 * from a filter, as the harness's proxied::answer does (the object's XML,
 * its Properties or none, errors by name; libdbus answers
 * org.freedesktop.DBus.Peer itself), driven by a thread of its own
 * (dbus_connection_read_write_dispatch). libdbus has no proxy: one op builds
 * the Void call (dbus_message_new_method_call, as every libdbus call is),
 * sends it from connection B and blocks for the reply; nothing else is sent.
 * The handler counts each Void before it replies; the client takes the
 * count after the reply (the tally of application::SinkTally, an empty
 * array per call). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapter.h"

struct proxied {
    DBusConnection *a, *b;
    int props;
    char name[256];
    pthread_mutex_t lock;
    uint64_t calls;
};

static DBusMessage *answer(proxied_t *p, DBusMessage *m) {
    const char *path = dbus_message_get_path(m), *iface = dbus_message_get_interface(m);
    const char *member = dbus_message_get_member(m);
    char text[512];
    if (!path || strcmp(path, CANON_PROXIED_PATH)) {
        snprintf(text, sizeof text, "no object at %s", path ? path : "");
        return dbus_message_new_error(m, DBUS_ERROR_UNKNOWN_OBJECT, text);
    }
    if (!iface) {
        iface = !strcmp(member, "Introspect") ? DBUS_INTERFACE_INTROSPECTABLE
              : (!strcmp(member, "Get") || !strcmp(member, "GetAll") || !strcmp(member, "Set")) ? DBUS_INTERFACE_PROPERTIES
              : CANON_PROXIED_INTERFACE;
    }
    if (!strcmp(iface, CANON_PROXIED_INTERFACE) && !strcmp(member, CANON_PROXIED_METHOD)) {
        pthread_mutex_lock(&p->lock);
        p->calls++;
        pthread_mutex_unlock(&p->lock);
        return dbus_message_new_method_return(m);
    }
    if (!strcmp(iface, DBUS_INTERFACE_INTROSPECTABLE) && !strcmp(member, "Introspect")) {
        const char *xml = p->props ? CANON_PROXIED_XML_PROPS : CANON_PROXIED_XML_NO_PROPS;
        DBusMessage *r = dbus_message_new_method_return(m);
        dbus_message_append_args(r, DBUS_TYPE_STRING, &xml, DBUS_TYPE_INVALID);
        return r;
    }
    if (strcmp(iface, DBUS_INTERFACE_PROPERTIES)) {
        snprintf(text, sizeof text, "no method %s.%s at %s", iface, member, CANON_PROXIED_PATH);
        return dbus_message_new_error(m, DBUS_ERROR_UNKNOWN_METHOD, text);
    }
    if (!p->props) {
        snprintf(text, sizeof text, "no interface %s at %s", DBUS_INTERFACE_PROPERTIES, CANON_PROXIED_PATH);
        return dbus_message_new_error(m, DBUS_ERROR_UNKNOWN_INTERFACE, text);
    }
    /* The string arguments: the interface, the property. */
    const char *s[2] = {"", ""};
    int k = 0;
    DBusMessageIter it;
    for (int more = dbus_message_iter_init(m, &it); more && k < 2; more = dbus_message_iter_next(&it))
        if (dbus_message_iter_get_arg_type(&it) == DBUS_TYPE_STRING) dbus_message_iter_get_basic(&it, &s[k++]);
    int ours = !strcmp(s[0], CANON_PROXIED_INTERFACE);
    const char *prop = CANON_PROXIED_PROPERTY;
    dbus_uint32_t count = CANON_PROXIED_COUNT;
    DBusMessageIter out, arr, entry, var;
    if (!strcmp(member, "GetAll")) {
        DBusMessage *r = dbus_message_new_method_return(m);
        dbus_message_iter_init_append(r, &out);
        dbus_message_iter_open_container(&out, DBUS_TYPE_ARRAY, "{sv}", &arr);
        if (ours) {
            dbus_message_iter_open_container(&arr, DBUS_TYPE_DICT_ENTRY, NULL, &entry);
            dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &prop);
            dbus_message_iter_open_container(&entry, DBUS_TYPE_VARIANT, "u", &var);
            dbus_message_iter_append_basic(&var, DBUS_TYPE_UINT32, &count);
            dbus_message_iter_close_container(&entry, &var);
            dbus_message_iter_close_container(&arr, &entry);
        }
        dbus_message_iter_close_container(&out, &arr);
        return r;
    }
    if (!strcmp(member, "Get")) {
        if (!ours || strcmp(s[1], CANON_PROXIED_PROPERTY)) {
            snprintf(text, sizeof text, "no property %s.%s", s[0], s[1]);
            return dbus_message_new_error(m, DBUS_ERROR_UNKNOWN_PROPERTY, text);
        }
        DBusMessage *r = dbus_message_new_method_return(m);
        dbus_message_iter_init_append(r, &out);
        dbus_message_iter_open_container(&out, DBUS_TYPE_VARIANT, "u", &var);
        dbus_message_iter_append_basic(&var, DBUS_TYPE_UINT32, &count);
        dbus_message_iter_close_container(&out, &var);
        return r;
    }
    if (!strcmp(member, "Set")) {
        snprintf(text, sizeof text, "%s.%s is read-only", s[0], s[1]);
        return dbus_message_new_error(m, DBUS_ERROR_PROPERTY_READ_ONLY, text);
    }
    snprintf(text, sizeof text, "no method %s.%s", DBUS_INTERFACE_PROPERTIES, member);
    return dbus_message_new_error(m, DBUS_ERROR_UNKNOWN_METHOD, text);
}

static DBusHandlerResult on_call(DBusConnection *conn, DBusMessage *m, void *data) {
    if (dbus_message_get_type(m) != DBUS_MESSAGE_TYPE_METHOD_CALL) return DBUS_HANDLER_RESULT_NOT_YET_HANDLED;
    DBusMessage *r = answer(data, m);
    if (r && !dbus_message_get_no_reply(m)) dbus_connection_send(conn, r, NULL);
    if (r) dbus_message_unref(r);
    return DBUS_HANDLER_RESULT_HANDLED;
}

static void *serve_proxied(void *data) {
    proxied_t *p = data;
    while (dbus_connection_read_write_dispatch(p->a, -1)) {
    }
    return NULL; /* the bus closed A: the process is ending */
}

proxied_t *proxied_new(const transport_t *t, int props, char *err, size_t errlen) {
    proxied_t *p = calloc(1, sizeof *p);
    if (!p) return snprintf(err, errlen, "out of memory"), NULL;
    p->props = props;
    snprintf(p->name, sizeof p->name, "%s%s", t->service_name, CANON_PROXIED_NAME_SUFFIX);
    pthread_mutex_init(&p->lock, NULL);
    if (!(p->a = connect_bus(t, err, errlen))) return NULL;
    DBusError e;
    dbus_error_init(&e);
    int owned = dbus_bus_request_name(p->a, p->name, DBUS_NAME_FLAG_DO_NOT_QUEUE, &e);
    if (dbus_error_is_set(&e)) {
        snprintf(err, errlen, "RequestName %s: %s", p->name, e.message);
        dbus_error_free(&e);
        return NULL;
    }
    if (owned != DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER)
        return snprintf(err, errlen, "could not own %s (RequestName answered %d)", p->name, owned), NULL;
    dbus_connection_add_filter(p->a, on_call, p, NULL);
    pthread_t thread;
    if (pthread_create(&thread, NULL, serve_proxied, p)) return snprintf(err, errlen, "starting the server's thread failed"), NULL;
    pthread_detach(thread);
    if (!(p->b = connect_bus(t, err, errlen))) return NULL;
    return p;
}

int proxied_op(proxied_t *p, uint64_t *digest, char *err, size_t errlen) {
    DBusMessage *m = dbus_message_new_method_call(p->name, CANON_PROXIED_PATH, CANON_PROXIED_INTERFACE,
                                                  CANON_PROXIED_METHOD);
    if (!m) return snprintf(err, errlen, "building the %s call failed", CANON_PROXIED_METHOD), -1;
    DBusError e;
    dbus_error_init(&e);
    DBusMessage *r = dbus_connection_send_with_reply_and_block(p->b, m, DBUS_TIMEOUT_USE_DEFAULT, &e);
    dbus_message_unref(m);
    if (!r) {
        snprintf(err, errlen, "%s: %s: %s", CANON_PROXIED_METHOD, e.name, e.message);
        dbus_error_free(&e);
        return -1;
    }
    dbus_message_unref(r);
    pthread_mutex_lock(&p->lock);
    uint64_t calls = p->calls;
    p->calls = 0;
    pthread_mutex_unlock(&p->lock);
    digest_t d;
    d_init(&d);
    for (uint64_t i = 0; i < calls; i++) d_bytes(&d, "", 0);
    d_len(&d, calls);
    *digest = d.h;
    return 0;
}
