/* SPDX-License-Identifier: GPL-2.0-or-later */

/*
 * Tests for src/log.c: the journal native protocol encoder (fields in, datagram bytes out), field
 * bounds and UTF-8 safe cuts, and that a journal socket that does not read never blocks the caller:
 * messages are queued, then dropped and counted, and the count is reported once it reads again.
 */

#include <fcntl.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "message-ids.h"
#include "shared/time-util.h"
#include "tests.h"
#include "verbs.h"

static size_t enc(const JournalField *f, size_t n, char *buf, size_t size) {
        memset(buf, 0x55, size);
        return journal_encode(f, n, buf, size);
}

TEST(encode_plain) {
        const JournalField f[] = {
                { "MESSAGE", "Synced 3 of 3 superblocks." },
                { "PRIORITY", "6" },
                { "SYSLOG_IDENTIFIER", "suspend-sync" },
                { "SUSPEND_SYNC_MOUNT", "/home" },
        };
        const char want[] = "MESSAGE=Synced 3 of 3 superblocks.\nPRIORITY=6\nSYSLOG_IDENTIFIER=suspend-sync\n"
                            "SUSPEND_SYNC_MOUNT=/home\n";
        char buf[256];
        size_t n = enc(f, ELEMENTSOF(f), buf, sizeof buf);

        ASSERT_EQ(n, sizeof want - 1);
        ASSERT_TRUE(memcmp(buf, want, n) == 0);

        /* NULL value = empty */
        n = enc((const JournalField[]) { { "ERRNO", NULL } }, 1, buf, sizeof buf);
        ASSERT_EQ(n, 7);
        ASSERT_TRUE(memcmp(buf, "ERRNO=\n", 7) == 0);
}

TEST(encode_binary) {
        /* A mount point with a newline (mountinfo unescapes \012): the binary-safe form. */
        const JournalField f[] = {
                { "PRIORITY", "4" },
                { "SUSPEND_SYNC_MOUNT", "/mnt/a\nb" },
        };
        const char want[] = "PRIORITY=4\nSUSPEND_SYNC_MOUNT\n\x08\0\0\0\0\0\0\0/mnt/a\nb\n";
        char buf[256];
        size_t n = enc(f, ELEMENTSOF(f), buf, sizeof buf);

        ASSERT_EQ(n, sizeof want - 1);
        ASSERT_TRUE(memcmp(buf, want, n) == 0);
}

