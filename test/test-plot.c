/* SPDX-License-Identifier: GPL-2.0-or-later */

/*
 * Tests for src/plot: the SVG timeline of one sleep cycle. Rendering is checked by
 * test/plot-render.sh (rsvg-convert); here, what the SVG says.
 */

#include <stdlib.h>

#include "plot.h"
#include "shared/macro.h"
#include "tests.h"

#define T0 ((usec_t) 1764576000 * USEC_PER_SEC)

static size_t count(const char *s, const char *needle) {
        size_t n = 0;

        for (const char *p = s; (p = strstr(p, needle)); p++)
                n++;
        return n;
}

TEST(svg) {
        PlotBar bars[] = {
                { "/", "unit", "synced", T0 + 5 * USEC_PER_MSEC, T0 + 300 * USEC_PER_MSEC },
                { "/mnt/usb <&> \"x\"\n\xff", "unit", "timeout", T0 + 5 * USEC_PER_MSEC,
                  T0 + 10 * USEC_PER_SEC },
                { "/home", "late", "error", T0 + 11 * USEC_PER_SEC,
                  T0 + 11 * USEC_PER_SEC + 20 * USEC_PER_MSEC },
        };
        PlotCycle c = {
                .title = "suspend, Tue 2025-12-01 08:00:00 UTC",
                .unit_start = T0,
                .unit_end = T0 + 10 * USEC_PER_SEC + 10 * USEC_PER_MSEC,
                .deadline = T0 + 30 * USEC_PER_SEC,
                .late_start = T0 + 11 * USEC_PER_SEC,
                .late_end = T0 + 11 * USEC_PER_SEC + 30 * USEC_PER_MSEC,
                .bars = bars,
                .n_bars = ELEMENTSOF(bars),
        };
        _cleanup_free_ char *svg = NULL;
        PlotCycle none = {};

        ASSERT_OK(plot_svg(&c, &svg));
        ASSERT_TRUE(strncmp(svg, "<?xml", 5) == 0);
        ASSERT_TRUE(strstr(svg, "</svg>\n") != NULL);
        ASSERT_TRUE(strstr(svg, ">/home</text>") != NULL);
        ASSERT_TRUE(strstr(svg, ">/mnt/usb &lt;&amp;&gt; &quot;x&quot;\\x0a\\xff</text>") != NULL);
        ASSERT_EQ(count(svg, "<rect x="), 5U);         /* 3 bars + 2 pass bands */
        ASSERT_EQ(count(svg, "fill=\"#e53935\""), 1U); /* the timeout */
        ASSERT_EQ(count(svg, "fill=\"#4caf50\""), 1U);
        ASSERT_EQ(count(svg, "fill=\"#fb8c00\""), 1U);
        ASSERT_TRUE(strstr(svg, ">deadline</text>") != NULL);
        ASSERT_TRUE(strstr(svg, ">sleep (state write)</text>") != NULL);
        ASSERT_TRUE(strstr(svg, ">late pass</text>") != NULL);
        ASSERT_TRUE(strstr(svg, "(unit pass): timeout, 9.995s</title>") != NULL);
        /* at most 10 axis ticks for a 30 s span (5 s steps: 0 .. 30s) */
        ASSERT_EQ(count(svg, "class=\"tick\""), 7U);
        ASSERT_TRUE(strstr(svg, ">30s</text>") != NULL);

        ASSERT_ERR(plot_svg(&none, &svg), EINVAL);
        c.n_bars = PLOT_BARS_MAX + 1;
        ASSERT_ERR(plot_svg(&c, &svg), E2BIG);
}

int main(void) {
        RUN(svg);
        return 0;
}
