/* property/get-all/<n> and objects/get-managed-objects/<n>
 * (harness/src/ipc/props.rs; paths, names and values from canon_data.h).
 * libdbus has no object or property layer: the server answers
 * Properties.GetAll and ObjectManager.GetManagedObjects on these paths by
 * hand, building the a{sv} with DBusMessageIter; the client is a plain
 * method call whose reply is walked with DBusMessageIter, each variant read as
 * the type it announces. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapter.h"

#define GET_ALL_INTERFACE CANON_GET_ALL_INTERFACE
#define ITEM_INTERFACE CANON_ITEM_INTERFACE
#define OBJECT_MANAGER CANON_STD_OBJECT_MANAGER

/* A property: its name and a value of type 's', 'u' or 'b'. */
typedef struct {
    char name[32];
    char type;
    char s[32];
    uint32_t u;
} prop_t;

static void prop_of(const canon_prop_t *c, prop_t *p) {
    snprintf(p->name, sizeof p->name, "%s", c->name);
    p->type = c->type, p->u = c->u;
    snprintf(p->s, sizeof p->s, "%s", c->s ? c->s : "");
}

/* Property i of the property/get-all objects (canon_data.h CANON_PROPERTIES). */
static void property(long i, prop_t *p) { prop_of(&CANON_PROPERTIES[i], p); }

/* Child i's properties of ITEM_INTERFACE, in name order (CANON_ITEM_PROPERTIES). */
static void item_properties(long i, prop_t p[3]) {
    for (int k = 0; k < 3; k++) prop_of(&CANON_ITEM_PROPERTIES[i][k], &p[k]);
}

static int is_count(long n) {
    for (int i = 0; i < CANON_N_PROPS_COUNTS; i++)
        if (CANON_PROPS_COUNTS[i] == n) return 1;
    return 0;
}

/* `template` (one %d) filled with n exactly, n one of the counts: n, else -1. */
static long count_of(const char *path, const char *template) {
    for (int i = 0; i < CANON_N_PROPS_COUNTS; i++) {
        char want[96];
        snprintf(want, sizeof want, template, (int)CANON_PROPS_COUNTS[i]);
        if (!strcmp(want, path)) return CANON_PROPS_COUNTS[i];
    }
    return -1;
}

/* CANON_OBJECT_CHILD_PATH exactly: i (and *n), else -1. */
static long child_of(const char *path, long *n) {
    int nn, i, used = -1;
    if (sscanf(path, CANON_OBJECT_CHILD_PATH "%n", &nn, &i, &used) != 2 || used < 0 || path[used]) return -1;
    char want[96];
    snprintf(want, sizeof want, CANON_OBJECT_CHILD_PATH, nn, i);
    *n = nn;
    return is_count(nn) && i >= 0 && i < nn && !strcmp(want, path) ? i : -1;
}

/* --- digests (props.rs: a type tag, then the value; sorted by name) -------- */
static void digest_value(digest_t *d, const prop_t *p) {
    if (p->type == 's') d_u64(d, 0), d_str(d, p->s);
    else d_u64(d, p->type == 'u' ? 1 : 2), d_u64(d, p->u);
}

static int by_name(const void *a, const void *b) { return strcmp(((const prop_t *)a)->name, ((const prop_t *)b)->name); }

static void digest_properties(digest_t *d, prop_t *p, long n) {
    qsort(p, (size_t)n, sizeof *p, by_name);
    for (long i = 0; i < n; i++) d_str(d, p[i].name), digest_value(d, &p[i]);
    d_len(d, (uint64_t)n);
}

/* --- the server -------------------------------------------------------------- */
static void append_props(DBusMessageIter *into, const prop_t *p, long n) {
    DBusMessageIter dict, entry, var;
    dbus_message_iter_open_container(into, DBUS_TYPE_ARRAY, "{sv}", &dict);
    for (long i = 0; i < n; i++) {
        const char *name = p[i].name, *s = p[i].s;
        dbus_uint32_t u = p[i].u;
        dbus_bool_t b = p[i].u != 0;
        char sig[2] = {p[i].type, 0};
        dbus_message_iter_open_container(&dict, DBUS_TYPE_DICT_ENTRY, NULL, &entry);
        dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &name);
        dbus_message_iter_open_container(&entry, DBUS_TYPE_VARIANT, sig, &var);
        if (p[i].type == 's') dbus_message_iter_append_basic(&var, DBUS_TYPE_STRING, &s);
        else if (p[i].type == 'u') dbus_message_iter_append_basic(&var, DBUS_TYPE_UINT32, &u);
        else dbus_message_iter_append_basic(&var, DBUS_TYPE_BOOLEAN, &b);
        dbus_message_iter_close_container(&entry, &var);
        dbus_message_iter_close_container(&dict, &entry);
    }
    dbus_message_iter_close_container(into, &dict);
}

