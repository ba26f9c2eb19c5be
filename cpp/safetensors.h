// A small, header-only safetensors reader and writer, independent of libtorch.
//
// Format: an 8-byte little-endian u64 N, then N bytes of JSON header
//   {"NAME": {"dtype": "F32", "shape": [2, 3], "data_offsets": [BEGIN, END]}, ...,
//    "__metadata__": {"key": "value", ...}}
// then the data buffer; offsets are relative to the start of the buffer.
//
// The reader takes the whole file into memory and checks everything before handing out a view:
// header length against the file size, the JSON itself (a small parser for JSON values, depth
// limited), each entry's keys and types (other keys ignored), known dtypes, shape products without overflow,
// BEGIN <= END <= buffer size, END - BEGIN == numel * element size, and the data of all tensors
// covering the buffer exactly (no holes, overlaps or bytes left over, as the Python package
// requires). Any problem is one st::Error with a one-line message; a damaged file never crashes
// the reader.
//
// The writer pads the header with spaces to a multiple of 8 bytes (as the Python safetensors
// package does) and writes the tensors' data in the order that package uses: by dtype, largest
// elements first, then by name, so each tensor's data stays aligned to its element size.
#pragma once

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

static_assert(std::endian::native == std::endian::little, "safetensors.h assumes a little-endian host");

namespace st {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The dtypes handled, in the order of the Python package's Dtype enum (its writer sorts by it).
struct DtypeInfo {
  std::string_view name;
  size_t size;
};
inline constexpr DtypeInfo kDtypes[] = {
    {"BOOL", 1}, {"U8", 1},  {"I8", 1},   {"F8_E5M2", 1}, {"F8_E4M3", 1}, {"I16", 2},
    {"U16", 2},  {"F16", 2}, {"BF16", 2}, {"I32", 4},     {"U32", 4},     {"F32", 4},
    {"C64", 8},  {"F64", 8}, {"I64", 8},  {"U64", 8},
};

// Position of a dtype in kDtypes; -1 if unknown.
inline int dtype_rank(std::string_view d) {
  for (size_t i = 0; i < std::size(kDtypes); ++i) {
    if (kDtypes[i].name == d) return static_cast<int>(i);
  }
  return -1;
}

// Element size in bytes of a safetensors dtype name; 0 if unknown.
inline size_t dtype_size(std::string_view d) {
  const int r = dtype_rank(d);
  return r < 0 ? 0 : kDtypes[r].size;
}

// Shape as text for messages: [2, 3]
inline std::string shape_str(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

namespace detail {

// Offset of the first byte that is not part of valid UTF-8 (no overlong forms, no surrogates,
// nothing above U+10FFFF), or npos.
inline size_t invalid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t len = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if (c >= 0xC2 && c <= 0xDF) {
      len = 2, cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3, cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4, cp = c & 0x07;
    } else {
      return i;
    }
    if (i + len > s.size()) return i;
    for (size_t k = 1; k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF)) {
      return i;
    }
    i += len;
  }
  return std::string_view::npos;
}

inline void json_string(std::string& out, std::string_view s) {
  out += '"';
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  out += '"';
}

// ---- a minimal JSON value and parser (enough for any header; integers only as numbers) ----

struct Value {
  enum Kind { Null, Bool, Int, Other, String, Array, Object } kind = Null;
  int64_t i = 0;    // Int
  std::string s;    // String
  std::vector<Value> items;                             // Array
  std::vector<std::pair<std::string, Value>> members;   // Object, in file order
};

class Parser {
 public:
  explicit Parser(std::string_view text) : t_(text) {}

  Value parse_document() {
    if (const size_t bad = invalid_utf8(t_); bad != std::string_view::npos) {
      p_ = bad;
      fail("not valid UTF-8");
    }
    ws();
    if (peek() != '{') fail("the header is not a JSON object");
    Value v = value(0);
    ws();
    if (p_ != t_.size()) fail("trailing characters after the JSON object");
    return v;
  }

