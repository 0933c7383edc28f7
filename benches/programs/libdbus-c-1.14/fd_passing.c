/* call/fd-passing/<n> (harness/src/ipc/fd_passing.rs): ReadFd(h) -> t on the
 * second interface io.killing.spark.BenchFd. libdbus negotiates fd passing
 * (NEGOTIATE_UNIX_FD) on Unix sockets by itself; appending DBUS_TYPE_UNIX_FD
 * duplicates the fd into the message, and reading one gives the reader a
 * duplicate of its own to close. */
#define _GNU_SOURCE /* memfd_create */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adapter.h"

/* ipc/fd_passing.rs FD_READ_LIMIT: the largest scenario size. */
#define FD_READ_LIMIT CANON_FD_READ_LIMIT
#define DECIMAL(x) #x
#define DECIMAL_OF(x) DECIMAL(x)

/* The whole file behind fd, read with pread from offset 0 (the fd shares the
 * sender's offset), digested as the harness's fd_digest; a file over
 * FD_READ_LIMIT is refused (-2), never read into memory. */
static int read_digest(int fd, uint64_t *digest) {
    struct stat st;
    if (fstat(fd, &st)) return -1;
    if (st.st_size > FD_READ_LIMIT) return -2;
    size_t len = (size_t)st.st_size, done = 0;
    unsigned char *buf = malloc(len ? len : 1);
    if (!buf) return -1;
    while (done < len) {
        ssize_t got = pread(fd, buf + done, len - done, (off_t)done);
        if (got <= 0) return free(buf), -1;
        done += (size_t)got;
    }
    digest_t d;
    d_init(&d);
    d_bytes(&d, buf, len);
    free(buf);
    *digest = d.h;
    return 0;
}

DBusMessage *fd_passing_answer(DBusMessage *m, const char *member, const char *sig) {
    if (strcmp(member, READ_FD))
        return dbus_message_new_error(m, DBUS_ERROR_UNKNOWN_METHOD, "no such method of " FD_INTERFACE);
    if (strcmp(sig, "h")) return dbus_message_new_error(m, DBUS_ERROR_INVALID_ARGS, "ReadFd takes \"h\"");
    int fd = -1;
    if (!dbus_message_get_args(m, NULL, DBUS_TYPE_UNIX_FD, &fd, DBUS_TYPE_INVALID))
        return dbus_message_new_error(m, DBUS_ERROR_INVALID_ARGS, "ReadFd received no fd");
    uint64_t digest = 0;
    int failed = read_digest(fd, &digest);
    close(fd); /* our duplicate: no fd kept per call */
    if (failed == -2)
        return dbus_message_new_error(m, DBUS_ERROR_INVALID_ARGS,
                                      "the passed file is larger than the " DECIMAL_OF(FD_READ_LIMIT) " bytes ReadFd reads");
    if (failed) return dbus_message_new_error(m, DBUS_ERROR_FAILED, "reading the passed fd failed");
    DBusMessage *r = dbus_message_new_method_return(m);
    dbus_uint64_t out = digest;
    dbus_message_append_args(r, DBUS_TYPE_UINT64, &out, DBUS_TYPE_INVALID);
    return r;
}

int fd_passing_memfd(long n) {
    int fd = memfd_create("dbus-matrix-fd-passing", MFD_CLOEXEC);
    if (fd < 0) return -1;
    unsigned char *p = echo_payload(n);
    long done = 0;
    while (done < n) {
        ssize_t w = write(fd, p + done, (size_t)(n - done));
        if (w <= 0) return free(p), close(fd), -1;
        done += w;
    }
    free(p);
    return fd; /* its offset stays at the end, as the harness's */
}

int fd_passing_call(DBusConnection *conn, const char *destination, int memfd, uint64_t *digest, char *err,
                    size_t errlen) {
    if (!dbus_connection_can_send_type(conn, DBUS_TYPE_UNIX_FD))
        return snprintf(err, errlen, "the connection did not negotiate fd passing"), -1;
    DBusMessage *m = dbus_message_new_method_call(destination, OBJECT_PATH, FD_INTERFACE, READ_FD);
    dbus_message_append_args(m, DBUS_TYPE_UNIX_FD, &memfd, DBUS_TYPE_INVALID);
    DBusError e;
    dbus_error_init(&e);
    DBusMessage *r = dbus_connection_send_with_reply_and_block(conn, m, DBUS_TIMEOUT_USE_DEFAULT, &e);
    dbus_message_unref(m);
    if (!r) {
        snprintf(err, errlen, "%s: %s", e.name, e.message);
        dbus_error_free(&e);
        return -1;
    }
    dbus_uint64_t got = 0;
    int ok = dbus_message_get_args(r, NULL, DBUS_TYPE_UINT64, &got, DBUS_TYPE_INVALID);
    dbus_message_unref(r);
    if (!ok) return snprintf(err, errlen, "ReadFd replied no t"), -1;
    *digest = got;
    return 0;
}