static DBusMessage *get_all_reply(DBusMessage *m, const char *sig, const char *interface, const prop_t *p, long n) {
    const char *asked = NULL;
    if (strcmp(sig, "s") || !dbus_message_get_args(m, NULL, DBUS_TYPE_STRING, &asked, DBUS_TYPE_INVALID))
        return dbus_message_new_error(m, DBUS_ERROR_INVALID_ARGS, "GetAll takes \"s\"");
    if (strcmp(asked, interface)) return dbus_message_new_error(m, DBUS_ERROR_UNKNOWN_INTERFACE, "no such interface");
    DBusMessage *r = dbus_message_new_method_return(m);
    DBusMessageIter out;
    dbus_message_iter_init_append(r, &out);
    append_props(&out, p, n);
    return r;
}

static DBusMessage *managed_objects_reply(DBusMessage *m, long n) {
    DBusMessage *r = dbus_message_new_method_return(m);
    DBusMessageIter out, objects, object, interfaces, interface;
    dbus_message_iter_init_append(r, &out);
    dbus_message_iter_open_container(&out, DBUS_TYPE_ARRAY, "{oa{sa{sv}}}", &objects);
    for (long i = 0; i < n; i++) {
        char buf[96];
        const char *path = buf, *name = ITEM_INTERFACE;
        prop_t p[3];
        snprintf(buf, sizeof buf, CANON_OBJECT_CHILD_PATH, (int)n, (int)i);
        item_properties(i, p);
        dbus_message_iter_open_container(&objects, DBUS_TYPE_DICT_ENTRY, NULL, &object);
        dbus_message_iter_append_basic(&object, DBUS_TYPE_OBJECT_PATH, &path);
        dbus_message_iter_open_container(&object, DBUS_TYPE_ARRAY, "{sa{sv}}", &interfaces);
        dbus_message_iter_open_container(&interfaces, DBUS_TYPE_DICT_ENTRY, NULL, &interface);
        dbus_message_iter_append_basic(&interface, DBUS_TYPE_STRING, &name);
        append_props(&interface, p, 3);
        dbus_message_iter_close_container(&interfaces, &interface);
        dbus_message_iter_close_container(&object, &interfaces);
        dbus_message_iter_close_container(&objects, &object);
    }
    dbus_message_iter_close_container(&out, &objects);
    return r;
}

DBusMessage *props_answer(DBusMessage *m, const char *path, const char *iface, const char *member, const char *sig) {
    long n, i;
    int properties = !strcmp(iface, PROPS_INTERFACE), get_all = properties && !strcmp(member, "GetAll");
    if ((n = count_of(path, CANON_PROPS_PATH)) > 0) {
        if (!get_all) return dbus_message_new_error(m, DBUS_ERROR_UNKNOWN_METHOD, "only Properties.GetAll here");
        prop_t *p = calloc((size_t)n, sizeof *p);
        for (i = 0; i < n; i++) property(i, &p[i]);
        DBusMessage *r = get_all_reply(m, sig, GET_ALL_INTERFACE, p, n);
        free(p);
        return r;
    }
    if ((n = count_of(path, CANON_OBJECTS_PATH)) > 0) {
        if (strcmp(iface, OBJECT_MANAGER) || strcmp(member, "GetManagedObjects"))
            return dbus_message_new_error(m, DBUS_ERROR_UNKNOWN_METHOD, "only ObjectManager.GetManagedObjects here");
        if (*sig) return dbus_message_new_error(m, DBUS_ERROR_INVALID_ARGS, "GetManagedObjects takes no arguments");
        return managed_objects_reply(m, n);
    }
    if ((i = child_of(path, &n)) >= 0) {
        if (!get_all) return dbus_message_new_error(m, DBUS_ERROR_UNKNOWN_METHOD, "only Properties.GetAll here");
        prop_t p[3];
        item_properties(i, p);
        return get_all_reply(m, sig, ITEM_INTERFACE, p, 3);
    }
    return NULL;
}

/* --- the client -------------------------------------------------------------- */
/* One a{sv} at `it` into p (up to max entries): the count, or -1 with err. */
static long read_props(DBusMessageIter *it, prop_t *p, long max, char *err, size_t errlen) {
    DBusMessageIter dict, entry, var;
    if (dbus_message_iter_get_arg_type(it) != DBUS_TYPE_ARRAY) return snprintf(err, errlen, "no a{sv}"), -1;
    dbus_message_iter_recurse(it, &dict);
    long n = 0;
    for (; dbus_message_iter_get_arg_type(&dict) == DBUS_TYPE_DICT_ENTRY; dbus_message_iter_next(&dict), n++) {
        if (n == max) return snprintf(err, errlen, "more than %ld properties", max), -1;
        const char *name, *s;
        dbus_uint32_t u;
        dbus_bool_t b;
        dbus_message_iter_recurse(&dict, &entry);
        dbus_message_iter_get_basic(&entry, &name);
        dbus_message_iter_next(&entry);
        dbus_message_iter_recurse(&entry, &var);
        prop_t *q = &p[n];
        snprintf(q->name, sizeof q->name, "%s", name);
        switch (dbus_message_iter_get_arg_type(&var)) {
        case DBUS_TYPE_STRING:
            dbus_message_iter_get_basic(&var, &s), q->type = 's', snprintf(q->s, sizeof q->s, "%s", s);
            break;
        case DBUS_TYPE_UINT32: dbus_message_iter_get_basic(&var, &u), q->type = 'u', q->u = u; break;
        case DBUS_TYPE_BOOLEAN: dbus_message_iter_get_basic(&var, &b), q->type = 'b', q->u = b != 0; break;
        default: return snprintf(err, errlen, "property %s: unexpected type", name), -1;
        }
    }
    return n;
}