 private:
  static constexpr int kMaxDepth = 32;
  std::string_view t_;
  size_t p_ = 0;

  [[noreturn]] void fail(const std::string& what) const {
    throw Error("bad JSON header at byte " + std::to_string(p_) + ": " + what);
  }
  char peek() const { return p_ < t_.size() ? t_[p_] : '\0'; }
  bool at_end() const { return p_ >= t_.size(); }
  void ws() {
    while (!at_end() && (t_[p_] == ' ' || t_[p_] == '\t' || t_[p_] == '\n' || t_[p_] == '\r')) ++p_;
  }
  void expect(char c) {
    ws();
    if (at_end() || t_[p_] != c) fail(std::string("expected '") + c + "'");
    ++p_;
  }
  void literal(std::string_view word) {
    if (t_.substr(p_, word.size()) != word) fail("unexpected character");
    p_ += word.size();
  }

  Value value(int depth) {
    if (depth > kMaxDepth) fail("nested too deeply");
    ws();
    if (at_end()) fail("unexpected end of header");
    Value v;
    const char c = t_[p_];
    if (c == '{') {
      v.kind = Value::Object;
      ++p_;
      ws();
      if (peek() == '}') {
        ++p_;
        return v;
      }
      for (;;) {
        ws();
        if (peek() != '"') fail("expected a string key");
        std::string key = string();
        expect(':');
        v.members.emplace_back(std::move(key), value(depth + 1));
        ws();
        if (peek() == ',') {
          ++p_;
          continue;
        }
        expect('}');
        return v;
      }
    }
    if (c == '[') {
      v.kind = Value::Array;
      ++p_;
      ws();
      if (peek() == ']') {
        ++p_;
        return v;
      }
      for (;;) {
        v.items.push_back(value(depth + 1));
        ws();
        if (peek() == ',') {
          ++p_;
          continue;
        }
        expect(']');
        return v;
      }
    }
    if (c == '"') {
      v.kind = Value::String;
      v.s = string();
      return v;
    }
    if (c == 't') {
      literal("true");
      v.kind = Value::Bool;
      return v;
    }
    if (c == 'f') {
      literal("false");
      v.kind = Value::Bool;
      return v;
    }
    if (c == 'n') {
      literal("null");
      return v;
    }
    if (c == '-' || (c >= '0' && c <= '9')) return number();
    fail("unexpected character");
  }

  // An integer that fits int64 is Int; any other JSON number (fraction, exponent, huge) is Other.
  Value number() {
    Value v;
    bool neg = false;
    if (peek() == '-') {
      neg = true;
      ++p_;
    }
    if (!(peek() >= '0' && peek() <= '9')) fail("bad number");
    bool fits = true;
    uint64_t mag = 0;
    while (peek() >= '0' && peek() <= '9') {
      const unsigned d = static_cast<unsigned>(peek() - '0');
      if (mag > (UINT64_MAX - d) / 10) fits = false;
      else mag = mag * 10 + d;
      ++p_;
    }
    bool integral = true;
    if (peek() == '.') {
      integral = false;
      ++p_;
      if (!(peek() >= '0' && peek() <= '9')) fail("bad number");
      while (peek() >= '0' && peek() <= '9') ++p_;
    }
    if (peek() == 'e' || peek() == 'E') {
      integral = false;
      ++p_;
      if (peek() == '+' || peek() == '-') ++p_;
      if (!(peek() >= '0' && peek() <= '9')) fail("bad number");
      while (peek() >= '0' && peek() <= '9') ++p_;
    }
    const uint64_t limit = neg ? uint64_t(INT64_MAX) + 1 : uint64_t(INT64_MAX);
    if (integral && fits && mag <= limit && !(neg && mag == 0)) {  // "-0" is a float to serde too
      v.kind = Value::Int;
      v.i = neg ? static_cast<int64_t>(0 - mag) : static_cast<int64_t>(mag);
    } else {
      v.kind = Value::Other;
    }
    return v;
  }

