/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <linux/io_uring.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "cpuset.h"
#include "uring.h"

static int sys_enter(int fd, unsigned to_submit, unsigned min_complete, unsigned flags) {
        return (int) syscall(__NR_io_uring_enter, fd, to_submit, min_complete, flags, NULL, 0);
}

int uring_open(unsigned entries, struct uring *ret) {
        struct io_uring_params p = {};
        struct uring r = { .fd = -1 };
        int fd, e;

        if (entries == 0)
                return -EINVAL;
        /* io_uring's file is close-on-exec always. */
        fd = (int) syscall(__NR_io_uring_setup, entries, &p);
        if (fd < 0)
                return -errno;
        r.fd = fd;
        r.entries = p.sq_entries;
        r.sq_map_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
        r.cq_map_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
        if (p.features & IORING_FEAT_SINGLE_MMAP) {
                if (r.cq_map_len > r.sq_map_len)
                        r.sq_map_len = r.cq_map_len;
                r.cq_map_len = 0;
        }
        r.sq_map = mmap(NULL, r.sq_map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
                        IORING_OFF_SQ_RING);
        if (r.sq_map == MAP_FAILED)
                goto fail;
        if (r.cq_map_len > 0) {
                r.cq_map = mmap(NULL, r.cq_map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
                                IORING_OFF_CQ_RING);
                if (r.cq_map == MAP_FAILED) {
                        r.cq_map = NULL;
                        goto fail;
                }
        } else
                r.cq_map = r.sq_map;
        r.sqes_len = p.sq_entries * sizeof(struct io_uring_sqe);
        r.sqes = mmap(NULL, r.sqes_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQES);
        if (r.sqes == MAP_FAILED) {
                r.sqes = NULL;
                goto fail;
        }
        r.sq_head = (unsigned *) ((char *) r.sq_map + p.sq_off.head);
        r.sq_tail = (unsigned *) ((char *) r.sq_map + p.sq_off.tail);
        r.sq_mask = (unsigned *) ((char *) r.sq_map + p.sq_off.ring_mask);
        r.sq_array = (unsigned *) ((char *) r.sq_map + p.sq_off.array);
        r.cq_head = (unsigned *) ((char *) r.cq_map + p.cq_off.head);
        r.cq_tail = (unsigned *) ((char *) r.cq_map + p.cq_off.tail);
        r.cq_mask = (unsigned *) ((char *) r.cq_map + p.cq_off.ring_mask);
        r.cqes = (struct io_uring_cqe *) ((char *) r.cq_map + p.cq_off.cqes);
        *ret = r;
        return 0;
fail:
        e = errno;
        if (r.sq_map == MAP_FAILED)
                r.sq_map = NULL;
        uring_close(&r);
        return -e;
}

void uring_close(struct uring *r) {
        if (r->sqes)
                munmap(r->sqes, r->sqes_len);
        if (r->cq_map && r->cq_map != r->sq_map)
                munmap(r->cq_map, r->cq_map_len);
        if (r->sq_map)
                munmap(r->sq_map, r->sq_map_len);
        if (r->fd >= 0)
                close(r->fd);
        *r = (struct uring) { .fd = -1 };
}

int uring_bind_cpu(struct uring *r, int cpu) {
        size_t size;
        cpu_set_t *set;
        int ret;

        ret = cpu_set_one(cpu, &set, &size);
        if (ret < 0)
                return ret;
        if (syscall(__NR_io_uring_register, r->fd, IORING_REGISTER_IOWQ_AFF, set, size) < 0)
                ret = -errno;
        CPU_FREE(set);
        return ret;
}

int uring_queue_write(struct uring *r, int fd, const void *buf, size_t len, uint64_t user_data, bool link) {
        unsigned tail = *r->sq_tail + r->queued;
        unsigned head = __atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE);
        struct io_uring_sqe *sqe;
        unsigned idx;

        if (tail - head >= r->entries)
                return -EBUSY;
        if (len > UINT32_MAX)
                return -EINVAL;
        idx = tail & *r->sq_mask;
        sqe = &r->sqes[idx];
        memset(sqe, 0, sizeof(*sqe));
        sqe->opcode = IORING_OP_WRITE;
        sqe->fd = fd;
        sqe->addr = (uint64_t) (uintptr_t) buf;
        sqe->len = (uint32_t) len;
        sqe->off = 0;
        sqe->flags = link ? IOSQE_IO_LINK : 0;
        sqe->user_data = user_data;
        r->sq_array[idx] = idx;
        r->queued++;
        return 0;
}

int uring_submit(struct uring *r, unsigned *ret_submitted) {
        int n;

        unsigned queued = r->queued;

        /* The sqes are written before the kernel can see the tail that covers them. */
        __atomic_store_n(r->sq_tail, *r->sq_tail + queued, __ATOMIC_RELEASE);
        r->queued = 0;
        do
                n = sys_enter(r->fd, queued, 0, 0);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        *ret_submitted = (unsigned) n;
        return 0;
}

int uring_wait_ready(struct uring *r, unsigned n) {
        for (;;) {
                unsigned ready = __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE) - *r->cq_head;

                if (ready >= n)
                        return 0;
                if (sys_enter(r->fd, 0, n - ready, IORING_ENTER_GETEVENTS) < 0 && errno != EINTR)
                        return -errno;
        }
}

int uring_wait(struct uring *r, uint64_t *ret_user_data, int *ret_res) {
        unsigned head = *r->cq_head;
        struct io_uring_cqe *cqe;

        while (head == __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE))
                if (sys_enter(r->fd, 0, 1, IORING_ENTER_GETEVENTS) < 0 && errno != EINTR)
                        return -errno;
        cqe = &r->cqes[head & *r->cq_mask];
        *ret_user_data = cqe->user_data;
        *ret_res = cqe->res;
        __atomic_store_n(r->cq_head, head + 1, __ATOMIC_RELEASE);
        return 0;
}
