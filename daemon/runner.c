/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <unistd.h>
#include "batch-records.h"
#include "blocks.h"
#include "memdev.h"
#include "online.h"
#include "plan.h"
#include "policy.h"
#include "pmem.h"
#include "pmem-badblocks.h"
#include "pmem-convert.h"
#include "pmem-decide.h"
#include "pmem-record.h"
#include "pmem-scan.h"
#include "progress.h"
#include "report.h"
#include "runner.h"
#include "topology.h"
#include "util.h"

#define NODE_LINK_POLL_USEC (5 * USEC_PER_MSEC)
#define NODE_LINK_SLOW_POLL_USEC (50 * USEC_PER_MSEC)
#define NODE_LINK_PATIENCE 10   /* x node_link_wait_ms, while nothing else is queued */
/* A zone's hole block is held for the next batch at most this many times max_wait_ms. */
#define HOLD_MAX_WAITS 10

void job_free(struct job *j) {
        if (!j)
                return;
        policy_unref(j->policy);
        free(j->ids);
        free(j->touched);
        for (size_t i = 0; i < j->n_dax; i++)
                free(j->dax_devices[i]);
        free(j->dax_devices);
        free(j->dax_event_usec);
        free(j);
}

void job_freep(struct job **j) {
        job_free(*j);
}


static void say_pending_report(void *userdata);

void runner_done(struct runner *c) {
        say_pending_report(c);
        topology_free(c->topology);
        c->topology = NULL;
        free(c->held);
        c->held = NULL;
        free(c->held_since_usec);
        c->held_since_usec = NULL;
        c->n_held = 0;
        free(c->deferred);
        c->deferred = NULL;
        c->n_deferred = 0;
        memdev_cache_clear(&c->devices);
        ram_ranges_clear(&c->fw_ranges);
        c->devices_read = false;
        online_pool_free(TAKE_PTR(c->pool));
        free(TAKE_PTR(c->pool_cpus));
        pmem_devices_clear(&c->dax);
        free(c->media_reported);
        c->media_reported = NULL;
        c->n_media_reported = c->media_reported_allocated = 0;
}

bool runner_has_carried_over(const struct runner *c) {
        return c->n_held > 0 || c->n_deferred > 0;
}

/* Another job is queued (the event loop says so): a batch is waiting. */
static bool batch_waiting(const struct runner *c) {
        return c->more_work && atomic_load(c->more_work);
}

/* Appends to *ids the ids of add not in it yet. */
static int append_missing(uint64_t **ids, size_t *n_ids, const uint64_t *add, size_t n_add) {
        size_t n = *n_ids, old = *n_ids;
        uint64_t *grown;

        if (n_add == 0)
                return 0;
        grown = reallocarray(*ids, old + n_add, sizeof(*grown));
        if (!grown)
                return -ENOMEM;
        *ids = grown;
        for (size_t i = 0; i < n_add; i++) {
                bool dup = false;

                for (size_t k = 0; k < old && !dup; k++)
                        dup = grown[k] == add[i];
                if (!dup)
                        grown[n++] = add[i];
        }
        *n_ids = n;
        return 0;
}

/*
 * Blocks the last job held back or deferred join this job's ids (a rescan
 * covers them anyway). Held blocks stay in c->held for order_writes until
 * this job replaces them; deferred ones are this job's now.
 */
static int take_carried_over(struct runner *c, struct job *j) {
        _cleanup_free_ uint64_t *deferred = TAKE_PTR(c->deferred);
        size_t n_deferred = c->n_deferred;
        int r;

        c->n_deferred = 0;
        if (!j->ids)
                return 0;
        r = append_missing(&j->ids, &j->n_ids, c->held, c->n_held);
        if (r < 0)
                return r;
        return append_missing(&j->ids, &j->n_ids, deferred, n_deferred);
}

/* When memoryN was first held, if the last job held it too; else now. */
static uint64_t held_since(const struct runner *c, uint64_t id, uint64_t now) {
        for (size_t i = 0; i < c->n_held; i++)
                if (c->held[i] == id)
                        return c->held_since_usec[i];
        return now;
}

/* What this job left offline for the next one. */
static int keep_held(struct runner *c, const struct online_result *res) {
        _cleanup_free_ uint64_t *held = NULL, *since = NULL;
        uint64_t now = now_usec();
        size_t n = 0, k = 0;

        for (size_t i = 0; res && i < res->n_blocks; i++)
                n += res->blocks[i].held;
        if (n > 0) {
                held = calloc(n, sizeof(*held));
                since = calloc(n, sizeof(*since));
                if (!held || !since)
                        return -ENOMEM;
        }
        for (size_t i = 0; res && i < res->n_blocks; i++) {
                if (!res->blocks[i].held)
                        continue;
                held[k] = res->blocks[i].id;
                since[k++] = held_since(c, res->blocks[i].id, now);
                report_log(c->reporter, LOG_DEBUG, NULL,
                           "memory%llu: left offline for the next batch, which is already queued",
                           (unsigned long long) res->blocks[i].id);
        }
        free(c->held);
        free(c->held_since_usec);
        c->held = TAKE_PTR(held);
        c->held_since_usec = TAKE_PTR(since);
        c->n_held = k;
        return 0;
}

/*
 * Holding a zone's hole block for the next batch saves the kernel a
 * whole-zone walk per online, but under a steady stream of events it
 * could be held batch after batch. Past HOLD_MAX_WAITS x max_wait_ms no
 * block is held again: this job writes them all.
 */
static bool hold_allowed(const struct runner *c, const struct policy *p) {
        uint64_t now = now_usec(), limit = (uint64_t) HOLD_MAX_WAITS * MAX(p->max_wait_ms, 1U) * USEC_PER_MSEC;

        for (size_t i = 0; i < c->n_held; i++)
                if (now - c->held_since_usec[i] >= limit)
                        return false;
        return true;
}

/*
 * A block whose node is still unknown after the wait belongs to an add
 * that is still running (the kernel links the range at its end). Planned
 * now it would get no node's zone or CPUs. While another job is queued
 * anyway it waits for that one, which reads the links again; otherwise it
 * is planned without a node, as before. Returns how many were taken out
 * of set into *ret_ids (NULL when none), or -ENOMEM.
 */
static int defer_unresolved(struct runner *c, const struct topology *t, struct block_set *set, uint64_t **ret_ids) {
        _cleanup_free_ uint64_t *ids = NULL;
        size_t n = 0, kept = 0;

        if (t->n_nodes < 2 || !batch_waiting(c))
                return 0;
        for (size_t i = 0; i < set->n; i++)
                n += set->blocks[i].node == NODE_NONE;
        if (n == 0)
                return 0;
        ids = calloc(n, sizeof(*ids));
        if (!ids)
                return -ENOMEM;
        n = 0;
        for (size_t i = 0; i < set->n; i++) {
                struct mem_block *b = &set->blocks[i];

                if (b->node != NODE_NONE) {
                        set->blocks[kept++] = *b;
                        continue;
                }
                report_log(c->reporter, LOG_DEBUG, NULL, "memory%llu: node not known yet, left for the next batch",
                           (unsigned long long) b->id);
                ids[n++] = b->id;
                mem_block_done(b);
        }
        set->n = kept;
        *ret_ids = TAKE_PTR(ids);
        return (int) n;
}

