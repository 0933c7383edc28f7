/* property/changed-storm/<n> (issue 31, item 2; harness/src/ipc/storm.rs,
 * docs/scenarios.md "PropertiesChanged storms"). libdbus has no property
 * cache and no proxy: an application keeps the value of each
 * PropertiesChanged itself, and so does this client. Connection A serves the
 * storm object (dbus_connection_register_object_path: Properties.Get and
 * GetAll answer Level, the last value emitted) and emits the n updates
 * (update i: Level = i + 1) with dbus_connection_send, then flushes;
 * connection B holds the canon's changed_rule (dbus_bus_add_match, arg0
 * filtered by the bus) and keeps the Level of every PropertiesChanged it
 * pops. libdbus reads a connection only when asked, so B's updates wait in
 * the bus's queue and its socket until the storm is sent; then B reads up
 * to the last value or for the canon's settle time, A's calls dispatched
 * (without blocking) between reads. The check is storm_digest's, worded
 * as it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "adapter.h"

#define HOLDER "the program (libdbus has no property cache)"

struct storm {
    DBusConnection *a, *b;
    long n;
    dbus_int32_t level; /* what A answers */
    int32_t *updates;
    long received;
};

static void append_level(DBusMessageIter *it, dbus_int32_t level) {
    DBusMessageIter var;
    dbus_message_iter_open_container(it, DBUS_TYPE_VARIANT, "i", &var);
    dbus_message_iter_append_basic(&var, DBUS_TYPE_INT32, &level);
    dbus_message_iter_close_container(it, &var);
}

/* {Level: level} as an a{sv}. */
static void append_changed(DBusMessageIter *it, dbus_int32_t level) {
    DBusMessageIter arr, entry;
    const char *name = CANON_STORM_PROPERTY;
    dbus_message_iter_open_container(it, DBUS_TYPE_ARRAY, "{sv}", &arr);
    dbus_message_iter_open_container(&arr, DBUS_TYPE_DICT_ENTRY, NULL, &entry);
    dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &name);
    append_level(&entry, level);
    dbus_message_iter_close_container(&arr, &entry);
    dbus_message_iter_close_container(it, &arr);
}

static DBusHandlerResult storm_object(DBusConnection *conn, DBusMessage *m, void *data) {
    storm_t *s = data;
    if (dbus_message_get_type(m) != DBUS_MESSAGE_TYPE_METHOD_CALL) return DBUS_HANDLER_RESULT_NOT_YET_HANDLED;
    const char *iface = NULL, *prop = NULL;
    DBusMessage *r = NULL;
    int get = dbus_message_is_method_call(m, DBUS_INTERFACE_PROPERTIES, "Get");
    int all = dbus_message_is_method_call(m, DBUS_INTERFACE_PROPERTIES, "GetAll");
    if (get && dbus_message_get_args(m, NULL, DBUS_TYPE_STRING, &iface, DBUS_TYPE_STRING, &prop, DBUS_TYPE_INVALID)) {
        if (strcmp(iface, CANON_STORM_INTERFACE) || strcmp(prop, CANON_STORM_PROPERTY)) {
            r = dbus_message_new_error(m, DBUS_ERROR_UNKNOWN_PROPERTY, "no such property");
        } else {
            DBusMessageIter out;
            r = dbus_message_new_method_return(m);
            dbus_message_iter_init_append(r, &out);
            append_level(&out, s->level);
        }
    } else if (all && dbus_message_get_args(m, NULL, DBUS_TYPE_STRING, &iface, DBUS_TYPE_INVALID)) {
        if (strcmp(iface, CANON_STORM_INTERFACE)) {
            r = dbus_message_new_error(m, DBUS_ERROR_UNKNOWN_INTERFACE, "no such interface");
        } else {
            DBusMessageIter out;
            r = dbus_message_new_method_return(m);
            dbus_message_iter_init_append(r, &out);
            append_changed(&out, s->level);
        }
    } else {
        return DBUS_HANDLER_RESULT_NOT_YET_HANDLED; /* libdbus answers UnknownMethod */
    }
    if (r && !dbus_message_get_no_reply(m)) dbus_connection_send(conn, r, NULL);
    if (r) dbus_message_unref(r);
    return DBUS_HANDLER_RESULT_HANDLED;
}

storm_t *storm_new(const transport_t *t, long n, char *err, size_t errlen) {
    storm_t *s = calloc(1, sizeof *s);
    if (!s || !(s->updates = calloc((size_t)n + 1, sizeof *s->updates)))
        return snprintf(err, errlen, "out of memory"), NULL;
    s->n = n, s->level = CANON_STORM_INITIAL_LEVEL;
    static const DBusObjectPathVTable vtable = {.message_function = storm_object};
    if (!(s->a = connect_bus(t, err, errlen)) || !(s->b = connect_bus(t, err, errlen))) return NULL;
    if (!dbus_connection_register_object_path(s->a, CANON_STORM_PATH, &vtable, s))
        return snprintf(err, errlen, "registering %s failed", CANON_STORM_PATH), NULL;
    DBusError e;
    dbus_error_init(&e);
    dbus_bus_add_match(s->b, CANON_STORM_CHANGED_RULE, &e);
    if (dbus_error_is_set(&e)) return snprintf(err, errlen, "AddMatch: %s", e.message), dbus_error_free(&e), NULL;
    return s;
}

