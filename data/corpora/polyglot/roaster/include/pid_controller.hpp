#ifndef ROASTER_PID_CONTROLLER_HPP
#define ROASTER_PID_HPP

#include <chrono>

namespace roaster {

struct PidGains {
    double kp = 2.0;
    double ki = 0.05;
    double kd = 8.0;
};

// Drives the burner valve (0..1) towards the profile's target temperature.
class PidController {
public:
    explicit PidController(PidGains gains, double output_min = 0.0, double output_max = 1.0);

    double update(double target, double measured, std::chrono::milliseconds dt);
    void reset();

    double integral() const { return integral_; }

private:
    PidGains gains_;
    double output_min_;
    double output_max_;
    double integral_ = 0.0;
    double last_error_ = 0.0;
    bool has_last_ = false;
};

}  // namespace roaster

#endif  // ROASTER_PID_CONTROLLER_HPP
