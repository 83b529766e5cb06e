/* Fuzz target: reading the store's journal at start-up (journal_parse,
 * src/turnd/store/store_journal.c). A journal a crash or a bad disk left behind must
 * never crash turnd or keep it from starting, and what it carries out must be
 * whole frames in order. The frames' hashes would stop a fuzzer at every
 * mutation, so the target frames the bodies it is given itself, each with its
 * length and the right hash, and then adds the input's tail as it is (a torn
 * or garbled end). Every list handed out must follow the last one's number,
 * from the applied one on, and hold writes of known kinds.
 *
 * Input: byte 0  the last hand-over the database applied
 *        byte 1  bit i: body i goes to the second file (bodies 0..7)
 *        then    bodies, each a 2-byte little-endian length and its bytes, until
 *                one does not fit: the rest is appended to the first file raw */
#include "fuzz_support.h"
#include "turnd/store/store_journal.h"
#include "turnd/store/write_list.h"

#include <sodium.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct seen {
  uint64_t next; /* the number the next list must have */
};

static int take(void *ctx, uint64_t gen, struct write_list *l) {
  struct seen *s = ctx;
  CHECK(gen == s->next);
  s->next++;
  for (const struct write *wr = l->first; wr != NULL; wr = wr->next) {
    CHECK((unsigned)wr->kind < WRITE__COUNT);
    CHECK(wr->owner == NULL);
    CHECK(wr->blob != NULL || wr->blob_len == 0);
    for (int i = 0; i < 3; i++) /* each string ends within its write */
      if (wr->s[i] != NULL) CHECK(strlen(wr->s[i]) < SIZE_MAX);
  }
  write_list_free(l);
  return 0;
}

static void put_u32(struct fuzz_log *f, uint32_t v) {
  unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8),
                        (unsigned char)(v >> 16), (unsigned char)(v >> 24)};
  fuzz_log_put(f, b, sizeof b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  CHECK(sodium_init() >= 0);
  if (size < 2) return 0;
  uint64_t applied = data[0];
  unsigned second = data[1];
  size_t off = 2;
  struct fuzz_log file[2] = {{NULL, 0, 0}, {NULL, 0, 0}};
  for (unsigned i = 0; off + 2 <= size; i++) {
    size_t body = (size_t)data[off] | (size_t)data[off + 1] << 8;
    if (body > size - off - 2) break;
    struct fuzz_log *f = &file[i < 8 && (second >> i) & 1];
    unsigned char hash[16];
    crypto_generichash(hash, sizeof hash, data + off + 2, body, NULL, 0);
    put_u32(f, (uint32_t)body);
    fuzz_log_put(f, hash, sizeof hash);
    fuzz_log_put(f, data + off + 2, body);
    off += 2 + body;
  }
  fuzz_log_put(&file[0], data + off, size - off);
  const unsigned char *const files[2] = {file[0].p, file[1].p};
  const size_t len[2] = {file[0].len, file[1].len};
  struct seen s = {applied + 1};
  char err[128];
  (void)journal_parse(files, len, 2, applied, take, &s, err, sizeof err);
  free(file[0].p);
  free(file[1].p);
  return 0;
}