/*
 * The nodeX link of a new block appears after its add event (the kernel
 * links a whole added range at the end of the add). Wait a little for all
 * unresolved blocks together, one listing per node each round, then fall
 * back to the span of block ids each node already has.
 *
 * Past node_link_wait_ms, on a NUMA machine with nothing else queued, keep
 * waiting up to NODE_LINK_PATIENCE times as long, until the links appear
 * or more events do (defer_unresolved() then hands the blocks to that
 * batch). Their add is still running, and its end is what their writes
 * would wait for anyway; in a lull between a range's first add events and
 * the rest, planning them now would online them without their node.
 */
static void resolve_nodes(struct runner *c, const struct policy *p, const struct topology *t,
                          struct block_set *set) {
        uint64_t wait = (uint64_t) p->node_link_wait_ms * USEC_PER_MSEC, start = now_usec(), next_read = start;
        _cleanup_free_ uint64_t *ids = NULL;
        _cleanup_free_ int *nodes = NULL;
        _cleanup_free_ size_t *index = NULL;

        for (;;) {
                uint64_t now = now_usec();

                if (now >= next_read) {
                        size_t missing = 0;

                        for (size_t i = 0; i < set->n; i++)
                                if (set->blocks[i].node == NODE_NONE)
                                        missing++;
                        if (missing == 0)
                                break;
                        if (!ids) {
                                ids = calloc(missing, sizeof(*ids));
                                nodes = calloc(missing, sizeof(*nodes));
                                index = calloc(missing, sizeof(*index));
                                if (!ids || !nodes || !index)
                                        break;  /* the span fallback below still runs */
                        }
                        missing = 0;
                        for (size_t i = 0; i < set->n; i++)
                                if (set->blocks[i].node == NODE_NONE) {
                                        index[missing] = i;
                                        ids[missing++] = set->blocks[i].id;
                                }
                        if (topology_read_links(t, ids, missing, nodes) < 0)
                                break;
                        for (size_t k = 0; k < missing; k++)
                                set->blocks[index[k]].node = nodes[k];
                        /* Every listing reads all nodes: slower while only waiting out the add. */
                        next_read = now + (now - start < wait ? NODE_LINK_POLL_USEC : NODE_LINK_SLOW_POLL_USEC);
                        continue;       /* count what is still missing first */
                }
                if (atomic_load(c->stop))
                        break;
                if (now - start >= wait &&
                    (t->n_nodes < 2 || batch_waiting(c) ||
                     now - start >= wait * NODE_LINK_PATIENCE))
                        break;
                usleep(NODE_LINK_POLL_USEC);
                job_progress_beat(c->progress);
        }

        for (size_t i = 0; i < set->n; i++) {
                struct mem_block *b = &set->blocks[i];
                int found = NODE_NONE;

                if (b->node != NODE_NONE)
                        continue;
                for (size_t k = 0; k < t->n_nodes; k++) {
                        const struct topo_node *n = &t->nodes[k];

                        if (!n->has_blocks || b->id < n->first_block || b->id > n->last_block)
                                continue;
                        if (found != NODE_NONE) {       /* spans overlap: ambiguous */
                                found = NODE_NONE;
                                break;
                        }
                        found = n->id;
                }
                if (found != NODE_NONE) {
                        b->node = found;
                        b->node_guessed = true;
                }
        }
}

/*
 * Append block id to set if offline. The state and node link come from
 * the topology, read (or, for add events, trusted) moments ago; a block
 * it did not see is read in full. valid_zones only with read_zones: the
 * writer falls back to the kernel's zone when the one asked for is not
 * valid. 1 appended, 0 not offline, -errno.
 */
static int append_if_offline(const struct runner *c, const struct topology *t, uint64_t id, uint64_t event_usec,
                             bool read_zones, struct block_set *set) {
        const struct topo_block *tb = topology_block(t, id);
        struct mem_block b;
        int r = 0;

        if (tb && tb->error < 0)
                return tb->error;       /* its state could not be read: the caller reports it */
        if (tb && tb->state != BLOCK_STATE_OFFLINE)
                return 0;
        if (!tb)
                r = block_read(c->sysfs_root, t->block_size, id, &b);
        else if (read_zones)
                r = block_read_known(c->sysfs_root, t->block_size, id, tb->state, tb->node, &b);
        else {
                b = (struct mem_block) { .id = id, .state = tb->state, .node = tb->node, .region = -1 };
                /* An id whose address would wrap is no block of this machine's. */
                r = block_phys_start(id, t->block_size, &b.phys_start);
        }
        if (r < 0)
                return r;
        if (b.state != BLOCK_STATE_OFFLINE) {
                mem_block_done(&b);
                return 0;
        }
        b.event_usec = event_usec;
        if (GROW(set->blocks, set->allocated, set->n + 1) < 0) {
                mem_block_done(&b);
                return -ENOMEM;
        }
        set->blocks[set->n++] = b;
        return 1;
}

/*
 * A block whose state cannot be read may be one policy wants online: say
 * so in a failure record and count it, so the job is tried again.
 */
static void report_unreadable_block(struct runner *c, struct job *j, const struct topology *t, uint64_t id,
                                    int error) {
        const struct topo_block *tb = topology_block(t, id);
        int r;

        j->unreadable++;
        r = report_unreadable(c->reporter, id, tb ? tb->node : NODE_NONE, error, c->reporter->batch_seq);
        if (r < 0)
                report_log_errno(c->reporter, LOG_WARNING, NULL, error, "memory%llu: cannot read its state: %m",
                                 (unsigned long long) id);
}

/* The given blocks (or all the topology saw), keep the offline ones. */
static int collect_blocks(struct runner *c, struct job *j, const struct topology *t, struct block_set *set) {
        int r;

        if (!j->ids) {
                for (size_t i = 0; i < t->n_blocks; i++) {
                        r = append_if_offline(c, t, t->blocks[i].id, 0, true, set);
                        if (r == -ENOMEM)
                                return r;
                        /* Gone since the topology read it: nothing to do. */
                        if (r < 0 && r != -ENOENT && !c->dry_run)
                                report_unreadable_block(c, j, t, t->blocks[i].id, r);
                }
                return 0;
        }

        for (size_t i = 0; i < j->n_ids; i++) {
                r = append_if_offline(c, t, j->ids[i], j->first_event_usec, c->dry_run, set);
                if (r == -ENOMEM)
                        return r;
                if (r == -ENOENT)
                        continue;       /* removed again before we got to it */
                if (r < 0 && !c->dry_run)
                        report_unreadable_block(c, j, t, j->ids[i], r);
        }
        return 0;
}

static void warn_pin_failure(struct runner *c, const struct online_result *res) {
        if (!res->pin_failed || c->reporter->pin_warned)
                return;
        c->reporter->pin_warned = true;
        report_log_errno(c->reporter, LOG_WARNING, NULL, res->pin_errno,
                         "cannot pin a worker to CPU %d: %m; carrying on unpinned", res->pin_cpu);
}

/* How the pass's writes reached the kernel: in linked chains, or block by block and why. */
static void log_chains(struct runner *c, const struct online_result *res) {
        size_t written = 0;

        for (size_t i = 0; i < res->n_groups; i++)
                written += res->groups[i].blocks;
        if (res->chain_errno != 0)
                report_log_errno(c->reporter, LOG_DEBUG, NULL, res->chain_errno,
                                 "%zu of %zu blocks written in linked chains, the rest block by block: %m",
                                 res->chained, written);
        else
                report_log(c->reporter, LOG_DEBUG, NULL, "%zu of %zu blocks written in linked chains",
                           res->chained, written);
}