TEST(encode_bounds) {
        static char big[8192], buf[JOURNAL_DATAGRAM_MAX];
        size_t n;

        /* MESSAGE is cut at LOG_LINE_MAX, other values at LOG_FIELD_MAX. */
        memset(big, 'a', sizeof big - 1);
        n = enc((const JournalField[]) { { "MESSAGE", big } }, 1, buf, sizeof buf);
        ASSERT_EQ(n, strlen("MESSAGE=") + LOG_LINE_MAX + 1);
        ASSERT_EQ(buf[n - 1], '\n');
        n = enc((const JournalField[]) { { "SUSPEND_SYNC_MOUNT", big } }, 1, buf, sizeof buf);
        ASSERT_EQ(n, strlen("SUSPEND_SYNC_MOUNT=") + LOG_FIELD_MAX + 1);

        /* ... never inside a UTF-8 sequence: 'a' x 2047 then "é" (2 bytes) straddles the cap. */
        memset(big, 'a', LOG_LINE_MAX - 1);
        memcpy(big + LOG_LINE_MAX - 1, "\xc3\xa9", 2);
        big[LOG_LINE_MAX + 1] = 0;
        n = enc((const JournalField[]) { { "MESSAGE", big } }, 1, buf, sizeof buf);
        ASSERT_EQ(n, strlen("MESSAGE=") + LOG_LINE_MAX - 1 + 1);
        ASSERT_EQ((unsigned char) buf[n - 2], 'a');

        /* The worst case the logger builds fits in one datagram: every field at its cap. */
        memset(big, 'b', sizeof big - 1);
        big[sizeof big - 1] = 0;
        big[10] = '\n';
        n = enc((const JournalField[]) { { "MESSAGE", big },
                                         { "PRIORITY", "7" },
                                         { "SYSLOG_IDENTIFIER", "suspend-sync" },
                                         { "MESSAGE_ID", "68604cfcdf4543a8af217e49559df3e8" },
                                         { "SUSPEND_SYNC_MOUNT", big },
                                         { "SUSPEND_SYNC_OUTCOME", "timeout" },
                                         { "SUSPEND_SYNC_DURATION_USEC", "18446744073709551615" },
                                         { "ERRNO", "2147483647" },
                                         { "OBJECT_SYSTEMD_UNIT", "suspend-sync.service" } },
                9, buf, sizeof buf);
        ASSERT_TRUE(n <= JOURNAL_DATAGRAM_MAX);
        ASSERT_EQ(buf[n - 1], '\n');
        ASSERT_TRUE(memmem(buf, n, "ERRNO=2147483647\n", 17) != NULL);

        /* A small buffer: the last field is cut to fit, a key that does not fit is left out. */
        n = enc((const JournalField[]) { { "A", "0123456789" }, { "B", "xyz" } }, 2, buf, 16);
        ASSERT_EQ(n, 16);
        ASSERT_TRUE(memcmp(buf, "A=0123456789\nB=\n", 16) == 0);
        n = enc((const JournalField[]) { { "A", "0123456789" }, { "LONGKEY", "x" }, { "C", "" } }, 3, buf,
                16);
        ASSERT_EQ(n, 16);
        ASSERT_TRUE(memcmp(buf, "A=0123456789\nC=\n", 16) == 0);
}

/* A journal that does not read: logging returns at once, keeps order, drops and counts beyond its
 * queue, and says how many were dropped once the journal reads again. */
TEST(full_socket_never_blocks) {
        char fill[1024] = {}, buf[JOURNAL_DATAGRAM_MAX + 1];
        int sv[2], n_fill = 0, n_got = 0;
        bool report = false, first = false;
        usec_t t0;
        ssize_t n;

        ASSERT_OK(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv));
        while (send(sv[0], fill, sizeof fill, MSG_DONTWAIT) >= 0)
                n_fill++;
        ASSERT_TRUE(errno == EAGAIN);
        log_set_journal_fd_for_test(sv[0]);

        t0 = now(CLOCK_MONOTONIC);
        for (int i = 0; i < 100; i++)
                log_event(LOG_WARNING, NULL,
                          &(LogEvent) { .mount = "/mnt", .outcome = "timeout", .duration = 5 }, "message %d",
                          i);
        ASSERT_TRUE(now(CLOCK_MONOTONIC) - t0 < USEC_PER_SEC);
        ASSERT_EQ(log_dropped(), 100 - LOG_QUEUE_MAX);

        /* Nobody reads: the flush waits its bound, then drops the queue. */
        t0 = now(CLOCK_MONOTONIC);
        ASSERT_EQ(log_flush(50 * USEC_PER_MSEC), 100);
        ASSERT_TRUE(now(CLOCK_MONOTONIC) - t0 < USEC_PER_SEC);

        /* The journal reads again: the next message gets through after the drop report. */
        for (int i = 0; i < n_fill; i++)
                ASSERT_TRUE(recv(sv[1], fill, sizeof fill, MSG_DONTWAIT) == sizeof fill);
        log_info("after");
        while ((n = recv(sv[1], buf, sizeof buf - 1, MSG_DONTWAIT)) > 0) {
                buf[n] = 0;
                if (n_got == 0)
                        report = strstr(buf, "MESSAGE=100 log message(s) could not be written") != NULL;
                if (n_got == 1)
                        first = strstr(buf, "MESSAGE=after\n") != NULL;
                n_got++;
        }
        ASSERT_EQ(n_got, 2);
        ASSERT_TRUE(report);
        ASSERT_TRUE(first);

        /* Queued messages keep their order and go out at the flush. */
        while (send(sv[0], fill, sizeof fill, MSG_DONTWAIT) >= 0)
                ;
        log_info("q1");
        log_info("q2");
        for (n_got = 0; recv(sv[1], fill, sizeof fill, MSG_DONTWAIT) == sizeof fill;)
                n_got++;
        ASSERT_TRUE(n_got > 0);
        ASSERT_EQ(log_flush(50 * USEC_PER_MSEC), 100);
        n = recv(sv[1], buf, sizeof buf - 1, MSG_DONTWAIT);
        ASSERT_TRUE(n > 0);
        buf[n] = 0;
        ASSERT_TRUE(strstr(buf, "MESSAGE=q1\n") != NULL);
        n = recv(sv[1], buf, sizeof buf - 1, MSG_DONTWAIT);
        ASSERT_TRUE(n > 0);
        buf[n] = 0;
        ASSERT_TRUE(strstr(buf, "MESSAGE=q2\n") != NULL);

        log_set_journal_fd_for_test(-1);
        safe_close(sv[1]);
}

