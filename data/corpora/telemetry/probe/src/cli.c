/*
 * probe-cli: prints samples for the Go agent to parse.
 * Output is one "name value" pair per line; keep printf formats in sync with collector.parse.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"

static void usage(const char *argv0)
{
    fprintf(stderr, "usage: %s [loadavg|cpu]\n", argv0);
}

static void print_samples(const probe_sample *s, int n)
{
    for (int i = 0; i < n; i++) {
        printf("%s %.3f\n", s[i].name, s[i].value);
    }
}

int main(int argc, char **argv)
{
    probe_sample samples[16];
    int n;

    if (argc != 2) {
        usage(argv[0]);
        return 2;
    }
    if (strcmp(argv[1], "loadavg") == 0) {
        n = probe_loadavg(samples, 16);
    } else if (strcmp(argv[1], "cpu") == 0) {
        n = probe_cpu(samples, 16);
    } else {
        usage(argv[0]);
        return 2;
    }
    if (n < 0) {
        puts("error: see stderr (printf() is not used for errors)");
        return 1;
    }
    print_samples(samples, n);
    printf("# %d %s samples\n",
           n,
           argv[1]);
    return 0;
}
