/* SPDX-License-Identifier: GPL-2.0-or-later */
/* hook-socket: the messages between the system-sleep hook and the daemon, and the sleep action. */

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "handover.h"
#include "hook-socket.h"
#include "late-skip.h"
#include "state.h"
#include "tests.h"

static int req(const char *text, char action[static HOOK_ACTION_MAX], char env[static HOOK_ACTION_MAX]) {
        return hook_request_parse(text, strlen(text), action, env);
}

TEST(request) {
        char buf[HOOK_MSG_MAX], action[HOOK_ACTION_MAX], env[HOOK_ACTION_MAX];
        size_t n;

        n = hook_request_format("suspend", NULL, buf, sizeof buf);
        ASSERT_EQ(n, strlen("suspend -"));
        ASSERT_STREQ(buf, "suspend -");
        ASSERT_OK(hook_request_parse(buf, n, action, env));
        ASSERT_STREQ(action, "suspend");
        ASSERT_STREQ(env, "");
        n = hook_request_format("hibernate", "suspend-after-failed-hibernate", buf, sizeof buf);
        ASSERT_OK(hook_request_parse(buf, n, action, env));
        ASSERT_STREQ(action, "hibernate");
        ASSERT_STREQ(env, "suspend-after-failed-hibernate");
        /* Not a token: sent as none, never as text the other side could misread. */
        n = hook_request_format("sus pend", "a\nb", buf, sizeof buf);
        ASSERT_STREQ(buf, "- -");
        ASSERT_OK(hook_request_parse(buf, n, action, env));
        ASSERT_STREQ(action, "");
        ASSERT_STREQ(env, "");
        n = hook_request_format("", "SUSPEND", buf, sizeof buf);
        ASSERT_STREQ(buf, "- -");
        char longest[HOOK_ACTION_MAX + 1];
        memset(longest, 'a', HOOK_ACTION_MAX);
        longest[HOOK_ACTION_MAX] = 0;
        n = hook_request_format(longest, NULL, buf, sizeof buf);
        ASSERT_STREQ(buf, "- -"); /* 48 bytes: one too many for HOOK_ACTION_MAX with its NUL */
        n = hook_request_format(longest + 1, longest + 1, buf, sizeof buf);
        ASSERT_OK(hook_request_parse(buf, n, action, env));
        ASSERT_EQ(strlen(action), HOOK_ACTION_MAX - 1);
        ASSERT_EQ(strlen(env), HOOK_ACTION_MAX - 1);

        /* Malformed: each rejected whole. */
        ASSERT_ERR(req("suspend", action, env), EBADMSG);
        ASSERT_ERR(req("", action, env), EBADMSG);
        ASSERT_ERR(req(" -", action, env), EBADMSG);
        ASSERT_ERR(req("- ", action, env), EBADMSG);
        ASSERT_ERR(req("suspend  -", action, env), EBADMSG);
        ASSERT_ERR(req("suspend - x", action, env), EBADMSG);
        ASSERT_ERR(req("Suspend -", action, env), EBADMSG);
        ASSERT_ERR(req("suspend -\n", action, env), EBADMSG);
        ASSERT_ERR(hook_request_parse("suspend -\0x", 11, action, env), EBADMSG);
        ASSERT_ERR(hook_request_parse(NULL, 0, action, env), EBADMSG);
        memset(buf, 'a', sizeof buf);
        buf[10] = ' ';
        ASSERT_ERR(hook_request_parse(buf, sizeof buf, action, env), EBADMSG);
}

