/* The store's journal (see store_journal.h). A frame on disk:
 *
 *   u32 body length | 16-byte BLAKE2b of the body | body
 *   body: u64 gen | u32 writes | each write:
 *     u8 kind | u8 which strings and blob are there (bits 0-2, 3)
 *     | u64 num[3] | u32 string lengths[3] | u64 blob length | the bytes
 *
 * Numbers are little-endian. The hash tells a frame that a crash cut short, or
 * that a power cut left as zeros, from a whole one. */
#include "store_journal.h"

#include "turn/turn.h"
#include "write_list.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Past this, appends move to the other file once it is empty. */
#define JOURNAL_SWITCH_BYTES (4u << 20)
#define HASH_BYTES           16
#define HEAD_BYTES           (4 + HASH_BYTES)
#define WRITE_HEAD_BYTES     (1 + 1 + 3 * 8 + 3 * 4 + 8)
/* A frame's body is never this long (a turn's log is at most 64 MiB). */
#define BODY_MAX ((size_t)1 << 31)

static void put_u32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

static void put_u64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get_u32(const unsigned char *p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++)
    v |= (uint32_t)p[i] << (8 * i);
  return v;
}

static uint64_t get_u64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++)
    v |= (uint64_t)p[i] << (8 * i);
  return v;
}

/* ------------------------------------------------------------------ append */

/* The frame of l as one buffer (owned), or NULL when out of memory. */
static unsigned char *frame_of(uint64_t gen, const struct write_list *l,
                               size_t *len_out) {
  size_t body = 8 + 4;
  uint32_t count = 0;
  for (const struct write *wr = l->first; wr != NULL; wr = wr->next, count++) {
    body += WRITE_HEAD_BYTES + wr->blob_len;
    for (int i = 0; i < 3; i++)
      body += wr->slen[i];
  }
  if (body >= BODY_MAX) return NULL;
  unsigned char *f = malloc(HEAD_BYTES + body);
  if (f == NULL) return NULL;
  unsigned char *p = f + HEAD_BYTES;
  put_u64(p, gen);
  put_u32(p + 8, count);
  p += 12;
  for (const struct write *wr = l->first; wr != NULL; wr = wr->next) {
    unsigned char *head = p;
    p += WRITE_HEAD_BYTES;
    unsigned flags = wr->blob != NULL ? 8u : 0u;
    head[0] = (unsigned char)wr->kind;
    for (int i = 0; i < 3; i++) {
      put_u64(head + 2 + 8 * i, wr->num[i]);
      if (wr->s[i] != NULL) {
        flags |= 1u << i;
        memcpy(p, wr->s[i], wr->slen[i]);
        p += wr->slen[i];
      }
      put_u32(head + 26 + 4 * i, (uint32_t)wr->slen[i]);
    }
    head[1] = (unsigned char)flags;
    put_u64(head + 38, wr->blob_len);
    if (wr->blob_len > 0) memcpy(p, wr->blob, wr->blob_len);
    p += wr->blob_len;
  }
  put_u32(f, (uint32_t)body);
  crypto_generichash(f + 4, HASH_BYTES, f + HEAD_BYTES, body, NULL, 0);
  *len_out = HEAD_BYTES + body;
  return f;
}

static int write_all(int fd, const unsigned char *p, size_t len) {
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    p += n;
    len -= (size_t)n;
  }
  return 0;
}

int journal_append(struct journal *j, uint64_t gen, const struct write_list *l) {
  if (!j->on) return -1;
  size_t len = 0;
  unsigned char *f = frame_of(gen, l, &len);
  pthread_mutex_lock(&j->lock);
  int other = 1 - j->cur;
  if (j->size[j->cur] >= JOURNAL_SWITCH_BYTES && j->size[other] == 0 && !j->emptying)
    j->cur = other;
  int cur = j->cur;
  pthread_mutex_unlock(&j->lock);
  /* Only this thread appends, and the writer never empties the file in use: the
   * write needs no lock. */
  bool built = f != NULL;
  int rc = built ? write_all(j->fd[cur], f, len) : -1;
  int write_errno = errno;
  free(f);
  if (rc != 0) {
    /* A later frame after a missing one would be lost at the next start (the
     * replay stops at a gap), so nothing more is appended: from now on readers
     * wait for the database's commits. */
    fprintf(stderr,
            "turnd: store: cannot append to %s (%s); events now wait for the"
            " database\n",
            j->path[cur], built ? strerror(write_errno) : "no frame: out of memory");
    j->on = false;
    return -1;
  }
  pthread_mutex_lock(&j->lock);
  j->size[cur] += len;
  j->last_gen[cur] = gen;
  pthread_mutex_unlock(&j->lock);
  return 0;
}

