/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <langinfo.h>
#include <stdlib.h>
#include <unistd.h>
#include "term.h"
#include "util.h"

bool colors_decide(const char *systemd_colors, const char *no_color, const char *term, bool tty) {
        static const char *const on[] = { "16", "256", "24bit" };
        bool b;

        if (systemd_colors) {
                if (parse_bool(systemd_colors, &b) >= 0)
                        return b;
                for (size_t i = 0; i < ELEMENTSOF(on); i++)
                        if (streq(systemd_colors, on[i]))
                                return true;
        }
        if (no_color && *no_color)
                return false;
        if (term && streq(term, "dumb"))
                return false;
        return tty;
}

bool colors_wanted(int fd) {
        return colors_decide(getenv("SYSTEMD_COLORS"), getenv("NO_COLOR"), getenv("TERM"), isatty(fd) > 0);
}

bool locale_is_utf8(void) {
        const char *cs = nl_langinfo(CODESET);

        return cs && (streq(cs, "UTF-8") || streq(cs, "utf8"));
}
