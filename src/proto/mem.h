/* Internal allocation helpers over the caller's turn_mem hook (NULL: libc). */
#ifndef TURN_PROTO_MEM_H
#define TURN_PROTO_MEM_H

#include "turn/turn.h"

void *turn__malloc(const turn_mem *mem, size_t len);
void *turn__realloc(const turn_mem *mem, void *ptr, size_t len);
void turn__free(const turn_mem *mem, void *ptr);

#endif