static DBusMessage *roundtrip(DBusConnection *conn, DBusMessage *m, char *err, size_t errlen) {
    DBusError e;
    dbus_error_init(&e);
    DBusMessage *r = dbus_connection_send_with_reply_and_block(conn, m, DBUS_TIMEOUT_USE_DEFAULT, &e);
    dbus_message_unref(m);
    if (!r) {
        snprintf(err, errlen, "%s: %s", e.name, e.message);
        dbus_error_free(&e);
    }
    return r;
}

int props_get_all_call(DBusConnection *conn, const char *destination, long n, uint64_t *digest, char *err,
                       size_t errlen) {
    char path[64];
    snprintf(path, sizeof path, CANON_PROPS_PATH, (int)n);
    DBusMessage *m = dbus_message_new_method_call(destination, path, PROPS_INTERFACE, "GetAll");
    const char *interface = GET_ALL_INTERFACE;
    dbus_message_append_args(m, DBUS_TYPE_STRING, &interface, DBUS_TYPE_INVALID);
    DBusMessage *r = roundtrip(conn, m, err, errlen);
    if (!r) return -1;
    prop_t *p = calloc((size_t)n + 1, sizeof *p);
    DBusMessageIter it;
    dbus_message_iter_init(r, &it);
    long got = read_props(&it, p, n + 1, err, errlen);
    dbus_message_unref(r);
    if (got >= 0) {
        digest_t d;
        d_init(&d);
        digest_properties(&d, p, got);
        *digest = d.h;
    }
    free(p);
    return got < 0 ? -1 : 0;
}

/* One object of a GetManagedObjects reply: its path, its benchmark interface's properties. */
typedef struct {
    char path[96];
    prop_t props[4];
    long n;
} object_t;

static int by_path(const void *a, const void *b) { return strcmp(((const object_t *)a)->path, ((const object_t *)b)->path); }

int props_managed_objects_call(DBusConnection *conn, const char *destination, long n, uint64_t *digest, char *err,
                               size_t errlen) {
    char path[64];
    snprintf(path, sizeof path, CANON_OBJECTS_PATH, (int)n);
    DBusMessage *m = dbus_message_new_method_call(destination, path, OBJECT_MANAGER, "GetManagedObjects");
    DBusMessage *r = roundtrip(conn, m, err, errlen);
    if (!r) return -1;
    object_t *objects = calloc((size_t)n + 1, sizeof *objects);
    long count = 0;
    int failed = 0;
    DBusMessageIter it, all, object, interfaces, interface;
    dbus_message_iter_init(r, &it);
    if (dbus_message_iter_get_arg_type(&it) != DBUS_TYPE_ARRAY) failed = snprintf(err, errlen, "no a{oa{sa{sv}}}");
    else dbus_message_iter_recurse(&it, &all);
    for (; !failed && dbus_message_iter_get_arg_type(&all) == DBUS_TYPE_DICT_ENTRY; dbus_message_iter_next(&all)) {
        const char *opath, *name;
        dbus_message_iter_recurse(&all, &object);
        dbus_message_iter_get_basic(&object, &opath);
        dbus_message_iter_next(&object);
        dbus_message_iter_recurse(&object, &interfaces);
        /* Only the benchmark interface counts (a server may list the standard ones too). */
        for (; dbus_message_iter_get_arg_type(&interfaces) == DBUS_TYPE_DICT_ENTRY; dbus_message_iter_next(&interfaces)) {
            dbus_message_iter_recurse(&interfaces, &interface);
            dbus_message_iter_get_basic(&interface, &name);
            if (strcmp(name, ITEM_INTERFACE)) continue;
            if (count > n) {
                failed = snprintf(err, errlen, "more than %ld objects", n);
                break;
            }
            dbus_message_iter_next(&interface);
            object_t *o = &objects[count++];
            snprintf(o->path, sizeof o->path, "%s", opath);
            if ((o->n = read_props(&interface, o->props, 4, err, errlen)) < 0) {
                failed = 1;
                break;
            }
        }
    }
    dbus_message_unref(r);
    if (!failed) {
        qsort(objects, (size_t)count, sizeof *objects, by_path);
        digest_t d;
        d_init(&d);
        for (long i = 0; i < count; i++) d_str(&d, objects[i].path), digest_properties(&d, objects[i].props, objects[i].n);
        d_len(&d, (uint64_t)count);
        *digest = d.h;
    }
    free(objects);
    return failed ? -1 : 0;
}
