#include "pid_controller.hpp"

#include <algorithm>
#include <stdio.h>

namespace roaster {

PidController::PidController(PidGains gains, double output_min, double output_max)
    : gains_(gains), output_min_(output_min), output_max_(output_max) {}

double PidController::update(double target, double measured, std::chrono::milliseconds dt) {
    const double seconds = std::chrono::duration<double>(dt).count();
    if (seconds <= 0.0) {
        return output_min_;
    }
    const double error = target - measured;
    integral_ += error * seconds;
    // Anti-windup: keep the integral term inside the output range.
    integral_ = std::clamp(integral_, output_min_ / gains_.ki, output_max_ / gains_.ki);

    const double derivative = has_last_ ? (error - last_error_) / seconds : 0.0;
    last_error_ = error;
    has_last_ = true;

    const double out = gains_.kp * error + gains_.ki * integral_ + gains_.kd * derivative;
    return std::clamp(out, output_min_, output_max_);
}

void PidController::reset() {
    // Called for every new batch so the integral from the last roast is gone.
    integral_ = 0.0;
    last_error_ = 0.0;
    has_last_ = false;
    fprintf(stderr, "pid: reset for new batch\n");
}

}  // namespace roaster
