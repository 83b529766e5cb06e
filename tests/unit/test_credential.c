/* Tokens, pairing codes and the PIN (src/turnd/auth/credential.c): their form, how
 * a typed code is read, and that hashes and PIN checks tell right from wrong. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "turnd/auth/credential.h"

#include <string.h>

static bool in_set(char c, const char *set) {
  return c != '\0' && strchr(set, c) != NULL;
}

static void test_credential_token_form_and_randomness(void **state) {
  (void)state;
  char a[CREDENTIAL_TOKEN_LEN + 1], b[CREDENTIAL_TOKEN_LEN + 1];
  credential_token_new(a);
  credential_token_new(b);
  assert_int_equal(strlen(a), CREDENTIAL_TOKEN_LEN);
  assert_memory_equal(a, "turnd_", 6);
  for (size_t i = 6; i < CREDENTIAL_TOKEN_LEN; i++)
    assert_true(in_set(a[i], "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                             "0123456789-_"));
  assert_string_not_equal(a, b);
  unsigned char ha[CREDENTIAL_HASH_LEN], hb[CREDENTIAL_HASH_LEN],
      ha2[CREDENTIAL_HASH_LEN];
  credential_token_hash(a, strlen(a), ha);
  credential_token_hash(b, strlen(b), hb);
  credential_token_hash(a, strlen(a), ha2);
  assert_true(credential_hash_equal(ha, ha2));
  assert_false(credential_hash_equal(ha, hb));
}

static void test_credential_code_form(void **state) {
  (void)state;
  char code[CREDENTIAL_CODE_LEN + 1];
  credential_code_new(code);
  assert_int_equal(strlen(code), 9);
  assert_int_equal(code[4], '-');
  for (size_t i = 0; i < 9; i++)
    if (i != 4) assert_true(in_set(code[i], "0123456789ABCDEFGHJKMNPQRSTVWXYZ"));
}

/* The owner may type a code in lower case, without the dash or with spaces, and
 * with O, I or L for 0, 1 and 1: all read as the same code. */
static void test_credential_code_as_typed(void **state) {
  (void)state;
  unsigned char want[CREDENTIAL_HASH_LEN], got[CREDENTIAL_HASH_LEN];
  assert_true(credential_code_hash("A0B1-C2D3", 9, want));
  static const char *const same[] = {"a0b1-c2d3", "A0B1C2D3",  "A0B1 C2D3",
                                     "AOBI-C2D3", "aobl c2d3", "A-0-B-1-C-2-D-3"};
  for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
    assert_true(credential_code_hash(same[i], strlen(same[i]), got));
    assert_true(credential_hash_equal(want, got));
  }
  static const char *const different[] = {"A0B1-C2D4", "B0B1-C2D3"};
  for (size_t i = 0; i < sizeof different / sizeof different[0]; i++) {
    assert_true(credential_code_hash(different[i], strlen(different[i]), got));
    assert_false(credential_hash_equal(want, got));
  }
  static const char *const bad[] = {"",          "A0B1-C2D",    "A0B1-C2D33", "A0B1-C2DU",
                                    "A0B1_C2D3", "A0B1-C2D3\n", "A0B1\0C2D3"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_false(credential_code_hash(bad[i], i == 6 ? 9 : strlen(bad[i]), got));
}

static void test_credential_pin(void **state) {
  (void)state;
  assert_true(credential_pin_ok("1234", 4));
  assert_true(credential_pin_ok("a longer pass phrase", 20));
  assert_false(credential_pin_ok("123", 3));
  assert_false(credential_pin_ok("12\n34", 5));
  char long_pin[CREDENTIAL_PIN_MAX + 1];
  memset(long_pin, '7', sizeof long_pin);
  assert_true(credential_pin_ok(long_pin, CREDENTIAL_PIN_MAX));
  assert_false(credential_pin_ok(long_pin, CREDENTIAL_PIN_MAX + 1));

  char stored[CREDENTIAL_PIN_HASH_CAP];
  assert_int_equal(credential_pin_hash("2468", 4, stored), 0);
  assert_null(strstr(stored, "2468")); /* only the hash is kept */
  assert_memory_equal(stored, "$argon2id$", 10);
  assert_true(credential_pin_verify(stored, "2468", 4));
  assert_false(credential_pin_verify(stored, "2469", 4));
  assert_false(credential_pin_verify(stored, "24680", 5));
  assert_false(credential_pin_verify("not a hash", "2468", 4));
}

int main(void) {
  if (credential_init() != 0) return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_credential_token_form_and_randomness),
      cmocka_unit_test(test_credential_code_form),
      cmocka_unit_test(test_credential_code_as_typed),
      cmocka_unit_test(test_credential_pin),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