/* When a pass started, for the batch record's preparation time and CPU, and its phases. */
enum pass_phase {
        PHASE_TOPOLOGY,
        PHASE_BLOCKS,
        PHASE_NODES,
        PHASE_DAX,
        PHASE_DEVICES,
        PHASE_PLAN,
        _PHASE_MAX,
};

struct pass_clock {
        uint64_t start_usec;
        uint64_t cpu_usec;
        uint64_t phase_end_usec[_PHASE_MAX];
        /* The runner thread's own CPU time: a phase far longer than its CPU waited (for a CPU, or the kernel). */
        uint64_t thread_start_usec, thread_end_usec[_PHASE_MAX];
};

/* One plan-and-write pass of a job: the main pass, or a converted dax device's. */
struct pass {
        const char *trigger;
        uint64_t first_event_usec;
        bool main;                      /* the job's own blocks: holds and carried-over blocks are its business */
        struct pass_clock clock;
        const struct pmem_devices *devs;        /* the dax devices its blocks were attributed to */
};

static void pass_mark(struct pass_clock *clock, enum pass_phase phase) {
        clock->phase_end_usec[phase] = now_usec();
        clock->thread_end_usec[phase] = thread_cpu_usec();
}

/* Where a batch's preparation went, for whoever debugs a slow one. */
static void log_phases(struct runner *c, const struct pass_clock *clock, const struct online_result *res, size_t n) {
        uint64_t first_write_usec = res->start_usec;
        const uint64_t *steps = res->first_steps_usec;
        static const char *const names[_PHASE_MAX] = {
                [PHASE_TOPOLOGY] = "topology", [PHASE_BLOCKS] = "blocks", [PHASE_NODES] = "node links",
                [PHASE_DAX] = "dax", [PHASE_DEVICES] = "devices", [PHASE_PLAN] = "plan",
        };
        char buf[256], cpu[192];
        size_t len = 0, cpu_len = 0;
        uint64_t prev = clock->start_usec, prev_cpu = clock->thread_start_usec;

        for (size_t i = 0; i < _PHASE_MAX && len < sizeof(buf) && cpu_len < sizeof(cpu); i++) {
                uint64_t end = clock->phase_end_usec[i], end_cpu = clock->thread_end_usec[i];

                if (end == 0)
                        continue;
                len += (size_t) snprintf(buf + len, sizeof(buf) - len, "%s %s %" PRIu64, len ? "," : "", names[i],
                                         end - prev);
                cpu_len += (size_t) snprintf(cpu + cpu_len, sizeof(cpu) - cpu_len, "%s%" PRIu64, cpu_len ? " " : "",
                                             end_cpu > prev_cpu ? end_cpu - prev_cpu : 0);
                prev = end;
                prev_cpu = end_cpu;
        }
        report_log(c->reporter, LOG_DEBUG, NULL,
                   "%zu blocks prepared (µs):%s, to the first write %" PRIu64 " (thread %" PRIu64 ", first open %" PRIu64
                   ", pin %" PRIu64 ", write slot %" PRIu64 "); the runner's CPU in each phase: %s",
                   n, len ? buf : "", first_write_usec > prev ? first_write_usec - prev : 0,
                   steps[ONLINE_STEP_THREAD], steps[ONLINE_STEP_OPEN], steps[ONLINE_STEP_PIN], steps[ONLINE_STEP_SLOT],
                   cpu_len ? cpu : "-");
}

/*
 * Each write's entry and return (CLOCK_MONOTONIC µs, the clock of the
 * kernel's trace_clock=mono), 16 a line, for whoever lines them up with
 * a trace of online_pages: what lies between two writes, and whose it is.
 */
#define WRITES_PER_LINE 16

static void log_write_times(struct runner *c, const struct online_result *res) {
        char buf[WRITES_PER_LINE * 56];
        size_t len = 0, n = 0;

        if (c->reporter->max_priority < LOG_DEBUG)
                return;
        for (size_t i = 0; i < res->n_blocks; i++) {
                const struct block_result *b = &res->blocks[i];

                if (b->attempts == 0 || b->error != 0)
                        continue;
                len += (size_t) snprintf(buf + len, sizeof(buf) - len, "%smemory%" PRIu64 " %" PRIu64 "-%" PRIu64,
                                         n ? ", " : "", b->id, b->done_usec - b->usec, b->done_usec);
                if (++n == WRITES_PER_LINE || len >= sizeof(buf) - 56) {
                        report_log(c->reporter, LOG_DEBUG, NULL, "write times (µs, entry-return): %s", buf);
                        len = n = 0;
                }
        }
        if (n > 0)
                report_log(c->reporter, LOG_DEBUG, NULL, "write times (µs, entry-return): %s", buf);
}

static struct pass_clock pass_clock_now(void) {
        return (struct pass_clock) { .start_usec = now_usec(), .cpu_usec = cpu_time_usec(),
                                     .thread_start_usec = thread_cpu_usec() };
}

/* Blocks left offline because a rule could not be checked: one failure record each (counted for a retry). */
static void report_undecided_blocks(struct runner *c, const struct plan *plan) {
        for (size_t i = 0; i < plan->n_skipped; i++) {
                const struct plan_item *it = &plan->skipped[i];
                int r;

                if (!it->undecided) {
                        report_log(c->reporter, LOG_DEBUG, NULL, "memory%llu: skipped (%s)",
                                   (unsigned long long) it->block->id, it->reason);
                        continue;
                }
                r = report_undecided(c->reporter, it, c->reporter->batch_seq);
                if (r < 0)
                        report_log_errno(c->reporter, LOG_WARNING, NULL, r,
                                         "memory%llu: left offline (%s); no record: %m",
                                         (unsigned long long) it->block->id, it->reason);
        }
}

/*
 * A device kept out of system RAM for its bad media gets a record, once:
 * again only when its verdict, mode, bad sectors or blocks left offline
 * change. Out of memory, it is recorded again next time.
 */
static void report_bad_media(struct runner *c, const struct pmem_device *dev, enum bad_media media, size_t blocks,
                             const char *reason) {
        struct media_reported *m = NULL;
        int r;

        for (size_t i = 0; i < c->n_media_reported && !m; i++)
                if (streq(c->media_reported[i].name, dev->name))
                        m = &c->media_reported[i];
        if (m && m->media == (int) media && m->mode == (int) dev->mode && m->bad_sectors == dev->bad_sectors &&
            m->blocks == blocks) {
                report_log(c->reporter, LOG_DEBUG, NULL, "%s: still kept out for its media: %s", dev->name, reason);
                return;
        }
        r = pmem_report_bad_media(c->reporter, dev, media, blocks, reason);
        if (r < 0) {
                report_log_errno(c->reporter, LOG_WARNING, NULL, r, "%s: kept out for its media (%s); no record: %m",
                                 dev->name, reason);
                return;
        }
        if (!m && strlen(dev->name) < sizeof(m->name) &&
            GROW(c->media_reported, c->media_reported_allocated, c->n_media_reported + 1) >= 0)
                m = &c->media_reported[c->n_media_reported++];
        if (!m)
                return;
        *m = (struct media_reported) { .media = (int) media, .mode = (int) dev->mode,
                                       .bad_sectors = dev->bad_sectors, .blocks = blocks };
        memcpy(m->name, dev->name, strlen(dev->name) + 1);
}

