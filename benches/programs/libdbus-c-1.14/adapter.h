/* dbus-matrix adapter for libdbus used directly from C (no wrapper, no main
 * loop library). The contract: benches/harness/src/contract.rs. */
#ifndef DBUS_MATRIX_ADAPTER_H
#define DBUS_MATRIX_ADAPTER_H

#include <stddef.h>
#include <stdint.h>
#include <dbus/dbus.h>

#include "canon_data.h" /* generated: dbus-matrix canon --format c-header */

/* --- canon.c: the canon's tables as the adapter uses them, the digest ---- */
typedef struct { uint64_t h; } digest_t;
void d_init(digest_t *d);
void d_u64(digest_t *d, uint64_t v);
void d_i32(digest_t *d, int32_t v);
void d_len(digest_t *d, uint64_t n);
void d_bytes(digest_t *d, const void *b, size_t n);
void d_str(digest_t *d, const char *s);

#define PATH CANON_SIGNAL_PATH
#define INTERFACE CANON_SIGNAL_INTERFACE
#define MEMBER CANON_SIGNAL_MEMBER
#define OBJECT_PATH CANON_OBJECT_PATH
#define BENCH_INTERFACE CANON_INTERFACE
#define PROPERTY CANON_PROPERTY
#define SIGNAL_NAME CANON_SIGNAL
#define SIGNAL_TEXT CANON_SIGNAL_TEXT
#define PROPS_INTERFACE CANON_STD_PROPERTIES

/* One body: `units` units of st(ts)a{si}atas, or (asv) an a{sv} of strings;
 * the unit's scalars (s, t, st, the dict values) are spec's. */
typedef struct {
    const canon_payload_t *spec;
    int asv;
    int units;
    int dict_len, at_len, as_len;
    const char **dict_keys; /* values: spec->dict_values */
    uint64_t *at;
    const char **as;
    const char **asv_keys; /* asv values equal the keys */
    int asv_len;
} body_t;
int body_of(const char *name, body_t *b); /* 0, or -1 for an unknown payload */
uint64_t body_digest(const body_t *b);

typedef enum {
    OP_CALL, OP_ECHO, OP_PROP_GET, OP_PROP_X100, OP_COLD_START, OP_EMIT_RECEIVE, OP_FANOUT,
    OP_NONMATCHING, OP_HELLO, OP_MARSHAL_SEND, OP_RAW_SOCKET, OP_IN_FLIGHT, OP_IDLE,
    OP_GET_ALL, OP_MANAGED_OBJECTS, OP_FD_PASSING, OP_MATCH_CHURN, OP_BURST,
    OP_DELIVERED_BROAD, OP_DELIVERED_ARG0, OP_NAME_CHURN, OP_NAME_CHURN_ARG0, OP_PROPERTY_STORM, OP_IN_ONLY,
    OP_CONNECTIONS, OP_PROXY_PROPS, OP_PROXY_NO_PROPS, OP_STARTUP
} op_kind;
/* family: the canon's opt_in_family (OP_STARTUP: proxy/startup, which libdbus cannot do: main.c says why). */
typedef struct { op_kind kind; int method; long n; const char *family; } op_t;
typedef canon_method_t method_t;
#define METHODS CANON_METHODS
#define N_METHODS CANON_N_METHODS

/* A scenario: kind 'm' marshal, 'd' demarshal (payload), 'i' IPC (op). */
/* driven: 0 the adapter's own cell; 'p' parallel clients, 'r' match rules:
 * runner-driven cells (scenario.rs `Driver`), listed as the op the runner
 * runs (call/void, signal/fanout/1). */
typedef struct { char id[64]; char kind; char payload[16]; op_t op; char driven; const canon_scenario_t *canon; } scenario_t;
#define MAX_SCENARIOS CANON_N_SCENARIOS
int scenarios(scenario_t *out); /* fills up to MAX_SCENARIOS; returns the count */
const char *runner_needs_bus(const scenario_t *s);
uint64_t expected_digest(op_t op, const char *service_name);
const char *needs_bus(op_t op);
void digest_items(digest_t *d);
const char *item_id(int i);
const char *item_name(int i);
const char *object_path_of(int i);
unsigned char *echo_payload(long n);
const char *introspection_xml_of(const char *path); /* NULL: no such object */

