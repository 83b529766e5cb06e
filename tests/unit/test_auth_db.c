/* DIR/auth.db (src/turnd/auth/auth_db.c): devices by name and hash, pairing codes
 * that work once and only until they expire, settings, and the change check
 * that tells turnd an admin command wrote. Each test has a fresh folder. */
#define _XOPEN_SOURCE 700 /* mkdtemp */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "turnd/auth/auth_db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct fixture {
  char dir[64];
  struct auth_db *db;
};

static int setup(void **state) {
  struct fixture *fx = calloc(1, sizeof *fx);
  snprintf(fx->dir, sizeof fx->dir, "/tmp/turnd-auth-XXXXXX");
  if (mkdtemp(fx->dir) == NULL) return -1;
  char err[256];
  fx->db = auth_db_open(fx->dir, 2000, err, sizeof err);
  *state = fx;
  return fx->db != NULL ? 0 : -1;
}

static int teardown(void **state) {
  struct fixture *fx = *state;
  auth_db_close(fx->db);
  static const char *const files[] = {"auth.db", "auth.db-wal", "auth.db-shm"};
  for (size_t i = 0; i < 3; i++) {
    char path[128];
    snprintf(path, sizeof path, "%s/%s", fx->dir, files[i]);
    remove(path);
  }
  rmdir(fx->dir);
  free(fx);
  return 0;
}

static void hash_of(const char *s, unsigned char out[CREDENTIAL_HASH_LEN]) {
  credential_token_hash(s, strlen(s), out);
}

struct seen {
  size_t n;
  char names[4][80];
  int64_t ids[4];
};

static int collect(void *ctx, int64_t id, const char *name,
                   const unsigned char hash[CREDENTIAL_HASH_LEN], uint64_t created_ms,
                   uint64_t last_seen_ms) {
  (void)hash;
  (void)created_ms;
  (void)last_seen_ms;
  struct seen *s = ctx;
  if (s->n < 4) {
    snprintf(s->names[s->n], sizeof s->names[0], "%s", name);
    s->ids[s->n++] = id;
  }
  return 0;
}

static void test_auth_db_devices(void **state) {
  struct fixture *fx = *state;
  unsigned char h1[CREDENTIAL_HASH_LEN], h2[CREDENTIAL_HASH_LEN];
  hash_of("one", h1);
  hash_of("two", h2);
  assert_int_equal(auth_db_device_add(fx->db, "phone", h1, 1000), 0);
  assert_int_equal(auth_db_device_add(fx->db, "phone", h2, 1000), 1); /* name taken */
  assert_int_equal(auth_db_device_named(fx->db, "phone"), 1);
  assert_int_equal(auth_db_device_named(fx->db, "laptop"), 0);
  assert_int_equal(auth_db_device_add(fx->db, "laptop", h2, 2000), 0);
  struct seen s = {0};
  assert_int_equal(auth_db_devices_each(fx->db, collect, &s), 0);
  assert_int_equal(s.n, 2);
  assert_string_equal(s.names[0], "phone");
  int64_t old_id = s.ids[0];
  assert_int_equal(auth_db_device_remove(fx->db, "phone"), 0);
  assert_int_equal(auth_db_device_remove(fx->db, "phone"), 1);
  /* A device paired again under the old name gets a new id: nothing cached
   * under the old one can stand for it. */
  assert_int_equal(auth_db_device_add(fx->db, "phone", h1, 3000), 0);
  memset(&s, 0, sizeof s);
  assert_int_equal(auth_db_devices_each(fx->db, collect, &s), 0);
  assert_int_equal(s.n, 2);
  assert_string_equal(s.names[1], "phone");
  assert_true(s.ids[1] > old_id);
  assert_true(auth_db_name_ok("my phone"));
  assert_false(auth_db_name_ok(""));
  assert_false(auth_db_name_ok("tab\there"));
}

/* A code works once, and only before it expires. */
static void test_auth_db_codes_once_and_until_expiry(void **state) {
  struct fixture *fx = *state;
  unsigned char code[CREDENTIAL_HASH_LEN], other[CREDENTIAL_HASH_LEN];
  assert_true(credential_code_hash("ABCD-EFGH", 9, code));
  assert_true(credential_code_hash("ABCD-EFGJ", 9, other));
  assert_int_equal(auth_db_code_add(fx->db, code, 10000, 0), 0);
  assert_int_equal(auth_db_code_valid(fx->db, other, 5000), 0);
  assert_int_equal(auth_db_code_take(fx->db, other, 5000), 0);
  assert_int_equal(auth_db_code_valid(fx->db, code, 9999), 1);
  assert_int_equal(auth_db_code_valid(fx->db, code, 10000), 0); /* expired */
  assert_int_equal(auth_db_code_take(fx->db, code, 10000), 0);
  assert_int_equal(auth_db_code_take(fx->db, code, 9999), 1);
  assert_int_equal(auth_db_code_take(fx->db, code, 9999), 0); /* used */
  /* Adding a code drops the expired ones. */
  assert_int_equal(auth_db_code_add(fx->db, other, 30000, 20000), 0);
  assert_int_equal(auth_db_code_take(fx->db, code, 0), 0);
}

static void test_auth_db_settings(void **state) {
  struct fixture *fx = *state;
  char v[16];
  assert_int_equal(auth_db_get(fx->db, "locked", v, sizeof v), 0);
  assert_int_equal(auth_db_set(fx->db, "locked", "1"), 0);
  assert_int_equal(auth_db_get(fx->db, "locked", v, sizeof v), 1);
  assert_string_equal(v, "1");
  assert_int_equal(auth_db_get(fx->db, "locked", v, 1), 0); /* does not fit */
  assert_int_equal(auth_db_set(fx->db, "locked", NULL), 0);
  assert_int_equal(auth_db_get(fx->db, "locked", v, sizeof v), 0);
}

/* Another connection's commit shows as a change; our own writes do not. */
static void test_auth_db_changed_by_another(void **state) {
  struct fixture *fx = *state;
  auth_db_changed(fx->db);
  assert_int_equal(auth_db_changed(fx->db), 0);
  assert_int_equal(auth_db_set(fx->db, "url", "http://127.0.0.1:1"), 0);
  assert_int_equal(auth_db_changed(fx->db), 0);
  char err[256];
  struct auth_db *admin = auth_db_open(fx->dir, 2000, err, sizeof err);
  assert_non_null(admin);
  assert_int_equal(auth_db_device_remove(admin, "nobody"), 1); /* nothing written */
  unsigned char h[CREDENTIAL_HASH_LEN];
  hash_of("three", h);
  assert_int_equal(auth_db_device_add(admin, "tablet", h, 1), 0);
  auth_db_close(admin);
  assert_int_equal(auth_db_changed(fx->db), 1);
  assert_int_equal(auth_db_changed(fx->db), 0);
}

int main(void) {
  if (credential_init() != 0) return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_auth_db_devices, setup, teardown),
      cmocka_unit_test_setup_teardown(test_auth_db_codes_once_and_until_expiry, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_auth_db_settings, setup, teardown),
      cmocka_unit_test_setup_teardown(test_auth_db_changed_by_another, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
