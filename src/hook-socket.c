/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "hook-socket.h"
#include "shared/parse-util.h"

static const char *const sleep_actions[] = { "suspend", "hibernate", "hybrid-sleep",
                                             "suspend-then-hibernate" };

bool sleep_action_valid(const char *s) {
        if (!s)
                return false;
        for (size_t i = 0; i < ELEMENTSOF(sleep_actions); i++)
                if (streq(s, sleep_actions[i]))
                        return true;
        return false;
}

const char *hook_sleep_action(const char *arg, const char *env) {
        return sleep_action_valid(arg) ? arg : sleep_action_valid(env) ? env : NULL;
}

/* A token of [a-z0-9-], shorter than HOOK_ACTION_MAX. */
static bool action_token(const char *s, size_t n) {
        if (n == 0 || n >= HOOK_ACTION_MAX)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
                        return false;
        return true;
}

static const char *action_or_none(const char *s) {
        return s && action_token(s, strlen(s)) ? s : "-";
}

/* snprintf's length, kept within the buffer: a cut message fails to parse on the other side. */
static size_t put(char *buf, size_t size, int n) {
        if (n < 0 || size == 0)
                return 0;
        return (size_t) n < size ? (size_t) n : size - 1;
}

size_t hook_request_format(const char *action, const char *env_action, char *buf, size_t size) {
        return put(buf, size,
                   snprintf(buf, size, "%s %s", action_or_none(action), action_or_none(env_action)));
}

/* One word of a request into out: a token, or "-" for none (""). */
static int take_action(const char *s, size_t n, char out[static HOOK_ACTION_MAX]) {
        if (n == 1 && s[0] == '-') {
                out[0] = 0;
                return 0;
        }
        if (!action_token(s, n))
                return -EBADMSG;
        memcpy(out, s, n);
        out[n] = 0;
        return 0;
}

int hook_request_parse(const char *buf, size_t n, char action[static HOOK_ACTION_MAX],
                       char env_action[static HOOK_ACTION_MAX]) {
        const char *sp = buf ? memchr(buf, ' ', n) : NULL;

        if (!sp)
                return -EBADMSG;
        if (take_action(buf, (size_t) (sp - buf), action) < 0 ||
            take_action(sp + 1, n - (size_t) (sp - buf) - 1, env_action) < 0)
                return -EBADMSG;
        return 0;
}

/* "WORD DIGITS" exactly: safe_atou64() on the digits, no leading zero but "0", at most max. */
static int parse_word_number(const char *buf, size_t n, const char *word, uint64_t max, uint64_t *ret) {
        size_t w = strlen(word);
        char digits[HOOK_MSG_MAX];
        uint64_t v;

        if (!buf || n < w + 2 || n - w - 1 >= sizeof digits || memcmp(buf, word, w) != 0 || buf[w] != ' ')
                return -EBADMSG;
        memcpy(digits, buf + w + 1, n - w - 1);
        digits[n - w - 1] = 0;
        if ((digits[0] == '0' && digits[1] != 0) || safe_atou64(digits, &v) < 0 || v > max)
                return -EBADMSG;
        *ret = v;
        return 0;
}

size_t hook_ack_format(uint64_t limit_usec, char *buf, size_t size) {
        return put(buf, size, snprintf(buf, size, "ack %" PRIu64, limit_usec));
}

int hook_ack_parse(const char *buf, size_t n, uint64_t *ret_limit_usec) {
        return parse_word_number(buf, n, "ack", UINT64_MAX - 1, ret_limit_usec);
}

bool hook_requester_waits(int fd, uint64_t now_usec, uint64_t limit_usec) {
        struct pollfd p = { .fd = fd, .events = POLLIN };

        if (fd < 0 || now_usec >= limit_usec)
                return false;
        return poll(&p, 1, 0) == 0;
}

size_t hook_done_format(int code, char *buf, size_t size) {
        return put(buf, size, snprintf(buf, size, "done %d", code < 0 || code > 255 ? 1 : code));
}

int hook_done_parse(const char *buf, size_t n, int *ret_code) {
        uint64_t v;
        int r;

        r = parse_word_number(buf, n, "done", 255, &v);
        if (r < 0)
                return r;
        *ret_code = (int) v;
        return 0;
}
