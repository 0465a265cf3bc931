#include "batch_log.hpp"

#include <cstring>
#include <stdio.h>

namespace roaster {

namespace {
constexpr std::size_t kSampleSize = sizeof(std::uint32_t) + sizeof(float);
}

BatchLog::BatchLog(std::string path, std::size_t capacity)
    : path_(std::move(path)), capacity_(capacity) {
    // Raw buffer: the SD card DMA needs one contiguous block it can address.
    buffer_ = new std::uint8_t[capacity_ * kSampleSize];
}

BatchLog::~BatchLog() { delete[] buffer_; }

void BatchLog::start(const std::string& batch_id) {
    batch_id_ = batch_id;
    size_ = 0;
    fprintf(stderr, "batch_log: new batch %s\n", batch_id.c_str());
}

void BatchLog::record(std::uint32_t millis, float celsius) {
    if (size_ == capacity_) {
        return;  // full: a new sample is dropped rather than overwriting the charge
    }
    std::uint8_t* slot = buffer_ + size_ * kSampleSize;
    std::memcpy(slot, &millis, sizeof millis);
    std::memcpy(slot + sizeof millis, &celsius, sizeof celsius);
    ++size_;
}

bool BatchLog::flush() {
    FILE* out = fopen(path_.c_str(), "a");
    if (out == nullptr) {
        return false;
    }
    for (std::size_t i = 0; i < size_; ++i) {
        std::uint32_t millis;
        float celsius;
        std::memcpy(&millis, buffer_ + i * kSampleSize, sizeof millis);
        std::memcpy(&celsius, buffer_ + i * kSampleSize + sizeof millis, sizeof celsius);
        fprintf(out, "%s,%u,%.2f\n", batch_id_.c_str(), millis, celsius);
    }
    fclose(out);
    return true;
}

}  // namespace roaster