TEST(ack_and_done) {
        char buf[HOOK_MSG_MAX];
        uint64_t limit;
        size_t n;
        int code;

        n = hook_ack_format(UINT64_C(123456789012), buf, sizeof buf);
        ASSERT_STREQ(buf, "ack 123456789012");
        ASSERT_OK(hook_ack_parse(buf, n, &limit));
        ASSERT_U64_EQ(limit, UINT64_C(123456789012));
        n = hook_ack_format(UINT64_MAX - 1, buf, sizeof buf);
        ASSERT_OK(hook_ack_parse(buf, n, &limit));
        ASSERT_U64_EQ(limit, UINT64_MAX - 1);
        ASSERT_ERR(hook_ack_parse("ack 18446744073709551615", 24, &limit), EBADMSG); /* infinity */
        ASSERT_ERR(hook_ack_parse("ack 99999999999999999999", 24, &limit), EBADMSG);
        ASSERT_ERR(hook_ack_parse("ack ", 4, &limit), EBADMSG);
        ASSERT_ERR(hook_ack_parse("ack 01", 6, &limit), EBADMSG);
        ASSERT_ERR(hook_ack_parse("ack -1", 6, &limit), EBADMSG);
        ASSERT_ERR(hook_ack_parse("ack 1 ", 6, &limit), EBADMSG);
        ASSERT_ERR(hook_ack_parse("done 0", 6, &limit), EBADMSG);
        ASSERT_ERR(hook_ack_parse("acks 1", 6, &limit), EBADMSG);
        ASSERT_OK(hook_ack_parse("ack 0", 5, &limit));
        ASSERT_U64_EQ(limit, 0);

        n = hook_done_format(74, buf, sizeof buf);
        ASSERT_STREQ(buf, "done 74");
        ASSERT_OK(hook_done_parse(buf, n, &code));
        ASSERT_EQ(code, 74);
        n = hook_done_format(-5, buf, sizeof buf);
        ASSERT_STREQ(buf, "done 1");
        n = hook_done_format(0, buf, sizeof buf);
        ASSERT_OK(hook_done_parse(buf, n, &code));
        ASSERT_EQ(code, 0);
        ASSERT_ERR(hook_done_parse("done 256", 8, &code), EBADMSG);
        ASSERT_ERR(hook_done_parse("done", 4, &code), EBADMSG);
        ASSERT_ERR(hook_done_parse("ack 0", 5, &code), EBADMSG);
        /* A buffer too small cuts the message, which then fails to parse (never a wrong number). */
        n = hook_ack_format(UINT64_C(123456789012), buf, 8);
        ASSERT_EQ(n, 7U);
        ASSERT_STREQ(buf, "ack 123");
}

TEST(sleep_action) {
        ASSERT_TRUE(sleep_action_valid("suspend"));
        ASSERT_TRUE(sleep_action_valid("suspend-then-hibernate"));
        ASSERT_TRUE(!sleep_action_valid("suspend-after-failed-hibernate"));
        ASSERT_TRUE(!sleep_action_valid(NULL));
        ASSERT_TRUE(!sleep_action_valid(""));
        ASSERT_STREQ(hook_sleep_action("hibernate", "suspend"), "hibernate");
        ASSERT_STREQ(hook_sleep_action("", "hybrid-sleep"), "hybrid-sleep");
        ASSERT_STREQ(hook_sleep_action(NULL, "suspend"), "suspend");
        ASSERT_TRUE(hook_sleep_action("bogus", "suspend-after-failed-hibernate") == NULL);
}

TEST(requester_waits) {
        int sv[2];
        char c = 'x';

        ASSERT_TRUE(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
        ASSERT_TRUE(hook_requester_waits(sv[0], 10, 11));
        ASSERT_TRUE(!hook_requester_waits(sv[0], 11, 11)); /* at the limit */
        ASSERT_TRUE(!hook_requester_waits(-EBADF, 10, 11));
        /* Anything after the request is not a hook waiting. */
        ASSERT_TRUE(send(sv[1], &c, 1, 0) == 1);
        ASSERT_TRUE(!hook_requester_waits(sv[0], 10, 11));
        ASSERT_TRUE(recv(sv[0], &c, 1, 0) == 1);
        ASSERT_TRUE(hook_requester_waits(sv[0], 10, 11));
        /* The hook gone. */
        close(sv[1]);
        ASSERT_TRUE(!hook_requester_waits(sv[0], 10, 11));
        close(sv[0]);
}

/* The hook's spelled-out names are the daemon's and the passes'. */
TEST(names) {
        ASSERT_STREQ(HOOK_STATE_DIR, STATE_DIR_DEFAULT);
        ASSERT_STREQ(HOOK_LATE_SKIP_FILE, LATE_SKIP_FILE);
        ASSERT_STREQ(HOOK_UNIT_MARK_FILE, HANDOVER_UNIT_MARK_FILE);
        ASSERT_TRUE(strncmp(HOOK_SOCKET_PATH, DAEMON_RUNTIME_DIR "/", strlen(DAEMON_RUNTIME_DIR) + 1) == 0);
}

int main(void) {
        RUN(names);
        RUN(request);
        RUN(ack_and_done);
        RUN(sleep_action);
        RUN(requester_waits);
        return 0;
}
