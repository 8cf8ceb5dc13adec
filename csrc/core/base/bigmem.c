/* Big growable blocks: see bigmem.h. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "base/bigmem.h"

#define HUGE_SIZE ((size_t)2 << 20)

#if defined(__SANITIZE_ADDRESS__)
#define USE_MAPS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define USE_MAPS 0
#endif
#endif
#ifndef USE_MAPS
#define USE_MAPS 1
#endif

/* Before each block: its mapping's length (0: malloc's) and its size. */
struct hdr {
	size_t map, size;
};

static size_t map_len(size_t bytes)
{
	size_t n = bytes + sizeof(struct hdr);

	if (n < bytes || n > SIZE_MAX - HUGE_SIZE)
		return 0;
	return (n + HUGE_SIZE - 1) & ~(HUGE_SIZE - 1);
}

static int wants_map(size_t bytes)
{
	return USE_MAPS && bytes >= BIGMEM_MIN;
}

/*
 * Prefaulting (bigmem__prefault): a helper thread faults in the pages of
 * each new mapping, and of each grown mapping's new tail, 2 MiB at a time
 * from the front, while the caller goes on; the caller's own first touch
 * then finds the page there (or waits for the fault already under way).
 * A fault is the kernel zeroing a page, and on a VM a page new to the
 * guest costs the host's fault too: 600 MB/s here against 16 GB/s for a
 * page the guest has used (bench/first_touch.c).
 *
 * The helper writes each page's first word with itself, atomically, which
 * leaves whatever the caller has written there, and it never touches a block the
 * caller has let go: pf_forget drops a block's pieces from the queue and
 * waits out the piece being touched before the block is unmapped or moved.
 * Page faults take no process-wide lock on kernels with per-VMA locks
 * (6.4 and later), so the helper's faults do not hold up the caller's
 * mmap, mremap and munmap; MADV_POPULATE_WRITE would (mmap_lock).
 */
#define PF_QUEUE 64

struct pf_range {
	struct hdr *h;
	size_t from, to;            /* bytes from h, HUGE_SIZE multiples */
};

static pthread_mutex_t pf_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pf_work = PTHREAD_COND_INITIALIZER;
static pthread_cond_t pf_idle = PTHREAD_COND_INITIALIZER;
static pthread_t pf_thread;
static int pf_running, pf_stop, pf_atfork;
static int pf_ever;                 /* read without the lock: set once, before any range */
static struct hdr *pf_busy;         /* the block the helper is touching */
static struct pf_range pf_q[PF_QUEUE];
static unsigned pf_n;

/* Writes each 4 KiB page of [p, p + len) without changing it: a
 * compare-and-swap of a word with itself, atomic against the caller's
 * own stores to it (a failed one reads the new value and tries again). */
static void pf_touch(char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i += 4096) {
		uint32_t *w = (uint32_t *)(void *)(p + i);
		uint32_t v = __atomic_load_n(w, __ATOMIC_RELAXED);
		while (!__atomic_compare_exchange_n(w, &v, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			;
	}
}

static void *pf_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&pf_lock);
	while (!pf_stop) {
		struct pf_range *r;
		char *base;
		size_t from, len;
		if (!pf_n) {
			pthread_cond_wait(&pf_work, &pf_lock);
			continue;
		}
		/* the newest range first: the block the caller fills now */
		r = &pf_q[pf_n - 1];
		from = r->from;
		len = r->to - from < HUGE_SIZE ? r->to - from : HUGE_SIZE;
		pf_busy = r->h;
		base = (char *)r->h;
		if ((r->from += len) >= r->to)
			pf_n--;
		pthread_mutex_unlock(&pf_lock);
		pf_touch(base + from, len);
		pthread_mutex_lock(&pf_lock);
		pf_busy = NULL;
		pthread_cond_broadcast(&pf_idle);
	}
	pthread_mutex_unlock(&pf_lock);
	return NULL;
}

/* fork(2) copies the lock as it is and no helper: the child starts with
 * an empty queue, no helper and the lock free. */
static void pf_prepare(void)
{
	pthread_mutex_lock(&pf_lock);
}

static void pf_parent(void)
{
	pthread_mutex_unlock(&pf_lock);
}

static void pf_child(void)
{
	pf_n = 0;
	pf_busy = NULL;
	pf_running = 0;
	pthread_mutex_unlock(&pf_lock);
}

/* Queues [from, to) of block h for the helper (dropped when the queue is
 * full: the caller then faults those pages itself). */
static void pf_queue(struct hdr *h, size_t from, size_t to)
{
	if (!__atomic_load_n(&pf_ever, __ATOMIC_RELAXED) || from >= to)
		return;
	pthread_mutex_lock(&pf_lock);
	if (pf_running && pf_n < PF_QUEUE) {
		pf_q[pf_n].h = h;
		pf_q[pf_n].from = from;
		pf_q[pf_n].to = to;
		pf_n++;
		pthread_cond_signal(&pf_work);
	}
	pthread_mutex_unlock(&pf_lock);
}

