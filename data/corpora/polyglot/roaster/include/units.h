#ifndef ROASTER_UNITS_H
#define ROASTER_UNITS_H

/* Unit helpers shared by C and C++ code. */

#define ROASTER_F_TO_C(f) (((f) - 32.0f) * 5.0f / 9.0f)
#define ROASTER_C_TO_F(c) ((c) * 9.0f / 5.0f + 32.0f)

/* Drum speed is configured in rpm but the motor driver wants Hz. */
#define ROASTER_RPM_TO_HZ(rpm) ((rpm) / 60.0f)

#endif /* ROASTER_UNITS_H */
