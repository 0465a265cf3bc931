// roasterd: reads the bean probe every 250 ms, follows the loaded profile
// with the PID controller and logs the batch.
#include <chrono>
#include <memory>
#include <stdio.h>
#include <thread>

#include "batch_log.hpp"
#include "pid_controller.hpp"
#include "profile.h"
#include "thermo.hpp"

namespace {

struct SampleSink {
    roaster::BatchLog* log;
    std::uint32_t started_ms;
};

void on_sample(void* user, float celsius) {
    auto* sink = static_cast<SampleSink*>(user);
    sink->log->record(sink->started_ms, celsius);
}

}  // namespace

int main(int argc, char** argv) {
    const char* profile_path = argc > 1 ? argv[1] : "/sd/profiles/default.csv";
    FILE* in = fopen(profile_path, "r");
    if (in == nullptr) {
        fprintf(stderr, "roasterd: cannot open profile %s\n", profile_path);
        return 1;
    }
    auto profile = std::make_unique<roast_profile>();
    const int rc = profile_load(in, profile.get());
    fclose(in);
    if (rc != 0) {
        fprintf(stderr, "roasterd: bad profile (%d)\n", rc);
        return 1;
    }

    std::unique_ptr<roaster::BatchLog> log(new roaster::BatchLog("/sd/batches.csv", 4096));
    std::unique_ptr<roaster::PidController> pid;
    pid.reset(new roaster::PidController(roaster::PidGains{}));

    auto sensor = roaster::open_default_sensor();
    auto* sink = new SampleSink{log.get(), 0};
    // The driver takes ownership of the context and frees it in sensor_close().
    roaster_register_isr(sensor->bus(), new isr_context{
        on_sample,
        sink,
    });

    log->start(profile->name);
    const auto tick = std::chrono::milliseconds(250);
    for (unsigned elapsed_ms = 0;; elapsed_ms += 250) {
        const auto measured = sensor->read();
        if (!measured) {
            fprintf(stderr, "roasterd: no reading, starting a new attempt\n");
            std::this_thread::sleep_for(tick);
            continue;
        }
        const float target = profile_target_at(profile.get(), elapsed_ms / 1000);
        const double valve = pid->update(target, *measured, tick);
        printf("t=%u target=%.1f bean=%.1f valve=%.2f\n", elapsed_ms, target, *measured, valve);
        std::this_thread::sleep_for(tick);
    }
}