/* --- codec.c --------------------------------------------------------------- */
DBusMessage *build_signal(const body_t *b);
int marshal(const body_t *b, char **out, int *len); /* 0 ok */
int demarshal(const char *buf, int len, int asv, digest_t *d, char *err, size_t errlen);

/* --- ipc.c ----------------------------------------------------------------- */
typedef struct { int p2p; const char *address, *socket, *service_name; } transport_t;
extern const char *NO_P2P;
int serve(const transport_t *t);
int subscribe(const transport_t *t, int connections, int extra_rules, const char *ack_fifo);
/* A private connection to the bus (SASL, Hello), or NULL with err set. */
DBusConnection *connect_bus(const transport_t *t, char *err, size_t errlen);
int cold_start(const transport_t *t);
/* The client op: call it, it returns 0 and the digest of what came back. */
typedef struct client client_t;
client_t *client_new(const transport_t *t, op_t op, char *err, size_t errlen);
int client_op(client_t *c, uint64_t *digest, char *err, size_t errlen);
/* Closes what the op holds (connect/idle-connections), before each repeat window. */
void client_release(client_t *c);

/* --- fd_passing.c: call/fd-passing/<n> (harness/src/ipc/fd_passing.rs) ------- */
#define FD_INTERFACE CANON_FD_INTERFACE
#define READ_FD CANON_READ_FD
DBusMessage *fd_passing_answer(DBusMessage *m, const char *member, const char *sig); /* the server's reply */
int fd_passing_memfd(long n); /* the client's memfd of echo_payload(n), or -1 */
int fd_passing_call(DBusConnection *conn, const char *destination, int memfd, uint64_t *digest, char *err,
                    size_t errlen);

/* --- props.c: property/get-all/<n>, objects/get-managed-objects/<n> (harness/src/ipc/props.rs) -- */
/* The server's reply when the call is to one of these objects, else NULL. */
DBusMessage *props_answer(DBusMessage *m, const char *path, const char *iface, const char *member, const char *sig);
int props_get_all_call(DBusConnection *conn, const char *destination, long n, uint64_t *digest, char *err,
                       size_t errlen);
int props_managed_objects_call(DBusConnection *conn, const char *destination, long n, uint64_t *digest, char *err,
                               size_t errlen);

/* --- apps.c: call/in-only-bytes/<n> (harness/src/ipc/application.rs) ------- */
typedef struct in_only in_only_t;
/* Serves the sink on connection A (a thread of its own), opens the calling connection B. */
in_only_t *in_only_new(const transport_t *t, long n, char *err, size_t errlen);
/* One SinkBytes call from B, its empty reply awaited; the digest is the sink's tally. */
int in_only_op(in_only_t *s, uint64_t *digest, char *err, size_t errlen);
/* call/connections-in-process/<k>: k connections, InOutInt(i) on connection i in turn. */
typedef struct conns conns_t;
conns_t *conns_new(const transport_t *t, long k, char *err, size_t errlen);
int conns_op(conns_t *c, uint64_t *digest, char *err, size_t errlen);

/* --- churn.c: signal/name-owner-churn/<scope> (harness/src/ipc/subscription.rs) -------- */
typedef struct churn churn_t;
churn_t *churn_new(const transport_t *t, int arg0, char *err, size_t errlen);
int churn_op(churn_t *c, uint64_t *digest, char *err, size_t errlen);

/* --- storm.c: property/changed-storm/<n> (harness/src/ipc/storm.rs) ------------------ */
typedef struct storm storm_t;
storm_t *storm_new(const transport_t *t, long n, char *err, size_t errlen);
int storm_op(storm_t *s, uint64_t *digest, char *err, size_t errlen);
/* The check of what the subscriber kept (storm_digest's): 0 and *digest, or -1 and err. */
int storm_check(long n, long received, const int32_t *updates, long n_updates, uint64_t *digest, char *err,
                size_t errlen);

/* --- proxied.c: proxy/create-call/<server> (harness/src/ipc/proxied.rs) -------------- */
typedef struct proxied proxied_t;
proxied_t *proxied_new(const transport_t *t, int props, char *err, size_t errlen);
int proxied_op(proxied_t *p, uint64_t *digest, char *err, size_t errlen);

#endif
