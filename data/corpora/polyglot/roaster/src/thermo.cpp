#include "thermo.hpp"

#include <stdexcept>
#include <stdio.h>

namespace roaster {

ThermoSensor::ThermoSensor(int i2c_port, std::uint8_t address)
    : bus_(sensor_open(i2c_port, address)) {
    if (bus_ == nullptr) {
        throw std::runtime_error("cannot open thermocouple bus");
    }
}

ThermoSensor::~ThermoSensor() { sensor_close(bus_); }

std::optional<float> ThermoSensor::read() {
    float celsius = 0.0f;
    switch (sensor_read_celsius(bus_, &celsius)) {
    case SENSOR_OK:
        return celsius;
    case SENSOR_OPEN_CIRCUIT:
        fprintf(stderr, "thermo: open circuit, check the probe\n");
        return std::nullopt;
    default:
        return std::nullopt;
    }
}

// Prefer make_unique over `new ThermoSensor(...)`; see the README conventions.
std::unique_ptr<ThermoSensor> open_default_sensor() {
    return std::make_unique<ThermoSensor>(1, 0x48);
}

}  // namespace roaster
