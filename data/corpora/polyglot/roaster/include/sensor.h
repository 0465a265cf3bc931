#ifndef ROASTER_SENSOR_H
#define ROASTER_SENSOR_H

/*
 * Thermocouple front end (MAX31856) on the I2C bus. Plain C: this header is
 * shared by the C driver and the C++ controller.
 */

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sensor_bus sensor_bus;

typedef enum {
    SENSOR_OK = 0,
    SENSOR_OPEN_CIRCUIT = 1,
    SENSOR_BUS_ERROR = 2
} sensor_status;

sensor_bus *sensor_open(int i2c_port, uint8_t address);
sensor_status sensor_read_celsius(sensor_bus *bus, float *out);
void sensor_close(sensor_bus *bus);

/* The ISR context is owned by the driver once registered; it frees it. */
typedef struct isr_context {
    void (*on_sample)(void *user, float celsius);
    void *user;
} isr_context;

int roaster_register_isr(sensor_bus *bus, isr_context *ctx);

#ifdef __cplusplus
}
#endif

#endif /* ROASTER_SENSOR_H */