void journal_release(struct journal *j, uint64_t committed_gen) {
  if (!j->lock_made) return;
  pthread_mutex_lock(&j->lock);
  int other = 1 - j->cur;
  bool empty_it = j->fd[other] >= 0 && j->size[other] > 0 &&
                  j->last_gen[other] <= committed_gen && !j->emptying;
  if (empty_it) j->emptying = true;
  pthread_mutex_unlock(&j->lock);
  if (!empty_it) return;
  /* The loop moves to this file only once its size reads 0, after this. */
  int rc = ftruncate(j->fd[other], 0);
  pthread_mutex_lock(&j->lock);
  if (rc == 0) {
    j->size[other] = 0;
    j->last_gen[other] = 0;
  }
  j->emptying = false;
  pthread_mutex_unlock(&j->lock);
}

/* ------------------------------------------------------------------ replay */

struct frame {
  uint64_t gen;
  const unsigned char *body; /* after the gen */
  size_t len;
};

struct frames {
  struct frame *items;
  size_t n, cap;
};

/* The whole file at path into *data (owned; NULL and 0 when it does not exist). */
static int read_file(const char *path, unsigned char **data, size_t *len) {
  *data = NULL;
  *len = 0;
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? 0 : -1;
  struct stat sb;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    close(fd);
    return -1;
  }
  size_t size = (size_t)sb.st_size, got = 0;
  unsigned char *buf = malloc(size > 0 ? size : 1);
  while (buf != NULL && got < size) {
    ssize_t n = read(fd, buf + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += (size_t)n;
  }
  close(fd);
  if (buf == NULL) return -1;
  if (got != size) { /* a frame not read would be lost when the files are emptied */
    free(buf);
    return -1;
  }
  *data = buf;
  *len = got;
  return 0;
}

/* The whole frames of one file, up to the first that is cut short or whose
 * hash does not match. */
static int scan(const unsigned char *p, size_t len, struct frames *out) {
  while (len >= HEAD_BYTES) {
    size_t body = get_u32(p);
    if (body < 12 || body > len - HEAD_BYTES) break;
    unsigned char hash[HASH_BYTES];
    crypto_generichash(hash, HASH_BYTES, p + HEAD_BYTES, body, NULL, 0);
    if (sodium_memcmp(hash, p + 4, HASH_BYTES) != 0) break;
    struct frame *grown = turn_grow(out->items, out->n, &out->cap, sizeof *grown, 64);
    if (grown == NULL) return -1;
    out->items = grown;
    out->items[out->n++] =
        (struct frame){get_u64(p + HEAD_BYTES), p + HEAD_BYTES + 8, body - 8};
    p += HEAD_BYTES + body;
    len -= HEAD_BYTES + body;
  }
  return 0;
}

static int by_gen(const void *a, const void *b) {
  uint64_t x = ((const struct frame *)a)->gen, y = ((const struct frame *)b)->gen;
  return x < y ? -1 : x > y;
}

/* The writes of a frame's body (after its gen) into l. A body that does not
 * read as writes (it cannot, with a matching hash, but for a bug) is -1. */
static int writes_of(const unsigned char *p, size_t len, struct write_list *l) {
  if (len < 4) return -1;
  uint32_t count = get_u32(p);
  p += 4;
  len -= 4;
  for (uint32_t k = 0; k < count; k++) {
    if (len < WRITE_HEAD_BYTES || p[0] >= WRITE__COUNT) return -1;
    unsigned flags = p[1];
    uint64_t num[3];
    const char *s[3] = {NULL, NULL, NULL};
    size_t slen[3], need = 0;
    for (int i = 0; i < 3; i++) {
      num[i] = get_u64(p + 2 + 8 * i);
      slen[i] = get_u32(p + 26 + 4 * i);
      need += slen[i];
    }
    uint64_t blob_len = get_u64(p + 38);
    if (blob_len > len || need > len - blob_len ||
        WRITE_HEAD_BYTES + need + blob_len > len)
      return -1;
    const unsigned char *q = p + WRITE_HEAD_BYTES;
    for (int i = 0; i < 3; i++) {
      if (flags & (1u << i)) s[i] = (const char *)q;
      q += slen[i];
    }
    struct write *wr = write_new((enum write_kind)p[0], s, slen, num,
                                 (flags & 8u) ? q : NULL, (size_t)blob_len, NULL);
    if (wr == NULL) return -1;
    if (l->first == NULL)
      l->first = wr;
    else
      l->last->next = wr;
    l->last = wr;
    size_t used = WRITE_HEAD_BYTES + need + (size_t)blob_len;
    p += used;
    len -= used;
  }
  return 0;
}

