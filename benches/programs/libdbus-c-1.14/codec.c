/* marshal and demarshal through libdbus's message iterators:
 * dbus_message_marshal for the wire bytes, dbus_message_demarshal to read
 * them back, every field into the digest in wire order. */
#include <stdio.h>
#include <string.h>

#include "adapter.h"

static void append_unit(DBusMessageIter *it, const body_t *b) {
    DBusMessageIter st, arr, entry;
    const canon_payload_t *p = b->spec;
    dbus_message_iter_append_basic(it, DBUS_TYPE_STRING, &p->s);
    dbus_message_iter_append_basic(it, DBUS_TYPE_UINT64, &p->t);
    dbus_message_iter_open_container(it, DBUS_TYPE_STRUCT, NULL, &st);
    dbus_message_iter_append_basic(&st, DBUS_TYPE_UINT64, &p->st0);
    dbus_message_iter_append_basic(&st, DBUS_TYPE_STRING, &p->st1);
    dbus_message_iter_close_container(it, &st);
    dbus_message_iter_open_container(it, DBUS_TYPE_ARRAY, "{si}", &arr);
    for (int i = 0; i < b->dict_len; i++) {
        dbus_message_iter_open_container(&arr, DBUS_TYPE_DICT_ENTRY, NULL, &entry);
        dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &b->dict_keys[i]);
        dbus_message_iter_append_basic(&entry, DBUS_TYPE_INT32, &p->dict_values[i]);
        dbus_message_iter_close_container(&arr, &entry);
    }
    dbus_message_iter_close_container(it, &arr);
    dbus_message_iter_open_container(it, DBUS_TYPE_ARRAY, "t", &arr);
    const uint64_t *at = b->at;
    dbus_message_iter_append_fixed_array(&arr, DBUS_TYPE_UINT64, &at, b->at_len);
    dbus_message_iter_close_container(it, &arr);
    dbus_message_iter_open_container(it, DBUS_TYPE_ARRAY, "s", &arr);
    for (int i = 0; i < b->as_len; i++) dbus_message_iter_append_basic(&arr, DBUS_TYPE_STRING, &b->as[i]);
    dbus_message_iter_close_container(it, &arr);
}

DBusMessage *build_signal(const body_t *b) {
    DBusMessage *m = dbus_message_new_signal(PATH, INTERFACE, MEMBER);
    DBusMessageIter it, arr, entry, var;
    dbus_message_iter_init_append(m, &it);
    if (b->asv) {
        dbus_message_iter_open_container(&it, DBUS_TYPE_ARRAY, "{sv}", &arr);
        for (int i = 0; i < b->asv_len; i++) {
            dbus_message_iter_open_container(&arr, DBUS_TYPE_DICT_ENTRY, NULL, &entry);
            dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &b->asv_keys[i]);
            dbus_message_iter_open_container(&entry, DBUS_TYPE_VARIANT, "s", &var);
            dbus_message_iter_append_basic(&var, DBUS_TYPE_STRING, &b->asv_keys[i]);
            dbus_message_iter_close_container(&entry, &var);
            dbus_message_iter_close_container(&arr, &entry);
        }
        dbus_message_iter_close_container(&it, &arr);
    } else {
        for (int u = 0; u < b->units; u++) append_unit(&it, b);
    }
    return m;
}

int marshal(const body_t *b, char **out, int *len) {
    DBusMessage *m = build_signal(b);
    dbus_message_set_serial(m, 1);
    dbus_bool_t ok = dbus_message_marshal(m, out, len);
    dbus_message_unref(m);
    return ok ? 0 : -1;
}

static int expect(DBusMessageIter *it, int type, char *err, size_t errlen) {
    if (dbus_message_iter_get_arg_type(it) == type) return 0;
    snprintf(err, errlen, "expected type %c, found %c", type, dbus_message_iter_get_arg_type(it));
    return -1;
}

static int read_str(DBusMessageIter *it, digest_t *d, char *err, size_t errlen) {
    const char *s;
    if (expect(it, DBUS_TYPE_STRING, err, errlen)) return -1;
    dbus_message_iter_get_basic(it, &s);
    d_str(d, s);
    dbus_message_iter_next(it);
    return 0;
}

