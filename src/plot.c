/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot.h"
#include "shared/fileio.h"
#include "shared/utf8.h"
#include "shared/macro.h"

#define WIDTH 1000
#define LEFT 260 /* label column */
#define ROW 18
#define TOP 60

typedef struct Scale {
        usec_t t0, t1;
} Scale;

static double x_of(const Scale *s, usec_t t) {
        if (t < s->t0)
                t = s->t0;
        if (t > s->t1)
                t = s->t1;
        return LEFT + (double) (t - s->t0) * (WIDTH - LEFT - 20) / (double) (s->t1 - s->t0);
}

/* XML text: &<>"' escaped, control characters and bytes that are not UTF-8 spelled \xNN. */
static void put_text(FILE *f, const char *v) {
        const unsigned char *s = (const unsigned char *) (v ? v : "");

        while (*s) {
                size_t n = utf8_sequence_length((const char *) s, strnlen((const char *) s, 4));

                if (n == 0 || *s < 0x20 || *s == 0x7f) {
                        fprintf(f, "\\x%02x", *s++);
                        continue;
                }
                switch (*s) {
                case '&':
                        fputs("&amp;", f);
                        break;
                case '<':
                        fputs("&lt;", f);
                        break;
                case '>':
                        fputs("&gt;", f);
                        break;
                case '"':
                        fputs("&quot;", f);
                        break;
                case '\'':
                        fputs("&apos;", f);
                        break;
                default:
                        fwrite(s, 1, n, f);
                        s += n;
                        continue;
                }
                s++;
        }
}

static const char *colour(const char *outcome) {
        if (streq_ptr(outcome, "synced"))
                return "#4caf50";
        if (streq_ptr(outcome, "timeout"))
                return "#e53935";
        if (streq_ptr(outcome, "error"))
                return "#fb8c00";
        return "#9e9e9e";
}

static void put_vline(FILE *f, const Scale *s, usec_t t, int height, const char *stroke, const char *dash,
                      const char *label) {
        double x = x_of(s, t);

        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\"%s%s%s/>\n", x, TOP - 14,
                x, height - 20, stroke, dash ? " stroke-dasharray=\"" : "", dash ? dash : "",
                dash ? "\"" : "");
        /* Near the right edge the label goes to the left of its line. */
        if (x > WIDTH - 120)
                fprintf(f, "<text x=\"%.1f\" y=\"%d\" class=\"mark\" text-anchor=\"end\">%s</text>\n", x - 2,
                        TOP - 18, label);
        else
                fprintf(f, "<text x=\"%.1f\" y=\"%d\" class=\"mark\">%s</text>\n", x + 2, TOP - 18, label);
}

static void put_axis(FILE *f, const Scale *s, int height) {
        static const unsigned mult[] = { 1, 2, 5 };
        usec_t span = s->t1 - s->t0, step = USEC_PER_MSEC, decade = USEC_PER_MSEC;
        char buf[FORMAT_TIMESPAN_MAX];

        /* 1, 2, 5, 10, 20, 50 ... ms: at most 10 ticks. */
        for (unsigned i = 0; span / step > 10; i++) {
                if (i > 0 && i % 3 == 0)
                        decade *= 10;
                step = decade * mult[i % 3];
        }
        for (usec_t t = 0; t <= span; t += step) {
                double x = x_of(s, s->t0 + t);

                fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#e0e0e0\"/>\n", x,
                        TOP - 4, x, height - 20);
                fprintf(f, "<text x=\"%.1f\" y=\"%d\" class=\"tick\">%s</text>\n", x, height - 6,
                        t == 0 ? "0" : format_timespan(buf, sizeof buf, t));
        }
}

static void put_bar(FILE *f, const Scale *s, int y, const PlotBar *b) {
        char buf[FORMAT_TIMESPAN_MAX];
        double x0 = x_of(s, b->start), x1 = x_of(s, MAX(b->end, b->start));

        fprintf(f, "<g><title>");
        put_text(f, b->label);
        fprintf(f, " (%s pass): %s, %s</title>\n", b->pass, b->outcome ? b->outcome : "-",
                format_timespan(buf, sizeof buf, b->end > b->start ? b->end - b->start : 0));
        fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"label\">", LEFT - 6, y + ROW - 5);
        put_text(f, b->label);
        fprintf(f, "</text>\n<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/></g>\n", x0,
                y + 2, MAX(x1 - x0, 1.0), ROW - 4, colour(b->outcome));
}

int plot_svg(const PlotCycle *c, char **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        _cleanup_fclose_ FILE *f = NULL;
        Scale s = { USEC_INFINITY, 0 };
        int height;

        if (c->n_bars > PLOT_BARS_MAX)
                return -E2BIG;
        if (!c->unit_end && !c->late_end)
                return -EINVAL;
        if (c->unit_end)
                s.t0 = c->unit_start, s.t1 = MAX(c->unit_end, c->deadline);
        if (c->late_end)
                s.t0 = MIN(s.t0, c->late_start), s.t1 = MAX(s.t1, c->late_end);
        for (size_t i = 0; i < c->n_bars; i++)
                s.t1 = MAX(s.t1, c->bars[i].end);
        if (s.t1 <= s.t0)
                s.t1 = s.t0 + USEC_PER_MSEC;
        height = TOP + ROW * (int) (c->n_bars + 2) + 30;

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        fprintf(f,
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n"
                "<style>text{font-family:sans-serif;font-size:11px}.label{text-anchor:end}"
                ".tick{text-anchor:middle;fill:#616161}.mark{font-size:10px}</style>\n"
                "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n<text x=\"10\" y=\"18\" "
                "style=\"font-size:14px\">suspend-sync: ",
                WIDTH, height, WIDTH, height);
        put_text(f, c->title);
        fputs("</text>\n", f);
        put_axis(f, &s, height);

        /* The passes as bands behind their bars. */
        if (c->unit_end)
                fprintf(f,
                        "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"#e3f2fd\"/>"
                        "<text x=\"%d\" y=\"%d\" class=\"label\">unit pass</text>\n",
                        x_of(&s, c->unit_start), TOP,
                        MAX(x_of(&s, c->unit_end) - x_of(&s, c->unit_start), 1.0), ROW, LEFT - 6,
                        TOP + ROW - 5);
        if (c->late_end)
                fprintf(f,
                        "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"#ede7f6\"/>"
                        "<text x=\"%d\" y=\"%d\" class=\"label\">late pass</text>\n",
                        x_of(&s, c->late_start), TOP + ROW,
                        MAX(x_of(&s, c->late_end) - x_of(&s, c->late_start), 1.0), ROW, LEFT - 6,
                        TOP + 2 * ROW - 5);
        for (size_t i = 0; i < c->n_bars; i++)
                put_bar(f, &s, TOP + ROW * (int) (i + 2), &c->bars[i]);
        if (c->deadline)
                put_vline(f, &s, c->deadline, height, "#e53935", "4 3", "deadline");
        if (c->late_end)
                put_vline(f, &s, c->late_end, height, "#000000", NULL, "sleep (state write)");
        fputs("</svg>\n", f);
        if (memstream_finish(TAKE_PTR(f), &buf) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(buf);
        return 0;
}
