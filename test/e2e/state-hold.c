/* SPDX-License-Identifier: GPL-2.0-or-later */
/* state-hold.so: LD_PRELOAD shim for systemd-sleep in the e2e container (review AW).
 * Every write(2) to /sys/power/state is logged with the value /sys/power/sync_on_suspend holds at
 * that instant (CLOCK_MONOTONIC usec, the journal's clock) to /run/state-hold.log, then
 * /run/state-hold.mode decides: absent/"ok" = write it, "fail" = EBUSY (as a kernel whose freeze
 * failed), "delay N" = sleep N seconds first (a sleep that lasts), "failonce" = fail this one and
 * go back to ok. Only acts in systemd-sleep; it removes LD_PRELOAD from the environment so that
 * the hooks it runs do not load it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/uio.h>

static int active;
__attribute__((constructor)) static void init(void) {
        extern char *program_invocation_short_name;
        active = strcmp(program_invocation_short_name, "systemd-sleep") == 0;
        unsetenv("LD_PRELOAD");
}
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_writev)(int, const struct iovec *, int);

static int is_state(int fd) {
        char p[64], t[256];
        ssize_t n;
        snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
        n = readlink(p, t, sizeof t - 1);
        if (n < 0) return 0;
        t[n] = 0;
        return strcmp(t, "/sys/power/state") == 0;
}
static int before(const void *buf, size_t len) {
        char knob[16] = "?", mode[64] = "ok", line[256], data[32];
        struct timespec ts;
        int fd, e = 0;
        ssize_t n;
        double delay = 0;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        fd = open("/sys/power/sync_on_suspend", O_RDONLY | O_CLOEXEC);
        if (fd >= 0) { n = read(fd, knob, sizeof knob - 1); knob[n > 0 ? n : 0] = 0; close(fd); }
        knob[strcspn(knob, "\n")] = 0;
        fd = open("/run/state-hold.mode", O_RDONLY | O_CLOEXEC);
        if (fd >= 0) { n = read(fd, mode, sizeof mode - 1); mode[n > 0 ? n : 0] = 0; close(fd); }
        mode[strcspn(mode, "\n")] = 0;
        snprintf(data, sizeof data, "%.*s", (int) (len < 16 ? len : 16), (const char *) buf);
        data[strcspn(data, "\n")] = 0;
        if (strcmp(mode, "fail") == 0) e = EBUSY;
        else if (strcmp(mode, "failonce") == 0) { e = EBUSY; unlink("/run/state-hold.mode"); }
        else if (sscanf(mode, "delay %lf", &delay) != 1) delay = 0;
        snprintf(line, sizeof line, "%lld write=%s knob=%s mode=%s pid=%d\n",
                 (long long) ts.tv_sec * 1000000 + ts.tv_nsec / 1000, data, knob, mode, getpid());
        fd = open("/run/state-hold.log", O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        if (fd >= 0) { if (!real_write) real_write = dlsym(RTLD_NEXT, "write"); real_write(fd, line, strlen(line)); close(fd); }
        if (delay > 0) { struct timespec d = { (time_t) delay, (long) ((delay - (time_t) delay) * 1e9) }; nanosleep(&d, NULL); }
        return e;
}
static ssize_t ck_write(void *c, const char *buf, size_t len) {
        int fd = (int) (long) c;
        int e = before(buf, len);
        if (e) { errno = e; return -1; }
        if (!real_write) real_write = dlsym(RTLD_NEXT, "write");
        return real_write(fd, buf, len);
}
static int ck_close(void *c) { return close((int) (long) c); }
static FILE *cookie(int fd, const char *mode) {
        cookie_io_functions_t io = { .write = ck_write, .close = ck_close };
        return fopencookie((void *) (long) fd, mode, io);
}
FILE *fopen(const char *path, const char *mode) {
        static FILE *(*real)(const char *, const char *);
        if (!real) real = dlsym(RTLD_NEXT, "fopen");
        if (active && strcmp(path, "/sys/power/state") == 0 && mode[0] == 'w') {
                int fd = open(path, O_WRONLY | O_CLOEXEC | O_TRUNC);
                if (fd < 0) return NULL;
                return cookie(fd, "w");
        }
        return real(path, mode);
}
FILE *fopen64(const char *path, const char *mode) { return fopen(path, mode); }
FILE *fdopen(int fd, const char *mode) {
        static FILE *(*real)(int, const char *);
        if (!real) real = dlsym(RTLD_NEXT, "fdopen");
        if (active && mode[0] == 'w' && is_state(fd)) return cookie(fd, "w");
        return real(fd, mode);
}
ssize_t write(int fd, const void *buf, size_t len) {
        if (!real_write) real_write = dlsym(RTLD_NEXT, "write");
        if (active && is_state(fd)) { int e = before(buf, len); if (e) { errno = e; return -1; } }
        return real_write(fd, buf, len);
}
ssize_t writev(int fd, const struct iovec *iov, int cnt) {
        if (!real_writev) real_writev = dlsym(RTLD_NEXT, "writev");
        if (active && cnt > 0 && is_state(fd)) { int e = before(iov[0].iov_base, iov[0].iov_len); if (e) { errno = e; return -1; } }
        return real_writev(fd, iov, cnt);
}