static int read_u64(DBusMessageIter *it, digest_t *d, char *err, size_t errlen) {
    dbus_uint64_t v;
    if (expect(it, DBUS_TYPE_UINT64, err, errlen)) return -1;
    dbus_message_iter_get_basic(it, &v);
    d_u64(d, v);
    dbus_message_iter_next(it);
    return 0;
}

static int read_unit(DBusMessageIter *it, digest_t *d, char *err, size_t errlen) {
    DBusMessageIter sub, entry;
    if (read_str(it, d, err, errlen) || read_u64(it, d, err, errlen)) return -1;
    if (expect(it, DBUS_TYPE_STRUCT, err, errlen)) return -1;
    dbus_message_iter_recurse(it, &sub);
    if (read_u64(&sub, d, err, errlen) || read_str(&sub, d, err, errlen)) return -1;
    dbus_message_iter_next(it);
    if (expect(it, DBUS_TYPE_ARRAY, err, errlen)) return -1;
    dbus_message_iter_recurse(it, &sub);
    uint64_t n = 0;
    while (dbus_message_iter_get_arg_type(&sub) == DBUS_TYPE_DICT_ENTRY) {
        dbus_int32_t v;
        dbus_message_iter_recurse(&sub, &entry);
        if (read_str(&entry, d, err, errlen) || expect(&entry, DBUS_TYPE_INT32, err, errlen)) return -1;
        dbus_message_iter_get_basic(&entry, &v);
        d_i32(d, v);
        n++;
        dbus_message_iter_next(&sub);
    }
    d_len(d, n);
    dbus_message_iter_next(it);
    if (expect(it, DBUS_TYPE_ARRAY, err, errlen)) return -1;
    dbus_message_iter_recurse(it, &sub);
    const dbus_uint64_t *at;
    int count = 0;
    if (dbus_message_iter_get_arg_type(&sub) == DBUS_TYPE_UINT64 || dbus_message_iter_get_arg_type(&sub) == DBUS_TYPE_INVALID) {
        dbus_message_iter_get_fixed_array(&sub, &at, &count);
    }
    for (int i = 0; i < count; i++) d_u64(d, at[i]);
    d_len(d, (uint64_t)count);
    dbus_message_iter_next(it);
    if (expect(it, DBUS_TYPE_ARRAY, err, errlen)) return -1;
    dbus_message_iter_recurse(it, &sub);
    n = 0;
    while (dbus_message_iter_get_arg_type(&sub) == DBUS_TYPE_STRING) {
        if (read_str(&sub, d, err, errlen)) return -1;
        n++;
    }
    d_len(d, n);
    dbus_message_iter_next(it);
    return 0;
}

int demarshal(const char *buf, int len, int asv, digest_t *d, char *err, size_t errlen) {
    DBusError e;
    dbus_error_init(&e);
    DBusMessage *m = dbus_message_demarshal(buf, len, &e);
    if (!m) {
        snprintf(err, errlen, "dbus_message_demarshal: %s", e.message);
        dbus_error_free(&e);
        return -1;
    }
    DBusMessageIter it, arr, entry, var;
    int rc = 0;
    dbus_message_iter_init(m, &it);
    if (asv) {
        rc = expect(&it, DBUS_TYPE_ARRAY, err, errlen);
        if (!rc) {
            dbus_message_iter_recurse(&it, &arr);
            uint64_t n = 0;
            while (!rc && dbus_message_iter_get_arg_type(&arr) == DBUS_TYPE_DICT_ENTRY) {
                dbus_message_iter_recurse(&arr, &entry);
                rc = read_str(&entry, d, err, errlen) || expect(&entry, DBUS_TYPE_VARIANT, err, errlen);
                if (!rc) {
                    dbus_message_iter_recurse(&entry, &var);
                    rc = read_str(&var, d, err, errlen);
                }
                n++;
                dbus_message_iter_next(&arr);
            }
            d_len(d, n);
        }
    } else {
        while (!rc && dbus_message_iter_get_arg_type(&it) != DBUS_TYPE_INVALID) rc = read_unit(&it, d, err, errlen);
    }
    dbus_message_unref(m);
    return rc;
}
