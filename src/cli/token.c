/* See token.h. Error messages name the file or the variable, never the bytes in
 * it: a token with a typo is still most of a token. */
#include "token.h"

#include "http.h"
#include "secret.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PATH_CAP 4096

bool token_valid(const char *token) {
  size_t len = strlen(token);
  if (len == 0 || len >= TOKEN_MAX) return false;
  for (size_t i = 0; i < len; i++)
    if (token[i] <= ' ' || token[i] > '~') return false; /* a header line's bytes */
  return true;
}

int token_default_path(char *out, size_t cap) {
  const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
  int len;
  /* The XDG spec ignores a relative XDG_CONFIG_HOME, so we do too. */
  if (xdg != NULL && xdg[0] == '/')
    len = snprintf(out, cap, "%s/turn/token", xdg);
  else if (home != NULL && home[0] != '\0')
    len = snprintf(out, cap, "%s/.config/turn/token", home);
  else
    return -1;
  return len > 0 && (size_t)len < cap ? 0 : -1;
}

/* Reads the file's one line into out. Returns 1, 0 when it does not exist and
 * missing_ok, or -1 after telling why. */
static int read_file(const char *path, bool missing_ok, char *out, size_t cap) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT && missing_ok) return 0;
    fprintf(stderr, "turn: cannot read the token file %s: %s\n", path, strerror(errno));
    return -1;
  }
  struct stat st;
  if (fstat(fd, &st) == 0 && (st.st_mode & 077) != 0)
    fprintf(stderr,
            "turn: warning: other users have access to the token file %s (chmod "
            "600 it)\n",
            path);
  char buf[TOKEN_MAX + 64];
  size_t len = 0;
  ssize_t got;
  while (len < sizeof buf && (got = read(fd, buf + len, sizeof buf - len)) > 0)
    len += (size_t)got;
  close(fd);
  bool whole = len < sizeof buf; /* a full buf: the file is longer than any token's */
  /* One line: its trailing newline, and any blanks an editor left, are not part of
   * the token. */
  while (whole && len > 0 &&
         (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' ' ||
          buf[len - 1] == '\t'))
    len--;
  bool ok = whole && len < cap && len < TOKEN_MAX;
  if (ok) {
    memcpy(out, buf, len);
    out[len] = '\0';
    ok = token_valid(out);
  }
  secret_wipe(buf, sizeof buf);
  if (!ok) {
    secret_wipe(out, cap);
    fprintf(stderr,
            "turn: the token file %s does not hold a token (one line of visible "
            "characters)\n",
            path);
    return -1;
  }
  return 1;
}

int token_find(const char *file, char *out, size_t cap) {
  if (file != NULL) return read_file(file, false, out, cap);
  const char *env = getenv("TURN_TOKEN");
  if (env != NULL && env[0] != '\0') {
    if (!token_valid(env) || strlen(env) >= cap) {
      fprintf(stderr, "turn: TURN_TOKEN does not hold a token (visible characters, at "
                      "most 255)\n");
      return -1;
    }
    snprintf(out, cap, "%s", env);
    return 1;
  }
  char path[PATH_CAP];
  if (token_default_path(path, sizeof path) != 0) return 0;
  return read_file(path, true, out, cap);
}

/* Makes every missing folder above the file at path, mode 0700: the token's
 * folder is nobody else's business. Folders that exist are left as they are. */
static int make_parents(const char *path) {
  char dir[PATH_CAP];
  int len = snprintf(dir, sizeof dir, "%s", path);
  if (len < 0 || (size_t)len >= sizeof dir) return -1;
  for (char *p = dir + 1; *p != '\0'; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) return -1;
    *p = '/';
  }
  return 0;
}

/* Writes text and a newline to path as token_store says; what names the file
 * in messages. */
static int store_line(const char *path, const char *text, const char *what) {
  char tmp[PATH_CAP];
  int len = snprintf(tmp, sizeof tmp, "%s.XXXXXX", path);
  if (len < 0 || (size_t)len >= sizeof tmp) {
    fprintf(stderr, "turn: the %s's path is too long\n", what);
    return -1;
  }
  if (make_parents(path) != 0) {
    fprintf(stderr, "turn: cannot make the folder for %s: %s\n", path, strerror(errno));
    return -1;
  }
  int fd = mkstemp(tmp); /* 0600 already; fchmod below says so whatever the libc */
  if (fd < 0) {
    fprintf(stderr, "turn: cannot write the %s %s: %s\n", what, path, strerror(errno));
    return -1;
  }
  size_t n = strlen(text);
  errno = 0;
  bool ok = fchmod(fd, 0600) == 0 && write(fd, text, n) == (ssize_t)n &&
            write(fd, "\n", 1) == 1 && fsync(fd) == 0;
  int err = errno != 0 ? errno : EIO; /* a short write sets none */
  if (close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  /* Only once the new file is whole does it take the old one's place. */
  if (ok && rename(tmp, path) == 0) return 0;
  if (ok) err = errno;
  unlink(tmp);
  fprintf(stderr, "turn: cannot write the %s %s: %s\n", what, path, strerror(err));
  return -1;
}

int token_store(const char *path, const char *token) {
  return store_line(path, token, "token file");
}

/* The default token file's folder and name into out. */
static int config_path(const char *name, char *out, size_t cap) {
  char token_path[PATH_CAP];
  if (token_default_path(token_path, sizeof token_path) != 0) return -1;
  char *slash = strrchr(token_path, '/');
  *slash = '\0'; /* token_default_path ends in "/turn/token" */
  int len = snprintf(out, cap, "%s/%s", token_path, name);
  return len > 0 && (size_t)len < cap ? 0 : -1;
}

int token_url_find(char *out, size_t cap) {
  char path[PATH_CAP];
  if (config_path("url", path, sizeof path) != 0) return 0;
  FILE *f = fopen(path, "r");
  if (f == NULL) return 0;
  char text[HTTP_URL_MAX + 2]; /* room for a line end past the longest */
  size_t len = fread(text, 1, sizeof text, f);
  fclose(f);
  /* One line, its end and the slashes a route would double left out. */
  if (len > 0 && text[len - 1] == '\n') len--;
  if (len > 0 && text[len - 1] == '\r') len--;
  while (len > 0 && text[len - 1] == '/')
    len--;
  bool ok = len < cap && len <= HTTP_URL_MAX &&
            ((len > 7 && memcmp(text, "http://", 7) == 0) ||
             (len > 8 && memcmp(text, "https://", 8) == 0));
  for (size_t i = 0; ok && i < len; i++)
    ok = text[i] > ' ' && text[i] <= '~'; /* no NUL, no second line, no space */
  if (!ok) {
    fprintf(stderr, "turn: %s does not hold an http:// or https:// address; ignored\n",
            path);
    return 0;
  }
  memcpy(out, text, len);
  out[len] = '\0';
  return 1;
}

int token_url_forget(void) {
  char path[PATH_CAP];
  return config_path("url", path, sizeof path) == 0 && unlink(path) == 0 ? 0 : -1;
}

int token_url_store(const char *url) {
  char path[PATH_CAP];
  if (config_path("url", path, sizeof path) != 0) return -1;
  return store_line(path, url, "address file");
}