static void journal_paths(const char *dir, char path[2][4200]) {
  for (int i = 0; i < 2; i++)
    snprintf(path[i], 4200, "%s/turnd.journal-%d", dir, i);
}

int journal_parse(const unsigned char *const data[], const size_t len[], size_t n_files,
                  uint64_t applied_gen, journal_replay_cb *cb, void *ctx, char *err,
                  size_t cap) {
  struct frames fr = {NULL, 0, 0};
  int rc = 0;
  for (size_t i = 0; i < n_files && rc == 0; i++)
    if (scan(data[i], len[i], &fr) != 0) {
      snprintf(err, cap, "out of memory");
      rc = -1;
    }
  if (rc == 0 && fr.n > 0) qsort(fr.items, fr.n, sizeof *fr.items, by_gen);
  uint64_t next = applied_gen + 1;
  for (size_t i = 0; i < fr.n && rc == 0; i++) {
    if (fr.items[i].gen < next) continue; /* committed before the crash */
    if (fr.items[i].gen > next) break;    /* nothing after a gap was shown */
    struct write_list l = {NULL, NULL};
    if (writes_of(fr.items[i].body, fr.items[i].len, &l) != 0) {
      write_list_free(&l);
      snprintf(err, cap, "cannot read the journal's frame %llu",
               (unsigned long long)next);
      rc = -1;
    } else if (cb(ctx, next, &l) != 0) {
      snprintf(err, cap, "cannot carry out the journal's frame %llu",
               (unsigned long long)next);
      rc = -1;
    }
    next++;
  }
  free(fr.items);
  return rc;
}

int journal_replay(const char *dir, uint64_t applied_gen, journal_replay_cb *cb,
                   void *ctx, char *err, size_t cap) {
  if (sodium_init() < 0) {
    snprintf(err, cap, "cannot start libsodium");
    return -1;
  }
  char path[2][4200];
  journal_paths(dir, path);
  unsigned char *data[2] = {NULL, NULL};
  size_t len[2] = {0, 0};
  int rc = 0;
  for (int i = 0; i < 2 && rc == 0; i++)
    if (read_file(path[i], &data[i], &len[i]) != 0) {
      snprintf(err, cap, "cannot read %s", path[i]);
      rc = -1;
    }
  const unsigned char *const files[2] = {data[0], data[1]};
  if (rc == 0) rc = journal_parse(files, len, 2, applied_gen, cb, ctx, err, cap);
  free(data[0]);
  free(data[1]);
  return rc;
}

int journal_open(struct journal *j, const char *dir, char *err, size_t cap) {
  memset(j, 0, sizeof *j);
  j->fd[0] = j->fd[1] = -1;
  journal_paths(dir, j->path);
  for (int i = 0; i < 2; i++) {
    j->fd[i] =
        open(j->path[i], O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (j->fd[i] < 0 || ftruncate(j->fd[i], 0) != 0) {
      snprintf(err, cap, "cannot open %s: %s", j->path[i], strerror(errno));
      return -1;
    }
  }
  if (pthread_mutex_init(&j->lock, NULL) != 0) {
    snprintf(err, cap, "cannot set up the journal");
    return -1;
  }
  j->lock_made = true;
  j->on = true;
  return 0;
}

void journal_close(struct journal *j) {
  for (int i = 0; i < 2; i++) {
    if (j->fd[i] >= 0) close(j->fd[i]);
    j->fd[i] = -1;
  }
  if (j->lock_made) pthread_mutex_destroy(&j->lock);
  j->lock_made = false;
  j->on = false;
}
