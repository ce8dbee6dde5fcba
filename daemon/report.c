/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The logger: where records and log lines go (the journal or the
 * console), the records themselves and their console line.
 */
#include <inttypes.h>
#include <sys/uio.h>
#include <systemd/sd-journal.h>
#include <sys/stat.h>
#include "report.h"
#include "string-table.h"
#include "util.h"

static const char *const log_target_table[] = {
        [LOG_TARGET_AUTO] = "auto",
        [LOG_TARGET_JOURNAL] = "journal",
        [LOG_TARGET_CONSOLE] = "console",
};

DEFINE_STRING_TABLE_FROM_STRING(log_target, enum log_target)

/*
 * Is stderr the journal? JOURNAL_STREAM names the stream systemd gave a
 * service as "DEV:INODE"; children inherit the variable even when their
 * stderr goes elsewhere, so compare it with what stderr really is.
 */
static bool stderr_is_journal(void) {
        const char *e = getenv("JOURNAL_STREAM");
        unsigned long long dev, ino;
        struct stat st;

        if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2 || fstat(STDERR_FILENO, &st) < 0)
                return false;
        return (unsigned long long) st.st_dev == dev && (unsigned long long) st.st_ino == ino;
}

void reporter_init(struct reporter *r, enum log_target target) {
        /* Under systemd: stderr is the journal, or a service of ours runs without a terminal. */
        if (target == LOG_TARGET_AUTO)
                target = stderr_is_journal() || (getenv("INVOCATION_ID") && !isatty(STDERR_FILENO)) ?
                        LOG_TARGET_JOURNAL : LOG_TARGET_CONSOLE;

        *r = (struct reporter) {
                .target = target,
                .out = stdout,
                .err = stderr,
                .max_priority = LOG_INFO,
        };
}

int record_add(struct record *rec, const char *fmt, ...) {
        char *field;
        va_list ap;
        int r;

        if (GROW(rec->fields, rec->allocated, rec->n + 1) < 0)
                return RET_GATHER(rec->error, -ENOMEM);
        va_start(ap, fmt);
        r = vasprintf(&field, fmt, ap);
        va_end(ap);
        if (r < 0)
                return RET_GATHER(rec->error, -ENOMEM);
        rec->fields[rec->n++] = field;
        return 0;
}

void record_clear(struct record *rec) {
        for (size_t i = 0; i < rec->n; i++)
                free(rec->fields[i]);
        free(rec->fields);
        *rec = (struct record) {};
}

static bool needs_quotes(const char *v) {
        for (const char *p = v; *p; p++)
                if (strchr(" \"'=\\", *p) || (unsigned char) *p < 0x20 || *p == 0x7f)
                        return true;
        return false;
}

static void put_value(FILE *f, const char *v) {
        if (!needs_quotes(v)) {
                fputs(v, f);
                return;
        }
        fputc('"', f);
        for (const unsigned char *p = (const unsigned char *) v; *p; p++)
                switch (*p) {
                case '"':
                case '\\':
                        fputc('\\', f);
                        fputc(*p, f);
                        break;
                case '\n':
                        fputs("\\n", f);
                        break;
                case '\t':
                        fputs("\\t", f);
                        break;
                case '\r':
                        fputs("\\r", f);
                        break;
                default:
                        if (*p < 0x20 || *p == 0x7f)
                                fprintf(f, "\\x%02x", *p);
                        else
                                fputc(*p, f);
                }
        fputc('"', f);
}

static void put_field(FILE *f, const char *field, bool first) {
        const char *eq = strchr(field, '=');

        if (!first)
                fputc(' ', f);
        if (!eq) {
                put_value(f, field);
                return;
        }
        fwrite(field, 1, (size_t) (eq - field) + 1, f);
        put_value(f, eq + 1);
}