static long long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The Level a PropertiesChanged of the storm's interface announces (INT32_MIN when it
 * holds none); 0 for a message that is not one. */
static int level_of(DBusMessage *m, int32_t *level) {
    DBusMessageIter it, arr, entry, var;
    const char *iface = NULL, *name = NULL;
    if (!dbus_message_is_signal(m, DBUS_INTERFACE_PROPERTIES, "PropertiesChanged") ||
        !dbus_message_has_path(m, CANON_STORM_PATH) || !dbus_message_iter_init(m, &it) ||
        dbus_message_iter_get_arg_type(&it) != DBUS_TYPE_STRING)
        return 0;
    dbus_message_iter_get_basic(&it, &iface);
    if (strcmp(iface, CANON_STORM_INTERFACE)) return 0;
    *level = INT32_MIN;
    if (!dbus_message_iter_next(&it) || dbus_message_iter_get_arg_type(&it) != DBUS_TYPE_ARRAY) return 1;
    for (dbus_message_iter_recurse(&it, &arr); dbus_message_iter_get_arg_type(&arr) == DBUS_TYPE_DICT_ENTRY;
         dbus_message_iter_next(&arr)) {
        dbus_message_iter_recurse(&arr, &entry);
        dbus_message_iter_get_basic(&entry, &name);
        dbus_message_iter_next(&entry);
        dbus_message_iter_recurse(&entry, &var);
        if (!strcmp(name, CANON_STORM_PROPERTY) && dbus_message_iter_get_arg_type(&var) == DBUS_TYPE_INT32)
            dbus_message_iter_get_basic(&var, level);
    }
    return 1;
}

int storm_check(long n, long received, const int32_t *updates, long n_updates, uint64_t *digest, char *err,
                size_t errlen) {
    int32_t last = (int32_t)(n > 0 ? n : 1);
    long lost = n > received ? n - received : 0, extra = received > n ? received - n : 0;
    int ordered = 1;
    for (long i = 0; i < n_updates; i++)
        ordered &= updates[i] >= 1 && updates[i] <= last && (i == 0 || updates[i - 1] < updates[i]);
    char holds[32] = "no value";
    if (n_updates) snprintf(holds, sizeof holds, "%d", updates[n_updates - 1]);
    if (lost || extra || !ordered || !n_updates || updates[n_updates - 1] != last)
        return snprintf(err, errlen, "property storm: %ld PropertiesChanged emitted: received %ld, lost %ld, extra %ld; "
                        HOLDER " announced %ld updates%s; holds %s; it must receive all %ld and end with the "
                        "last value %d", n, received, lost, extra, n_updates,
                        ordered ? "" : " (out of order or unknown values)", holds, n, last), -1;
    digest_t d;
    d_init(&d);
    d_i32(&d, last);
    d_len(&d, (uint64_t)n);
    *digest = d.h;
    return 0;
}

int storm_op(storm_t *s, uint64_t *digest, char *err, size_t errlen) {
    for (long i = 0; i < s->n; i++) {
        DBusMessage *m = dbus_message_new_signal(CANON_STORM_PATH, DBUS_INTERFACE_PROPERTIES, "PropertiesChanged");
        const char *iface = CANON_STORM_INTERFACE;
        DBusMessageIter it, none;
        s->level = (dbus_int32_t)(i + 1);
        dbus_message_iter_init_append(m, &it);
        dbus_message_iter_append_basic(&it, DBUS_TYPE_STRING, &iface);
        append_changed(&it, s->level);
        dbus_message_iter_open_container(&it, DBUS_TYPE_ARRAY, "s", &none);
        dbus_message_iter_close_container(&it, &none);
        if (!dbus_connection_send(s->a, m, NULL)) return dbus_message_unref(m), snprintf(err, errlen, "out of memory"), -1;
        dbus_message_unref(m);
    }
    dbus_connection_flush(s->a);
    int32_t last = (int32_t)s->n;
    long n_updates = 0;
    s->received = 0;
    long long deadline = now_ms() + CANON_STORM_SETTLE_MS;
    while (!(n_updates && s->updates[n_updates - 1] == last) && now_ms() < deadline) {
        DBusMessage *m;
        while ((m = dbus_connection_pop_message(s->b))) {
            int32_t level;
            if (level_of(m, &level)) {
                s->received++;
                if (n_updates <= s->n) s->updates[n_updates++] = level;
            }
            dbus_message_unref(m);
        }
        dbus_connection_read_write_dispatch(s->a, 0); /* A answers what was asked of the object */
        if (n_updates && s->updates[n_updates - 1] == last) break;
        if (!dbus_connection_read_write(s->b, 100)) return snprintf(err, errlen, "the bus closed B's connection"), -1;
    }
    return storm_check(s->n, s->received, s->updates, n_updates, digest, err, errlen);
}
