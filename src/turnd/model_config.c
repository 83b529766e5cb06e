/* Reading a provider's settings (see model_config.h). */
#include "model_config.h"

#include "auth/credential.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SYSTEM_MAX (256u << 10) /* bytes of a system prompt */

/* base (without a trailing '/') + path, owned. */
static char *join_url(const char *base, const char *path) {
  size_t n = strlen(base);
  while (n > 0 && base[n - 1] == '/')
    n--;
  size_t path_len = strlen(path);
  char *url = malloc(n + path_len + 1);
  if (url == NULL) return NULL;
  memcpy(url, base, n);
  memcpy(url + n, path, path_len + 1);
  return url;
}

static const char *env_or(const char *name, const char *fallback) {
  const char *v = getenv(name);
  return v != NULL && v[0] != '\0' ? v : fallback;
}

static char *read_system(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    fprintf(stderr, "turnd: cannot read the system prompt %s: %s\n", path,
            strerror(errno));
    return NULL;
  }
  struct stat st;
  if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
    fprintf(stderr, "turnd: the system prompt %s is not a file\n", path);
    fclose(f);
    return NULL;
  }
  char *text = malloc(SYSTEM_MAX + 1);
  size_t len = text != NULL ? fread(text, 1, SYSTEM_MAX + 1, f) : 0;
  fclose(f);
  if (text == NULL || len > SYSTEM_MAX) {
    fprintf(stderr, "turnd: the system prompt %s is over 256 KiB\n", path);
    free(text);
    return NULL;
  }
  text[len] = '\0';
  if (strlen(text) != len) {
    fprintf(stderr, "turnd: the system prompt %s holds a NUL byte\n", path);
    free(text);
    return NULL;
  }
  /* Every request carries it as a JSON string, which must be UTF-8: caught
   * here, not as every turn failing to build its request. */
  json_t *as_json = json_stringn(text, len);
  if (as_json == NULL) {
    fprintf(stderr, "turnd: the system prompt %s is not UTF-8 text\n", path);
    free(text);
    return NULL;
  }
  json_decref(as_json);
  return text;
}

/* The key from the variable `name`, without the spaces and line ends around it
 * (a key file saved with CR LF, an env file's trailing space), owned; NULL with
 * *bad set when what is left holds a space or control character, which would
 * break the request's header, or when out of memory. */
static char *key_of(const char *name, const char *value, bool *bad) {
  *bad = false;
  size_t start = 0, end = strlen(value);
  while (start < end && (value[start] == ' ' || value[start] == '\t' ||
                         value[start] == '\r' || value[start] == '\n'))
    start++;
  while (end > start && (value[end - 1] == ' ' || value[end - 1] == '\t' ||
                         value[end - 1] == '\r' || value[end - 1] == '\n'))
    end--;
  for (size_t i = start; i < end; i++)
    if ((unsigned char)value[i] <= ' ' || value[i] == 0x7f) {
      /* The key itself is never printed. */
      fprintf(stderr, "turnd: %s holds a space or control character inside the key\n",
              name);
      *bad = true;
      return NULL;
    }
  if (start == end) {
    fprintf(stderr, "turnd: %s is only spaces\n", name);
    *bad = true;
    return NULL;
  }
  return strndup(value + start, end - start);
}

int model_config_load(struct model_config *m, const struct options *o) {
  memset(m, 0, sizeof *m);
  const char *base, *key, *key_name;
  if (strncmp(o->model, "anthropic:", 10) == 0) {
    m->kind = PROVIDER_ANTHROPIC;
    m->model_id = o->model + 10;
    base = env_or("ANTHROPIC_BASE_URL", "https://api.anthropic.com");
    m->url = join_url(base, "/v1/messages");
    key_name = "ANTHROPIC_API_KEY";
    key = env_or(key_name, NULL);
    if (key == NULL) {
      fprintf(stderr, "turnd: --model %s needs ANTHROPIC_API_KEY\n", o->model);
      model_config_free(m);
      return -1;
    }
  } else if (strncmp(o->model, "openai:", 7) == 0) {
    m->kind = PROVIDER_OPENAI;
    m->model_id = o->model + 7;
    base = env_or("OPENAI_BASE_URL", "https://api.openai.com/v1");
    m->url = join_url(base, "/chat/completions");
    m->openai_own_api = provider_openai_is_own_api(base);
    key_name = "OPENAI_API_KEY";
    key = env_or(key_name, NULL); /* a local server needs none */
  } else {
    if (o->system_file != NULL) {
      fprintf(stderr, "turnd: --system is for a provider's model, not --model %s\n",
              o->model);
      return -1;
    }
    return 0;
  }
  m->external = true;
  bool bad_key = false;
  m->api_key = key != NULL ? key_of(key_name, key, &bad_key) : NULL;
  if (bad_key) {
    model_config_free(m);
    return -1;
  }
  if (o->system_file != NULL && (m->system = read_system(o->system_file)) == NULL) {
    model_config_free(m);
    return -1;
  }
  if (m->url == NULL || (key != NULL && m->api_key == NULL)) {
    fprintf(stderr, "turnd: out of memory\n");
    model_config_free(m);
    return -1;
  }
  return 0;
}

void model_config_forget_keys(void) {
  static const char *const names[] = {"ANTHROPIC_API_KEY", "OPENAI_API_KEY"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    char *v = getenv(names[i]);
    /* In place: /proc/PID/environ shows the bytes turnd started with, wherever
     * the variable's entry now points. */
    if (v != NULL) credential_wipe(v, strlen(v));
    unsetenv(names[i]);
  }
}

void model_config_free(struct model_config *m) {
  free(m->url);
  if (m->api_key != NULL) {
    credential_wipe(m->api_key, strlen(m->api_key)); /* memset may be dropped */
    free(m->api_key);
  }
  free(m->system);
  memset(m, 0, sizeof *m);
}