/* A child forked without exec (the daemon's pass): what the parent queued is the parent's to send,
 * not the child's (sent twice otherwise); the child's copy of the sink's fd is closed and the drop
 * counters start at 0. */
TEST(forget_parent) {
        char fill[1024] = {}, buf[JOURNAL_DATAGRAM_MAX + 1];
        int sv[2];

        ASSERT_OK(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv));
        while (send(sv[0], fill, sizeof fill, MSG_DONTWAIT) >= 0)
                ;
        log_set_journal_fd_for_test(sv[0]);
        log_error("parent's");
        for (unsigned i = 0; i < 2 * LOG_QUEUE_MAX; i++)
                log_info("more %u", i);
        ASSERT_TRUE(log_dropped() > 0);

        log_forget_parent();
        ASSERT_EQ(log_dropped(), 0U);
        ASSERT_TRUE(fcntl(sv[0], F_GETFD) < 0 && errno == EBADF);
        while (recv(sv[1], fill, sizeof fill, MSG_DONTWAIT) == sizeof fill)
                ;
        ASSERT_EQ(log_flush(50 * USEC_PER_MSEC), 0U);
        ASSERT_TRUE(recv(sv[1], buf, sizeof buf, MSG_DONTWAIT) < 0 && errno == EAGAIN);

        log_set_journal_fd_for_test(-1);
        safe_close(sv[1]);
}

/* The queue keeps the most important messages when it overflows. */
TEST(queue_keeps_errors) {
        char fill[1024] = {}, buf[JOURNAL_DATAGRAM_MAX + 1];
        int sv[2], n_err = 0;
        ssize_t n;

        ASSERT_OK(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv));
        while (send(sv[0], fill, sizeof fill, MSG_DONTWAIT) >= 0)
                ;
        log_set_journal_fd_for_test(sv[0]);
        log_set_max_level(LOG_DEBUG);
        log_error("err-first");
        for (int i = 0; i < 40; i++)
                log_debug("noise %d", i);
        log_error("err-last");
        ASSERT_EQ(log_dropped(), 42 - LOG_QUEUE_MAX);

        while (recv(sv[1], fill, sizeof fill, MSG_DONTWAIT) == sizeof fill)
                ;
        (void) log_flush(50 * USEC_PER_MSEC);
        while ((n = recv(sv[1], buf, sizeof buf - 1, MSG_DONTWAIT)) > 0) {
                buf[n] = 0;
                if (strstr(buf, "MESSAGE=err-"))
                        n_err++;
        }
        ASSERT_EQ(n_err, 2);
        log_set_journal_fd_for_test(-1);
        log_set_max_level(LOG_INFO);
        safe_close(sv[1]);
}

