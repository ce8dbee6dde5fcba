/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>
#include "journal-report-join.h"
#include "interface.h"
#include "util.h"

static const char *const field_names[_JR_FIELD_MAX] = {
        [JR_BOOT_ID] = "_BOOT_ID",
        [JR_HOSTNAME] = "_HOSTNAME",
        [JR_PID] = "_PID",
        [JR_MESSAGE_ID] = "MESSAGE_ID",
        [JR_MESSAGE] = "MESSAGE",
        [JR_BATCH] = FIELD_BATCH,
        [JR_TRIGGER] = FIELD_TRIGGER,
        [JR_BLOCKS] = FIELD_BLOCKS,
        [JR_BYTES] = FIELD_BYTES,
        [JR_FAILED] = FIELD_FAILED,
        [JR_SKIPPED] = FIELD_SKIPPED,
        [JR_NODES] = FIELD_NODES,
        [JR_DURATION] = FIELD_DURATION_USEC,
        [JR_GIBPS] = FIELD_GIBPS,
        [JR_P50] = FIELD_P50_USEC,
        [JR_P99] = FIELD_P99_USEC,
        [JR_MAX] = FIELD_MAX_USEC,
        [JR_LATENCY] = FIELD_LATENCY_USEC,
        [JR_FIRST_LATENCY] = FIELD_FIRST_LATENCY_USEC,
        [JR_CPU_USEC] = FIELD_CPU_USEC,
        [JR_DEVICE] = FIELD_DEVICE,
        [JR_NAMESPACE] = FIELD_NAMESPACE,
        [JR_REGION] = FIELD_REGION,
        [JR_NODE] = FIELD_NODE,
        [JR_WRITER_NODE] = FIELD_WRITER_NODE,
        [JR_ZONE] = FIELD_ZONE,
        [JR_CPUS] = FIELD_CPUS,
        [JR_BLOCK] = FIELD_BLOCK,
        [JR_ERRNO] = FIELD_ERRNO,
        [JR_ERRNO_NAME] = FIELD_ERRNO_NAME,
        [JR_ATTEMPTS] = FIELD_ATTEMPTS,
        [JR_BIND] = FIELD_BIND_USEC,
        [JR_ONLINE] = FIELD_ONLINE_USEC,
        [JR_TOTAL] = FIELD_TOTAL_USEC,
        [JR_SYSTEMD_UNIT] = "_SYSTEMD_UNIT",
        [JR_COMM] = "_COMM",
        [JR_EXE] = "_EXE",
        [JR_UID] = "_UID",
        [JR_MACHINE_ID] = "_MACHINE_ID",
};

struct jr_proc {
        size_t host;
        sd_id128_t boot;
        uint64_t pid;
        size_t last_batch;
};

/* ---- entries ------------------------------------------------------------- */

void jr_entry_clear(struct jr_entry *e) {
        e->realtime = 0;
        memset(e->have, 0, sizeof(e->have));
}

static int field_lookup(const char *name, size_t len) {
        for (int i = 0; i < _JR_FIELD_MAX; i++)
                if (strlen(field_names[i]) == len && memcmp(field_names[i], name, len) == 0)
                        return i;
        return -1;
}

void jr_entry_add(struct jr_entry *e, const void *data, size_t len) {
        const char *eq = memchr(data, '=', len);
        size_t vl;
        int f;

        if (!eq)
                return;
        f = field_lookup(data, (size_t) (eq - (const char *) data));
        if (f < 0)
                return;
        vl = len - (size_t) (eq - (const char *) data) - 1;
        if (vl >= JR_VALUE_MAX)
                vl = JR_VALUE_MAX - 1;
        memcpy(e->v[f], eq + 1, vl);
        e->v[f][vl] = '\0';
        e->have[f] = true;
}

static const char *entry_str(const struct jr_entry *e, enum jr_field f) {
        return e->have[f] ? e->v[f] : NULL;
}

static uint64_t entry_u64(const struct jr_entry *e, enum jr_field f, bool *ret_have) {
        uint64_t v = 0;
        bool ok = e->have[f] && parse_u64(e->v[f], 10, &v) >= 0;

        if (ret_have)
                *ret_have = ok;
        return ok ? v : 0;
}

static int entry_int(const struct jr_entry *e, enum jr_field f) {
        const char *s = entry_str(e, f);
        char *end;
        long v;

        if (!s || !*s)
                return -1;
        errno = 0;
        v = strtol(s, &end, 10);
        if (errno != 0 || *end != '\0' || v < INT32_MIN || v > INT32_MAX)
                return -1;
        return (int) v;
}

