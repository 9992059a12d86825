// SPDX-License-Identifier: MIT
// `swaplab image write|read|inspect`'s results as one JSON document or
// "key  value" text lines.
#pragma once
#pragma GCC visibility push(default)

#include <nlohmann/json.hpp>
#include <string>

#include "swaplab/hibernate/request_batcher.h"
#include "swaplab/workload/image_read.h"
#include "swaplab/workload/image_write.h"

namespace swaplab::report {

// The batch's bio counts and sizes, as write and read report them.
nlohmann::ordered_json BatchJson(const hibernate::BatchStats& b);

nlohmann::ordered_json ImageWriteJson(const workload::ImageWriteResult& r);
// One "key  value" line per member of the JSON document.
std::string ImageWriteText(const workload::ImageWriteResult& r);

// read: the checks' outcome, swsusp_info field by field (strings escaped:
// they come from the image), the stream's counts, bios and seconds;
// inspect: header, swsusp_info, map chain and layout on disk.
nlohmann::ordered_json ImageReadJson(const workload::ImageReadResult& r);
// One "key  value" line per leaf, nested keys joined with '.'.
std::string ImageReadText(const workload::ImageReadResult& r);

}  // namespace swaplab::report
#pragma GCC visibility pop
