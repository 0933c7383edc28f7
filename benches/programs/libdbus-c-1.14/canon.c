/* The canonical values, the field digest and the benchmark service, as the
 * harness defines them: every value comes from canon_data.h, which
 * `dbus-matrix canon --format c-header` renders from the same canon as
 * benches/programs/canon.json (harness/src/canon.rs; a harness test keeps
 * both current, docs/canon.md). This file only turns the tables into what
 * the adapter uses and digests what libdbus decoded. The runner checks the
 * result: emit bytes by the reference decoder, demarshal digests, every IPC
 * reply's digest. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CANON_DATA_TABLES
#include "adapter.h"

void d_init(digest_t *d) { d->h = CANON_DIGEST_INIT; }
static void word(digest_t *d, uint64_t w) {
    d->h = (((d->h << CANON_DIGEST_ROTATE) | (d->h >> (64 - CANON_DIGEST_ROTATE))) ^ w) * CANON_DIGEST_K;
}
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

/* The decimal i repeated r times. */
static char *repeated_decimal(long i, int r) {
    char one[24];
    int n = snprintf(one, sizeof one, "%ld", i);
    char *s = malloc((size_t)n * (size_t)r + 1);
    for (int k = 0; k < r; k++) memcpy(s + k * n, one, (size_t)n);
    s[n * r] = 0;
    return s;
}

/* A canon_strings_t as an array of strings; its length in *len. */
static const char **strings_of(const canon_strings_t *c, int *len) {
    if (!c->decimal_repeat) {
        *len = c->n_strings;
        return (const char **)c->strings;
    }
    const char **out = malloc((size_t)c->decimal_count * sizeof *out);
    for (long i = 0; i < c->decimal_count; i++) out[i] = repeated_decimal(i, c->decimal_repeat);
    *len = (int)c->decimal_count;
    return out;
}

int body_of(const char *name, body_t *b) {
    memset(b, 0, sizeof *b);
    const canon_payload_t *p = NULL;
    for (int i = 0; i < CANON_N_PAYLOADS; i++)
        if (!strcmp(CANON_PAYLOADS[i].name, name)) p = &CANON_PAYLOADS[i];
    if (!p) return -1;
    b->spec = p;
    if (p->asv) {
        b->asv = 1, b->asv_keys = strings_of(&p->keys, &b->asv_len);
        return 0;
    }
    b->units = p->count;
    b->dict_len = p->dict_len, b->dict_keys = (const char **)p->dict_keys;
    b->at_len = (int)p->at_count, b->at = malloc((size_t)p->at_count * 8);
    for (long i = 0; i < p->at_count; i++) b->at[i] = p->at_value;
    b->as = strings_of(&p->as, &b->as_len);
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
    const canon_payload_t *p = b->spec;
    for (int u = 0; u < b->units; u++) {
        d_str(&d, p->s);
        d_u64(&d, p->t);
        d_u64(&d, p->st0);
        d_str(&d, p->st1);
        for (int i = 0; i < b->dict_len; i++) d_str(&d, b->dict_keys[i]), d_i32(&d, p->dict_values[i]);
        d_len(&d, (uint64_t)b->dict_len);
        for (int i = 0; i < b->at_len; i++) d_u64(&d, b->at[i]);
        d_len(&d, (uint64_t)b->at_len);
        for (int i = 0; i < b->as_len; i++) d_str(&d, b->as[i]);
        d_len(&d, (uint64_t)b->as_len);
    }
    return d.h;
}

/* The canon's op names (canon.rs `op_json`) as this program's op kinds. */
static const struct { const char *name; op_kind kind; } OPS[] = {
    {"call", OP_CALL}, {"echo-bytes", OP_ECHO}, {"in-flight", OP_IN_FLIGHT}, {"fd-passing", OP_FD_PASSING},
    {"property-get", OP_PROP_GET}, {"property-get-x100", OP_PROP_X100}, {"property-get-all", OP_GET_ALL},
    {"get-managed-objects", OP_MANAGED_OBJECTS}, {"property-cold-start", OP_COLD_START},
    {"emit-receive", OP_EMIT_RECEIVE}, {"fanout", OP_FANOUT}, {"nonmatching-rules", OP_NONMATCHING},
    {"connect-hello", OP_HELLO}, {"idle-connections", OP_IDLE}, {"connect-marshal-send", OP_MARSHAL_SEND},
    {"raw-socket", OP_RAW_SOCKET}, {"match-churn", OP_MATCH_CHURN},
    {"burst", OP_BURST}, {"delivered-broad", OP_DELIVERED_BROAD}, {"delivered-arg0", OP_DELIVERED_ARG0},
    {"name-owner-churn-broad", OP_NAME_CHURN}, {"name-owner-churn-arg0", OP_NAME_CHURN_ARG0},
    {"property-storm", OP_PROPERTY_STORM},
    {"in-only-bytes", OP_IN_ONLY}, {"connections-in-process", OP_CONNECTIONS},
    {"proxy-create-props", OP_PROXY_PROPS}, {"proxy-create-no-props", OP_PROXY_NO_PROPS},
    {"proxy-startup", OP_STARTUP},
};

