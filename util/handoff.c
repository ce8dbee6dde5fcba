/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "handoff.h"

void handoff_init(struct handoff *h) {
        *h = (struct handoff) {};
        pthread_mutex_init(&h->lock, NULL);
        pthread_cond_init(&h->cond, NULL);
}

void handoff_done(struct handoff *h) {
        pthread_cond_destroy(&h->cond);
        pthread_mutex_destroy(&h->lock);
}

void handoff_give(struct handoff *h, void *item) {
        pthread_mutex_lock(&h->lock);
        h->item = item;
        pthread_cond_signal(&h->cond);
        pthread_mutex_unlock(&h->lock);
}

void *handoff_take(struct handoff *h) {
        void *item;

        pthread_mutex_lock(&h->lock);
        while (!h->item && !h->closed)
                pthread_cond_wait(&h->cond, &h->lock);
        item = h->item;
        h->item = NULL;
        pthread_mutex_unlock(&h->lock);
        return item;
}

void handoff_close(struct handoff *h) {
        pthread_mutex_lock(&h->lock);
        h->closed = true;
        pthread_cond_signal(&h->cond);
        pthread_mutex_unlock(&h->lock);
}
