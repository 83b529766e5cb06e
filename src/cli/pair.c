/* See pair.h. The code is single-use, so everything that can fail without turnd
 * (the link, the file's path) is checked before the code is spent. The token
 * only ever goes to the file: the owner is told where, never what. */
#include "pair.h"

#include "http.h"
#include "secret.h"
#include "token.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ANSWER_MAX   (64u << 10) /* bytes: a token and a device, or an error */
#define NAME_MAX_LEN 64          /* bytes of a device name turnd accepts */

/* Splits a pairing link or a URL into base (no fragment, no trailing '/') and,
 * from a link's "#pair=CODE", *code when it is still NULL. Returns 0, or -1 when
 * it is not an http(s) URL or no code is to be had. */
static int split_link(const char *url, char *base, size_t cap, char *code_buf,
                      size_t code_cap, const char **code) {
  if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0) return -1;
  const char *hash = strchr(url, '#');
  size_t len = hash != NULL ? (size_t)(hash - url) : strlen(url);
  while (len > 0 && url[len - 1] == '/')
    len--;
  if (len >= cap) return -1;
  memcpy(base, url, len);
  base[len] = '\0';
  if (*code == NULL && hash != NULL && strncmp(hash, "#pair=", 6) == 0 &&
      hash[6] != '\0') {
    snprintf(code_buf, code_cap, "%s", hash + 6);
    *code = code_buf;
  }
  return *code != NULL ? 0 : -1;
}

/* "turn@" and the host's name, cut to the NAME_MAX_LEN bytes turnd accepts. */
static void default_name(char out[NAME_MAX_LEN + 1]) {
  char host[256] = "";
  if (gethostname(host, sizeof host) != 0 || host[0] == '\0')
    snprintf(host, sizeof host, "unknown");
  host[sizeof host - 1] = '\0'; /* gethostname may leave a cut name unterminated */
  snprintf(out, NAME_MAX_LEN + 1, "turn@%.*s", NAME_MAX_LEN - 5, host);
}

/* The token and device name from turnd's 200 answer; returns 0 or -1. */
static int read_answer(const struct http_answer *a, char *token, char *name,
                       size_t name_cap) {
  json_t *doc = json_loadb(a->body.data, a->body.len, 0, NULL);
  const char *t = json_string_value(json_object_get(doc, "token"));
  const char *n =
      json_string_value(json_object_get(json_object_get(doc, "device"), "name"));
  int rc = t != NULL && token_valid(t) ? 0 : -1;
  if (rc == 0) {
    snprintf(token, TOKEN_MAX, "%s", t);
    snprintf(name, name_cap, "%s", n != NULL ? n : "?");
  }
  json_decref(doc); /* jansson frees its copy unwiped; ours is wiped by the caller */
  return rc;
}

/* The 200's token into path; returns the exit status. */
static int keep_token(const struct http_answer *a, const char *base, const char *path,
                      const char *token_file) {
  char token[TOKEN_MAX], name[256];
  if (read_answer(a, token, name, sizeof name) != 0) {
    fprintf(stderr, "turn: turnd's answer to the pairing holds no token\n");
    return 1;
  }
  int rc = token_store(path, token);
  secret_wipe(token, sizeof token);
  if (rc != 0) {
    fprintf(stderr, "turn: the pairing worked but its token is lost; pair again with a "
                    "new code\n");
    return 1;
  }
  printf("paired with %s as \"%s\"; the token is in %s\n", base, name, path);
  /* Beside the default file, the address too: `turn` then finds this turnd
   * without --url. (A --token-file is the owner's own arrangement.) */
  if (token_file == NULL) {
    if (token_url_store(base) == 0)
      printf("turn now goes to %s unless told --url\n", base);
    else
      (void)token_url_forget();
  }
  const char *env = getenv("TURN_TOKEN");
  if (token_file == NULL && env != NULL && env[0] != '\0')
    printf("note: TURN_TOKEN is set and is used before that file; unset it to use the "
           "new token\n");
  return 0;
}

int pair_command(const char *url, const char *code, const char *name,
                 const char *token_file) {
  char base[1024], code_buf[64], path[4096], host_name[NAME_MAX_LEN + 1];
  if (split_link(url, base, sizeof base, code_buf, sizeof code_buf, &code) != 0) {
    fprintf(stderr, "turn: pair takes a URL and a code (`turn pair http://HOST:PORT "
                    "CODE`) or a pairing link (http://HOST:PORT/#pair=CODE)\n");
    return 2;
  }
  if (token_file != NULL)
    snprintf(path, sizeof path, "%s", token_file);
  else if (token_default_path(path, sizeof path) != 0) {
    fprintf(stderr, "turn: no place for the token: set HOME or XDG_CONFIG_HOME, or "
                    "give --token-file FILE\n");
    return 1;
  }
  if (name == NULL) {
    default_name(host_name);
    name = host_name;
  }
  json_t *body = json_pack("{s:s, s:s}", "code", code, "name", name);
  char *text = body != NULL ? json_dumps(body, JSON_COMPACT) : NULL;
  json_decref(body);
  if (text == NULL) {
    fprintf(stderr, "turn: the code or the name is not UTF-8\n");
    return 2;
  }
  struct http_server server = {base, NULL}; /* pairing is how a token is got */
  struct http_answer a;
  http_answer_init(&a, ANSWER_MAX);
  long status = http_call(&server, "POST", "/api/pair", text, &a);
  free(text);
  int rc;
  if (status == 200) {
    rc = keep_token(&a, base, path, token_file);
  } else {
    http_report_answer(&server, "pairing", &a);
    char err[64];
    http_error_part(&a, "code", err, sizeof err);
    if (strcmp(err, "device_name_taken") == 0)
      fprintf(stderr, "  Choose another name with --name NAME.\n");
    rc = 1;
  }
  secret_wipe(a.body.data, a.body.len); /* the answer held the token */
  http_answer_fini(&a);
  return rc;
}