static op_t op_of(const canon_scenario_t *c) {
    op_t op = {OP_CALL, 0, c->n, c->opt_in_family};
    int found = 0;
    for (size_t i = 0; i < sizeof OPS / sizeof OPS[0]; i++)
        if (!strcmp(OPS[i].name, c->op)) op.kind = OPS[i].kind, found = 1;
    if (!found) fprintf(stderr, "error: canon_data.h names an op this program does not know: %s\n", c->op), exit(1);
    if (c->member)
        for (int m = 0; m < N_METHODS; m++)
            if (!strcmp(METHODS[m].member, c->member)) op.method = m;
    return op;
}

int scenarios(scenario_t *out) {
    for (int i = 0; i < CANON_N_SCENARIOS; i++) {
        const canon_scenario_t *c = &CANON_SCENARIOS[i];
        scenario_t *s = &out[i];
        memset(s, 0, sizeof *s);
        s->canon = c;
        snprintf(s->id, sizeof s->id, "%s", c->id);
        s->kind = c->kind;
        snprintf(s->payload, sizeof s->payload, "%s", c->payload ? c->payload : "");
        if (c->kind == 'i') s->op = op_of(c);
        s->driven = c->driver;
    }
    return CANON_N_SCENARIOS;
}

const char *runner_needs_bus(const scenario_t *s) { return s->canon->runner_needs_bus; }

/* The first IPC scenario of the canon whose op is `op`. */
static const canon_scenario_t *canon_of(op_t op) {
    for (int i = 0; i < CANON_N_SCENARIOS; i++) {
        const canon_scenario_t *c = &CANON_SCENARIOS[i];
        if (c->kind != 'i') continue;
        op_t o = op_of(c);
        int same_family = o.family == op.family || (o.family && op.family && !strcmp(o.family, op.family));
        if (o.kind == op.kind && o.method == op.method && o.n == op.n && same_family) return c;
    }
    return NULL;
}

const char *item_id(int i) { return CANON_ITEMS[i][0]; }
const char *item_name(int i) { return CANON_ITEMS[i][1]; }
const char *object_path_of(int i) { return CANON_OBJECT_PATHS[i]; }

void digest_items(digest_t *d) {
    for (int i = 0; i < CANON_N_ITEMS; i++) d_str(d, item_id(i)), d_str(d, item_name(i));
    d_len(d, CANON_N_ITEMS);
}

unsigned char *echo_payload(long n) {
    unsigned char *p = malloc((size_t)n);
    for (long i = 0; i < n; i++) p[i] = (unsigned char)(i % CANON_ECHO_MODULUS);
    return p;
}

uint64_t expected_digest(op_t op, const char *service_name) {
    const canon_scenario_t *c = canon_of(op);
    if (c && c->has_expected_digest) return c->expected_digest;
    /* ObjectRef, RelationSet: (service name, object path) pairs, the count after a set. */
    digest_t d;
    d_init(&d);
    int many = op.kind == OP_CALL && !strcmp(METHODS[op.method].out, "a(so)");
    for (int i = 0; i < (many ? CANON_N_ITEMS : 1); i++) d_str(&d, service_name), d_str(&d, object_path_of(i));
    if (many) d_len(&d, CANON_N_ITEMS);
    return d.h;
}

const char *needs_bus(op_t op) {
    const canon_scenario_t *c = canon_of(op);
    return c ? c->needs_bus : NULL;
}

const char *introspection_xml_of(const char *path) {
    for (int i = 0; i < CANON_N_INTROSPECTION; i++)
        if (!strcmp(CANON_INTROSPECTION[i].path, path)) return CANON_INTROSPECTION[i].xml;
    return NULL;
}