/* The blocks the plan left offline for their dax device's media: one record per device. */
static void report_bad_media_blocks(struct runner *c, const struct pass *pass, const struct plan *plan) {
        _cleanup_free_ struct {
                const struct plan_item *first;  /* its first skipped block: device name, undecided, reason */
                size_t n;
        } *per = NULL;
        size_t n_per = 0, allocated = 0;

        /* A handful of devices, each with many blocks: count them per device in one pass. */
        for (size_t i = 0; i < plan->n_skipped; i++) {
                const struct plan_item *it = &plan->skipped[i];
                size_t k = 0;

                if (!it->bad_media || !it->block->device)
                        continue;
                while (k < n_per && !streq(per[k].first->block->device, it->block->device))
                        k++;
                if (k == n_per) {
                        if (GROW(per, allocated, n_per + 1) < 0)
                                break;  /* out of memory: the blocks' own failure or debug lines stand */
                        per[n_per++] = (typeof(*per)) { .first = it };
                }
                per[k].n++;
        }
        for (size_t k = 0; k < n_per; k++) {
                const struct plan_item *it = per[k].first;
                const struct pmem_device *dev = pmem_devices_find(pass->devs, it->block->device);
                char why[256];

                if (!dev)
                        continue;
                if (!it->undecided) {
                        report_bad_media(c, dev, BAD_MEDIA_REFUSED, per[k].n, it->reason ?: "bad media");
                        continue;
                }
                snprintf(why, sizeof(why), "undecided: the bad blocks of region%d cannot be known (%s); tried again",
                         dev->region, pmem_badblocks_describe(dev->badblocks_error));
                report_bad_media(c, dev, BAD_MEDIA_UNKNOWN, per[k].n, why);
        }
}

/* The zone changes the planner made on its own: never quiet. */
static void report_zone_changes(struct runner *c, unsigned movable_ratio, const struct plan *plan) {
        const char *said[16];
        size_t n_said = 0, n_blocks = 0;
        uint64_t first_guarded = UINT64_MAX;

        for (size_t g = 0; g < plan->n_groups; g++)
                for (size_t i = 0; i < plan->groups[g].n_items; i++) {
                        const struct plan_item *it = &plan->groups[g].items[i];
                        bool known = false;

                        if (!it->ratio_guarded)
                                continue;
                        /* A device's verdict, with its numbers, once per device. */
                        if (it->guarded_by_device) {
                                for (size_t k = 0; k < n_said && !known; k++)
                                        known = said[k] == it->reason;
                                if (!known && n_said < ELEMENTSOF(said)) {
                                        said[n_said++] = it->reason;
                                        report_log(c->reporter, LOG_NOTICE, MESSAGE_ID_RATIO, "%s", it->reason);
                                }
                                continue;
                        }
                        n_blocks++;
                        first_guarded = MIN(first_guarded, it->block->id);
                }
        if (n_blocks > 0)
                report_log(c->reporter, LOG_NOTICE, MESSAGE_ID_RATIO,
                           "%zu blocks from memory%llu on go to online_kernel instead of online_movable: "
                           "more movable memory would exceed the MOVABLE:KERNEL ratio of %u%%",
                           n_blocks, (unsigned long long) first_guarded, movable_ratio);
        if (plan->n_fell_back > 0)
                report_log(c->reporter, LOG_NOTICE, NULL,
                           "%zu blocks go to the kernel's own zone: the default zone is not valid for them "
                           "(valid_zones)", plan->n_fell_back);
}

static void report_fallbacks(struct runner *c, const struct online_result *res) {
        size_t n = 0;

        for (size_t i = 0; i < res->n_blocks; i++)
                n += res->blocks[i].fell_back;
        if (n > 0)
                report_log(c->reporter, LOG_NOTICE, NULL,
                           "%zu blocks went to the kernel's own zone: it refused the default zone for them (EINVAL)",
                           n);
}

/*
 * The writer threads the daemon keeps, started at the first job that
 * writes. When CPUs went on- or offline since they pinned themselves (the
 * topology's signature changed), they pin again: an offlined CPU took its
 * threads' pin away. NULL without them: the pass starts its own threads.
 */
static struct online_pool *job_pool(struct runner *c, const struct topology *t) {
        if (!c->keep_writers)
                return NULL;
        if (!c->pool && online_pool_new(&c->pool) < 0)
                return NULL;
        if (!streq(strempty(c->pool_cpus), strempty(t->signature))) {
                online_pool_repin(c->pool);
                free(c->pool_cpus);
                c->pool_cpus = t->signature ? strdup(t->signature) : NULL;
        }
        return c->pool;
}

/* Writer CPUs per node asked of the planner when starting threads ahead; policy workers stay below. */
#define PREPARE_CPUS_MAX 256

/*
 * Start and pin now the writer threads a batch on each node would use
 * (plan_writer_cpus(), as the planner picks them): in the batch, their
 * start and pin would come before its first write. Between batches only.
 */
static void prepare_writers(struct runner *c, const struct topology *t, const struct policy *p) {
        _cleanup_free_ int *cpus = NULL, *node_cpus = NULL;
        struct online_pool *pool = job_pool(c, t);
        size_t n = 0;
        int writer, r;

        if (!pool || !p || t->n_nodes == 0)
                return;
        cpus = calloc(t->n_nodes * PREPARE_CPUS_MAX, sizeof(int));
        node_cpus = calloc(PREPARE_CPUS_MAX, sizeof(int));
        if (!cpus || !node_cpus)
                return;
        for (size_t i = 0; i < t->n_nodes; i++) {
                r = plan_writer_cpus(t, p, t->nodes[i].id, SIZE_MAX, PREPARE_CPUS_MAX, node_cpus, &writer);
                for (int k = 0; k < r; k++) {
                        bool dup = false;

                        for (size_t m = 0; m < n && !dup; m++)
                                dup = cpus[m] == node_cpus[k];
                        if (!dup)
                                cpus[n++] = node_cpus[k];
                }
        }
        r = online_pool_prepare(pool, cpus, n);
        if (r < 0)
                report_log_errno(c->reporter, LOG_DEBUG, NULL, r, "cannot start the writer threads ahead: %m");
}

/*
 * Online the plan's blocks; a main pass may hold each zone's last block for
 * the queued batch. Not when it adopted blocks: the queued events are most
 * likely theirs, and the block would wait for them for nothing.
 */
static void say_pending_report(void *userdata);

static int write_plan(struct runner *c, struct job *j, struct topology *t, const struct plan *plan,
                      struct pass *pass, struct online_result **ret) {
        bool hold = pass->main && j->adopted == 0 && hold_allowed(c, j->policy);
        struct online_request req = {
                .sysfs_root = c->sysfs_root,
                .block_size = t->block_size,
                .plan = plan,
                .policy = j->policy,
                .stop = c->stop,
                .hold_last = hold ? c->more_work : NULL,
                .held_in = hold ? c->held : NULL,
                .n_held_in = hold ? c->n_held : 0,
                .progress = c->progress,
                .ops = c->ops,
                .pool = job_pool(c, t),
                /* The last batch's records, said while this one writes. */
                .after_first_write = c->pending_report ? say_pending_report : NULL,
                .userdata = c,
        };
        int r;

        pass_mark(&pass->clock, PHASE_PLAN);
        job_progress_plan(c->progress, plan->n_items, t->block_size);
        r = online_write(&req, ret);
        if (r < 0)
                return report_log_errno(c->reporter, LOG_ERR, NULL, r, "onlining %zu blocks failed: %m", plan->n_items);
        return 0;
}