static int entry_strdup(const struct jr_entry *e, enum jr_field f, char **ret) {
        if (!e->have[f])
                return 0;
        free(*ret);
        *ret = strdup(e->v[f]);
        return *ret ? 0 : -ENOMEM;
}

static bool endswith(const char *s, const char *suffix) {
        size_t n = strlen(s), m = strlen(suffix);

        return n >= m && streq(s + n - m, suffix);
}

/*
 * Did journald stamp the entry as memonlined's? Its trusted fields (a
 * client cannot set fields that start with "_"): the service's unit, or
 * the command name or executable run as root, so that another user's
 * program named memonlined is not believed.
 */
static bool jr_entry_from_memonlined(const struct jr_entry *e) {
        bool root = e->have[JR_UID] && streq(e->v[JR_UID], "0");

        if (e->have[JR_SYSTEMD_UNIT] && streq(e->v[JR_SYSTEMD_UNIT], "memonlined.service"))
                return true;
        if (root && e->have[JR_COMM] && streq(e->v[JR_COMM], "memonlined"))
                return true;
        return root && e->have[JR_EXE] && endswith(e->v[JR_EXE], "/memonlined");
}

static void counters_read(const struct jr_records *r, const struct jr_entry *e, struct jr_counters *k) {
        k->blocks = entry_u64(e, JR_BLOCKS, NULL);
        k->bytes = entry_u64(e, JR_BYTES, NULL);
        k->failed = entry_u64(e, JR_FAILED, NULL);
        k->skipped = entry_u64(e, JR_SKIPPED, NULL);
        k->duration_usec = entry_u64(e, JR_DURATION, NULL);
        k->p50_usec = entry_u64(e, JR_P50, NULL);
        k->p99_usec = entry_u64(e, JR_P99, NULL);
        k->max_usec = entry_u64(e, JR_MAX, NULL);
        k->latency_usec = entry_u64(e, JR_LATENCY, &k->have_latency);
        k->first_latency_usec = entry_u64(e, JR_FIRST_LATENCY, &k->have_first_latency);
        k->cpu_usec = entry_u64(e, JR_CPU_USEC, NULL);
        k->have_gibps = false;
        if (e->have[JR_GIBPS]) {
                char *end;
                double g = strtod_l(e->v[JR_GIBPS], &end, r->c_locale);

                if (end != e->v[JR_GIBPS] && *end == '\0' && g >= 0) {
                        k->gibps = g;
                        k->have_gibps = true;
                }
        }
}

/* ---- the records ----------------------------------------------------------- */

int jr_records_init(struct jr_records *r) {
        *r = (struct jr_records) {};
        hash_key_random(r->hash_key);
        r->c_locale = newlocale(LC_ALL_MASK, "C", (locale_t) 0);
        return r->c_locale == (locale_t) 0 ? -errno : 0;
}

static void batch_free(struct jr_batch *b) {
        free(b->trigger);
        free(b->device);
        free(b->namespace_name);
        free(b->region);
        free(b->node_list);
        for (size_t k = 0; k < b->n_nodes; k++) {
                free(b->nodes[k].zone);
                free(b->nodes[k].cpus);
        }
        free(b->nodes);
        free(b->failures);
}

void jr_records_done(struct jr_records *r) {
        for (size_t i = 0; i < r->n_hosts; i++) {
                free(r->hosts[i].name);
                free(r->hosts[i].label);
        }
        free(r->hosts);
        for (size_t i = 0; i < r->n_batches; i++)
                batch_free(&r->batches[i]);
        free(r->batches);
        idx_map_done(&r->host_map);
        idx_map_done(&r->batch_map);
        idx_map_done(&r->proc_map);
        for (size_t i = 0; i < r->n_failures; i++) {
                free(r->failures[i].block);
                free(r->failures[i].errno_name);
                free(r->failures[i].message);
        }
        free(r->failures);
        for (size_t i = 0; i < r->n_devices; i++) {
                free(r->devices[i].device);
                free(r->devices[i].namespace_name);
                free(r->devices[i].region);
        }
        free(r->devices);
        free(r->procs);
        if (r->c_locale != (locale_t) 0)
                freelocale(r->c_locale);
        *r = (struct jr_records) {};
}

/* Who a host is: its machine ID, or without one its name. */
struct host_key {
        bool have_machine;
        sd_id128_t machine;
        const char *name;
};

