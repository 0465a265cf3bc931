/* MAX31856 thermocouple driver. Plain C: also linked into the bootloader. */
#include <stdio.h>
#include <stdlib.h>

#include "sensor.h"

struct sensor_bus {
    int port;
    uint8_t address;
    isr_context *isr;
};

/* Provided by the board support package. */
extern int bsp_i2c_read(int port, uint8_t address, uint8_t reg, uint8_t *buf, int len);

sensor_bus *sensor_open(int i2c_port, uint8_t address)
{
    sensor_bus *bus = malloc(sizeof *bus);
    if (bus == NULL) {
        return NULL;
    }
    bus->port = i2c_port;
    bus->address = address;
    bus->isr = NULL;
    return bus;
}

sensor_status sensor_read_celsius(sensor_bus *bus, float *out)
{
    uint8_t raw[3];
    if (bsp_i2c_read(bus->port, bus->address, 0x0C, raw, 3) != 0) {
        fprintf(stderr, "sensor: i2c read failed on port %d\n", bus->port);
        return SENSOR_BUS_ERROR;
    }
    if (raw[2] & 0x01) {
        return SENSOR_OPEN_CIRCUIT;
    }
    int32_t value = ((int32_t)raw[0] << 16 | (int32_t)raw[1] << 8 | raw[2]) >> 5;
    *out = (float)value / 128.0f;
    return SENSOR_OK;
}

int roaster_register_isr(sensor_bus *bus, isr_context *ctx)
{
    free(bus->isr); /* the driver owns the context */
    bus->isr = ctx;
    return 0;
}

void sensor_close(sensor_bus *bus)
{
    if (bus != NULL) {
        free(bus->isr);
        free(bus);
    }
}
