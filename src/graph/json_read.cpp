#include "graph/json_read.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

namespace fusedgemm::json {
namespace {

// nlohmann's "[json.exception.parse_error.101] " prefix dropped; line and column kept.
std::string_view without_id(std::string_view what) {
  if (auto pos = what.find("] "); pos != std::string_view::npos) what.remove_prefix(pos + 2);
  return what;
}

// A first pass over the text that builds nothing: it tracks where it is, so that each
// refusal names the path of the value it is about.
class Scanner : public nlohmann::json_sax<Json> {
 public:
  explicit Scanner(std::string_view reader) : reader_(reader) {}

  const std::optional<Status>& error() const { return error_; }

  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool string(string_t&) override { return value(); }
  bool binary(binary_t&) override { return value(); }
  bool start_object(std::size_t) override { return open(true); }
  bool start_array(std::size_t) override { return open(false); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }

  bool key(string_t& key) override {
    Frame& f = frames_.back();
    f.key = key;
    if (!f.keys.insert(key).second) {
      return fail(fmt::format("{}: key '{}' appears twice in one object; legal: each key once",
                              path(), key));
    }
    return true;
  }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    const std::string_view what = without_id(e.what());
    if (e.id == 406) {  // out_of_range.406: a number past double range, such as 1e999
      return fail(
          fmt::format("{}: {}; legal: a number within double range (about 1.8e308)", path(), what));
    }
    return fail(fmt::format("not JSON: {} (at {}); legal: a JSON object (RFC 8259)", what, path()));
  }

 private:
  struct Frame {
    bool object = false;
    std::set<std::string> keys;
    std::string key;
    std::size_t values = 0;  // array elements begun
  };

  bool fail(std::string message) {
    error_ = Status(ErrorCode::kInvalidArgument, fmt::format("{}: {}", reader_, message));
    return false;
  }

  // A scalar, or the start of a container, in its parent.
  bool value() {
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().values;
    return true;
  }

  bool open(bool object) {
    if (frames_.size() >= static_cast<std::size_t>(kMaxDepth)) {
      return fail(fmt::format("{}: arrays and objects nested {} deep; legal: at most {}", path(),
                              frames_.size() + 1, kMaxDepth));
    }
    value();
    frames_.push_back({object, {}, {}, 0});
    return true;
  }

  bool close() {
    frames_.pop_back();
    return true;
  }

  // "tensors[2].dims[1]": each open container's current key or element. An array holding
  // an open container is at the element last begun; the innermost array, at the element
  // being read (begun by no event yet when it is the one that failed).
  std::string path() const {
    std::string out;
    for (std::size_t i = 0; i < frames_.size(); ++i) {
      const Frame& f = frames_[i];
      if (f.object) {
        if (f.key.empty() && f.keys.empty()) continue;
        out += out.empty() ? f.key : "." + f.key;
      } else {
        const bool inner = i + 1 < frames_.size();
        out += fmt::format("[{}]", inner ? f.values - 1 : f.values);
      }
    }
    if (out.empty()) return "top level";
    // Past kMaxDepth levels the whole path says little more than its start.
    constexpr std::size_t kShown = 96;
    return out.size() > kShown ? out.substr(0, kShown) + "..." : out;
  }

  std::string reader_;
  std::vector<Frame> frames_;
  std::optional<Status> error_;
};

}  // namespace

Result<Json> parse(std::string_view text, std::string_view reader) {
  Scanner scanner(reader);
  try {
    if (!Json::sax_parse(text.begin(), text.end(), &scanner)) {
      if (scanner.error()) return *scanner.error();
      return Status(ErrorCode::kInvalidArgument,
                    fmt::format("{}: not JSON; legal: a JSON object (RFC 8259)", reader));
    }
    // The scan passed, so this parse neither fails nor nests deeper than kMaxDepth.
    return Json::parse(text.begin(), text.end());
  } catch (const Json::exception& e) {
    return Status(ErrorCode::kInvalidArgument,
                  fmt::format("{}: not JSON: {}; legal: a JSON object (RFC 8259)", reader,
                              without_id(e.what())));
  }
}