static bool host_is(const struct jr_host *h, const struct host_key *k) {
        if (h->have_machine != k->have_machine)
                return false;
        return k->have_machine ? sd_id128_equal(h->machine, k->machine) : streq(h->name, k->name);
}

static int host_add(struct jr_records *r, const struct host_key *k, uint64_t hash, size_t *ret) {
        _cleanup_free_ char *name = strdup(k->name);

        if (!name || GROW(r->hosts, r->a_hosts, r->n_hosts + 1) < 0 || idx_map_put(&r->host_map, hash, r->n_hosts) < 0)
                return -ENOMEM;
        r->hosts[r->n_hosts] = (struct jr_host) {
                .have_machine = k->have_machine, .machine = k->machine, .name = TAKE_PTR(name),
        };
        *ret = r->last_host = r->n_hosts++;
        return 0;
}

/* A machine's latest hostname is the one it is shown by. */
static int host_rename(struct jr_host *h, const char *name) {
        char *s;

        if (streq(h->name, name))
                return 0;
        s = strdup(name);
        if (!s)
                return -ENOMEM;
        free(h->name);
        h->name = s;
        return 0;
}

static int host_intern(struct jr_records *r, const struct jr_entry *e, size_t *ret) {
        struct host_key k = { .name = entry_str(e, JR_HOSTNAME) ?: "" };
        size_t cur = 0, i;
        uint64_t h;

        k.have_machine = e->have[JR_MACHINE_ID] && sd_id128_from_string(e->v[JR_MACHINE_ID], &k.machine) >= 0;
        if (r->last_host < r->n_hosts && host_is(&r->hosts[r->last_host], &k)) {
                *ret = r->last_host;
                return host_rename(&r->hosts[r->last_host], k.name);
        }
        h = k.have_machine ? siphash24(&k.machine, sizeof(k.machine), r->hash_key)
                           : siphash24(k.name, strlen(k.name), r->hash_key);
        while ((i = idx_map_next(&r->host_map, h, &cur)) != SIZE_MAX)
                if (host_is(&r->hosts[i], &k)) {
                        *ret = r->last_host = i;
                        return host_rename(&r->hosts[i], k.name);
                }
        return host_add(r, &k, h, ret);
}

/* The hashed identity of a daemon process and of one of its batches; no padding. */
struct proc_key {
        uint64_t host;
        sd_id128_t boot;
        uint64_t pid;
        uint64_t seq;           /* 0 for the process */
};

static uint64_t key_hash(const struct jr_records *r, size_t host, sd_id128_t boot, uint64_t pid, uint64_t seq) {
        struct proc_key k = { .host = host, .boot = boot, .pid = pid, .seq = seq };

        return siphash24(&k, sizeof(k), r->hash_key);
}

static int batch_get(struct jr_records *r, size_t host, sd_id128_t boot, uint64_t pid, uint64_t seq,
                     uint64_t realtime, size_t *ret) {
        uint64_t h = key_hash(r, host, boot, pid, seq);
        size_t cur = 0, i;
        struct jr_batch *b;

        while ((i = idx_map_next(&r->batch_map, h, &cur)) != SIZE_MAX) {
                b = &r->batches[i];
                if (b->seq == seq && b->pid == pid && b->host == host && sd_id128_equal(b->boot, boot)) {
                        *ret = i;
                        return 0;
                }
        }
        if (GROW(r->batches, r->a_batches, r->n_batches + 1) < 0 || idx_map_put(&r->batch_map, h, r->n_batches) < 0)
                return -ENOMEM;
        b = &r->batches[r->n_batches];
        *b = (struct jr_batch) {
                .host = host, .boot = boot, .pid = pid, .seq = seq,
                .realtime = realtime, .device_rec = JR_NONE,
        };
        *ret = r->n_batches++;
        return 0;
}

static struct jr_proc *proc_find(struct jr_records *r, size_t host, sd_id128_t boot, uint64_t pid) {
        uint64_t h = key_hash(r, host, boot, pid, 0);
        size_t cur = 0, i;

        while ((i = idx_map_next(&r->proc_map, h, &cur)) != SIZE_MAX) {
                struct jr_proc *p = &r->procs[i];

                if (p->pid == pid && p->host == host && sd_id128_equal(p->boot, boot))
                        return p;
        }
        return NULL;
}

