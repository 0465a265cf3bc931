#ifndef PROBE_H
#define PROBE_H

#include <stddef.h>

#define PROBE_NAME_MAX 64

typedef struct probe_sample {
    char name[PROBE_NAME_MAX];
    double value;
} probe_sample;

/* Reads /proc/loadavg into out (3 samples). Returns the number of samples or -1. */
int probe_loadavg(probe_sample *out, size_t cap);

/* Reads the first line of /proc/stat. Returns the number of samples or -1. */
int probe_cpu(probe_sample *out, size_t cap);

/* Formats a sample like printf("%s=%f") would, into buf. */
int probe_format(const probe_sample *s, char *buf, size_t len);

char *probe_strdup(const char *s);

#endif /* PROBE_H */