/* stderr a full pipe with a blocking file description (as a shell gives): no wait, drops counted,
 * and the next line after the reader woke up is preceded by the drop report. */
TEST(stderr_full_pipe_never_blocks) {
        char chunk[4096] = {}, buf[65536];
        int p[2], saved, fl;
        usec_t t0;
        ssize_t n;

        ASSERT_OK(pipe2(p, O_CLOEXEC));
        fl = fcntl(p[1], F_GETFL);
        ASSERT_OK(fcntl(p[1], F_SETFL, fl | O_NONBLOCK));
        while (write(p[1], chunk, sizeof chunk) > 0)
                ;
        ASSERT_OK(fcntl(p[1], F_SETFL, fl)); /* shared description stays blocking */
        saved = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
        ASSERT_TRUE(saved >= 0);
        ASSERT_OK(dup2(p[1], STDERR_FILENO));
        unsetenv("JOURNAL_STREAM");
        log_set_journal_fd_for_test(-1);
        ASSERT_TRUE(!log_to_journal());

        t0 = now(CLOCK_MONOTONIC);
        for (int i = 0; i < 50; i++)
                log_warning("line %d", i);
        ASSERT_TRUE(now(CLOCK_MONOTONIC) - t0 < USEC_PER_SEC);
        ASSERT_EQ(log_dropped(), 50 - LOG_QUEUE_MAX);
        ASSERT_TRUE((fcntl(STDERR_FILENO, F_GETFL) & O_NONBLOCK) == 0); /* never changed for others */

        /* The reader empties the pipe: the queue goes out in order, after it the report. */
        ASSERT_OK(fcntl(p[0], F_SETFL, O_NONBLOCK));
        while (read(p[0], buf, sizeof buf) > 0)
                ;
        log_info("after");
        ASSERT_EQ(log_flush(50 * USEC_PER_MSEC), 50 - LOG_QUEUE_MAX);
        n = read(p[0], buf, sizeof buf - 1);
        ASSERT_TRUE(n > 0);
        buf[n] = 0;
        ASSERT_TRUE(strncmp(buf, "line 34\n", 8) == 0);
        ASSERT_TRUE(strstr(buf, "line 49\n34 log message(s) could not be written to stderr") != NULL);
        ASSERT_TRUE(strstr(buf, "dropped.\nafter\n") != NULL);

        ASSERT_OK(dup2(saved, STDERR_FILENO));
        safe_close(saved);
        safe_close(p[0]);
        safe_close(p[1]);
        log_set_journal_fd_for_test(-1);
}

/* Exit statuses that read right in "systemctl status" (issue 10): sysexits(3), not 3 and 4, which
 * systemd names NOTIMPLEMENTED and NOPERMISSION (LSB). 0, 1, 2 stay as documented. */
TEST(exit_statuses) {
        ASSERT_TRUE(EXIT_SYNC_ERROR == 74);
        ASSERT_TRUE(EXIT_SYNC_TIMEOUT == 75);
        ASSERT_TRUE(EXIT_USAGE == 2);
}

/* Whether the journal datagram d (native protocol) has a field named key. */
static bool datagram_has(const char *d, size_t n, const char *key) {
        size_t kl = strlen(key);

        for (size_t i = 0; i < n;) {
                const char *nl = memchr(d + i, '\n', n - i), *eq = memchr(d + i, '=', n - i);
                uint64_t vl;

                ASSERT_TRUE(nl);
                if (eq && eq < nl) { /* KEY=value\n */
                        if ((size_t) (eq - (d + i)) == kl && memcmp(d + i, key, kl) == 0)
                                return true;
                        i = nl - d + 1;
                        continue;
                }
                /* KEY\n <64-bit LE length> value\n */
                if ((size_t) (nl - (d + i)) == kl && memcmp(d + i, key, kl) == 0)
                        return true;
                ASSERT_TRUE((size_t) (nl - d) + 1 + 8 <= n);
                memcpy(&vl, nl + 1, 8);
                i = nl - d + 1 + 8 + vl + 1;
        }
        return false;
}