Result<std::string> read_file(const std::string& path, std::string_view loader,
                              std::string_view what) {
  // Opened without blocking: a FIFO with no writer must not hang the open.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  FG_CHECK(fd >= 0, ErrorCode::kIo,
           fmt::format("{}: cannot open '{}': {}", loader, path, std::strerror(errno)));
  struct stat info {};
  std::string wrong;
  std::string text;
  if (::fstat(fd, &info) != 0) {
    wrong = std::strerror(errno);
  } else if (S_ISDIR(info.st_mode)) {
    wrong = fmt::format("it is a folder; legal: {}", what);
  } else if (S_ISREG(info.st_mode) && info.st_size > kMaxFileBytes) {
    wrong = fmt::format("{} bytes; legal: {} of at most {} bytes (256 MiB)", info.st_size, what,
                        kMaxFileBytes);
  } else {
    // A pipe (`validate <(cat g.json)`, /dev/stdin) is read to its end, blocking again, and
    // refused past the limit like a file (/dev/zero never ends).
    if (!S_ISREG(info.st_mode)) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    constexpr std::size_t kChunk = std::size_t{1} << 20;
    const auto limit = static_cast<std::size_t>(kMaxFileBytes);
    std::size_t got = 0;
    while (got <= limit) {
      text.resize(std::min(got + kChunk, limit + 1));
      const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) wrong = std::strerror(errno);
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
    text.resize(got);
    if (wrong.empty() && got > limit) {
      wrong = fmt::format("more than {} bytes; legal: {} of at most {} bytes (256 MiB)", limit,
                          what, limit);
    }
  }
  ::close(fd);
  FG_CHECK(wrong.empty(), ErrorCode::kIo,
           fmt::format("{}: cannot read '{}': {}", loader, path, wrong));
  return text;
}

std::string shown(const Json& value) {
  const std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  return text.size() > 48 ? text.substr(0, 48) + "..." : text;
}

At At::key(std::string_view key) const {
  auto it = json->find(key);
  return {it == json->end() ? nullptr : &*it, reader,
          path.empty() ? std::string(key) : fmt::format("{}.{}", path, key), subject};
}

At At::at(std::size_t index) const {
  return {&(*json)[index], reader, fmt::format("{}[{}]", path, index), subject};
}

Status At::error(std::string_view what, std::string_view legal) const {
  const std::string who = subject.empty() ? "" : subject + ": ";
  return Status(ErrorCode::kInvalidArgument,
                fmt::format("{}: {}: {}{}; legal: {}", reader, path.empty() ? "top level" : path,
                            who, what, legal));
}

Status At::wrong(std::string_view legal, std::string_view detail) const {
  if (!json) return error("missing", legal);
  const char* article = json->is_array() || json->is_object() ? "an" : "a";
  return error(fmt::format("{} is {} {}{}", shown(*json), article, json->type_name(), detail),
               legal);
}

Result<std::int64_t> read_int(const At& at, std::string_view legal) {
  if (!at.json || !at.json->is_number_integer()) return at.wrong(legal, ", not an integer");
  if (at.json->is_number_unsigned() &&
      at.json->get<std::uint64_t>() > std::uint64_t{std::numeric_limits<std::int64_t>::max()}) {
    return at.error(fmt::format("{} is out of range", shown(*at.json)), legal);
  }
  return at.json->get<std::int64_t>();
}

Result<std::vector<std::int64_t>> read_ints(const At& at, std::string_view legal) {
  if (!at.json || !at.json->is_array()) return at.wrong(legal);
  std::vector<std::int64_t> ints;
  for (std::size_t i = 0; i < at.json->size(); ++i) {
    FG_ASSIGN_OR_RETURN(std::int64_t v, read_int(at.at(i), legal));
    ints.push_back(v);
  }
  return ints;
}

Result<std::string> read_string(const At& at, std::string_view legal) {
  if (!at.json || !at.json->is_string()) return at.wrong(legal);
  return at.json->get<std::string>();
}

Result<bool> read_bool(const At& at) {
  if (!at.json || !at.json->is_boolean()) return at.wrong("true or false");
  return at.json->get<bool>();
}

Status check_keys(const At& at, std::string_view what, std::span<const std::string_view> legal,
                  std::span<const std::string_view> more) {
  if (!at.json || !at.json->is_object()) return at.wrong(fmt::format("an object ({})", what));
  for (const auto& item : at.json->items()) {
    const std::string& key = item.key();
    const auto known = [&](auto keys) { return std::ranges::find(keys, key) != keys.end(); };
    if (known(legal) || known(more)) continue;
    std::vector<std::string_view> names(legal.begin(), legal.end());
    names.insert(names.end(), more.begin(), more.end());
    return at.error(fmt::format("unknown key '{}'", key),
                    fmt::format("one of {}", fmt::join(names, ", ")));
  }
  return Status::ok();
}

}  // namespace fusedgemm::json
