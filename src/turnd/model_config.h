/* --model anthropic:ID and openai:ID: where the provider is and the key it
 * takes, from the environment, and --system's prompt. Read once at start-up. */
#ifndef TURND_MODEL_CONFIG_H
#define TURND_MODEL_CONFIG_H

#include "daemon.h"
#include "options.h"

/* Fills m from the options and the environment (m->external false for the
 * script models). Returns 0, or -1 after saying why on stderr (never a key). */
int model_config_load(struct model_config *m, const struct options *o);
/* Wipes the providers' keys from turnd's environment, read or not: a tool runs
 * as turnd's user, and the key is turnd's alone (see main's PR_SET_DUMPABLE). */
void model_config_forget_keys(void);
void model_config_free(struct model_config *m);

#endif