  static void utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  uint32_t hex4() {
    if (p_ + 4 > t_.size()) fail("bad \\u escape");
    uint32_t cp = 0;
    for (int k = 0; k < 4; ++k) {
      const char h = t_[p_++];
      cp <<= 4;
      if (h >= '0' && h <= '9') cp |= static_cast<uint32_t>(h - '0');
      else if (h >= 'a' && h <= 'f') cp |= static_cast<uint32_t>(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F') cp |= static_cast<uint32_t>(h - 'A' + 10);
      else fail("bad \\u escape");
    }
    return cp;
  }

  std::string string() {
    ++p_;  // opening quote
    std::string out;
    for (;;) {
      if (at_end()) fail("unterminated string");
      const char c = t_[p_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (at_end()) fail("unterminated string");
      const char e = t_[p_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          uint32_t cp = hex4();
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (t_.substr(p_, 2) != "\\u") fail("unpaired surrogate in \\u escape");
            p_ += 2;
            const uint32_t lo = hex4();
            if (lo < 0xDC00 || lo > 0xDFFF) fail("unpaired surrogate in \\u escape");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            fail("unpaired surrogate in \\u escape");
          }
          utf8(out, cp);
          break;
        }
        default: fail("bad escape in string");
      }
    }
  }
};

}  // namespace detail

// A name as a JSON string, for messages: quoted, control characters escaped (so one line).
inline std::string quote_name(std::string_view s) {
  std::string out;
  detail::json_string(out, s);
  return out;
}

// One tensor of a read file: a view into File::bytes (valid while the File lives). The data may
// be unaligned; copy it out (memcpy) before using it as typed values.
struct TensorView {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  const uint8_t* data = nullptr;
  size_t nbytes = 0;
};

struct File {
  std::vector<uint8_t> bytes;
  std::vector<TensorView> tensors;                 // in header order
  std::map<std::string, std::string> metadata;     // "__metadata__", if any

  const TensorView* find(std::string_view name) const {
    for (const TensorView& t : tensors) {
      if (t.name == name) return &t;
    }
    return nullptr;
  }
};

// Headers above this are refused, as the Python package does (100 MB).
constexpr uint64_t kMaxHeader = 100'000'000;