static bool all_skipped(const struct online_result *res) {
        for (size_t i = 0; i < res->n_blocks; i++)
                if (!res->blocks[i].skipped)
                        return false;
        return true;
}

static void report_written(struct runner *c, const struct pass *pass, uint64_t cpu_usec, uint64_t block_size,
                           const struct plan *plan, const struct online_result *res) {
        const struct pass_clock *clock = &pass->clock;
        struct batch_info info = {
                .trigger = pass->trigger,
                .first_event_usec = pass->first_event_usec,
                .cpu_usec = cpu_usec,
                .prepare_usec = res->start_usec > clock->start_usec ? res->start_usec - clock->start_usec : 0,
                .block_size = block_size,
        };
        int r;

        r = report_batch(c->reporter, &info, plan, res);
        if (r < 0)
                report_log_errno(c->reporter, LOG_WARNING, NULL, r, "cannot write the batch record: %m");
}

/* A block of the job came online at usec (CLOCK_MONOTONIC). */
static void job_note_online(struct job *j, uint64_t usec) {
        if (j->first_online_usec == 0 || usec < j->first_online_usec)
                j->first_online_usec = usec;
        j->last_online_usec = MAX(j->last_online_usec, usec);
}

/* The job's counters, and the topology's block table as the writes left it. */
static void count_written(struct job *j, struct topology *t, const struct online_result *res) {
        for (size_t i = 0; i < res->n_blocks; i++) {
                const struct block_result *b = &res->blocks[i];

                if (b->skipped)
                        continue;
                if (b->not_attempted)
                        j->not_attempted++;
                else if (b->error < 0)
                        j->failed++;
                else {
                        j->onlined++;
                        job_note_online(j, b->done_usec);
                        /* Another agent's online leaves the zone to be read. */
                        topology_set_online(t, b->id, b->node, b->already_online ? ZONE_ONLINE : b->zone);
                }
        }
        j->bytes += res->bytes;
        j->duration_usec += res->end_usec - res->start_usec;
}

/*
 * What a pass has to say about itself: the planner's notices, its records
 * and log lines, with all they describe. A main pass whose next batch is
 * already queued keeps it until that batch's first write has returned
 * (or until the next job ends): the boundary between two batches then
 * holds no journal writes.
 */
struct pass_report {
        struct block_set set;           /* the blocks the plan points into */
        struct memdev_set devices;      /* their hotplug devices, copied from the topology */
        struct plan *plan;
        struct online_result *res;      /* NULL: nothing was written */
        struct pass pass;
        unsigned movable_ratio;
        uint64_t block_size;
        uint64_t cpu_usec;              /* the pass's CPU time, taken at its end */
};

static void pass_report_free(struct pass_report *r) {
        if (!r)
                return;
        block_set_clear(&r->set);
        memdev_set_clear(&r->devices);
        plan_free(r->plan);
        online_result_free(r->res);
        free(r);
}

static void pass_report_freep(struct pass_report **r) {
        pass_report_free(*r);
}

static void pass_report_say(struct runner *c, const struct pass_report *rep) {
        const struct online_result *res = rep->res;

        report_undecided_blocks(c, rep->plan);
        report_zone_changes(c, rep->movable_ratio, rep->plan);
        if (!res)
                return;
        warn_pin_failure(c, res);
        report_fallbacks(c, res);
        log_phases(c, &rep->pass.clock, res, rep->plan->n_items);
        log_write_times(c, res);
        log_chains(c, res);
        /* All online (another agent's), gone or held: no record. */
        if (!all_skipped(res))
                report_written(c, &rep->pass, rep->cpu_usec, rep->block_size, rep->plan, res);
}

/* Say what the last pass kept back, if anything. Also online_write()'s after_first_write. */
static void say_pending_report(void *userdata) {
        struct runner *c = userdata;
        _cleanup_(pass_report_freep) struct pass_report *rep = TAKE_PTR(c->pending_report);

        if (rep)
                pass_report_say(c, rep);
}

/*
 * Keep the report for later: it takes the blocks, and a copy of their
 * hotplug devices (the topology's are replaced by the next job's).
 */
static int pass_report_keep(struct runner *c, struct pass_report *rep, const struct topology *t,
                            struct block_set *set) {
        int r;

        r = memdev_set_copy(&t->devices, &rep->devices);
        if (r < 0)
                return r;
        for (size_t i = 0; i < set->n; i++)
                if (set->blocks[i].memdev)
                        set->blocks[i].memdev = &rep->devices.devs[set->blocks[i].memdev - t->devices.devs];
        rep->set = *set;
        *set = (struct block_set) {};
        c->pending_report = rep;
        c->pending_kept_now = true;
        return 0;
}

/* Plan and online one set of blocks; fills the job's counters. */
static int plan_and_write(struct runner *c, struct job *j, struct topology *t, struct block_set *set,
                          struct pass *pass) {
        _cleanup_(pass_report_freep) struct pass_report *rep = NULL;
        int r, r_held = 0;

        rep = calloc(1, sizeof(*rep));
        if (!rep)
                return report_log_errno(c->reporter, LOG_ERR, NULL, -ENOMEM, "planning %zu blocks failed: %m", set->n);
        r = plan_build(set, t, j->policy, &rep->plan);
        if (r < 0)
                return report_log_errno(c->reporter, LOG_ERR, NULL, r, "planning %zu blocks failed: %m", set->n);
        if (c->dry_run) {
                plan_print(rep->plan, c->out);
                fflush(c->out);
                return 0;
        }
        rep->movable_ratio = j->policy->movable_ratio;
        rep->block_size = t->block_size;
        j->undecided += rep->plan->n_undecided;
        /* Now, not with the batch's records: the devices may be gone by the next batch. */
        report_bad_media_blocks(c, pass, rep->plan);
        j->excluded += rep->plan->n_skipped - rep->plan->n_undecided;

        if (rep->plan->n_items > 0) {
                r = write_plan(c, j, t, rep->plan, pass, &rep->res);
                rep->pass = *pass;      /* with the plan's phase, which the write marked */
                if (r < 0) {
                        say_pending_report(c);
                        pass_report_say(c, rep);
                        return r;
                }
                rep->cpu_usec = cpu_time_usec() - pass->clock.cpu_usec;
                if (pass->main) {
                        /* Out of memory forgets the held blocks: the job's error brings a rescan that finds them. */
                        r_held = keep_held(c, rep->res);
                        if (r_held < 0)
                                report_log_errno(c->reporter, LOG_ERR, NULL, r_held, "cannot keep the held blocks: %m");
                }
                if (!all_skipped(rep->res))
                        count_written(j, t, rep->res);
        } else
                rep->pass = *pass;
        /* In order: what is still kept back (no write took it along) first. */
        say_pending_report(c);
        if (pass->main && rep->res && batch_waiting(c) &&
            pass_report_keep(c, rep, t, set) >= 0) {
                TAKE_PTR(rep);
                return r_held;
        }
        pass_report_say(c, rep);
        return r_held;
}