/* Every @FIELD@ the catalog uses for a MESSAGE_ID is sent with that MESSAGE_ID (issue 10: journalctl
 * -x showed "trigger: SUSPEND_SYNC_TRIGGER"). What is sent is read off the datagram log_event()
 * really sends, through the journal socket, with nothing set in the event: the fields of a message
 * come from its MESSAGE_ID alone (log_event_specs), not from what a caller happens to fill in. */
TEST(catalog_fields_sent) {
        _cleanup_free_ char *cat = NULL;
        char line[512], id[64] = "";
        size_t n_ids = 0, n_checked = 0;
        FILE *f;
        int sv[2];

        f = fopen(CATALOG_DIR "/suspend-sync.catalog", "re");
        ASSERT_TRUE(f);
        ASSERT_OK(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv));
        log_set_journal_fd_for_test(sv[0]);

        while (fgets(line, sizeof line, f)) {
                char buf[JOURNAL_DATAGRAM_MAX + 1];
                ssize_t n;

                if (strncmp(line, "-- ", 3) == 0) {
                        ASSERT_TRUE(sscanf(line + 3, "%32s", id) == 1);
                        ASSERT_EQ(strlen(id), 32);
                        /* Every catalog entry is a message the code knows. */
                        if (!log_event_spec(id)) {
                                fprintf(stderr, "catalog entry %s: no such message in log_event_specs\n", id);
                                ASSERT_TRUE(false);
                        }
                        n_ids++;
                        continue;
                }
                if (line[0] == '#' || !id[0])
                        continue;
                for (char *p = strchr(line, '@'), *q; p && (q = strchr(p + 1, '@')); p = strchr(q + 1, '@')) {
                        char key[128];
                        bool ok = true;

                        if (q - p - 1 <= 0 || (size_t) (q - p - 1) >= sizeof key)
                                continue;
                        memcpy(key, p + 1, q - p - 1);
                        key[q - p - 1] = 0;
                        for (const char *c = key; *c; c++)
                                ok = ok &&
                                     ((*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_');
                        if (!ok) { /* not a placeholder: carry on from the second '@' */
                                q = p;
                                continue;
                        }
                        log_event(LOG_WARNING, id, &(LogEvent) {}, "catalog check");
                        n = recv(sv[1], buf, sizeof buf, MSG_DONTWAIT);
                        ASSERT_TRUE(n > 0);
                        if (!datagram_has(buf, n, key)) {
                                fprintf(stderr,
                                        "MESSAGE_ID=%s: the catalog uses @%s@, the message does not send it\n",
                                        id, key);
                                ASSERT_TRUE(false);
                        }
                        n_checked++;
                }
        }
        fclose(f);
        log_set_journal_fd_for_test(-1);
        close(sv[1]);
        /* and every message the code sends has a catalog entry */
        ASSERT_EQ(n_ids, log_event_specs_n);
        ASSERT_TRUE(n_checked >= 10);
}

/* The fields of a message are sent whatever the caller filled in, with the values it gave. */
TEST(event_fields_values) {
        char buf[JOURNAL_DATAGRAM_MAX + 1];
        int sv[2];
        ssize_t n;

        ASSERT_OK(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv));
        log_set_journal_fd_for_test(sv[0]);
        log_event(LOG_NOTICE, SUSPEND_SYNC_MESSAGE_KNOB_CHANGED_STR,
                  &(LogEvent) { .knob_old = 1, .knob_new = 0, .mount = "/not-sent" }, "x");
        n = recv(sv[1], buf, sizeof buf - 1, MSG_DONTWAIT);
        ASSERT_TRUE(n > 0);
        buf[n] = 0;
        ASSERT_TRUE(strstr(buf, "\nSUSPEND_SYNC_KNOB_OLD=1\n"));
        ASSERT_TRUE(strstr(buf, "\nSUSPEND_SYNC_KNOB_NEW=0\n"));
        ASSERT_TRUE(!strstr(buf, "SUSPEND_SYNC_MOUNT"));
        log_event(LOG_INFO, SUSPEND_SYNC_MESSAGE_RUN_SUMMARY_STR,
                  &(LogEvent) { .outcome = "success",
                                .duration = 7,
                                .trigger = "hook",
                                .n_synced = 3,
                                .n_timed_out = 1,
                                .n_failed = 0,
                                .n_skipped = 12,
                                .deadline = 30 * USEC_PER_SEC },
                  "y");
        n = recv(sv[1], buf, sizeof buf - 1, MSG_DONTWAIT);
        ASSERT_TRUE(n > 0);
        buf[n] = 0;
        ASSERT_TRUE(strstr(buf, "\nSUSPEND_SYNC_TRIGGER=hook\n"));
        ASSERT_TRUE(strstr(buf, "\nSUSPEND_SYNC_SLEEP_ACTION=n/a\n"));
        ASSERT_TRUE(strstr(buf, "\nSUSPEND_SYNC_DURATION_USEC=7\n"));
        /* the numbers the metrics carry, for journalctl -o json consumers (issue 13 §3) */
        ASSERT_TRUE(strstr(buf, "\nSUSPEND_SYNC_SYNCED=3\n"));
        ASSERT_TRUE(strstr(buf, "\nSUSPEND_SYNC_TIMED_OUT=1\n"));
        ASSERT_TRUE(strstr(buf, "\nSUSPEND_SYNC_FAILED=0\n"));
        ASSERT_TRUE(strstr(buf, "\nSUSPEND_SYNC_SKIPPED=12\n"));
        ASSERT_TRUE(strstr(buf, "\nSUSPEND_SYNC_DEADLINE_USEC=30000000\n"));
        log_set_journal_fd_for_test(-1);
        close(sv[1]);
}