// Parses a whole file held in memory. Throws st::Error (one line, no file name).
inline File parse(std::vector<uint8_t> bytes) {
  using detail::Value;
  File f;
  f.bytes = std::move(bytes);
  const uint64_t size = f.bytes.size();
  if (size < 8) throw Error("too short for a safetensors file (" + std::to_string(size) + " bytes)");
  uint64_t n = 0;
  std::memcpy(&n, f.bytes.data(), 8);
  if (n > kMaxHeader) throw Error("header length " + std::to_string(n) + " is larger than the limit (100 MB)");
  if (n > size - 8) {
    throw Error("header length " + std::to_string(n) + " runs past the end of the file (" +
                std::to_string(size) + " bytes)");
  }
  const std::string_view text(reinterpret_cast<const char*>(f.bytes.data() + 8), n);
  const Value root = detail::Parser(text).parse_document();
  const uint8_t* buffer = f.bytes.data() + 8 + n;
  const uint64_t buffer_size = size - 8 - n;

  for (const auto& [name, entry] : root.members) {
    if (name == "__metadata__") {
      if (entry.kind != Value::Object) throw Error("__metadata__ is not an object");
      for (const auto& [k, v] : entry.members) {
        if (v.kind != Value::String) throw Error("__metadata__ value of '" + k + "' is not a string");
        f.metadata[k] = v.s;
      }
      continue;
    }
    const std::string where = "tensor " + quote_name(name) + ": ";
    if (f.find(name)) throw Error(where + "appears twice");
    if (entry.kind != Value::Object) throw Error(where + "entry is not an object");
    const Value* dtype = nullptr;
    const Value* shape = nullptr;
    const Value* offsets = nullptr;
    for (const auto& [k, v] : entry.members) {
      const Value** slot = k == "dtype" ? &dtype : k == "shape" ? &shape : k == "data_offsets" ? &offsets : nullptr;
      if (!slot) continue;  // any other key is ignored, as the Python package ignores it
      if (*slot) throw Error(where + k + " given twice");
      *slot = &v;
    }
    if (!dtype || !shape || !offsets) throw Error(where + "needs dtype, shape and data_offsets");
    if (dtype->kind != Value::String) throw Error(where + "dtype is not a string");
    const size_t item = dtype_size(dtype->s);
    if (item == 0) throw Error(where + "unknown dtype " + quote_name(dtype->s));

    TensorView t;
    t.name = name;
    t.dtype = dtype->s;
    if (shape->kind != Value::Array) throw Error(where + "shape is not an array");
    uint64_t numel = 1;
    bool overflow = false;
    for (const Value& d : shape->items) {
      if (d.kind != Value::Int || d.i < 0) throw Error(where + "shape holds something other than a size");
      const auto u = static_cast<uint64_t>(d.i);
      if (u != 0 && numel > UINT64_MAX / u) overflow = true;
      else numel *= u;
      t.shape.push_back(d.i);
    }
    if (offsets->kind != Value::Array || offsets->items.size() != 2 ||
        offsets->items[0].kind != Value::Int || offsets->items[1].kind != Value::Int ||
        offsets->items[0].i < 0 || offsets->items[1].i < 0) {
      throw Error(where + "data_offsets is not [begin, end]");
    }
    const auto begin = static_cast<uint64_t>(offsets->items[0].i);
    const auto end = static_cast<uint64_t>(offsets->items[1].i);
    if (begin > end || end > buffer_size) {
      throw Error(where + "data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                  "] out of range (the data is " + std::to_string(buffer_size) + " bytes)");
    }
    if (overflow || numel > UINT64_MAX / item || numel * item != end - begin) {
      throw Error(where + "dtype " + t.dtype + " and shape " + shape_str(t.shape) + " do not match its " +
                  std::to_string(end - begin) + " bytes of data");
    }
    t.data = buffer + begin;
    t.nbytes = static_cast<size_t>(end - begin);
    f.tensors.push_back(std::move(t));
  }
  // As the Python package requires: the tensors' data, in offset order, covers the data buffer
  // exactly, without holes, overlaps or bytes left over.
  std::vector<const TensorView*> by_offset;
  for (const TensorView& t : f.tensors) by_offset.push_back(&t);
  std::stable_sort(by_offset.begin(), by_offset.end(), [](const TensorView* a, const TensorView* b) {
    return a->data != b->data ? a->data < b->data : a->nbytes < b->nbytes;
  });
  uint64_t covered = 0;
  for (const TensorView* t : by_offset) {
    const auto begin = static_cast<uint64_t>(t->data - buffer);
    if (begin != covered) {
      throw Error("tensor " + quote_name(t->name) + ": data_offsets start at " + std::to_string(begin) + ", not at " +
                  std::to_string(covered) + " where the previous tensor's data ends");
    }
    covered = begin + t->nbytes;
  }
  if (covered != buffer_size) {
    throw Error("the tensors' data ends at " + std::to_string(covered) + " but the file holds " +
                std::to_string(buffer_size) + " bytes of data");
  }
  return f;
}

// Reads and parses PATH. Throws st::Error "PATH: what went wrong".
inline File read_file(const std::string& path) {
  struct stat sb {};
  if (::stat(path.c_str(), &sb) != 0) throw Error(path + ": " + std::strerror(errno));
  if (!S_ISREG(sb.st_mode)) throw Error(path + ": not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": " + std::strerror(errno));
  std::vector<uint8_t> bytes(static_cast<size_t>(sb.st_size));
  if (!bytes.empty() && !in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()))) {
    throw Error(path + ": short read");
  }
  try {
    return parse(std::move(bytes));
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
}