/*
 * Attribute blocks to dax devices. When the devices could not all be
 * read, the blocks no readable device claims may still be dax memory:
 * mark them, so that rules about devices leave them offline for now.
 */
static void attribute_blocks(struct runner *c, const struct pmem_devices *devs, int scan_error,
                             uint64_t block_size, struct block_set *set) {
        int r = scan_error;

        if (r >= 0)
                r = pmem_attribute_blocks(devs, block_size, set);
        if (r >= 0 && devs->n_unreadable == 0)
                return;
        if (r < 0)
                report_log_errno(c->reporter, LOG_WARNING, NULL, r, "cannot attribute blocks to dax devices: %m");
        else
                report_log_errno(c->reporter, LOG_WARNING, NULL, devs->unreadable_error,
                                 "cannot read %zu dax device%s (%s: %m): blocks no other device claims count as of "
                                 "an unknown device", devs->n_unreadable, devs->n_unreadable == 1 ? "" : "s",
                                 devs->unreadable_name);
        for (size_t i = 0; i < set->n; i++)
                if (r < 0 || !set->blocks[i].device)
                        set->blocks[i].attribution_unknown = true;
}

/* Each block of set (may be NULL) learns its hotplug device from the topology's. */
static void blocks_learn_devices(const struct topology *t, struct block_set *set) {
        for (size_t i = 0; set && i < set->n; i++)
                set->blocks[i].memdev = topology_block_device(t, set->blocks[i].id);
}

/*
 * The machine's hotplug devices for this pass (memdev_load()). Each block
 * of set (may be NULL) learns its own. A failure costs precision only:
 * without devices the guard decides block by block, as before, and
 * records name no device.
 */
static void load_devices(struct runner *c, struct topology *t, const struct pmem_devices *devs,
                         struct block_set *set) {
        _cleanup_(memdev_set_clear) struct memdev_set s = {};
        _cleanup_(ram_ranges_clear) struct ram_ranges fw = {};
        /* Read before the devices: an event that comes while they are read makes the next batch read again. */
        unsigned events = c->device_events ? atomic_load(c->device_events) : 0;
        bool kept = t == c->topology;
        int r;

        if (kept)
                c->devices_read = false;
        r = memdev_load(c->sysfs_root, t, devs, &c->devices, &s, &fw);
        if (r < 0) {
                report_log_errno(c->reporter, LOG_DEBUG, NULL, r, "memory devices unknown: %m");
                return;
        }
        if (kept && ram_ranges_copy(&fw, &c->fw_ranges) >= 0) {
                c->devices_read = true;
                c->devices_read_at = events;
        }
        topology_set_devices(t, &s, &fw);
        blocks_learn_devices(t, set);
}

/*
 * A batch of dax memory alone (a CXL region, a namespace through kmem)
 * changes no DIMM, virtio-mem region or firmware range: when no device
 * event came since those were last read whole, take them as then and the
 * dax devices as just scanned, instead of reading the machine's devices
 * again inside the batch. Each block must lie in its own dax device's
 * span. 0, or -errno when that cannot be told: the caller reads it all.
 */
static int reuse_devices(struct runner *c, struct topology *t, int dax_scan, struct block_set *set) {
        _cleanup_(memdev_set_clear) struct memdev_set s = {};
        int r;

        if (t != c->topology || !t->devices_known || !c->devices_read || !c->device_events ||
            atomic_load(c->device_events) != c->devices_read_at)
                return -ESTALE;
        if (dax_scan < 0 || c->dax.n_unreadable > 0 || set->n == 0)
                return -ESTALE;
        for (size_t i = 0; i < set->n; i++)
                if (!set->blocks[i].device || set->blocks[i].attribution_unknown)
                        return -ESTALE;
        r = memdev_set_with_dax(&t->devices, &c->dax, &s);
        if (r < 0)
                return r;
        for (size_t i = 0; i < set->n; i++) {
                const struct memdev *d;
                uint64_t start;

                if (block_phys_start(set->blocks[i].id, t->block_size, &start) < 0)
                        return -ESTALE;
                d = memdev_find(&s, start, t->block_size);
                if (!d || d->kind != MEMDEV_DAX || !streq(d->name, set->blocks[i].device))
                        return -ESTALE;
        }
        topology_set_devices(t, &s, &c->fw_ranges);
        blocks_learn_devices(t, set);
        return 0;
}

/* The kmem probe added the converted device's blocks synchronously: online them now. */
static void online_converted(struct runner *c, struct job *j, const struct pmem_device *dev,
                             const struct pmem_convert_result *conv, uint64_t event_usec) {
        struct pass pass = { .trigger = "dax", .first_event_usec = event_usec, .clock = pass_clock_now() };
        _cleanup_topology_ struct topology *t = NULL;
        struct pmem_devices after = {};
        struct block_set set = {};
        const struct pmem_device *now;
        struct job sub = { .policy = j->policy };
        uint64_t end_usec;
        int r;

        r = topology_load(c->sysfs_root, &t);
        if (r >= 0)
                r = pmem_scan(c->sysfs_root, &after);
        if (r == -ENOMEM || !t) {
                report_log_errno(c->reporter, LOG_WARNING, NULL, r, "%s: converted, but rescanning failed: %m; "
                                 "its blocks come online with their add events", dev->name);
                j->dax_failed++;
                pmem_devices_clear(&after);
                return;
        }
        now = pmem_devices_find(&after, dev->name);
        for (size_t k = 0; now && k < now->n_ranges; k++)
                for (uint64_t a = now->ranges[k].start / t->block_size * t->block_size; a < now->ranges[k].end;
                     a += t->block_size)
                        (void) append_if_offline(c, t, a / t->block_size, 0, true, &set);
        resolve_nodes(c, j->policy, t, &set);
        attribute_blocks(c, &after, r, t->block_size, &set);
        load_devices(c, t, &after, &set);
        pass.devs = &after;
        (void) plan_and_write(c, &sub, t, &set, &pass);
        j->onlined += sub.onlined;
        j->failed += sub.failed;
        j->undecided += sub.undecided;
        j->not_attempted += sub.not_attempted;
        j->excluded += sub.excluded;
        if (sub.onlined > 0) {
                job_note_online(j, sub.first_online_usec);
                job_note_online(j, sub.last_online_usec);
        }
        j->bytes += sub.bytes;
        end_usec = now_usec();  /* one reading: argument order is unspecified */
        (void) pmem_report_device(c->reporter, now ? now : dev, conv, end_usec - pass.clock.start_usec,
                                  end_usec - event_usec, sub.onlined, sub.bytes);
        block_set_clear(&set);
        pmem_devices_clear(&after);
}

/*
 * The devices to consider: those named by dax events, and on rescans
 * (coldplug, lost events, retries) every devdax device there is.
 * Returns the count; names point into j or devs.
 */
