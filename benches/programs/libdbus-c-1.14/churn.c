/* signal/name-owner-churn/<scope> (issue 31, item 3; harness/src/ipc/
 * subscription.rs, docs/scenarios.md "Subscriptions under load"): connection
 * tx owns and releases the churned name NAME_CHURNS times, then the
 * sentinel once (dbus_bus_request_name with DO_NOT_QUEUE, dbus_bus_release_name,
 * each awaited); connection rx holds the canon's NameOwnerChanged rule, broad
 * or with arg0 (dbus_bus_add_match), and reads its queue up to the
 * sentinel's release, counting what the bus delivered per name. The check is
 * the harness's name_churn_digest, worded as it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adapter.h"

struct churn {
    DBusConnection *tx, *rx;
    int arg0;
    char names[2][256]; /* the churned name, the sentinel */
};

churn_t *churn_new(const transport_t *t, int arg0, char *err, size_t errlen) {
    churn_t *c = calloc(1, sizeof *c);
    if (!c) return snprintf(err, errlen, "out of memory"), NULL;
    c->arg0 = arg0;
    int pid = (int)getpid();
    snprintf(c->names[0], sizeof c->names[0], CANON_CHURN_NAME, pid);
    snprintf(c->names[1], sizeof c->names[1], CANON_CHURN_END_NAME, pid);
    char rule[512];
    if (arg0) snprintf(rule, sizeof rule, CANON_NAME_OWNER_ARG0_RULE, pid);
    else snprintf(rule, sizeof rule, "%s", CANON_NAME_OWNER_RULE);
    if (!(c->tx = connect_bus(t, err, errlen)) || !(c->rx = connect_bus(t, err, errlen))) return NULL;
    DBusError e;
    dbus_error_init(&e);
    dbus_bus_add_match(c->rx, rule, &e);
    if (dbus_error_is_set(&e)) return snprintf(err, errlen, "AddMatch: %s", e.message), dbus_error_free(&e), NULL;
    return c;
}

static int own_and_release(churn_t *c, const char *name, char *err, size_t errlen) {
    DBusError e;
    dbus_error_init(&e);
    int owned = dbus_bus_request_name(c->tx, name, DBUS_NAME_FLAG_DO_NOT_QUEUE, &e);
    if (!dbus_error_is_set(&e) && owned != DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER)
        return snprintf(err, errlen, "could not own %s (RequestName answered %d)", name, owned), -1;
    if (!dbus_error_is_set(&e)) dbus_bus_release_name(c->tx, name, &e);
    if (dbus_error_is_set(&e)) {
        snprintf(err, errlen, "%s: %s: %s", name, e.name, e.message);
        dbus_error_free(&e);
        return -1;
    }
    return 0;
}

int churn_op(churn_t *c, uint64_t *digest, char *err, size_t errlen) {
    for (int i = 0; i <= CANON_NAME_CHURNS; i++)
        if (own_and_release(c, c->names[i < CANON_NAME_CHURNS ? 0 : 1], err, errlen)) return -1;
    long churned = 0, sentinel = 0, other = 0;
    for (int done = 0; !done;) {
        DBusMessage *m;
        while (!done && (m = dbus_connection_pop_message(c->rx))) {
            const char *name = NULL, *old = NULL, *new_owner = NULL;
            if (dbus_message_is_signal(m, DBUS_INTERFACE_DBUS, "NameOwnerChanged") &&
                dbus_message_has_sender(m, DBUS_SERVICE_DBUS) &&
                dbus_message_get_args(m, NULL, DBUS_TYPE_STRING, &name, DBUS_TYPE_STRING, &old, DBUS_TYPE_STRING,
                                      &new_owner, DBUS_TYPE_INVALID)) {
                int is_sentinel = !strcmp(name, c->names[1]);
                if (!strcmp(name, c->names[0])) churned++;
                else if (is_sentinel) sentinel++;
                else other++;
                done = is_sentinel && !*new_owner;
            }
            dbus_message_unref(m);
        }
        if (!done && !dbus_connection_read_write(c->rx, -1))
            return snprintf(err, errlen, "the bus closed the subscriber's connection"), -1;
    }
    long want = c->arg0 ? 0 : 2 * CANON_NAME_CHURNS;
    if (churned != want || sentinel != 2 || (c->arg0 && other))
        return snprintf(err, errlen, "%s rule: NameOwnerChanged delivered for the churned name %ld (must be %ld), "
                        "for the sentinel %ld (must be 2), for other names %ld", c->arg0 ? "arg0" : "broad",
                        churned, want, sentinel, other), -1;
    digest_t d;
    d_init(&d);
    d_len(&d, (uint64_t)churned);
    d_len(&d, (uint64_t)sentinel);
    *digest = d.h;
    return 0;
}
