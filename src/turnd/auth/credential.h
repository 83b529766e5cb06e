/* The owner's secrets and how they are made and checked: device tokens, pairing
 * codes and the PIN. Randomness comes from the system's CSPRNG (libsodium). Only
 * hashes are ever stored: a token or a code is 256 or 40 random bits, so a fast
 * keyed-free hash (BLAKE2b) is enough; a PIN is short and guessable, so it gets
 * the slow password hash (Argon2id). Call credential_init() once first. */
#ifndef TURND_CREDENTIAL_H
#define TURND_CREDENTIAL_H

#include <stdbool.h>
#include <stddef.h>

#define CREDENTIAL_HASH_LEN 32 /* bytes of a token's or a code's hash */

/* "turnd_" and 43 characters of base64url without padding: 256 random bits. */
#define CREDENTIAL_TOKEN_LEN (6 + 43)
/* Eight characters of Crockford's base32 written XXXX-XXXX: 40 random bits. */
#define CREDENTIAL_CODE_LEN 9
/* A PIN's length in bytes: at least 4, at most 128. */
#define CREDENTIAL_PIN_MIN 4
#define CREDENTIAL_PIN_MAX 128
/* The PIN's stored hash: libsodium's crypto_pwhash_STRBYTES. */
#define CREDENTIAL_PIN_HASH_CAP 128

/* Sets up libsodium. Returns 0, or -1 when it cannot (no randomness). */
int credential_init(void);

/* Zeroes a secret's bytes in a way the compiler cannot drop. */
void credential_wipe(void *p, size_t len);

/* A new token into out[CREDENTIAL_TOKEN_LEN + 1]. */
void credential_token_new(char out[CREDENTIAL_TOKEN_LEN + 1]);
/* A new pairing code into out[CREDENTIAL_CODE_LEN + 1]. */
void credential_code_new(char out[CREDENTIAL_CODE_LEN + 1]);

/* The hash a token is stored and looked up under (borrows token[0..len)). */
void credential_token_hash(const char *token, size_t len,
                           unsigned char out[CREDENTIAL_HASH_LEN]);
/* The hash of a code as the owner typed it: dashes and spaces dropped, letters
 * of either case, and the look-alikes O, I and L read as 0, 1 and 1. Returns
 * false when what is left is not eight code characters. */
bool credential_code_hash(const char *typed, size_t len,
                          unsigned char out[CREDENTIAL_HASH_LEN]);
/* Whether two hashes are equal, in time that does not depend on where they
 * differ. */
bool credential_hash_equal(const unsigned char a[CREDENTIAL_HASH_LEN],
                           const unsigned char b[CREDENTIAL_HASH_LEN]);

/* Whether pin[0..len) is acceptable as a PIN: its length, and no control
 * characters. */
bool credential_pin_ok(const char *pin, size_t len);
/* The stored form of a PIN into out[CREDENTIAL_PIN_HASH_CAP]: slow on purpose
 * (about a tenth of a second and 64 MiB). Returns 0, or -1 out of memory. */
int credential_pin_hash(const char *pin, size_t len, char out[CREDENTIAL_PIN_HASH_CAP]);
/* Whether pin matches the stored hash; as slow as credential_pin_hash, so never
 * on the event loop (see pin_check.h). */
bool credential_pin_verify(const char *stored, const char *pin, size_t len);

#endif