static size_t dax_candidates(const struct job *j, const struct pmem_devices *devs, const char **names,
                             uint64_t *event_usec, size_t room) {
        size_t n = 0;

        for (size_t i = 0; i < j->n_dax && n < room; i++) {
                names[n] = j->dax_devices[i];
                event_usec[n++] = j->dax_event_usec[i];
        }
        for (size_t i = 0; j->scan_dax && i < devs->n && n < room; i++) {
                bool named = false;

                if (devs->devices[i].mode != PMEM_MODE_DEVDAX)
                        continue;
                for (size_t k = 0; k < j->n_dax && !named; k++)
                        named = streq(j->dax_devices[k], devs->devices[i].name);
                if (named)
                        continue;
                names[n] = devs->devices[i].name;
                event_usec[n++] = 0;
        }
        return n;
}

/* memmap_on_memory not as the policy asks: warned once, then in each device record only. */
static void report_memmap(struct runner *c, const char *device, const struct pmem_memmap_outcome *m) {
        if (!m->reason[0])
                return;
        report_log(c->reporter, m->unmet && !c->memmap_warned ? LOG_WARNING : LOG_DEBUG, NULL,
                   "%s: converting with memmap_on_memory=%s%s: %s", device, pmem_memmap_to_string(m->effective),
                   m->unmet ? ", not as the policy asks" : "", m->reason);
        if (m->unmet)
                c->memmap_warned = true;
}

/*
 * Convert selected devdax devices to system-ram and online their memory
 * at once. True when nothing was converted (or tried): then the scan in
 * *ret_devs still holds, and the main pass need not read it again.
 */
static bool handle_dax(struct runner *c, struct job *j, struct pmem_devices *ret_devs) {
        struct pmem_devices devs = {};
        _cleanup_free_ const char **names = NULL;
        _cleanup_free_ uint64_t *event_usec = NULL;
        bool unchanged = true;
        size_t n;
        int r;

        if (j->n_dax == 0 && !j->scan_dax)
                return false;
        r = pmem_scan(c->sysfs_root, &devs);
        if (r < 0) {
                report_log_errno(c->reporter, LOG_WARNING, NULL, r, "cannot scan dax devices: %m; trying again later");
                j->dax_failed++;
                pmem_devices_clear(&devs);
                return false;
        }
        names = calloc(j->n_dax + devs.n + 1, sizeof(*names));
        event_usec = calloc(j->n_dax + devs.n + 1, sizeof(*event_usec));
        if (!names || !event_usec) {
                j->dax_failed++;
                pmem_devices_clear(&devs);
                return false;
        }
        n = dax_candidates(j, &devs, names, event_usec, j->n_dax + devs.n);
        for (size_t i = 0; i < n && !atomic_load(c->stop); i++) {
                const struct pmem_device *dev = pmem_devices_find(&devs, names[i]);
                struct pmem_decision d = {};
                struct pmem_convert_result conv = {};
                /* a rescan's device counts from now, so its total includes the bind */
                uint64_t seen_usec = event_usec[i] ? event_usec[i] : now_usec();

                if (!dev)
                        continue;       /* removed again, or unreadable (counted by the scan) */
                r = pmem_decide(dev, j->policy, PMEM_DAXCTL_CONFDIR, &d);
                if (r >= 0 && (d.media == BAD_MEDIA_REFUSED || d.media == BAD_MEDIA_UNKNOWN)) {
                        report_bad_media(c, dev, d.media, 0, d.reason);
                        /* Unknown is undecided: tried again until the list can be read. */
                        j->undecided += d.media == BAD_MEDIA_UNKNOWN;
                        continue;
                }
                if (r < 0 || d.action != PMEM_ACTION_CONVERT) {
                        /* Our own kmem bind comes back as a dax event too, and rescans see every device: not news. */
                        report_log(c->reporter,
                                   dev->mode == PMEM_MODE_SYSTEM_RAM || event_usec[i] == 0 ? LOG_DEBUG : LOG_INFO,
                                   NULL, "%s: not converting: %s", dev->name, r < 0 ? strerror(-r) : d.reason);
                        continue;
                }
                unchanged = false;
                r = pmem_convert(c->sysfs_root, dev->name, d.memmap_on_memory, &conv);
                if (r < 0) {
                        report_log(c->reporter, LOG_ERR, NULL, "%s: conversion to system-ram failed: %s; trying "
                                   "again later", dev->name, conv.reason[0] ? conv.reason : strerror(-r));
                        j->dax_failed++;
                        continue;
                }
                if (!conv.already)
                        report_memmap(c, dev->name, &conv.memmap);
                online_converted(c, j, dev, &conv, seen_usec);
        }
        if (unchanged) {
                *ret_devs = devs;
                return true;
        }
        pmem_devices_clear(&devs);
        return false;
}

/* The adopted blocks are not among the job's ids: the refresh took those into the table first. */
static int append_adopted(struct job *j, const uint64_t *adopted, size_t n) {
        uint64_t *grown = reallocarray(j->ids, j->n_ids + n, sizeof(*grown));

        if (!grown)
                return -ENOMEM;
        memcpy(grown + j->n_ids, adopted, n * sizeof(*grown));
        j->ids = grown;
        j->n_ids += n;
        return 0;
}

/*
 * The topology for this job: the kept one brought up to date with the
 * job's blocks, or read in full for rescans, after removals, and when it
 * had no memory hotplug. Borrowed: the runner keeps it.
 */
static int job_topology(struct runner *c, struct job *j, struct topology **ret,
                        struct topology_error *ret_error) {
        struct topology *t = NULL;
        int r;

        if (c->topology && j->ids && !j->reload_topology) {
                _cleanup_free_ uint64_t *adopted = NULL;
                size_t n_adopted = 0;

                r = topology_sync_machine(c->topology);
                if (r >= 0)
                        r = topology_refresh(c->topology, j->touched, j->n_touched, TOPO_REFRESH_SKIP_ONLINE);
                /*
                 * With the blocks the kernel linked whose events are still on
                 * the way: one batch, not several. Their late add events find
                 * them online in the table and are not read again (an offline
                 * or remove event would have made this job read everything).
                 */
                if (r >= 0 && !j->adopt_linked)
                        r = topology_refresh(c->topology, j->ids, j->n_ids, TOPO_REFRESH_TRUST_NEW);
                else if (r >= 0)
                        r = topology_refresh_adopt(c->topology, j->ids, j->n_ids,
                                                   TOPO_REFRESH_TRUST_NEW | TOPO_REFRESH_SKIP_ONLINE,
                                                   &adopted, &n_adopted);
                if (r >= 0 && n_adopted > 0) {
                        r = append_adopted(j, adopted, n_adopted);
                        if (r >= 0) {
                                j->adopted = n_adopted;
                                report_log(c->reporter, LOG_DEBUG, NULL,
                                           "%zu blocks linked before their add events arrived: in this batch",
                                           n_adopted);
                        }
                }
                if (r >= 0) {
                        *ret = c->topology;
                        return 0;
                }
                if (r == -ENOMEM)
                        return r;
                report_log(c->reporter, LOG_DEBUG, NULL, "reading the topology again: %s",
                           r == -ESTALE ? "no memory blocks when last read" : strerror(-r));
        }
        topology_free(c->topology);
        c->topology = NULL;
        r = topology_load_full(c->sysfs_root, c->need_memory ? TOPO_LOAD_NEED_MEMORY : 0, &t, ret_error);
        if (r < 0)
                return r;
        /* What the load left out (a bad node or CPU attribute), for whoever debugs it. */
        for (size_t i = 0; i < t->n_notes; i++)
                report_log(c->reporter, LOG_DEBUG, NULL, "topology: %s", t->notes[i]);
        if (t->n_notes_dropped > 0)
                report_log(c->reporter, LOG_DEBUG, NULL, "topology: %zu more notes", t->n_notes_dropped);
        c->topology = *ret = t;
        return 0;
}