/* A mount point is any user's choice (their own FUSE mount): a newline, an escape sequence or a
 * bidirectional override in it reaches neither a terminal nor a forged line (review Q, M3); the
 * mount's own field keeps its bytes. */
TEST(message_escaped) {
        static const char mp[] = "/home/u/x\nSync of / synced\x1b]0;t\x07\xe2\x80\xae\xff";
        char buf[JOURNAL_DATAGRAM_MAX + 1];
        int sv[2], p[2], saved;
        ssize_t n;

        ASSERT_OK(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv));
        log_set_journal_fd_for_test(sv[0]);
        log_event(LOG_ERR, SUSPEND_SYNC_MESSAGE_MOUNT_ERROR_STR,
                  &(LogEvent) { .mount = mp, .outcome = "error", .error = EIO }, "Sync of %s failed.", mp);
        n = recv(sv[1], buf, sizeof buf - 1, MSG_DONTWAIT);
        ASSERT_TRUE(n > 0);
        buf[n] = 0;
        ASSERT_TRUE(strstr(
                buf, "MESSAGE=Sync of /home/u/x\\nSync of / synced\\x1b]0;t\\x07\\u202e\\xff failed.\n"));
        /* SUSPEND_SYNC_MOUNT= as it is: binary-safe (a newline in it: the length form) */
        ASSERT_TRUE(memmem(buf, n, "SUSPEND_SYNC_MOUNT\n", 19) != NULL);
        ASSERT_TRUE(memmem(buf, n, mp, strlen(mp)) != NULL);
        log_set_journal_fd_for_test(-1);
        close(sv[1]);

        /* stderr, without a journal */
        ASSERT_OK(pipe2(p, O_CLOEXEC | O_NONBLOCK));
        saved = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
        ASSERT_TRUE(saved >= 0);
        ASSERT_OK(dup2(p[1], STDERR_FILENO));
        unsetenv("JOURNAL_STREAM");
        log_warning("%s: gone.", mp);
        ASSERT_EQ(log_flush(50 * USEC_PER_MSEC), 0U);
        n = read(p[0], buf, sizeof buf - 1);
        ASSERT_TRUE(n > 0);
        buf[n] = 0;
        ASSERT_STREQ(buf, "/home/u/x\\nSync of / synced\\x1b]0;t\\x07\\u202e\\xff: gone.\n");
        ASSERT_OK(dup2(saved, STDERR_FILENO));
        safe_close(saved);
        safe_close(p[0]);
        safe_close(p[1]);
        log_set_journal_fd_for_test(-1);
}