int record_format_line(const struct record *rec, char **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0, msg = SIZE_MAX;
        bool first = true;
        FILE *f;

        if (rec->error < 0)
                return rec->error;
        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;

        /* MESSAGE leads, so a human reads the line from its start. */
        for (size_t i = 0; i < rec->n; i++)
                if (startswith(rec->fields[i], "MESSAGE=")) {
                        msg = i;
                        put_field(f, rec->fields[i], true);
                        first = false;
                        break;
                }
        for (size_t i = 0; i < rec->n; i++) {
                if (i == msg)
                        continue;
                put_field(f, rec->fields[i], first);
                first = false;
        }
        if (fclose(f) != 0)
                return -ENOMEM;
        *ret = TAKE_PTR(buf);
        return 0;
}

static int record_priority(const struct record *rec) {
        for (size_t i = 0; i < rec->n; i++)
                if (startswith(rec->fields[i], "PRIORITY="))
                        return atoi(rec->fields[i] + strlen("PRIORITY="));
        return LOG_INFO;
}

int record_emit(struct reporter *r, const struct record *rec) {
        _cleanup_free_ struct iovec *iov = NULL;
        _cleanup_free_ char *line = NULL;
        int k;

        if (rec->error < 0)
                return rec->error;
        if (rec->n == 0 || record_priority(rec) > r->max_priority)
                return 0;

        if (r->target == LOG_TARGET_JOURNAL) {
                iov = calloc(rec->n, sizeof(*iov));
                if (!iov)
                        return -ENOMEM;
                for (size_t i = 0; i < rec->n; i++)
                        iov[i] = (struct iovec) { .iov_base = rec->fields[i], .iov_len = strlen(rec->fields[i]) };
                return sd_journal_sendv(iov, (int) rec->n);
        }

        k = record_format_line(rec, &line);
        if (k < 0)
                return k;
        if (fprintf(r->out, "%s\n", line) < 0 || fflush(r->out) != 0)
                return -EIO;
        return 0;
}

static const char *priority_name(int priority) {
        static const char *const names[] = {
                [LOG_EMERG] = "emergency",
                [LOG_ALERT] = "alert",
                [LOG_CRIT] = "critical",
                [LOG_ERR] = "error",
                [LOG_WARNING] = "warning",
                [LOG_NOTICE] = "notice",
                [LOG_INFO] = "info",
                [LOG_DEBUG] = "debug",
        };

        if (priority < 0 || (size_t) priority >= ELEMENTSOF(names))
                return "debug";
        return names[priority];
}

_printf_(4, 0) static void log_message(struct reporter *r, int priority, const char *message_id, const char *fmt,
                                      va_list ap) {
        _cleanup_free_ char *msg = NULL;

        if (vasprintf(&msg, fmt, ap) < 0)
                return;

        if (r->target == LOG_TARGET_JOURNAL) {
                if (message_id)
                        sd_journal_send("MESSAGE=%s", msg, "PRIORITY=%i", priority, "MESSAGE_ID=%s", message_id,
                                        NULL);
                else
                        sd_journal_send("MESSAGE=%s", msg, "PRIORITY=%i", priority, NULL);
                return;
        }
        fprintf(r->err, "%s: %s\n", priority_name(priority), msg);
        fflush(r->err);
}

void report_log(struct reporter *r, int priority, const char *message_id, const char *fmt, ...) {
        va_list ap;

        if (priority > r->max_priority)
                return;
        va_start(ap, fmt);
        log_message(r, priority, message_id, fmt, ap);
        va_end(ap);
}

int report_log_errno(struct reporter *r, int priority, const char *message_id, int error, const char *fmt, ...) {
        int saved = errno;
        va_list ap;

        error = error < 0 ? -error : error;
        if (priority <= r->max_priority) {
                va_start(ap, fmt);
                errno = error;          /* for %m */
                log_message(r, priority, message_id, fmt, ap);
                va_end(ap);
        }
        errno = saved;
        return -error;
}
