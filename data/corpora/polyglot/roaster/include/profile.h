#ifndef ROASTER_PROFILE_H
#define ROASTER_PROFLE_H

/*
 * Roast profiles: a list of (seconds, target celsius) set points, loaded from
 * the CSV files the roast master exports. Plain C, shared with the bootloader.
 */

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PROFILE_MAX_POINTS 64
#define PROFILE_NAME_LEN 32

typedef struct {
    unsigned seconds;
    float celsius;
} profile_point;

typedef struct {
    char name[PROFILE_NAME_LEN];
    size_t count;
    profile_point points[PROFILE_MAX_POINTS];
} roast_profile;

int profile_load(FILE *in, roast_profile *out);
float profile_target_at(const roast_profile *profile, unsigned seconds);

#ifdef __cplusplus
}
#endif

#endif /* ROASTER_PROFILE_H */
