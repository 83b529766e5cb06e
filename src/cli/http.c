/* See http.h. Requests are synchronous (curl_easy_perform): the client does one
 * thing at a time, so a blocking call is the simple and right shape here. */
#include "http.h"

#include "secret.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* bytes of "Authorization: Bearer " and a token: token.c keeps tokens short */
#define TOKEN_HEADER_MAX 512

void http_answer_init(struct http_answer *a, size_t cap) {
  a->status = 0;
  a->retry_after_s = -1;
  a->why[0] = '\0';
  turn_buf_init(&a->body, cap, NULL);
}

void http_answer_fini(struct http_answer *a) {
  turn_buf_fini(&a->body);
}

static size_t on_body(char *data, size_t size, size_t n, void *arg) {
  struct http_answer *a = arg;
  return turn_buf_append(&a->body, data, size * n) == TURN_OK ? size * n : 0;
}

/* Keeps Retry-After, the only header the client shows. turnd sends it in
 * seconds (never as a date), so a number is all there is to read. */
static size_t on_header(char *data, size_t size, size_t n, void *arg) {
  struct http_answer *a = arg;
  static const char name[] = "Retry-After:";
  size_t len = size * n;
  if (len > sizeof name && strncasecmp(data, name, sizeof name - 1) == 0) {
    long s = 0;
    size_t i = sizeof name - 1;
    while (i < len && data[i] == ' ')
      i++;
    size_t digits = 0;
    for (; i < len && data[i] >= '0' && data[i] <= '9' && s < 86400 * 365; i++, digits++)
      s = s * 10 + (data[i] - '0');
    if (digits > 0) a->retry_after_s = s;
  }
  return len;
}

/* The header list every request carries: the token (NULL: none) and, when json,
 * the body's type. Returns owned (curl_slist_free_all), NULL when out of memory. */
static struct curl_slist *http_headers(const char *token, bool json) {
  struct curl_slist *list = NULL, *more;
  if (json) {
    list = curl_slist_append(NULL, "Content-Type: application/json");
    if (list == NULL) return NULL;
  }
  if (token != NULL) {
    char line[TOKEN_HEADER_MAX];
    int len = snprintf(line, sizeof line, "Authorization: Bearer %s", token);
    /* token.c refuses longer tokens; the check keeps a cut one off the wire */
    more = len > 0 && (size_t)len < sizeof line ? curl_slist_append(list, line) : NULL;
    secret_wipe(line, sizeof line);
    if (more == NULL) {
      curl_slist_free_all(list);
      return NULL;
    }
    list = more;
  }
  return list;
}

CURL *http_handle(const struct http_server *s, bool json, struct curl_slist **hdr) {
  CURL *h = curl_easy_init();
  if (h == NULL) return NULL;
  struct curl_slist *list = http_headers(s->token, json);
  if (list == NULL && (json || s->token != NULL)) {
    curl_easy_cleanup(h);
    return NULL;
  }
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, list);
  *hdr = list;
  return h;
}

long http_call(const struct http_server *s, const char *method, const char *path,
               const char *json, struct http_answer *a) {
  a->status = 0;
  a->retry_after_s = -1;
  a->why[0] = '\0';
  turn_buf_reset(&a->body);
  char url[HTTP_URL_MAX];
  int len = snprintf(url, sizeof url, "%s%s", s->url, path);
  if (len < 0 || (size_t)len >= sizeof url) {
    snprintf(a->why, sizeof a->why, "the address is too long");
    return 0;
  }
  struct curl_slist *hdr;
  CURL *h = http_handle(s, json != NULL, &hdr);
  if (h == NULL) {
    snprintf(a->why, sizeof a->why, "out of memory");
    return 0;
  }
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, a->why);
  curl_easy_setopt(h, CURLOPT_URL, url);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, a);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, a);
  curl_easy_setopt(h, CURLOPT_TIMEOUT, 60L);
  if (strcmp(method, "POST") == 0) /* "": an empty body, with its length said */
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, json != NULL ? json : "");
  else
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
  CURLcode rc = curl_easy_perform(h);
  if (rc == CURLE_OK) {
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &a->status);
    a->why[0] = '\0';
  } else if (rc == CURLE_WRITE_ERROR) {
    /* on_body refused more than the answer's cap: turnd did answer */
    snprintf(a->why, sizeof a->why,
             "its answer was longer than %zu bytes, which this "
             "client takes at most",
             a->body.cap);
  } else {
    http_reason(a->why, rc);
  }
  curl_slist_free_all(hdr);
  curl_easy_cleanup(h);
  return a->status;
}

void http_reason(char *why, CURLcode rc) {
  if (why[0] == '\0') snprintf(why, CURL_ERROR_SIZE, "%s", curl_easy_strerror(rc));
}

void http_error_part(const struct http_answer *a, const char *key, char *out,
                     size_t cap) {
  out[0] = '\0';
  json_t *doc = a->body.len > 0 ? json_loadb(a->body.data, a->body.len, 0, NULL) : NULL;
  const char *v = json_string_value(json_object_get(json_object_get(doc, "error"), key));
  if (v != NULL) snprintf(out, cap, "%s", v);
  json_decref(doc);
}

/* 401 is the one error the owner fixes outside turnd's answer: say how. */
static void explain_unauthorized(const struct http_server *s) {
  if (s->token != NULL)
    fprintf(stderr, "turn: turnd refused the token (HTTP 401): it is wrong, or this "
                    "device was unpaired.\n");
  else
    fprintf(stderr, "turn: turnd needs a token (HTTP 401) and none was found.\n");
  fprintf(stderr,
          "  Pair this device with `turn pair URL CODE` (a code from `turnd pair-code`,\n"
          "  or the link turnd prints at start), or give a token with TURN_TOKEN or\n"
          "  --token-file FILE.\n");
}

void http_report(const struct http_server *s, const char *doing, long status,
                 const char *why, const char *body, size_t len, long retry_after_s) {
  if (status == 0) {
    /* libcurl's reason tells a stopped turnd (refused) from a wrong host (not
     * resolved) or a stalled one (timed out); it names the host, never a
     * header, so the token cannot be in it. */
    fprintf(stderr, "turn: %s failed: no answer from turnd at %s%s%s\n", doing, s->url,
            why != NULL && why[0] != '\0' ? ": " : "", why != NULL ? why : "");
    return;
  }
  if (status == 401) {
    explain_unauthorized(s);
    return;
  }
  json_t *doc = len > 0 ? json_loadb(body, len, 0, NULL) : NULL;
  json_t *e = json_object_get(doc, "error");
  const char *code = json_string_value(json_object_get(e, "code"));
  const char *msg = json_string_value(json_object_get(e, "message"));
  fprintf(stderr, "turn: %s failed: turnd answered HTTP %ld%s%s%s%s", doing, status,
          code != NULL ? " " : "", code != NULL ? code : "", msg != NULL ? ": " : "",
          msg != NULL ? msg : "");
  if (retry_after_s >= 0) fprintf(stderr, " (try again in %ld s)", retry_after_s);
  fputc('\n', stderr);
  json_decref(doc);
}

void http_report_answer(const struct http_server *s, const char *doing,
                        const struct http_answer *a) {
  http_report(s, doing, a->status, a->why, a->body.data, a->body.len, a->retry_after_s);
}
