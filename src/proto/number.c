/* Doubles to and from JSON text independently of the locale. JSON's decimal point
 * is always '.', but snprintf and strtod use the locale's: formatting keeps only
 * the digits of printf's output, and reading swaps '.' for the locale's separator
 * before strtod, which rounds correctly (glibc), so no digit is re-done by hand. */
#include "number.h"

#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

/* The locale's decimal separator, which strtod expects in place of '.'. */
static const char *decimal_point(void) {
  const char *dp = localeconv()->decimal_point;
  return dp != NULL && dp[0] != '\0' ? dp : ".";
}

int turn__parse_double(const char *text, size_t len, turn_arena *arena, double *out) {
  const char *dp = decimal_point();
  size_t dp_len = strlen(dp);
  char small[64];
  size_t need = len + dp_len + 1;
  char *buf = small;
  if (need > sizeof small) {
    buf = turn_arena_alloc(arena, need);
    if (buf == NULL) return TURN_E_NOMEM;
  }
  size_t n = 0;
  for (size_t i = 0; i < len; i++) {
    if (text[i] == '.') {
      memcpy(buf + n, dp, dp_len);
      n += dp_len;
    } else {
      buf[n++] = text[i];
    }
  }
  buf[n] = '\0';
  *out = strtod(buf, NULL);
  return TURN_OK;
}

/* printf's "%.*e" as sign, significant digits and decimal exponent, whatever
 * separator the locale puts between the digits. */
static void split_scientific(const char *sci, bool *negative, char digits[20], size_t *nd,
                             int *exp10) {
  const char *p = sci;
  *negative = *p == '-';
  if (*negative) p++;
  *nd = 0;
  for (; *p != 'e' && *p != '\0'; p++)
    if (is_digit(*p) && *nd < 20) digits[(*nd)++] = *p;
  while (*nd > 1 && digits[*nd - 1] == '0')
    (*nd)--;
  *exp10 = *p == 'e' ? (int)strtol(p + 1, NULL, 10) : 0;
}

size_t turn__format_double(double v, char out[32]) {
  if (!isfinite(v)) return 0;
  /* Shortest digits that read back as v: try 1..17 significant digits. printf and
   * strtod share the locale, so this round trip needs no care about it. */
  char sci[40];
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(sci, sizeof sci, "%.*e", prec - 1, v);
    if (strtod(sci, NULL) == v) break;
  }
  bool negative;
  char digits[20];
  size_t nd;
  int exp10;
  split_scientific(sci, &negative, digits, &nd, &exp10);

  size_t n = 0;
  if (negative) out[n++] = '-';
  if (exp10 >= -4 && exp10 < 16) {
    if (exp10 < 0) {
      out[n++] = '0';
      out[n++] = '.';
      for (int z = -1; z > exp10; z--)
        out[n++] = '0';
      memcpy(out + n, digits, nd);
      n += nd;
    } else {
      size_t int_digits = (size_t)exp10 + 1;
      for (size_t k = 0; k < int_digits; k++)
        out[n++] = k < nd ? digits[k] : '0';
      out[n++] = '.';
      if (nd > int_digits) {
        memcpy(out + n, digits + int_digits, nd - int_digits);
        n += nd - int_digits;
      } else {
        out[n++] = '0';
      }
    }
  } else {
    out[n++] = digits[0];
    if (nd > 1) {
      out[n++] = '.';
      memcpy(out + n, digits + 1, nd - 1);
      n += nd - 1;
    }
    n += (size_t)snprintf(out + n, 32 - n, "e%c%02d", exp10 < 0 ? '-' : '+',
                          exp10 < 0 ? -exp10 : exp10);
  }
  out[n] = '\0';
  return n;
}
