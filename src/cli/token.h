/* The device token: where the client finds it, how it reads it and how `turn pair`
 * stores it. The token is a password: nothing here prints it, and a malformed
 * one is refused rather than sent, so no file's bytes can reach a header line. */
#ifndef TURN_CLI_TOKEN_H
#define TURN_CLI_TOKEN_H

#include <stdbool.h>
#include <stddef.h>

#define TOKEN_MAX 256 /* bytes of a token with its NUL; turnd's are 49 characters */

/* The token, from the first source that has one: file (borrowed; NULL: not
 * given), then $TURN_TOKEN, then the default file. Into out (cap bytes, at most
 * TOKEN_MAX used). Returns 1 when found, 0 when no source has one (not an error:
 * a turnd with --no-auth needs none), -1 after telling why on stderr: the given
 * file cannot be read, or a token is malformed. */
int token_find(const char *file, char *out, size_t cap);

/* The default file, $XDG_CONFIG_HOME/turn/token or else $HOME/.config/turn/token,
 * into out (cap bytes). Returns 0, or -1 when neither variable is set or the path
 * does not fit. */
int token_default_path(char *out, size_t cap);

/* Whether token can be sent: 1 to TOKEN_MAX - 1 visible ASCII characters. */
bool token_valid(const char *token);

/* Writes token and a newline to path (borrowed) so that path holds either the
 * old file or the whole new one: through a temporary file beside it, mode 0600,
 * then rename. Missing parent folders are made with mode 0700. Returns 0, or -1
 * after telling why on stderr. */
int token_store(const char *path, const char *token);

/* turnd's address as `turn pair` noted it beside the default token file
 * ($XDG_CONFIG_HOME/turn/url, or $HOME/.config/turn/url), for a client run
 * without --url. token_url_find: into out (cap bytes); 1 when found, 0 when
 * there is none (or it is not one line of an http(s) URL, which is said).
 * token_url_store: notes url there as token_store writes; 0, or -1 after
 * telling why. */
int token_url_find(char *out, size_t cap);
int token_url_store(const char *url);
/* Removes the note (a token stored without it must not go to an older one's
 * address). Returns 0, or -1 when there was none. */
int token_url_forget(void);

#endif
