// `swaplab image write`'s result (and the parts `image read` shares) as
// one JSON document or "key  value" text lines.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "swaplab/hibernate/request_batcher.h"
#include "swaplab/workload/image_write.h"

namespace swaplab::report {

// The batch's bio counts and sizes, as write and read report them.
nlohmann::ordered_json BatchJson(const hibernate::BatchStats& b);

nlohmann::ordered_json ImageWriteJson(const workload::ImageWriteResult& r);
// One "key  value" line per member of the JSON document.
std::string ImageWriteText(const workload::ImageWriteResult& r);

}  // namespace swaplab::report
