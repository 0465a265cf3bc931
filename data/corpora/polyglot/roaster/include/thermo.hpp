#ifndef ROASTER_THERMO_HPP
#define ROASTER_THERMO_HPP

#include <memory>
#include <optional>

#include "sensor.h"

namespace roaster {

// RAII wrapper around the C sensor driver.
class ThermoSensor {
public:
    ThermoSensor(int i2c_port, std::uint8_t address);
    ~ThermoSensor();

    std::optional<float> read();
    sensor_bus* bus() const { return bus_; }

private:
    sensor_bus* bus_;
};

std::unique_ptr<ThermoSensor> open_default_sensor();

}  // namespace roaster

#endif  // ROASTER_THERMO_HPP
