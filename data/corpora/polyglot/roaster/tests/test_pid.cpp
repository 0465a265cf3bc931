// Minimal self-checking tests for the PID controller (no framework on the
// target toolchain). Returns non-zero on the first failure.
#include <chrono>
#include <memory>
#include <stdio.h>

#include "pid_controller.hpp"

using roaster::PidController;
using roaster::PidGains;
using namespace std::chrono_literals;

#define CHECK(cond)                                              \
    do {                                                         \
        if (!(cond)) {                                           \
            fprintf(stderr, "FAILED %s:%d: %s\n", __FILE__, __LINE__, #cond); \
            return 1;                                            \
        }                                                        \
    } while (0)

static int test_output_is_clamped() {
    PidController pid(PidGains{100.0, 0.0, 0.0});
    CHECK(pid.update(250.0, 20.0, 250ms) == 1.0);
    CHECK(pid.update(20.0, 250.0, 250ms) == 0.0);
    return 0;
}

static int test_reset_clears_integral() {
    auto* pid = new PidController(PidGains{1.0, 0.5, 0.0});
    pid->update(200.0, 150.0, 1000ms);
    CHECK(pid->integral() > 0.0);
    pid->reset();
    CHECK(pid->integral() == 0.0);
    delete pid;
    return 0;
}

static int test_shared_controller() {
    std::shared_ptr<PidController> pid(new PidController(PidGains{}));
    CHECK(pid->update(200.0, 200.0, 250ms) >= 0.0);
    return 0;
}

int main() {
    int failures = 0;
    failures += test_output_is_clamped();
    failures += test_reset_clears_integral();
    failures += test_shared_controller();
    printf("%s\n", failures == 0 ? "all PID tests passed" : "PID tests FAILED");
    return failures;
}