static int proc_note(struct jr_records *r, size_t host, sd_id128_t boot, uint64_t pid, size_t batch) {
        struct jr_proc *p = proc_find(r, host, boot, pid);

        if (!p) {
                if (GROW(r->procs, r->a_procs, r->n_procs + 1) < 0 ||
                    idx_map_put(&r->proc_map, key_hash(r, host, boot, pid, 0), r->n_procs) < 0)
                        return -ENOMEM;
                p = &r->procs[r->n_procs++];
                *p = (struct jr_proc) { .host = host, .boot = boot, .pid = pid };
        }
        p->last_batch = batch;
        return 0;
}

/* Who wrote an entry: its host, boot and daemon process. */
struct origin {
        size_t host;
        sd_id128_t boot;
        uint64_t pid;
};

/* The batch MEMONLINE_BATCH names, created on first sight; JR_NONE without the field. */
static int batch_of(struct jr_records *r, const struct jr_entry *e, const struct origin *o, size_t *ret) {
        bool have_seq;
        uint64_t seq = entry_u64(e, JR_BATCH, &have_seq);

        if (!have_seq) {
                *ret = JR_NONE;
                return 0;
        }
        return batch_get(r, o->host, o->boot, o->pid, seq, e->realtime, ret);
}

/*
 * The batch a failure or device record belongs to: by MEMONLINE_BATCH if
 * it has one, else the last batch its daemon process wrote.
 */
static int batch_for_record(struct jr_records *r, const struct jr_entry *e, const struct origin *o, size_t *ret) {
        struct jr_proc *p;

        if (e->have[JR_BATCH])
                return batch_of(r, e, o, ret);
        p = proc_find(r, o->host, o->boot, o->pid);
        *ret = p ? p->last_batch : JR_NONE;
        return 0;
}

/*
 * The batch a batch or node record names, noted as its process's latest;
 * NULL without MEMONLINE_BATCH (nothing to join it to).
 */
static int batch_named(struct jr_records *r, const struct jr_entry *e, const struct origin *o,
                       struct jr_batch **ret) {
        size_t idx;
        int k;

        k = batch_of(r, e, o, &idx);
        if (k >= 0 && idx != JR_NONE)
                k = proc_note(r, o->host, o->boot, o->pid, idx);
        if (k < 0)
                return k;
        *ret = idx == JR_NONE ? NULL : &r->batches[idx];
        return 0;
}

static int add_batch(struct jr_records *r, const struct jr_entry *e, const struct origin *o) {
        struct jr_batch *b;
        int k;

        k = batch_named(r, e, o, &b);
        if (k < 0 || !b)
                return k;
        b->have_record = true;
        b->realtime = e->realtime;
        counters_read(r, e, &b->c);
        if (entry_strdup(e, JR_TRIGGER, &b->trigger) < 0 || entry_strdup(e, JR_DEVICE, &b->device) < 0 ||
            entry_strdup(e, JR_NAMESPACE, &b->namespace_name) < 0 || entry_strdup(e, JR_REGION, &b->region) < 0 ||
            entry_strdup(e, JR_NODES, &b->node_list) < 0)
                return -ENOMEM;
        return 0;
}

static int add_node(struct jr_records *r, const struct jr_entry *e, const struct origin *o) {
        struct jr_node *n;
        struct jr_batch *b;
        int k;

        k = batch_named(r, e, o, &b);
        if (k < 0 || !b)
                return k;
        if (GROW(b->nodes, b->a_nodes, b->n_nodes + 1) < 0)
                return -ENOMEM;
        n = &b->nodes[b->n_nodes++];
        *n = (struct jr_node) { .node = entry_int(e, JR_NODE), .writer_node = entry_int(e, JR_WRITER_NODE) };
        counters_read(r, e, &n->c);
        if (entry_strdup(e, JR_ZONE, &n->zone) < 0 || entry_strdup(e, JR_CPUS, &n->cpus) < 0)
                return -ENOMEM;
        return 0;
}

