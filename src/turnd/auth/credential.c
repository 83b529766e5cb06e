/* Tokens, pairing codes and the PIN on libsodium; see credential.h. */
#include "credential.h"

#include <sodium.h>
#include <string.h>

static const char code_alphabet[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"; /* Crockford */

int credential_init(void) {
  return sodium_init() < 0 ? -1 : 0;
}

void credential_wipe(void *p, size_t len) {
  sodium_memzero(p, len);
}

void credential_token_new(char out[CREDENTIAL_TOKEN_LEN + 1]) {
  unsigned char raw[32];
  randombytes_buf(raw, sizeof raw);
  memcpy(out, "turnd_", 6);
  sodium_bin2base64(out + 6, CREDENTIAL_TOKEN_LEN + 1 - 6, raw, sizeof raw,
                    sodium_base64_VARIANT_URLSAFE_NO_PADDING);
  sodium_memzero(raw, sizeof raw);
}

void credential_code_new(char out[CREDENTIAL_CODE_LEN + 1]) {
  for (size_t i = 0; i < CREDENTIAL_CODE_LEN; i++)
    out[i] = i == 4 ? '-' : code_alphabet[randombytes_uniform(32)];
  out[CREDENTIAL_CODE_LEN] = '\0';
}

void credential_token_hash(const char *token, size_t len,
                           unsigned char out[CREDENTIAL_HASH_LEN]) {
  crypto_generichash(out, CREDENTIAL_HASH_LEN, (const unsigned char *)token, len, NULL,
                     0);
}

/* The code character c stands for, or 0 when none. */
static char code_char(char c) {
  if (c >= 'a' && c <= 'z') c = (char)(c - 'a' + 'A');
  if (c == 'O') return '0';
  if (c == 'I' || c == 'L') return '1';
  return strchr(code_alphabet, c) != NULL && c != '\0' ? c : 0;
}

bool credential_code_hash(const char *typed, size_t len,
                          unsigned char out[CREDENTIAL_HASH_LEN]) {
  char norm[8];
  size_t n = 0;
  for (size_t i = 0; i < len; i++) {
    if (typed[i] == '-' || typed[i] == ' ') continue;
    char c = code_char(typed[i]);
    if (c == 0 || n == sizeof norm) return false;
    norm[n++] = c;
  }
  if (n != sizeof norm) return false;
  crypto_generichash(out, CREDENTIAL_HASH_LEN, (const unsigned char *)norm, n, NULL, 0);
  return true;
}

bool credential_hash_equal(const unsigned char a[CREDENTIAL_HASH_LEN],
                           const unsigned char b[CREDENTIAL_HASH_LEN]) {
  return sodium_memcmp(a, b, CREDENTIAL_HASH_LEN) == 0;
}

bool credential_pin_ok(const char *pin, size_t len) {
  if (len < CREDENTIAL_PIN_MIN || len > CREDENTIAL_PIN_MAX) return false;
  for (size_t i = 0; i < len; i++)
    if ((unsigned char)pin[i] < 0x20 || pin[i] == 0x7f) return false;
  return true;
}

int credential_pin_hash(const char *pin, size_t len, char out[CREDENTIAL_PIN_HASH_CAP]) {
  _Static_assert(crypto_pwhash_STRBYTES <= CREDENTIAL_PIN_HASH_CAP, "PIN hash cap");
  return crypto_pwhash_str(out, pin, len, crypto_pwhash_OPSLIMIT_INTERACTIVE,
                           crypto_pwhash_MEMLIMIT_INTERACTIVE) == 0
             ? 0
             : -1;
}

bool credential_pin_verify(const char *stored, const char *pin, size_t len) {
  return crypto_pwhash_str_verify(stored, pin, len) == 0;
}
