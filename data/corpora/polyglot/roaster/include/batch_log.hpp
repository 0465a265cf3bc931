#ifndef ROASTER_BATCH_LOG_HPP
#define ROASTER_BATCH_LOG_HPP

#include <cstddef>
#include <cstdint>
#include <string>

namespace roaster {

// Ring buffer of (time, bean temperature) samples for the current batch,
// flushed to the SD card as CSV when the batch ends.
class BatchLog {
public:
    BatchLog(std::string path, std::size_t capacity);
    ~BatchLog();

    BatchLog(const BatchLog&) = delete;
    BatchLog& operator=(const BatchLog&) = delete;

    void start(const std::string& batch_id);
    void record(std::uint32_t millis, float celsius);
    bool flush();

private:
    std::string path_;
    std::string batch_id_;
    std::size_t capacity_;
    std::size_t size_ = 0;
    std::uint8_t* buffer_ = nullptr;
};

}  // namespace roaster

#endif  // ROASTER_BATCH_LOG_HPP