/*
 * The dax devices for this job, kept in c->dax between jobs: the scan
 * handle_dax() made (fresh), read whole for rescans (events may have been
 * lost), else brought up to date (pmem_scan_update()). 0 or -errno; after
 * a failure no device is known (and the next job scans whole).
 */
static int job_dax_devices(struct runner *c, const struct job *j, struct pmem_devices *fresh) {
        int r;

        if (fresh) {
                pmem_devices_clear(&c->dax);
                c->dax = *fresh;
                *fresh = (struct pmem_devices) {};
                return 0;
        }
        r = j->ids ? pmem_scan_update(c->sysfs_root, &c->dax) : pmem_scan(c->sysfs_root, &c->dax);
        if (r < 0)
                pmem_devices_clear(&c->dax);
        return r;
}

/*
 * Between batches, after a node, CPU, dax device, CXL region or ACPI
 * memory device came or went: read now what the next batch would read
 * first, of the machine, the dax devices and the hotplug devices as the
 * events said (what, WARM_*), so that it finds them current. Each part
 * still checks itself in the batch (topology_sync_machine(),
 * pmem_scan_update(), memdev_load()'s caches): this only moves the
 * reading out of the batch, and stops as soon as a batch waits. Failures
 * cost nothing but that: the batch reads again. The job's end starts the
 * writer threads the machine now wants (prepare_writers()).
 */
static void runner_warm(struct runner *c, unsigned what) {
        uint64_t start = now_usec();
        struct topology *t = c->topology;
        unsigned done = 0;
        int r;

        /* Nothing kept yet: the coldplug job reads it all. */
        if (!t)
                return;
        if ((what & WARM_MACHINE) && !batch_waiting(c)) {
                r = topology_sync_machine(t);
                if (r < 0) {
                        report_log_errno(c->reporter, LOG_DEBUG, NULL, r, "warming: the machine could not be read: %m");
                        topology_free(TAKE_PTR(c->topology));
                        return;
                }
                done |= WARM_MACHINE;
        }
        if ((what & WARM_DAX) && !batch_waiting(c)) {
                r = pmem_scan_update(c->sysfs_root, &c->dax);
                if (r < 0)
                        report_log_errno(c->reporter, LOG_DEBUG, NULL, r, "warming: the dax devices could not be read: %m");
                done |= WARM_DAX;
        }
        if ((what & WARM_DEVICES) && !batch_waiting(c)) {
                load_devices(c, t, &c->dax, NULL);
                done |= WARM_DEVICES;
        }
        report_log(c->reporter, LOG_DEBUG, NULL, "warmed%s%s%s%s in %" PRIu64 " µs", done & WARM_MACHINE ? " the machine" : "",
                   done & WARM_DAX ? " the dax devices" : "", done & WARM_DEVICES ? " the hotplug devices" : "",
                   done != what ? ", and gave way to a batch" : "", now_usec() - start);
}

int runner_process(struct runner *c, struct job *j) {
        struct pass_clock clock = (c->pending_kept_now = false, pass_clock_now());
        struct topology_error terr = {};
        struct pass pass;
        struct topology *t = NULL;
        struct pmem_devices devs = {};
        struct block_set set = {};
        _cleanup_free_ uint64_t *deferred = NULL;
        size_t n_deferred = 0;
        bool scanned = false;
        int r;

        if (j->warm) {
                runner_warm(c, j->warm);
                r = 0;
                goto finish;
        }
        /* A batch with dax events scans the devices once, unless a conversion changed them. */
        if (handle_dax(c, j, &devs))
                scanned = true;
        r = take_carried_over(c, j);
        if (r < 0)
                goto finish;
        if ((j->n_ids == 0 && j->ids) || atomic_load(c->stop)) {
                r = 0;
                goto finish;
        }

        r = job_topology(c, j, &t, &terr);
        if (r < 0) {
                report_log(c->reporter, LOG_ERR, NULL, "cannot read the topology under %s: %s", c->sysfs_root,
                           terr.reason[0] ? terr.reason : strerror(-r));
                goto finish;
        }
        pass_mark(&clock, PHASE_TOPOLOGY);
        r = collect_blocks(c, j, t, &set);
        if (r < 0) {
                report_log_errno(c->reporter, LOG_ERR, NULL, r, "cannot read memory blocks: %m");
                goto finish;
        }
        if (set.n == 0 && !c->dry_run)
                goto finish;
        pass_mark(&clock, PHASE_BLOCKS);
        resolve_nodes(c, j->policy, t, &set);
        r = defer_unresolved(c, t, &set, &deferred);
        if (r < 0) {
                report_log_errno(c->reporter, LOG_ERR, NULL, r, "cannot defer blocks of unknown node: %m");
                goto finish;
        }
        n_deferred = (size_t) r;
        r = 0;
        if (set.n == 0 && !c->dry_run)
                goto finish;
        if (j->policy->movable_ratio > 0) {
                /* The ratio guard needs the zone of blocks the kernel chose for. */
                r = topology_read_zones(t);
                if (r < 0) {
                        report_log_errno(c->reporter, LOG_ERR, NULL, r, "cannot read the zones of online blocks: %m");
                        goto finish;
                }
        }
        pass_mark(&clock, PHASE_NODES);
        r = job_dax_devices(c, j, scanned ? &devs : NULL);
        attribute_blocks(c, &c->dax, r, t->block_size, &set);
        pass_mark(&clock, PHASE_DAX);
        if (reuse_devices(c, t, r, &set) < 0)
                load_devices(c, t, &c->dax, &set);
        else
                report_log(c->reporter, LOG_DEBUG, NULL, "%zu blocks of dax devices: the other hotplug devices "
                           "as last read", set.n);
        pass_mark(&clock, PHASE_DEVICES);
        if (c->dry_run) {
                r = pmem_print_decisions(&c->dax, j->policy, PMEM_DAXCTL_CONFDIR, c->out);
                if (r < 0)
                        report_log_errno(c->reporter, LOG_WARNING, NULL, r, "cannot print dax decisions: %m");
        }
        pass = (struct pass) { .trigger = j->trigger, .first_event_usec = j->first_event_usec, .main = true,
                               .clock = clock, .devs = &c->dax };
        r = plan_and_write(c, j, t, &set, &pass);
finish:
        /* A CPU-less node got its first memory: its HMAT initiators are there to read, between batches. */
        j->warm_after = c->topology && c->topology->stale ? WARM_MACHINE : 0;
        /* Idle next: the writers a next batch would want, started now (the first job's, mostly). */
        if (c->topology && !j->warm_after && !batch_waiting(c))
                prepare_writers(c, c->topology, j->policy);
        /* What the last job kept back, if this one had no write to take it along. */
        if (!c->pending_kept_now)
                say_pending_report(c);
        /* take_carried_over() emptied the list; the next job merges these into its ids. */
        c->deferred = TAKE_PTR(deferred);
        c->n_deferred = n_deferred;
        pmem_devices_clear(&devs);
        block_set_clear(&set);
        return r;
}