// A tensor to write: its data must hold exactly numel(shape) * dtype_size(dtype) bytes.
struct TensorOut {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  const void* data = nullptr;
  size_t nbytes = 0;
};

// The whole file as bytes: header (padded with spaces to a multiple of 8), then the data, ordered
// as the Python package orders it: by dtype (kDtypes order, last first, so the largest elements
// come first) and then by name. With no metadata the bytes equal safetensors.torch.save's.
inline std::vector<uint8_t> serialize(std::vector<TensorOut> tensors,
                                      const std::map<std::string, std::string>& metadata = {}) {
  for (const TensorOut& t : tensors) {
    const size_t item = dtype_size(t.dtype);
    const std::string where = "tensor " + quote_name(t.name) + ": ";
    if (item == 0) throw Error(where + "unknown dtype " + quote_name(t.dtype));
    uint64_t numel = 1;
    for (const int64_t d : t.shape) {
      if (d < 0) throw Error(where + "negative size in shape");
      numel *= static_cast<uint64_t>(d);
    }
    if (numel * item != t.nbytes) throw Error(where + "data size does not match its shape");
    if (t.name == "__metadata__") throw Error("a tensor cannot be named __metadata__");
  }
  std::stable_sort(tensors.begin(), tensors.end(), [](const TensorOut& a, const TensorOut& b) {
    const int ra = dtype_rank(a.dtype), rb = dtype_rank(b.dtype);
    return ra != rb ? ra > rb : a.name < b.name;
  });
  for (size_t i = 1; i < tensors.size(); ++i) {
    if (tensors[i].name == tensors[i - 1].name) throw Error("tensor " + quote_name(tensors[i].name) + " given twice");
  }
  std::string header = "{";
  bool first = true;
  if (!metadata.empty()) {
    header += "\"__metadata__\":{";
    for (auto it = metadata.begin(); it != metadata.end(); ++it) {
      if (it != metadata.begin()) header += ',';
      detail::json_string(header, it->first);
      header += ':';
      detail::json_string(header, it->second);
    }
    header += '}';
    first = false;
  }
  uint64_t offset = 0;
  for (const TensorOut& t : tensors) {
    if (!first) header += ',';
    first = false;
    detail::json_string(header, t.name);
    header += ":{\"dtype\":";
    detail::json_string(header, t.dtype);
    header += ",\"shape\":[";
    for (size_t i = 0; i < t.shape.size(); ++i) {
      if (i) header += ',';
      header += std::to_string(t.shape[i]);
    }
    header += "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + t.nbytes) + "]}";
    offset += t.nbytes;
  }
  header += '}';
  header.append((8 - header.size() % 8) % 8, ' ');

  std::vector<uint8_t> out(8 + header.size() + offset);
  const uint64_t n = header.size();
  std::memcpy(out.data(), &n, 8);
  std::memcpy(out.data() + 8, header.data(), header.size());
  uint8_t* p = out.data() + 8 + header.size();
  for (const TensorOut& t : tensors) {
    if (t.nbytes) std::memcpy(p, t.data, t.nbytes);
    p += t.nbytes;
  }
  return out;
}

// Writes the file to PATH.tmpPID and renames it into place: a failed write leaves no half file.
// Throws st::Error "PATH: what went wrong".
inline void write_file(const std::string& path, std::vector<TensorOut> tensors,
                       const std::map<std::string, std::string>& metadata = {}) {
  const std::vector<uint8_t> bytes = serialize(std::move(tensors), metadata);
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error(path + ": " + std::strerror(errno));
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      throw Error(path + ": write failed");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    throw Error(path + ": " + why);
  }
}

}  // namespace st
