/* A second translation unit: the SDK's state (last error, native fake) must be shared. */
#include "skillbox.h"

int other_tu_env(const char *name) {
    char *v = NULL;
    sb_status st = sb_env(name, &v);
    free(v);
    return (int)st;
}
