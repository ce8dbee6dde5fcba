/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <sys/param.h>
#include <time.h>
#include "cpuset.h"
#include "handoff.h"
#include "online.h"
#include "sysfs.h"
#include "uring.h"
#include "util.h"

#define WORKER_STACK_SIZE (256 * 1024)


/*
 * FIFO arbiter with up to `limit` holders. Waiters queue in arrival
 * order, so workers of all nodes interleave fairly (a holder keeps the
 * slot for a run of writes_per_turn blocks), and a worker queues with its file
 * already open. A release hands the slot straight to the
 * oldest waiter and wakes only that one: waking every worker per block
 * (a broadcast) cost ~25 futex calls per block with 8 node workers.
 */
struct arbiter_waiter {
        pthread_cond_t cond;
        bool granted;
        struct arbiter_waiter *next;
};

struct arbiter {
        pthread_mutex_t lock;
        struct arbiter_waiter *head, *tail;
        unsigned active, limit;
};

static void arbiter_acquire(struct arbiter *a) {
        struct arbiter_waiter w = {};

        pthread_mutex_lock(&a->lock);
        if (!a->head && a->active < a->limit) {
                a->active++;
                pthread_mutex_unlock(&a->lock);
                return;
        }
        pthread_cond_init(&w.cond, NULL);
        if (a->tail)
                a->tail->next = &w;
        else
                a->head = &w;
        a->tail = &w;
        /* The releaser dequeues us and keeps `active` as is: the slot is ours. */
        while (!w.granted)
                pthread_cond_wait(&w.cond, &a->lock);
        pthread_mutex_unlock(&a->lock);
        pthread_cond_destroy(&w.cond);
}

static void arbiter_release(struct arbiter *a) {
        struct arbiter_waiter *w;

        pthread_mutex_lock(&a->lock);
        w = a->head;
        if (w) {
                a->head = w->next;
                if (!a->head)
                        a->tail = NULL;
                w->granted = true;
                pthread_cond_signal(&w->cond);
        } else
                a->active--;
        pthread_mutex_unlock(&a->lock);
}

struct online_pass {
        const struct online_request *req;
        struct online_result *res;
        struct arbiter arbiter;
        pthread_mutex_t done_lock;
        pthread_cond_t done_cond;
        size_t running;                 /* workers handed to pool threads that have not finished */
        atomic_bool wrote;              /* a write has returned */
        bool wrote_seen;                /* under done_lock: the caller may run after_first_write */
        unsigned writes_per_turn;
        bool chain;                     /* runs of writes go to the kernel as linked chains */
        unsigned retries;
        unsigned backoff_ms, backoff_max_ms;
        int memory_dir_fd;              /* devices/system/memory, -1 without files or when it cannot be opened */
        int memory_dir_error;           /* why not, -errno */
};

/* What a block's turn needs, made ready ahead of it: its state file open and its state read. */
struct ready_block {
        bool done;                      /* prepared (by the helper) */
        int fd;                         /* -1 when the open failed */
        int error;                      /* the open's -errno, 0 if open */
        int state_error;                /* the read's -errno, 0 if state is valid */
        enum block_state state;
};

/*
 * A worker's helper opens the state files of its next blocks and reads
 * their state while the worker writes: the open (a cold kernfs lookup)
 * then overlaps the kernel's onlining instead of sitting between two.
 */
#define PREFETCH_AHEAD 16

/*
 * A writer thread's helper: while a worker runs on that thread, it opens
 * and reads the state files of the worker's next blocks, then waits for
 * the next worker. ready[] and the counters are under lock.
 */
struct prefetcher {
        struct worker *w;               /* whose blocks it prepares; NULL between runs */
        struct ready_block *ready;      /* per item of w */
        size_t claimed;                 /* items [0, claimed) are taken: the helper's in order, or the worker's */
        size_t turn;                    /* the worker is at this item */
        size_t closed;                  /* the helper closed the files of items [0, closed) */
        size_t released;                /* the worker gave back the files of items [0, released) */
        bool quit;                      /* w's run is over: prepare no more */
        bool exit;                      /* the helper thread ends */
        bool started;                   /* the helper thread runs */
        bool helper_waits, worker_waits;        /* who sleeps on cond: wake only them */
        pthread_mutex_t lock;
        pthread_cond_t cond;
        pthread_t thread;
};

/*
 * A writer thread of the pool: pinned to its CPU, it runs the workers
 * passes hand it, one at a time, and sleeps between them.
 */
struct pool_thread {
        struct online_pool *pool;
        int cpu;                        /* -1 = unpinned */
        pthread_t thread;
        struct handoff tasks;           /* workers from passes */
        bool busy;                      /* under pool->lock: a pass holds it */
        unsigned pinned_gen;            /* pool->pin_gen when it last pinned itself */
        bool pinned;                    /* has pinned itself at all */
        int pin_error;                  /* that pin's outcome, 0 or -errno */
        struct prefetcher pf;
        struct uring ring;              /* for chained writes; fd -1 until opened */
        int ring_error;                 /* why it has none, -errno; 0 = none tried or it has one */
        unsigned ring_gen;              /* pool->pin_gen when its writes were bound to cpu */
};

struct online_pool {
        pthread_mutex_t lock;
        struct pool_thread **threads;
        size_t n, allocated;
        atomic_uint pin_gen;
};

/* One worker: one CPU of one group, run by a pool thread (or inline by the pass). */
struct worker {
        struct online_pass *pass;
        size_t group;
        int cpu;                        /* -1 = unpinned */
        size_t *items;                  /* indices into res->blocks */
        size_t n_items;
        size_t first_item;              /* res->blocks index of the group's item 0 */
        struct pool_thread *thread;     /* NULL: run inline, unpinned */
        int pin_error;                  /* 0 or -errno */
        uint64_t first_start, last_end; /* of this worker's writes, 0 if none */
        uint64_t ran_usec, prepared_usec, pinned_usec; /* thread start, first block open, pinned: for the debug log */
        bool holding;                   /* owns a write slot between blocks */
        size_t first_deferred;          /* items from here on are the zones' deferred blocks */
        unsigned streak;                /* writes in the current hold */
        struct prefetcher *pf;          /* its thread's helper for this run; NULL: prepare inline */
        struct uring *ring;             /* its thread's ring for chained writes; NULL: one write per call */
        size_t released;                /* items [0, released) are done with their files */
        size_t chained;                 /* blocks written through a chain */
        unsigned chains;                /* chains run in this run */
        int chain_error;                /* why it wrote block by block though chains were asked for, -errno */
};

static bool stopped(const struct online_pass *pass) {
        return pass->req->stop && atomic_load(pass->req->stop);
}

static int pin_self(int cpu) {
        cpu_set_t *set;
        size_t size;
        int r;

        if (cpu < 0)
                return 0;
        r = cpu_set_one(cpu, &set, &size);
        if (r < 0)
                return r;
        if (sched_setaffinity(0, size, set) < 0)
                r = -errno;
        CPU_FREE(set);
        return r;
}