static int add_failure(struct jr_records *r, const struct jr_entry *e, const struct origin *o) {
        struct jr_failure *f;
        size_t idx, fi;
        int k;

        k = batch_for_record(r, e, o, &idx);
        if (k < 0)
                return k;
        if (GROW(r->failures, r->a_failures, r->n_failures + 1) < 0)
                return -ENOMEM;
        fi = r->n_failures++;
        f = &r->failures[fi];
        *f = (struct jr_failure) {
                .realtime = e->realtime, .host = o->host, .batch = idx,
                .node = entry_int(e, JR_NODE), .err = entry_int(e, JR_ERRNO),
                .attempts = entry_u64(e, JR_ATTEMPTS, NULL),
        };
        if (entry_strdup(e, JR_BLOCK, &f->block) < 0 || entry_strdup(e, JR_ERRNO_NAME, &f->errno_name) < 0 ||
            entry_strdup(e, JR_MESSAGE, &f->message) < 0)
                return -ENOMEM;
        if (idx != JR_NONE) {
                struct jr_batch *b = &r->batches[idx];

                if (GROW(b->failures, b->a_failures, b->n_failures + 1) < 0)
                        return -ENOMEM;
                b->failures[b->n_failures++] = fi;
        }
        return 0;
}

static int add_device(struct jr_records *r, const struct jr_entry *e, const struct origin *o) {
        struct jr_device *d;
        size_t idx, di;
        int k;

        k = batch_for_record(r, e, o, &idx);
        if (k < 0)
                return k;
        /* Without a seq, only join a batch that onlined this very device. */
        if (idx != JR_NONE && !e->have[JR_BATCH] &&
            (!e->have[JR_DEVICE] || !strlist_contains(r->batches[idx].device, e->v[JR_DEVICE])))
                idx = JR_NONE;
        if (GROW(r->devices, r->a_devices, r->n_devices + 1) < 0)
                return -ENOMEM;
        di = r->n_devices++;
        d = &r->devices[di];
        *d = (struct jr_device) {
                .realtime = e->realtime, .host = o->host, .batch = idx,
                .bind_usec = entry_u64(e, JR_BIND, NULL), .online_usec = entry_u64(e, JR_ONLINE, NULL),
                .total_usec = entry_u64(e, JR_TOTAL, NULL), .blocks = entry_u64(e, JR_BLOCKS, NULL),
                .bytes = entry_u64(e, JR_BYTES, NULL),
        };
        if (entry_strdup(e, JR_DEVICE, &d->device) < 0 || entry_strdup(e, JR_NAMESPACE, &d->namespace_name) < 0 ||
            entry_strdup(e, JR_REGION, &d->region) < 0)
                return -ENOMEM;
        if (idx != JR_NONE)
                r->batches[idx].device_rec = di;
        return 0;
}

typedef int (*add_fn)(struct jr_records *r, const struct jr_entry *e, const struct origin *o);

/* The records we join, by today's MESSAGE_ID and by the one before 0.2: journals of either version read alike. */
static const struct { const char *id; add_fn add; } record_kinds[] = {
        { MESSAGE_ID_BATCH, add_batch },
        { MESSAGE_ID_NODE, add_node },
        { MESSAGE_ID_FAILURE, add_failure },
        { MESSAGE_ID_DEVICE, add_device },
        { MESSAGE_ID_OLD_BATCH, add_batch },
        { MESSAGE_ID_OLD_NODE, add_node },
        { MESSAGE_ID_OLD_FAILURE, add_failure },
        { MESSAGE_ID_OLD_DEVICE, add_device },
};

const char *jr_record_message_id(size_t i) {
        return i < ELEMENTSOF(record_kinds) ? record_kinds[i].id : NULL;
}

static add_fn adder_of(const char *message_id) {
        for (size_t i = 0; message_id && i < ELEMENTSOF(record_kinds); i++)
                if (streq(message_id, record_kinds[i].id))
                        return record_kinds[i].add;
        return NULL;
}

int jr_records_add(struct jr_records *r, const struct jr_entry *e) {
        add_fn add = adder_of(entry_str(e, JR_MESSAGE_ID));
        struct origin o = { .boot = SD_ID128_NULL };
        int k;

        if (!add)
                return 0;
        if (!r->all_sources && !jr_entry_from_memonlined(e)) {
                r->n_untrusted++;
                return 0;
        }
        k = host_intern(r, e, &o.host);
        if (k < 0)
                return k;
        if (e->have[JR_BOOT_ID])
                (void) sd_id128_from_string(e->v[JR_BOOT_ID], &o.boot);
        o.pid = entry_u64(e, JR_PID, NULL);
        return add(r, e, &o);
}

static int host_index_cmp(const void *a, const void *b, void *userdata) {
        const struct jr_host *hosts = userdata, *x = &hosts[*(const size_t *) a], *y = &hosts[*(const size_t *) b];
        int c = strcmp(x->name, y->name);

        if (c != 0)
                return c;
        if (x->have_machine != y->have_machine)
                return x->have_machine ? 1 : -1;
        return memcmp(x->machine.bytes, y->machine.bytes, sizeof(x->machine.bytes));
}