/* Before block h is unmapped or moved: the helper will not touch it. */
static void pf_forget(struct hdr *h)
{
	unsigned i, k = 0;

	if (!__atomic_load_n(&pf_ever, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&pf_lock);
	for (i = 0; i < pf_n; i++)
		if (pf_q[i].h != h)
			pf_q[k++] = pf_q[i];
	pf_n = k;
	while (pf_busy == h)
		pthread_cond_wait(&pf_idle, &pf_lock);
	pthread_mutex_unlock(&pf_lock);
}

int bigmem__prefault(int on)
{
	sigset_t all, old;
	int rc = 0;

	if (!USE_MAPS)
		return 0;    /* no mapping to fault in */
	pthread_mutex_lock(&pf_lock);
	if (on && !pf_running) {
		if (!pf_atfork) {
			if ((rc = pthread_atfork(pf_prepare, pf_parent, pf_child)) != 0)
				goto out;
			pf_atfork = 1;
		}
		/* the helper takes no signal: they go to the threads that asked */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		pf_stop = 0;
		rc = pthread_create(&pf_thread, NULL, pf_main, NULL);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (rc)
			goto out;
		pf_running = 1;
		__atomic_store_n(&pf_ever, 1, __ATOMIC_RELAXED);
	} else if (!on && pf_running) {
		pf_stop = 1;
		pf_n = 0;
		pthread_cond_broadcast(&pf_work);
		pthread_mutex_unlock(&pf_lock);
		pthread_join(pf_thread, NULL);
		pthread_mutex_lock(&pf_lock);
		pf_running = 0;
	}
out:
	pthread_mutex_unlock(&pf_lock);
	return -rc;
}

/* A mapping of len bytes, advised for huge pages (the advice may fail:
 * a kernel without THP maps small pages, as malloc would). */
static struct hdr *map_new(size_t len)
{
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		return NULL;
#ifdef MADV_HUGEPAGE
	(void)madvise(m, len, MADV_HUGEPAGE);
#endif
	return m;
}

static void *alloc(size_t bytes, int zero)
{
	struct hdr *h;

	if (wants_map(bytes)) {
		size_t len = map_len(bytes);
		if (!len || !(h = map_new(len)))
			return NULL;
		h->map = len;
		pf_queue(h, 0, len);
	} else {
		if (bytes > SIZE_MAX - sizeof *h)
			return NULL;
		h = zero ? calloc(1, sizeof *h + bytes) : malloc(sizeof *h + bytes);
		if (!h)
			return NULL;
		h->map = 0;
	}
	h->size = bytes;
	return h + 1;
}

void *bigmem__calloc(size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size) {
		errno = ENOMEM;
		return NULL;
	}
	return alloc(n * size, 1);
}

void *bigmem__malloc(size_t bytes)
{
	return alloc(bytes, 0);
}

void *bigmem__realloc(void *p, size_t bytes)
{
	struct hdr *h = p ? (struct hdr *)p - 1 : NULL, *n;
	size_t len;

	if (!h)
		return alloc(bytes, 0);
	if (h->map) {
		if (bytes + sizeof *h <= h->map && bytes + sizeof *h > bytes) {
			h->size = bytes;
			return p;
		}
		len = map_len(bytes);
		if (!len)
			return NULL;
		pf_forget(h);
		n = mremap(h, h->map, len, MREMAP_MAYMOVE);
		if (n == MAP_FAILED)
			return NULL;
		if (len > n->map)
			pf_queue(n, n->map, len);
		n->map = len;
	} else if (wants_map(bytes)) {
		void *q = alloc(bytes, 0);
		if (!q)
			return NULL;
		memcpy(q, p, h->size < bytes ? h->size : bytes);
		free(h);
		return q;
	} else {
		if (bytes > SIZE_MAX - sizeof *h || !(n = realloc(h, sizeof *h + bytes)))
			return NULL;
		n->map = 0;
	}
	n->size = bytes;
	return n + 1;
}

void *bigmem__recalloc(void *p, size_t bytes)
{
	struct hdr *h = p ? (struct hdr *)p - 1 : NULL;
	size_t old = h ? h->size : 0, end = bytes;
	char *n;

	/* Zeroed by hand: the bytes an existing mapping held (a block shrunk
	 * in place keeps old data there) or that malloc gave.  The pages
	 * mremap adds and a new mapping's are zero already. */
	if (h && h->map) {
		if (end > h->map - sizeof *h)
			end = h->map - sizeof *h;
	} else if (wants_map(bytes)) {
		end = old;
	}
	if ((n = bigmem__realloc(p, bytes)) && end > old)
		memset(n + old, 0, end - old);
	return n;
}

void bigmem__free(void *p)
{
	struct hdr *h;

	if (!p)
		return;
	h = (struct hdr *)p - 1;
	if (h->map) {
		pf_forget(h);
		munmap(h, h->map);
	}
	else
		free(h);
}

int bigmem__mapped(const void *p)
{
	return p && ((const struct hdr *)p - 1)->map != 0;
}