static void sleep_msec(unsigned ms) {
        struct timespec ts = {
                .tv_sec = ms / 1000,
                .tv_nsec = (long) (ms % 1000) * 1000000L,
        };

        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

static unsigned backoff_for(const struct online_pass *pass, unsigned attempt) {
        uint64_t ms = pass->backoff_ms;

        /* attempt 1 failed -> first backoff; doubles after that. */
        for (unsigned i = 1; i < attempt && ms < UINT32_MAX; i++)
                ms *= 2;
        if (pass->backoff_max_ms > 0 && ms > pass->backoff_max_ms)
                ms = pass->backoff_max_ms;
        return (unsigned) ms;
}

/* The memory directory, opened once per pass: each block's open then walks two components, not the whole path. */
static int open_memory_dir(const char *root, int *ret_fd) {
        int fd = sysfs_open(root, "devices/system/memory", O_PATH | O_DIRECTORY);

        if (fd < 0)
                return fd;
        *ret_fd = fd;
        return 0;
}

static int open_state(const struct online_pass *pass, uint64_t id, int *ret_fd) {
        char rel[64];
        int fd;

        if (pass->memory_dir_fd < 0)
                return pass->memory_dir_error;   /* each block fails as its own open would have */
        /* Per block, and snprintf() was most of the user time spent on one. */
        memcpy(rel, "memory", 6);
        memcpy(rel + 6 + format_u64(rel + 6, id), "/state", sizeof("/state"));
        /* One open for the state check and the write; beneath the tree, never out of it by a link. */
        fd = sysfs_open_beneath(pass->memory_dir_fd, rel, O_RDWR | O_NOCTTY);
        if (fd < 0)
                return fd;
        *ret_fd = fd;
        return 0;
}

/* Through state files (without ops, or with write_file), or not at all (write_state). */
static bool uses_files(const struct online_request *req) {
        return !req->ops || !req->ops->write_state;
}

int online_write_state_file(int fd, const char *value) {
        char line[32];
        int n;

        /*
         * As "echo value > state" writes it. The newline ends the value for
         * whoever reads a regular file back (--sysfs-root), since every
         * value we write is at least as long as the "offline" it replaces.
         */
        n = snprintf(line, sizeof(line), "%s\n", value);
        if (n < 0 || (size_t) n >= sizeof(line))
                return -EINVAL;
        /* The kernel restarts the syscall itself on hotplug lock contention; EINTR is ours. */
        return sysfs_write_fd(fd, line);
}

static int write_state(const struct online_pass *pass, uint64_t id, int fd, const char *value) {
        const struct online_ops *ops = pass->req->ops;

        if (!uses_files(pass->req))
                return ops->write_state(ops->userdata, pass->req->sysfs_root, id, value);
        if (ops && ops->write_file)
                return ops->write_file(ops->userdata, id, fd, value);
        return online_write_state_file(fd, value);
}

/* The block's state now, through its open state file. */
static int read_state(const struct online_pass *pass, uint64_t id, int fd, enum block_state *ret) {
        const struct online_ops *ops = pass->req->ops;
        char buf[32];
        ssize_t n;

        if (!uses_files(pass->req)) {
                if (!ops->read_state)
                        return -EOPNOTSUPP;
                return ops->read_state(ops->userdata, pass->req->sysfs_root, id, ret);
        }
        do
                n = pread(fd, buf, sizeof(buf) - 1, 0);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        buf[n] = 0;
        buf[strcspn(buf, "\n")] = 0;
        *ret = block_state_from_string(buf);
        return 0;
}

static void slot_take(struct worker *w) {
        if (w->holding)
                return;
        arbiter_acquire(&w->pass->arbiter);
        w->holding = true;
        w->streak = 0;
}

static void slot_drop(struct worker *w) {
        if (!w->holding)
                return;
        arbiter_release(&w->pass->arbiter);
        w->holding = false;
}

/* "mo-write-n1", "mo-read-n1": which thread does what for which node, in top -H, ps -L and perf. */
static void name_thread(const char *role, int node) {
        char name[16];  /* the kernel's TASK_COMM_LEN */

        snprintf(name, sizeof(name), "mo-%s-n%d", role, node);
        (void) pthread_setname_np(pthread_self(), name);
}

static struct ready_block prepare_block(const struct online_pass *pass, uint64_t id) {
        struct ready_block rb = { .done = true, .fd = -1 };

        if (uses_files(pass->req))
                rb.error = open_state(pass, id, &rb.fd);
        if (rb.error == 0)
                rb.state_error = read_state(pass, id, rb.fd, &rb.state);
        return rb;
}

/* Prepare w's blocks after the first, PREFETCH_AHEAD ahead of the worker, until its run ends. */
static void prefetch_run(struct prefetcher *pf, struct worker *w) {
        name_thread("read", w->pass->req->plan->groups[w->group].node);
        for (;;) {
                struct ready_block rb;
                size_t i, done;

                pthread_mutex_lock(&pf->lock);
                while (!pf->quit && pf->claimed < w->n_items && pf->claimed >= pf->turn + PREFETCH_AHEAD) {
                        pf->helper_waits = true;
                        pthread_cond_wait(&pf->cond, &pf->lock);
                        pf->helper_waits = false;
                }
                if (pf->quit || pf->claimed >= w->n_items) {
                        pthread_mutex_unlock(&pf->lock);
                        break;
                }
                i = pf->claimed++;
                done = pf->released;    /* the worker has finished with these */
                pthread_mutex_unlock(&pf->lock);

                /*
                 * Closed here, where they were opened: a file freed on
                 * another CPU takes the allocator's slow path.
                 */
                for (; pf->closed < done; pf->closed++)
                        if (pf->ready[pf->closed].fd >= 0) {
                                close(pf->ready[pf->closed].fd);
                                pf->ready[pf->closed].fd = -1;
                        }

                rb = prepare_block(w->pass, w->pass->res->blocks[w->items[i]].id);

                pthread_mutex_lock(&pf->lock);
                pf->ready[i] = rb;
                if (pf->worker_waits)
                        pthread_cond_signal(&pf->cond);
                pthread_mutex_unlock(&pf->lock);
        }
}

/* The helper thread: one run per worker its writer thread runs, until told to exit. */
static void *prefetch_main(void *userdata) {
        struct prefetcher *pf = userdata;

        pthread_mutex_lock(&pf->lock);
        for (;;) {
                struct worker *w;

                while (!pf->w && !pf->exit)
                        pthread_cond_wait(&pf->cond, &pf->lock);
                if (pf->exit)
                        break;
                w = pf->w;
                pthread_mutex_unlock(&pf->lock);
                prefetch_run(pf, w);
                pthread_mutex_lock(&pf->lock);
                /* The run is over: prefetch_stop() waits for this. */
                pf->w = NULL;
                pthread_cond_broadcast(&pf->cond);
        }
        pthread_mutex_unlock(&pf->lock);
        return NULL;
}

/* The helper thread of a writer thread, started once; on failure its workers prepare inline. */
static void prefetcher_init(struct prefetcher *pf) {
        pthread_attr_t attr;

        pthread_mutex_init(&pf->lock, NULL);
        pthread_cond_init(&pf->cond, NULL);
        pthread_attr_init(&attr);
        (void) pthread_attr_setstacksize(&attr, WORKER_STACK_SIZE);
        pf->started = pthread_create(&pf->thread, &attr, prefetch_main, pf) == 0;
        pthread_attr_destroy(&attr);
}

static void prefetcher_done(struct prefetcher *pf) {
        if (pf->started) {
                pthread_mutex_lock(&pf->lock);
                pf->exit = true;
                pthread_cond_broadcast(&pf->cond);
                pthread_mutex_unlock(&pf->lock);
                pthread_join(pf->thread, NULL);
        }
        pthread_cond_destroy(&pf->cond);
        pthread_mutex_destroy(&pf->lock);
}

/*
 * Write order: ascending ids, except that the second block of each zone
 * goes last. After every online the kernel's set_zone_contiguous() walks
 * the zone from its start, pageblock by pageblock, until one is not
 * online. In plain ascending order nothing stops it before the zone's end,
 * so a node's onlines cost O(n^2): 59 ms per block at 519 blocks in our
 * guest, against 1.7 ms for daxctl, whose directory order leaves holes.
 * One block kept offline until the end ends every walk there. A block held
 * over from the last job takes that place in its zone: the hole stays
 * where it is.
 */
static bool held_over(const struct online_request *req, uint64_t id) {
        for (size_t i = 0; i < req->n_held_in; i++)
                if (req->held_in[i] == id)
                        return true;
        return false;
}

static void order_writes(struct worker *w, const struct online_result *res) {
        size_t last[ZONE_KERNEL + 1], seen[ZONE_KERNEL + 1] = {}, n = 0, n_deferred = 0;
        size_t deferred[ZONE_KERNEL + 1];
        bool held[ZONE_KERNEL + 1] = {};

        /* Per zone, the item that goes last: a held-over block, else the second. */
        for (size_t z = 0; z <= ZONE_KERNEL; z++)
                last[z] = SIZE_MAX;
        for (size_t i = 0; i < w->n_items; i++) {
                const struct block_result *br = &res->blocks[w->items[i]];
                enum zone z = br->zone;

                if (z < ZONE_ONLINE || z > ZONE_KERNEL)
                        continue;
                if (held_over(w->pass->req, br->id)) {
                        if (!held[z])
                                last[z] = i;    /* the lowest one keeps the hole */
                        held[z] = true;
                } else if (++seen[z] == 2 && !held[z])
                        last[z] = i;
        }
        for (size_t i = 0; i < w->n_items; i++) {
                enum zone z = res->blocks[w->items[i]].zone;

                if (z >= ZONE_ONLINE && z <= ZONE_KERNEL && last[z] == i)
                        deferred[n_deferred++] = w->items[i];
                else
                        w->items[n++] = w->items[i];
        }
        w->first_deferred = n;
        for (size_t i = 0; i < n_deferred; i++)
                w->items[n++] = deferred[i];
}

/* Hand w's blocks to its thread's helper; without one (no files, one block, no helper) the worker prepares inline. */
static void prefetch_start(struct worker *w) {
        struct prefetcher *pf = w->thread && w->thread->pf.started ? &w->thread->pf : NULL;
        struct ready_block *ready;

        w->pf = NULL;
        if (!pf || !uses_files(w->pass->req) || w->n_items < 2)
                return;
        ready = calloc(w->n_items, sizeof(*ready));
        if (!ready)
                return;
        for (size_t i = 0; i < w->n_items; i++)
                ready[i].fd = -1;
        /* The first block is needed at once: no point waiting for the helper. */
        ready[0] = prepare_block(w->pass, w->pass->res->blocks[w->items[0]].id);
        pthread_mutex_lock(&pf->lock);
        pf->ready = ready;
        pf->claimed = 1;
        pf->turn = pf->closed = pf->released = 0;
        pf->quit = false;
        pf->w = w;
        pthread_cond_signal(&pf->cond);
        pthread_mutex_unlock(&pf->lock);
        w->pf = pf;
}

/*
 * Item i's prepared block: from the helper, or made now when the helper
 * has not taken it up yet (it may still be waking): waiting for it would
 * put its wakeup between two writes. An item the helper is preparing is
 * waited for.
 */
static struct ready_block take_ready(struct worker *w, size_t i) {
        struct prefetcher *pf = w->pf;
        struct ready_block rb;
        bool mine;

        if (!pf)
                return prepare_block(w->pass, w->pass->res->blocks[w->items[i]].id);
        pthread_mutex_lock(&pf->lock);
        mine = i >= pf->claimed;
        if (mine)
                pf->claimed = i + 1;
        while (!mine && !pf->ready[i].done) {
                pf->worker_waits = true;
                pthread_cond_wait(&pf->cond, &pf->lock);
                pf->worker_waits = false;
        }
        rb = pf->ready[i];
        pf->ready[i].fd = -1;
        pf->turn = i + 1;
        pf->released = w->released;     /* publishes release_ready()'s stores */
        /* Wake a sleeping helper once half its window is free, not per block: fewer futex calls. */
        if (pf->helper_waits && pf->claimed <= pf->turn + PREFETCH_AHEAD / 2)
                pthread_cond_signal(&pf->cond);
        pthread_mutex_unlock(&pf->lock);
        return mine ? prepare_block(w->pass, w->pass->res->blocks[w->items[i]].id) : rb;
}

/*
 * The worker is done with item i's file, items in order: the helper closes
 * it once the worker has moved on (take_ready() of the next item publishes
 * the store). A chain takes several items before it gives any back.
 */
static void release_ready(struct worker *w, size_t i, int fd) {
        w->released = i + 1;
        if (fd < 0)
                return;
        if (w->pf)
                w->pf->ready[i].fd = fd;
        else
                close(fd);
}

/* End the helper's run for w and close what it opened and what the worker gave back. */
static void prefetch_stop(struct worker *w) {
        struct prefetcher *pf = w->pf;

        if (!pf)
                return;
        pthread_mutex_lock(&pf->lock);
        pf->quit = true;
        pthread_cond_broadcast(&pf->cond);
        while (pf->w)
                pthread_cond_wait(&pf->cond, &pf->lock);
        pthread_mutex_unlock(&pf->lock);
        for (size_t i = 0; i < w->n_items; i++)
                if (pf->ready[i].fd >= 0)
                        close(pf->ready[i].fd);
        free(pf->ready);
        pf->ready = NULL;
        pf->claimed = 0;
        w->pf = NULL;
}

/* Whether the block prepared for its turn is to be written: not if its open failed, it is gone or not offline. */
static bool worth_writing(const struct ready_block *rb, struct block_result *br) {
        if (rb->error == -ENOENT) {
                br->skipped = true;     /* removed again since its add event */
                return false;
        }
        if (rb->error < 0) {
                br->error = rb->error;
                return false;
        }
        /*
         * Only offline blocks are written. The batch trusts add events; the
         * state is read shortly before the write, through the file the
         * write uses. A failed read leaves the verdict to the write.
         */
        if (rb->state_error == 0 && rb->state != BLOCK_STATE_OFFLINE) {
                br->skipped = true;
                return false;
        }
        return true;
}

/* A write of the pass has returned: the caller's after_first_write may run. */
static void note_first_write(struct online_pass *pass) {
        if (!atomic_load(&pass->wrote) && !atomic_exchange(&pass->wrote, true)) {
                pthread_mutex_lock(&pass->done_lock);
                pass->wrote_seen = true;
                pthread_cond_signal(&pass->done_cond);
                pthread_mutex_unlock(&pass->done_lock);
        }
}

/* One write, timed, with the write slot held for it; false if a stop came first. The write's 0 or -errno in *ret. */
static bool write_in_slot(struct worker *w, struct block_result *br, const struct ready_block *rb, const char *value,
                          int *ret) {
        struct online_pass *pass = w->pass;
        uint64_t t0, t1;
        int r;

        if (stopped(pass))
                return false;
        slot_take(w);
        if (stopped(pass)) {
                slot_drop(w);
                return false;
        }
        t0 = now_usec();
        r = write_state(pass, br->id, rb->fd, value);
        t1 = now_usec();
        note_first_write(pass);
        br->cpu = sched_getcpu();
        /* A failure leads to a backoff or a state read: not with the slot held. */
        if (r != 0 || ++w->streak >= pass->writes_per_turn)
                slot_drop(w);

        br->attempts++;
        if (w->first_start == 0)
                w->first_start = t0;
        w->last_end = t1;
        br->done_usec = t1;
        if (r == 0)
                br->usec = t1 - t0;
        *ret = r;
        return true;
}

/*
 * The kernel says EINVAL for "already online" too: read the state through
 * the file. Online: someone else won the race. Still offline: the zone
 * asked for is not valid for this block (valid_zones, not read up front).
 * Like the planner with valid_zones at hand, a default falls back to the
 * kernel's choice (true: write *value now), an admin's rule stands
 * (EINVAL, reported).
 */
static bool fall_back_after_einval(const struct online_pass *pass, const struct plan_item *item,
                                   struct ready_block *rb, struct block_result *br, const char **value) {
        enum block_state st;

        if (read_state(pass, br->id, rb->fd, &st) < 0)
                return false;
        if (st == BLOCK_STATE_ONLINE) {
                br->error = 0;
                br->already_online = true;
                return false;
        }
        if (st != BLOCK_STATE_OFFLINE || br->fell_back || item->by_rule || item->zone == ZONE_ONLINE)
                return false;
        br->fell_back = true;
        br->zone = ZONE_ONLINE;
        *value = zone_to_string(ZONE_ONLINE);
        return true;
}

/* What the item's block is written: its zone's value, NULL for none. */
static const char *item_value(const struct plan_item *item) {
        return item->zone == ZONE_ONLINE || item->zone == ZONE_MOVABLE || item->zone == ZONE_KERNEL ?
                zone_to_string(item->zone) : NULL;
}

/* After a write that returned r: true to write *value again (a backoff for EBUSY, or the kernel's zone). */
static bool after_write(struct worker *w, const struct plan_item *item, struct ready_block *rb,
                        struct block_result *br, const char **value, int r) {
        struct online_pass *pass = w->pass;

        br->error = r;
        if (r == 0)
                return false;
        if ((r == -EBUSY || r == -EAGAIN) && br->attempts <= pass->retries) {
                sleep_msec(backoff_for(pass, br->attempts));
                job_progress_beat(pass->req->progress);
                return true;
        }
        return r == -EINVAL && fall_back_after_einval(pass, item, rb, br, value);
}

/* Write *value until it is done, failed for good or stopped. */
static void write_until_done(struct worker *w, const struct plan_item *item, struct ready_block *rb,
                             struct block_result *br, const char *value) {
        int r;

        while (write_in_slot(w, br, rb, value, &r))
                if (!after_write(w, item, rb, br, &value, r))
                        return;

        /* Stopped. A block that never reached the kernel stays offline for the next coldplug. */
        if (br->attempts == 0) {
                br->not_attempted = true;
                br->error = -ECANCELED;
        }
}

/* Bring one block online, retrying as the policy allows. Fills br; never fails the batch. rb.fd is the caller's. */
static void online_one(struct worker *w, const struct plan_item *item, struct ready_block rb,
                       struct block_result *br) {
        const char *value = item_value(item);

        if (!value) {
                br->error = -EINVAL;
                return;
        }
        /* Prepared before our turn: the slot is only held for the write itself. */
        if (!worth_writing(&rb, br))
                return;
        write_until_done(w, item, &rb, br, value);
}

/*
 * Pin the thread to its CPU: at its first run, and again after CPUs went
 * on- or offline (online_pool_repin()), since an offlined CPU's threads
 * lose their pin and a pin made before is stale. The outcome, 0 or -errno.
 */
static int pool_thread_pin(struct pool_thread *t) {
        unsigned gen = atomic_load(&t->pool->pin_gen);

        if (t->cpu < 0 || (t->pinned && t->pinned_gen == gen))
                return t->pin_error;
        t->pin_error = pin_self(t->cpu);
        t->pinned = true;
        t->pinned_gen = gen;
        return t->pin_error;
}

/*
 * Chained writes. Between two writes of a block-by-block writer lies a
 * return to userspace and a new system call, each a page-table switch
 * (page-table isolation) that costs most where it is emulated. A chain
 * queues a run of writes as linked io_uring requests: the kernel's io-wq
 * worker, bound to the writer's CPU, goes from one write to the next
 * without leaving the kernel, while the writer reaps each completion.
 * The kernel still serialises the writes, in the order queued; a link
 * that fails breaks the chain and each block left is written block by
 * block, as it would have been without a chain.
 */
#define CHAIN_MAX ONLINE_WRITES_PER_TURN

struct chain_link {
        size_t i;                       /* the worker's item */
        struct ready_block rb;
        char line[32];                  /* "value\n": the kernel reads it until the completion */
        size_t len;
        int res;                        /* the completion's result; INT_MIN = none reaped */
        uint64_t end_usec;              /* when it was reaped */
};

/*
 * The thread's ring, its writes bound to its CPU: opened once, bound
 * again after a repin. NULL, block by block, when the kernel has none, a
 * filter refuses it, or its writes could not be kept on the thread's CPU
 * (they would run off the memory's node): the reason is in ring_error.
 */
static struct uring *pool_thread_ring(struct pool_thread *t) {
        unsigned gen = atomic_load(&t->pool->pin_gen);
        int r;

        if (t->ring_error < 0 || t->cpu < 0 || !t->pinned || t->pin_error < 0)
                return NULL;
        if (t->ring.fd < 0) {
                r = uring_open(CHAIN_MAX, &t->ring);
                if (r < 0) {
                        t->ring_error = r;
                        return NULL;
                }
                t->ring_gen = gen - 1;
        }
        if (t->ring_gen != gen) {
                r = uring_bind_cpu(&t->ring, t->cpu);
                if (r < 0) {
                        uring_close(&t->ring);
                        t->ring_error = r;
                        return NULL;
                }
                t->ring_gen = gen;
        }
        return &t->ring;
}

/* A ring that failed mid-chain is given up: the thread writes block by block from now on. */
static void chain_give_up(struct worker *w, int error) {
        uring_close(w->ring);
        w->thread->ring_error = w->chain_error = error < 0 ? error : -EIO;
        w->ring = NULL;
}

/* Whether a prepared block can join a chain: offline (or unread: the write decides) and with a value to write. */
static bool chainable(const struct ready_block *rb, const struct plan_item *item) {
        return rb->error == 0 && rb->fd >= 0 && (rb->state_error != 0 || rb->state == BLOCK_STATE_OFFLINE) &&
                item_value(item);
}

/* Items from i on that a chain may take: not the zones' deferred blocks while they may be held. */
static size_t chain_end(const struct worker *w) {
        return w->pass->req->hold_last ? w->first_deferred : w->n_items;
}

static const struct plan_item *worker_item(const struct worker *w, size_t i) {
        return &w->pass->req->plan->groups[w->group].items[w->items[i] - w->first_item];
}

/* Item i (prepared in rb) written on its own, finished and its file given back. */
static void write_alone(struct worker *w, size_t i, struct ready_block rb) {
        online_one(w, worker_item(w, i), rb, &w->pass->res->blocks[w->items[i]]);
        job_progress_finished(w->pass->req->progress);
        release_ready(w, i, rb.fd);
}

/*
 * A link's block after its completion: done, or written on block by block
 * from where it stands. start_usec: the chain's submission for the first
 * link, the first link's completion for the others, which share the time
 * since then (shares of them; 1 for the first link).
 */
static void chain_link_finish(struct worker *w, struct chain_link *l, uint64_t start_usec, size_t shares,
                              bool *ret_broken) {
        struct block_result *br = &w->pass->res->blocks[w->items[l->i]];
        const struct plan_item *item = worker_item(w, l->i);
        const char *value = item_value(item);

        /* Never reaped: whether it was written, its state says. */
        if (l->res == INT_MIN)
                l->rb.state_error = read_state(w->pass, br->id, l->rb.fd, &l->rb.state);
        /* Never stored: an earlier link failed, or the hotplug lock was busy (a write restarts then). */
        if (l->res == INT_MIN || l->res == -ECANCELED || l->res == -EINTR) {
                *ret_broken = true;
                online_one(w, item, l->rb, br);
                return;
        }
        br->attempts++;
        br->cpu = w->thread->cpu;       /* its io-wq worker is bound to the writer's CPU */
        br->done_usec = l->end_usec;
        if (w->first_start == 0)
                w->first_start = start_usec;
        w->last_end = l->end_usec;
        w->streak++;
        if (l->res >= 0 && (size_t) l->res == l->len) {
                br->error = 0;
                /* The first link's own time; the others, reaped together, share the rest evenly. */
                br->usec = (l->end_usec - start_usec) / shares;
                w->chained++;
                return;
        }
        *ret_broken = true;
        if (after_write(w, item, &l->rb, br, &value, l->res < 0 ? l->res : -EIO))
                write_until_done(w, item, &l->rb, br, value);
}

/*
 * Write item i (prepared in rb, chainable) and the run after it as one
 * chain, with the write slot held. How many items it has taken and
 * finished, or 0 when no chain could be made: the caller writes i alone.
 */
static size_t chain_run(struct worker *w, size_t i, const struct ready_block *rb) {
        struct online_pass *pass = w->pass;
        struct chain_link links[CHAIN_MAX];
        struct ready_block stray = {};
        size_t n = 1, limit, end = chain_end(w), taken;
        unsigned submitted = 0;
        bool has_stray = false, broken = false;
        uint64_t start;
        int r = 0;

        if (i + 1 >= end || stopped(pass))
                return 0;
        slot_take(w);
        /*
         * Its blocks are taken before its first write: each one the helper
         * has not opened yet is opened here, in front of the run. So the
         * chains grow, 2, 4, 8, then 16 links, while the helper gets ahead.
         */
        limit = MIN((size_t) CHAIN_MAX, (size_t) (pass->writes_per_turn - MIN(w->streak, pass->writes_per_turn)));
        limit = MIN(limit, (size_t) 2 << MIN(w->chains, 3U));
        if (limit < 2 || stopped(pass))
                return 0;
        links[0] = (struct chain_link) { .i = i, .rb = *rb, .res = INT_MIN };
        while (n < limit && i + n < end && !stopped(pass)) {
                size_t j = i + n;
                struct ready_block next = take_ready(w, j);

                job_progress_block(pass->req->progress, pass->req->plan->groups[w->group].node,
                                   pass->res->blocks[w->items[j]].id);
                if (!chainable(&next, worker_item(w, j))) {
                        /* Taken, so finished here after the chain, alone. */
                        stray = next;
                        has_stray = true;
                        break;
                }
                links[n++] = (struct chain_link) { .i = j, .rb = next, .res = INT_MIN };
        }
        if (n == 1) {
                /* Nothing to link it to: one write is one call either way. */
                write_alone(w, i, *rb);
                goto stray;
        }
        for (size_t k = 0; k < n; k++) {
                const char *value = item_value(worker_item(w, links[k].i));

                links[k].len = strlen(value);
                memcpy(links[k].line, value, links[k].len);
                links[k].line[links[k].len++] = '\n';
                r = uring_queue_write(w->ring, links[k].rb.fd, links[k].line, links[k].len, k, k + 1 < n);
                if (r < 0)
                        break;
        }
        start = now_usec();
        if (r >= 0)
                r = uring_submit(w->ring, &submitted);
        /*
         * The completions come in chain order. The first is reaped as it
         * comes: the first block's time is its own. The rest are waited for
         * at once: a wakeup per completion puts the writer, on the CPU the
         * chain runs on, between two writes again.
         */
        for (unsigned got = 0; r >= 0 && got < submitted; got++) {
                uint64_t k;
                int res;

                if (got == 1)
                        r = uring_wait_ready(w->ring, submitted - 1);
                if (r >= 0)
                        r = uring_wait(w->ring, &k, &res);
                if (r >= 0 && k >= n)
                        r = -EIO;       /* not ours: what the ring holds can no longer be told apart */
                if (r < 0)
                        break;
                if (pass->req->ops && pass->req->ops->chain_result)
                        res = pass->req->ops->chain_result(pass->req->ops->userdata,
                                                           pass->res->blocks[w->items[links[k].i]].id, res);
                links[k].res = res;
                links[k].end_usec = now_usec();
                note_first_write(pass);
                job_progress_beat(pass->req->progress);
        }
        if (r < 0 || submitted < n)
                chain_give_up(w, r);
        w->chains++;

        for (size_t k = 0; k < n; k++) {
                chain_link_finish(w, &links[k], k == 0 ? start : links[0].end_usec ?: start, k == 0 ? 1 : n - 1,
                                  &broken);
                job_progress_finished(pass->req->progress);
                release_ready(w, links[k].i, links[k].rb.fd);
        }
        if (broken || w->streak >= pass->writes_per_turn)
                slot_drop(w);
stray:
        taken = n;
        if (has_stray) {
                write_alone(w, i + n, stray);
                taken++;
        }
        return taken;
}

static void worker_run(struct worker *w) {
        struct online_pass *pass = w->pass;
        const struct plan_group *g = &pass->req->plan->groups[w->group];

        name_thread("write", g->node);
        w->ran_usec = now_usec();
        prefetch_start(w);
        w->prepared_usec = now_usec();
        if (w->thread)
                w->pin_error = pool_thread_pin(w->thread);
        /* Chains only through files, and only for the plain write: a test's write_file sees every block. */
        w->ring = w->thread && pass->chain && uses_files(pass->req) && !(pass->req->ops && pass->req->ops->write_file) ?
                pool_thread_ring(w->thread) : NULL;
        if (!w->ring && w->thread && pass->chain)
                w->chain_error = w->thread->ring_error;
        w->pinned_usec = now_usec();

        for (size_t i = 0; i < w->n_items; i++) {
                size_t idx = w->items[i];
                struct block_result *br = &pass->res->blocks[idx];
                struct ready_block rb;
                size_t taken;

                if (stopped(pass)) {
                        br->not_attempted = true;
                        br->error = -ECANCELED;
                        continue;
                }
                rb = take_ready(w, i);
                job_progress_block(pass->req->progress, g->node, br->id);
                if (i >= w->first_deferred && pass->req->hold_last && atomic_load(pass->req->hold_last))
                        br->held = br->skipped = true;
                /* The run's first block alone: its write goes now, with no other block's open before it. */
                else if (w->ring && i > 0 && chainable(&rb, &g->items[idx - w->first_item]) &&
                         (taken = chain_run(w, i, &rb)) > 0) {
                        i += taken - 1;
                        continue;
                } else
                        online_one(w, &g->items[idx - w->first_item], rb, br);
                job_progress_finished(pass->req->progress);
                release_ready(w, i, rb.fd);
        }
        slot_drop(w);
        prefetch_stop(w);
}

static void workers_free(struct worker *workers, size_t n) {
        if (!workers)
                return;
        for (size_t i = 0; i < n; i++)
                free(workers[i].items);
        free(workers);
}

/* Group totals, computed by the caller after every worker has been joined. */
static void group_finish(struct online_result *res, size_t gi, size_t first, size_t n, uint64_t block_size) {
        struct group_result *gr = &res->groups[gi];
        _cleanup_cpuset_ struct bitmask *cpus = cpuset_new();
        uint64_t *lat = NULL;
        size_t n_lat = 0;

        if (n > 0)
                lat = calloc(n, sizeof(*lat));

        for (size_t i = first; i < first + n; i++) {
                const struct block_result *br = &res->blocks[i];

                if (br->attempts > 0)
                        gr->zones_used |= 1U << br->zone;
                if (br->not_attempted || br->skipped)
                        continue;
                if (br->error != 0) {
                        gr->failed++;
                        continue;
                }
                if (br->already_online)
                        continue;
                gr->blocks++;
                if (gr->first_online_usec == 0 || br->done_usec < gr->first_online_usec)
                        gr->first_online_usec = br->done_usec;
                if (cpus && br->cpu >= 0 && br->cpu < CPUSET_MAX)
                        numa_bitmask_setbit(cpus, (unsigned) br->cpu);
                if (lat)
                        lat[n_lat++] = br->usec;
        }
        gr->bytes = block_size * gr->blocks;

        /* Out of memory here only loses detail, never the batch's outcome. */
        if (lat && n_lat > 0) {
                sort_u64(lat, n_lat);
                gr->lat_sorted = lat;
                gr->n_lat = n_lat;
        } else
                free(lat);
        if (!cpus || cpulist_format(cpus, &gr->cpus_used) < 0)
                gr->cpus_used = NULL;
}

/* The result's shape: one block result per plan item, in plan order, and one group result per group. */
static int result_new(const struct plan *plan, struct online_result **ret) {
        _cleanup_online_result_ struct online_result *res = calloc(1, sizeof(*res));

        if (!res)
                return -ENOMEM;
        res->pin_cpu = -1;
        res->n_groups = plan->n_groups;
        for (size_t g = 0; g < plan->n_groups; g++)
                res->n_blocks += plan->groups[g].n_items;
        if (res->n_groups > 0) {
                res->groups = calloc(res->n_groups, sizeof(*res->groups));
                if (!res->groups)
                        return -ENOMEM;
        }
        if (res->n_blocks > 0) {
                res->blocks = calloc(res->n_blocks, sizeof(*res->blocks));
                if (!res->blocks)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(res);
        return 0;
}

static size_t workers_of(const struct plan_group *pg) {
        return MAX(pg->n_cpus, (size_t) 1);
}

/* Each group's items among its workers, as the planner assigned them, each worker's in write order. */
static int workers_assign(struct online_pass *pass, struct worker *workers) {
        const struct plan *plan = pass->req->plan;
        struct online_result *res = pass->res;
        size_t first = 0, wi = 0;

        for (size_t g = 0; g < plan->n_groups; g++) {
                const struct plan_group *pg = &plan->groups[g];
                size_t nw = workers_of(pg);

                res->groups[g].node = pg->node;
                res->groups[g].writer_node = pg->writer_node;
                for (size_t k = 0; k < nw; k++) {
                        struct worker *w = &workers[wi + k];

                        *w = (struct worker) {
                                .pass = pass,
                                .group = g,
                                .cpu = pg->n_cpus > 0 ? pg->cpus[k] : -1,
                                .first_item = first,
                        };
                        if (pg->n_items > 0) {
                                w->items = calloc(pg->n_items, sizeof(*w->items));
                                if (!w->items)
                                        return -ENOMEM;
                        }
                }
                for (size_t i = 0; i < pg->n_items; i++) {
                        const struct plan_item *it = &pg->items[i];
                        struct block_result *br = &res->blocks[first + i];
                        /* A bad worker index is the planner's bug; keep the block anyway. */
                        struct worker *w = &workers[wi + (it->worker >= 0 ? (size_t) it->worker % nw : 0)];

                        *br = (struct block_result) { .id = it->block->id, .node = it->block->node,
                                                      .zone = it->zone, .cpu = -1 };
                        w->items[w->n_items++] = first + i;
                }
                for (size_t k = 0; k < nw; k++)
                        order_writes(&workers[wi + k], res);
                first += pg->n_items;
                wi += nw;
        }
        return 0;
}

/* The pass's worker has finished: the pass waits for the last one. */
static void pass_worker_done(struct online_pass *pass) {
        pthread_mutex_lock(&pass->done_lock);
        if (--pass->running == 0)
                pthread_cond_signal(&pass->done_cond);
        pthread_mutex_unlock(&pass->done_lock);
}

static void *pool_thread_main(void *userdata) {
        struct pool_thread *t = userdata;
        struct worker *w;

        /* Before pinning: the helper may run on any CPU, in parallel. */
        prefetcher_init(&t->pf);
        /* Pinned before its first pass: the migration to a busy CPU is no pass's wait. Its ring too. */
        (void) pool_thread_pin(t);
        (void) pool_thread_ring(t);
        while ((w = handoff_take(&t->tasks))) {
                worker_run(w);
                /* Free for the next pass before this one hears that it is done. */
                pthread_mutex_lock(&t->pool->lock);
                t->busy = false;
                pthread_mutex_unlock(&t->pool->lock);
                pass_worker_done(w->pass);
        }
        prefetcher_done(&t->pf);
        if (t->ring.fd >= 0)
                uring_close(&t->ring);
        return NULL;
}

static void pool_thread_free(struct pool_thread *t) {
        if (!t)
                return;
        handoff_close(&t->tasks);
        pthread_join(t->thread, NULL);
        handoff_done(&t->tasks);
        free(t);
}

/* A new thread for cpu, busy for the caller's pass; NULL when it cannot be started. */
static struct pool_thread *pool_thread_new(struct online_pool *p, int cpu) {
        struct pool_thread *t = calloc(1, sizeof(*t));
        pthread_attr_t attr;
        int r;

        if (!t)
                return NULL;
        *t = (struct pool_thread) { .pool = p, .cpu = cpu, .busy = true, .ring.fd = -1 };
        handoff_init(&t->tasks);
        /* Writers need little stack; the daemon mlockall()s, so keep it small. */
        pthread_attr_init(&attr);
        (void) pthread_attr_setstacksize(&attr, WORKER_STACK_SIZE);
        r = pthread_create(&t->thread, &attr, pool_thread_main, t);
        pthread_attr_destroy(&attr);
        if (r != 0) {
                handoff_done(&t->tasks);
                free(t);
                return NULL;
        }
        pthread_mutex_lock(&p->lock);
        if (GROW(p->threads, p->allocated, p->n + 1) < 0) {
                pthread_mutex_unlock(&p->lock);
                pool_thread_free(t);
                return NULL;
        }
        p->threads[p->n++] = t;
        pthread_mutex_unlock(&p->lock);
        return t;
}

/* An idle thread of cpu, now busy for the caller's pass, or a new one; NULL when none can be had. */
static struct pool_thread *pool_take(struct online_pool *p, int cpu) {
        pthread_mutex_lock(&p->lock);
        for (size_t i = 0; i < p->n; i++) {
                struct pool_thread *t = p->threads[i];

                if (!t->busy && t->cpu == cpu) {
                        t->busy = true;
                        pthread_mutex_unlock(&p->lock);
                        return t;
                }
        }
        pthread_mutex_unlock(&p->lock);
        return pool_thread_new(p, cpu);
}

int online_pool_new(struct online_pool **ret) {
        struct online_pool *p = calloc(1, sizeof(*p));

        if (!p)
                return -ENOMEM;
        pthread_mutex_init(&p->lock, NULL);
        *ret = p;
        return 0;
}

void online_pool_free(struct online_pool *p) {
        if (!p)
                return;
        for (size_t i = 0; i < p->n; i++)
                pool_thread_free(p->threads[i]);
        free(p->threads);
        pthread_mutex_destroy(&p->lock);
        free(p);
}

void online_pool_freep(struct online_pool **p) {
        online_pool_free(*p);
}

int online_pool_prepare(struct online_pool *p, const int *cpus, size_t n) {
        int r = 0;

        for (size_t i = 0; i < n; i++) {
                struct pool_thread *t;
                bool have = false;

                pthread_mutex_lock(&p->lock);
                for (size_t k = 0; k < p->n && !have; k++)
                        have = p->threads[k]->cpu == cpus[i] && !p->threads[k]->busy;
                pthread_mutex_unlock(&p->lock);
                if (have)
                        continue;
                t = pool_thread_new(p, cpus[i]);
                if (!t) {
                        r = -EAGAIN;
                        continue;
                }
                pthread_mutex_lock(&p->lock);
                t->busy = false;
                pthread_mutex_unlock(&p->lock);
        }
        return r;
}

void online_pool_repin(struct online_pool *p) {
        if (p)
                atomic_fetch_add(&p->pin_gen, 1);
}

size_t online_pool_threads(struct online_pool *p) {
        size_t n;

        if (!p)
                return 0;
        pthread_mutex_lock(&p->lock);
        n = p->n;
        pthread_mutex_unlock(&p->lock);
        return n;
}

/*
 * Hand each worker with blocks to a pool thread of its CPU, and wait for
 * them all, running after_first_write once the first write returned. A
 * worker no thread could be had for runs here, unpinned.
 */
static void workers_run(struct online_pass *pass, struct online_pool *pool, struct worker *workers, size_t n) {
        void (*hook)(void *userdata) = pass->req->after_first_write;

        for (size_t i = 0; i < n; i++) {
                struct pool_thread *t;

                if (workers[i].n_items == 0)
                        continue;
                t = pool_take(pool, workers[i].cpu);
                if (!t)
                        continue;
                workers[i].thread = t;
                pthread_mutex_lock(&pass->done_lock);
                pass->running++;
                pthread_mutex_unlock(&pass->done_lock);
                handoff_give(&t->tasks, &workers[i]);
        }
        for (size_t i = 0; i < n; i++)
                if (workers[i].n_items > 0 && !workers[i].thread) {
                        workers[i].cpu = -1;
                        worker_run(&workers[i]);
                }
        pthread_mutex_lock(&pass->done_lock);
        while (pass->running > 0) {
                if (hook && pass->wrote_seen) {
                        pthread_mutex_unlock(&pass->done_lock);
                        hook(pass->req->userdata);
                        hook = NULL;
                        pthread_mutex_lock(&pass->done_lock);
                        continue;
                }
                pthread_cond_wait(&pass->done_cond, &pass->done_lock);
        }
        pthread_mutex_unlock(&pass->done_lock);
        if (hook)
                hook(pass->req->userdata);
}

/* One group's span, and the first writer's steps for the debug log. */
static void group_span(struct online_result *res, struct group_result *gr, const struct worker *ws, size_t nw,
                       uint64_t pass_start, uint64_t *first_t0) {
        for (size_t k = 0; k < nw; k++) {
                const struct worker *w = &ws[k];

                if (w->first_start && (gr->start_usec == 0 || w->first_start < gr->start_usec))
                        gr->start_usec = w->first_start;
                if (w->first_start && (*first_t0 == 0 || w->first_start < *first_t0)) {
                        /* The first writer's way to its first write. */
                        *first_t0 = w->first_start;
                        res->first_steps_usec[ONLINE_STEP_THREAD] = w->ran_usec - pass_start;
                        res->first_steps_usec[ONLINE_STEP_OPEN] = w->prepared_usec - w->ran_usec;
                        res->first_steps_usec[ONLINE_STEP_PIN] = w->pinned_usec - w->prepared_usec;
                        res->first_steps_usec[ONLINE_STEP_SLOT] = w->first_start - w->pinned_usec;
                }
                if (w->last_end > gr->end_usec)
                        gr->end_usec = w->last_end;
                res->chained += w->chained;
                if (w->chain_error < 0 && res->chain_errno == 0)
                        res->chain_errno = -w->chain_error;
                if (w->pin_error < 0 && !res->pin_failed) {
                        res->pin_failed = true;
                        res->pin_errno = -w->pin_error;
                        res->pin_cpu = w->cpu;
                }
        }
}

/* All workers are joined: their results are ours to sum up, group by group. */
static void result_collect(struct online_pass *pass, const struct worker *workers, uint64_t pass_start) {
        const struct plan *plan = pass->req->plan;
        struct online_result *res = pass->res;
        size_t first = 0, wi = 0;
        uint64_t first_t0 = 0;

        for (size_t g = 0; g < res->n_groups; g++) {
                const struct plan_group *pg = &plan->groups[g];
                struct group_result *gr = &res->groups[g];

                group_span(res, gr, &workers[wi], workers_of(pg), pass_start, &first_t0);
                group_finish(res, g, first, pg->n_items, pass->req->block_size);
                res->failed += gr->failed;
                res->bytes += gr->bytes;
                if (gr->start_usec && (res->start_usec == 0 || gr->start_usec < res->start_usec))
                        res->start_usec = gr->start_usec;
                if (gr->end_usec > res->end_usec)
                        res->end_usec = gr->end_usec;
                if (gr->first_online_usec && (res->first_online_usec == 0 ||
                                              gr->first_online_usec < res->first_online_usec))
                        res->first_online_usec = gr->first_online_usec;
                first += pg->n_items;
                wi += workers_of(pg);
        }
}

/* The pass's settings: the policy's, or the defaults without one. */
static struct online_pass pass_new(const struct online_request *req, struct online_result *res, int memory_dir_fd,
                          int memory_dir_error) {
        struct online_pass pass = {
                .req = req,
                .memory_dir_fd = memory_dir_fd,
                .memory_dir_error = memory_dir_error,
                .res = res,
                .arbiter.limit = 1,
                .writes_per_turn = req->writes_per_turn > 0 ? req->writes_per_turn : ONLINE_WRITES_PER_TURN,
                .chain = true,
                /* The daemon always passes a policy; without one (unit tests), its defaults. */
                .retries = POLICY_DEFAULT_RETRIES,
                .backoff_ms = POLICY_DEFAULT_RETRY_BACKOFF_MS,
                .backoff_max_ms = POLICY_DEFAULT_RETRY_BACKOFF_MAX_MS,
        };

        if (req->policy) {
                pass.arbiter.limit = MAX(req->policy->max_concurrent_writes, 1U);
                pass.chain = req->policy->write_chain;
                pass.retries = req->policy->retries;
                pass.backoff_ms = req->policy->retry_backoff_ms;
                pass.backoff_max_ms = req->policy->retry_backoff_max_ms;
        }
        return pass;
}

int online_write(const struct online_request *req, struct online_result **ret) {
        _cleanup_online_result_ struct online_result *res = NULL;
        _cleanup_(online_pool_freep) struct online_pool *own_pool = NULL;
        _cleanup_close_ int memory_dir_fd = -1;
        struct worker *workers = NULL;
        uint64_t pass_start = now_usec();
        size_t n_workers = 0;
        struct online_pass pass;
        int r, memory_dir_error = 0;

        if (!req || !req->plan || !ret)
                return -EINVAL;
        if (req->ops && !req->ops->write_state && !req->ops->write_file && !req->ops->chain_result)
                return -EINVAL;
        if (uses_files(req) && !req->sysfs_root)
                return -EINVAL;

        r = result_new(req->plan, &res);
        if (r < 0)
                return r;
        for (size_t g = 0; g < req->plan->n_groups; g++)
                n_workers += workers_of(&req->plan->groups[g]);
        if (n_workers > 0) {
                workers = calloc(n_workers, sizeof(*workers));
                if (!workers)
                        return -ENOMEM;
        }
        /* Without it every block's open fails with the directory's error, as it would have alone. */
        if (uses_files(req))
                memory_dir_error = open_memory_dir(req->sysfs_root, &memory_dir_fd);
        pass = pass_new(req, res, memory_dir_fd, memory_dir_error);

        r = workers_assign(&pass, workers);
        /* Without the caller's pool, threads for this pass only. */
        if (r >= 0 && !req->pool)
                r = online_pool_new(&own_pool);
        if (r >= 0) {
                pthread_mutex_init(&pass.arbiter.lock, NULL);
                pthread_mutex_init(&pass.done_lock, NULL);
                pthread_cond_init(&pass.done_cond, NULL);
                workers_run(&pass, req->pool ?: own_pool, workers, n_workers);
                pthread_cond_destroy(&pass.done_cond);
                pthread_mutex_destroy(&pass.done_lock);
                pthread_mutex_destroy(&pass.arbiter.lock);
                result_collect(&pass, workers, pass_start);
                *ret = TAKE_PTR(res);
        }
        workers_free(workers, n_workers);
        return r;
}

void online_result_free(struct online_result *r) {
        if (!r)
                return;
        for (size_t i = 0; i < r->n_groups; i++) {
                free(r->groups[i].cpus_used);
                free(r->groups[i].lat_sorted);
        }
        free(r->groups);
        free(r->blocks);
        free(r);
}

void online_result_freep(struct online_result **r) {
        online_result_free(*r);
}