/* A pass of a sleep names our unit in every message, structured or not, so that "journalctl -u
 * suspend-sync.service" shows the late pass (in systemd-suspend.service) and a pass whose
 * _SYSTEMD_UNIT journald lost (issue 10); other runs send no OBJECT_SYSTEMD_UNIT= at all. */
TEST(object_unit) {
        char buf[JOURNAL_DATAGRAM_MAX + 1];
        int sv[2];
        ssize_t n;

        ASSERT_OK(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv));
        log_set_journal_fd_for_test(sv[0]);

        /* Not set (a manual run): not sent. */
        log_info("plain");
        log_event(LOG_INFO, SUSPEND_SYNC_MESSAGE_RUN_SUMMARY_STR, &(LogEvent) { .trigger = "manual" },
                  "summary");
        for (int i = 0; i < 2; i++) {
                n = recv(sv[1], buf, sizeof buf - 1, MSG_DONTWAIT);
                ASSERT_TRUE(n > 0);
                ASSERT_TRUE(!datagram_has(buf, n, "OBJECT_SYSTEMD_UNIT"));
        }

        /* Set: sent with every message, plain or structured, with or without an error. */
        log_set_object_unit("suspend-sync.service");
        log_info("plain");
        log_warning_errno(EIO, "with error: %m");
        log_event(LOG_INFO, SUSPEND_SYNC_MESSAGE_RUN_SUMMARY_STR, &(LogEvent) { .trigger = "hook" },
                  "summary");
        log_event(LOG_WARNING, SUSPEND_SYNC_MESSAGE_MOUNT_TIMEOUT_STR, &(LogEvent) { .mount = "/mnt/a\nb" },
                  "t");
        for (int i = 0; i < 4; i++) {
                n = recv(sv[1], buf, sizeof buf - 1, MSG_DONTWAIT);
                ASSERT_TRUE(n > 0);
                buf[n] = 0;
                ASSERT_TRUE(datagram_has(buf, n, "OBJECT_SYSTEMD_UNIT"));
                ASSERT_TRUE(memmem(buf, n, "\nOBJECT_SYSTEMD_UNIT=suspend-sync.service\n", 42) != NULL);
        }
        ASSERT_TRUE(recv(sv[1], buf, sizeof buf, MSG_DONTWAIT) < 0);

        /* Unset again: not sent. */
        log_set_object_unit(NULL);
        log_info("plain");
        n = recv(sv[1], buf, sizeof buf - 1, MSG_DONTWAIT);
        ASSERT_TRUE(n > 0);
        ASSERT_TRUE(!datagram_has(buf, n, "OBJECT_SYSTEMD_UNIT"));

        log_set_journal_fd_for_test(-1);
        close(sv[1]);
}

int main(void) {
        RUN(exit_statuses);
        RUN(catalog_fields_sent);
        RUN(event_fields_values);
        RUN(message_escaped);
        RUN(object_unit);
        RUN(encode_plain);
        RUN(encode_binary);
        RUN(encode_bounds);
        RUN(full_socket_never_blocks);
        RUN(queue_keeps_errors);
        RUN(forget_parent);
        RUN(stderr_full_pipe_never_blocks);
        return 0;
}
