#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"

int probe_loadavg(probe_sample *out, size_t cap)
{
    static const char *names[] = {"load1", "load5", "load15"};
    double v[3];
    FILE *f = fopen("/proc/loadavg", "r");
    if (f == NULL) {
        return -1;
    }
    if (fscanf(f, "%lf %lf %lf", &v[0], &v[1], &v[2]) != 3) {
        fclose(f);
        return -1;
    }
    fclose(f);
    size_t n = cap < 3 ? cap : 3;
    for (size_t i = 0; i < n; i++) {
        strcpy(out[i].name, names[i]);
        out[i].value = v[i];
    }
    return (int)n;
}

int probe_format(const probe_sample *s, char *buf, size_t len)
{
    return snprintf(buf, len, "%s=%.3f", s->name, s->value);
}

char *probe_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *copy = malloc(n);
    if (copy != NULL) {
        memcpy(copy, s, n);
    }
    return copy;
}