/* Hosts in name order, then machine ID; every index into them follows. */
static int sort_hosts(struct jr_records *r) {
        _cleanup_free_ size_t *order = calloc(r->n_hosts ?: 1, sizeof(size_t));
        _cleanup_free_ size_t *rank = calloc(r->n_hosts ?: 1, sizeof(size_t));
        _cleanup_free_ struct jr_host *sorted = calloc(r->n_hosts ?: 1, sizeof(struct jr_host));

        if (!order || !rank || !sorted)
                return -ENOMEM;
        if (r->n_hosts == 0)
                return 0;       /* nothing matched: hosts is NULL, which memcpy() may not see */
        for (size_t i = 0; i < r->n_hosts; i++)
                order[i] = i;
        qsort_r(order, r->n_hosts, sizeof(size_t), host_index_cmp, r->hosts);
        for (size_t i = 0; i < r->n_hosts; i++) {
                rank[order[i]] = i;
                sorted[i] = r->hosts[order[i]];
        }
        memcpy(r->hosts, sorted, r->n_hosts * sizeof(struct jr_host));
        for (size_t i = 0; i < r->n_batches; i++)
                r->batches[i].host = rank[r->batches[i].host];
        for (size_t i = 0; i < r->n_failures; i++)
                r->failures[i].host = rank[r->failures[i].host];
        for (size_t i = 0; i < r->n_devices; i++)
                r->devices[i].host = rank[r->devices[i].host];
        return 0;
}

/* The name, and where machines share it (clones), the name and the start of the machine ID. */
static int label_hosts(struct jr_records *r) {
        for (size_t i = 0; i < r->n_hosts; i++) {
                struct jr_host *h = &r->hosts[i];
                bool shared = (i > 0 && streq(r->hosts[i - 1].name, h->name)) ||
                              (i + 1 < r->n_hosts && streq(r->hosts[i + 1].name, h->name));
                char id[SD_ID128_STRING_MAX];

                if (shared && h->have_machine) {
                        if (asprintf(&h->label, "%s/%.8s", h->name, sd_id128_to_string(h->machine, id)) < 0)
                                h->label = NULL;
                } else
                        h->label = strdup(h->name);
                if (!h->label)
                        return -ENOMEM;
        }
        return 0;
}

int jr_records_finish(struct jr_records *r) {
        /* The maps and the process list hold host indices; joining is over, so drop them. */
        idx_map_done(&r->host_map);
        idx_map_done(&r->batch_map);
        idx_map_done(&r->proc_map);
        free(TAKE_PTR(r->procs));
        r->n_procs = r->a_procs = 0;
        if (sort_hosts(r) < 0)
                return -ENOMEM;
        return label_hosts(r);
}

void jr_batch_totals(const struct jr_batch *b, struct jr_counters *ret) {
        if (b->have_record) {
                *ret = b->c;
                return;
        }
        *ret = (struct jr_counters) {};
        for (size_t i = 0; i < b->n_nodes; i++) {
                const struct jr_counters *n = &b->nodes[i].c;

                ret->blocks += n->blocks;
                ret->bytes += n->bytes;
                ret->failed += n->failed;
                ret->skipped += n->skipped;
                ret->cpu_usec += n->cpu_usec;
                ret->duration_usec = MAX(ret->duration_usec, n->duration_usec);
                ret->p99_usec = MAX(ret->p99_usec, n->p99_usec);
                ret->max_usec = MAX(ret->max_usec, n->max_usec);
                /* The batch's latencies: to the last node's last block, to the first node's first. */
                if (n->have_latency) {
                        ret->latency_usec = ret->have_latency ? MAX(ret->latency_usec, n->latency_usec) :
                                                                n->latency_usec;
                        ret->have_latency = true;
                }
                if (n->have_first_latency) {
                        ret->first_latency_usec = ret->have_first_latency ?
                                MIN(ret->first_latency_usec, n->first_latency_usec) : n->first_latency_usec;
                        ret->have_first_latency = true;
                }
        }
}

double jr_counters_gibps(const struct jr_counters *k) {
        if (k->have_gibps)
                return k->gibps;
        if (k->duration_usec == 0)
                return 0;
        return ((double) k->bytes / JR_GIB) / ((double) k->duration_usec / (double) USEC_PER_SEC);
}
